# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# bench/result.sh - RESULT lines of bench/run and bench/cbus/run (sourced):
# the median of the rounds of one run, their range, and the goal's verdict.
#
#   cnb_result KEY FMT GOAL VALUE...
#
# prints
#
#   RESULT KEY=MEDIAN (range LO-HI, N rounds)  goal GOAL: met|NOT MET
#
# "RESULT KEY=VALUE" stays the first two words: a parser takes VALUE up to
# the first blank. FMT is a printf format for one number ("%.2f", "%d");
# a value of 0 is printed "0". VALUE "NA" (not measured) rounds are left
# out; with none left the line is "RESULT KEY=NA (not measured)".
# GOAL: ">=X" or "<=X" judges the median as printed; "=0" (a count that must
# be 0: loss, allocations) is met only when every round is 0 (the range's
# top), since a median would hide one bad round; "-": no goal, reported.

# cnb_stats FMT VALUE...: "MEDIAN LO HI N" (NA values left out; "NA NA NA 0"
# without any). The median of an even number of rounds is the mean of the
# middle two.
cnb_stats() {
	local fmt=$1
	shift
	printf '%s\n' "$@" | awk -v fmt="$fmt" '
		function f(x) { return x == 0 ? "0" : sprintf(fmt, x) }
		$1 != "NA" && $1 != "" { v[++n] = $1 + 0 }
		END {
			if (!n) { print "NA NA NA 0"; exit }
			for (i = 2; i <= n; i++) {
				x = v[i]
				for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]
				v[j + 1] = x
			}
			m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			print f(m), f(v[1]), f(v[n]), n
		}'
}

cnb_result() {
	local key=$1 fmt=$2 goal=$3 med lo hi n verdict op want
	shift 3
	read -r med lo hi n <<<"$(cnb_stats "$fmt" "$@")"
	op=${goal%%[0-9.]*}
	want=${goal#"$op"}
	case $op in
	'>=') verdict=$(awk -v a="$med" -v b="$want" 'BEGIN { print (a + 0 >= b + 0) ? "met" : "NOT MET" }') ;;
	'<=') verdict=$(awk -v a="$med" -v b="$want" 'BEGIN { print (a + 0 <= b + 0) ? "met" : "NOT MET" }') ;;
	'-') verdict=reported ;;
	*) verdict=$(awk -v a="$hi" -v b="$want" 'BEGIN { print (a + 0 == b + 0) ? "met" : "NOT MET" }') ;;
	esac
	case $op in
	'>=' | '<=') goal="$op $want" ;;
	'-') goal=none ;;
	*) goal="$want in every round" ;;
	esac
	if [ "$n" = 0 ]; then
		printf 'RESULT %-32s %-30s goal %s: not measured\n' "$key=NA" "(not measured)" "$goal"
		return
	fi
	printf 'RESULT %-32s %-30s goal %s: %s\n' "$key=$med" "(range $lo-$hi, $n rounds)" "$goal" "$verdict"
}
