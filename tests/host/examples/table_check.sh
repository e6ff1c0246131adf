#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# table_check.sh - examples/proc_table through overruns: a small receive
# buffer and fork storms, one while it is stopped, make it lose events (it
# must say so, and rescan /proc). Then, after its last rescan, two orphans
# (one under a child subreaper, one not) test the parents it keeps: with
# no rescan after them, their parents in the table come from the exits of
# their old parents (the kernel sends no event for reparenting). At the end
# its table (printed on SIGINT) is compared with /proc, parents included:
# every process that /proc showed, with the same parent and start, just
# before and just after the table was made must be in it with that parent,
# and the table holds no process of the storm. No process is told both
# vanished (a rescan's) and exited (its event).
#
# Usage: table_check.sh PROC_TABLE FORK_STORM WORKLOAD   Exit: 0, 1, 77 skip
# (in CI, CI=true, a skip fails instead).
set -u -o pipefail
TABLE=$1
STORM=$2
WORKLOAD=$3
DEADLINE=${TABLE_CHECK_DEADLINE:-120}
STORM_N=${TABLE_CHECK_STORM:-5000}

. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a forced small receive buffer)"

dir=$(mktemp -d "${TMPDIR:-/tmp}/cn-table.XXXXXX") || exit 1
tb=
left=()
cleanup() {
	[ -n "$tb" ] && kill -CONT "$tb" 2>/dev/null && kill "$tb" 2>/dev/null
	for p in "${left[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $1"
	show_tail 15 "$dir/out" "$dir/err" "$dir/orphans"
	exit 1
}

await() { # FILE REGEX
	local start=$SECONDS
	until grep -q -E -e "$2" "$1" 2>/dev/null; do
		kill -0 "$tb" 2>/dev/null || fail "proc_table exited before '$2': $(tail -n 3 "$dir/err")"
		[ $((SECONDS - start)) -ge "$DEADLINE" ] && fail "no '$2' after ${DEADLINE}s"
		sleep 0.05
	done
}

# losses: the overrun and rescan lines proc_table printed so far.
losses() { grep -c -E '^(overrun|proc_table: rescan)' "$dir/err"; }

# await_rescanned: until proc_table's last overrun is followed by a rescan
# (nothing pending: no rescan is due any more).
await_rescanned() {
	local start=$SECONDS
	until grep -E '^(overrun|proc_table: rescan)' "$dir/err" | tail -n 1 |
		grep -q '^proc_table: rescanned'; do
		kill -0 "$tb" 2>/dev/null || fail "proc_table exited: $(tail -n 3 "$dir/err")"
		[ $((SECONDS - start)) -ge "$DEADLINE" ] && fail "no rescan after the overruns in ${DEADLINE}s"
		sleep 0.05
	done
}

# /proc now: "PID PPID STARTTIME" for every process but the zombies (they
# have exited: the table holds none).
snapshot() {
	cat /proc/[0-9]*/stat 2>/dev/null | sed 's/^\([0-9]*\) (.*) /\1 /' |
		awk '$2 != "Z" && $2 != "X" { print $1, $3, $21 }' | LC_ALL=C sort -k1,1 >"$1"
}

# 64 KiB: a storm into the stopped reader overruns it for certain, and the
# machine's other work does not while it reads, idle, when the orphans are
# made (a loss then would be repaired by a rescan, which proves nothing).
"$TABLE" 65536 >"$dir/out" 2>"$dir/err" &
tb=$!
await "$dir/err" 'proc_table: listening'

# Two storms: the first while proc_table is stopped (its buffer overruns
# for certain), the second while it reads (it may overrun again,
# and must still end right).
kill -STOP "$tb"
echo go | "$STORM" "$((STORM_N / 2))" 16 >"$dir/storm1" || fail "the first fork storm failed"
kill -CONT "$tb"
echo go | "$STORM" "$((STORM_N / 2))" 16 >"$dir/storm" || fail "the second fork storm failed"
storms="$(head -n 1 "$dir/storm1") $(head -n 1 "$dir/storm")"
grep -q '^overrun: events lost' "$dir/err" ||
	fail "no overrun reported after a storm into a stopped reader's 64 KiB buffer"
await_rescanned

# The orphans, after the last rescan. Made again if events were lost
# meanwhile (a rescan then sets the parents from /proc).
for attempt in 1 2 3 4 5; do
	before_orphans=$(losses)
	"$WORKLOAD" orphans >"$dir/orphans" || fail "the workload made no orphans"
	awk '{ print $2 }' "$dir/orphans" >>"$dir/left"
	mapfile -t left <"$dir/left" # killed at the end
	[ "$(wc -l <"$dir/orphans")" = 3 ] || fail "the workload printed $(wc -l <"$dir/orphans") lines, not 3"
	sub=$(awk '$1 == "subreaper" { print $2 }' "$dir/orphans")
	o1=$(awk '$1 == "orphan-of-subreaper" { print $2 }' "$dir/orphans")
	p1=$(awk '$1 == "orphan-of-subreaper" { print $3 }' "$dir/orphans")
	o2=$(awk '$1 == "orphan" { print $2 }' "$dir/orphans")
	p2=$(awk '$1 == "orphan" { print $3 }' "$dir/orphans")
	# Their old parents' exits applied: the orphans' parents are set.
	await "$dir/out" "^exit $p1 "
	await "$dir/out" "^exit $p2 "
	[ "$(losses)" = "$before_orphans" ] && break
	echo "# attempt $attempt: events lost while the orphans were made; again"
	await_rescanned
done
[ "$(losses)" = "$before_orphans" ] || fail "events lost whenever orphans were made"

snapshot "$dir/before"
kill -INT "$tb"
wait "$tb"
rc=$?
tb=
snapshot "$dir/after"
[ "$rc" = 0 ] || fail "proc_table exited $rc"
grep -q 'rescans after loss' "$dir/err" || fail "no summary line"
[ "$(losses)" = "$before_orphans" ] ||
	fail "events lost after the orphans were made: their parents would be /proc's anyway"
rescans=$(sed -n 's/.* \([0-9]*\) rescans after loss$/\1/p' "$dir/err")
[ "${rescans:-0}" -ge 1 ] || fail "no rescan after the overruns"

# The table: the lines after its header.
sed -n '/^ *PID  *PPID  COMMAND$/,$p' "$dir/out" | tail -n +2 | awk '{ print $1, $2 }' |
	LC_ALL=C sort -k1,1 >"$dir/table"
[ -s "$dir/table" ] || fail "no table printed"

# Stable: the same process (pid, parent, start) before and after.
LC_ALL=C join "$dir/before" "$dir/after" | awk '$2 == $4 && $3 == $5 { print $1, $2 }' >"$dir/stable"
missing=$(LC_ALL=C join -v 1 "$dir/stable" "$dir/table" | head -n 5)
[ -z "$missing" ] || fail "processes /proc showed throughout, not in the table: $missing"
wrong=$(LC_ALL=C join "$dir/stable" "$dir/table" | awk '$2 != $3' | head -n 5)
[ -z "$wrong" ] || fail "parents differ from /proc (pid /proc's table's): $wrong"
for p in "$o1 $sub" "$o2 $(awk -v p="$o2" '$1 == p { print $2 }' "$dir/after")"; do
	read -r pid ppid <<<"$p"
	grep -qx "$pid $ppid" "$dir/table" ||
		fail "orphan $pid: /proc's parent $ppid, the table's $(awk -v p="$pid" '$1 == p { print $2 }' "$dir/table")"
done
twice=$(awk '$1 == "vanished" { v[$2] = 1 } $1 == "exit" && ($2 in v) { print $2 }' "$dir/out" |
	head -n 5)
[ -z "$twice" ] || fail "processes told vanished, then exited: $twice"
for storm in $storms; do
	stale=$(awk -v s="$storm" '$2 == s' "$dir/table" | head -n 5)
	[ -z "$stale" ] || fail "children of the storm $storm (reaped) still in the table: $stale"
done
echo "ok: $(wc -l <"$dir/table") processes, $(wc -l <"$dir/stable") of them stable in /proc and" \
	"in the table with their parents; $(grep -c '^overrun' "$dir/err") overruns, $rescans rescans"
