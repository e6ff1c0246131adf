# SPDX-License-Identifier: LGPL-2.1-or-later
#
# proc_lib.sh - what the checks of `cnctl proc` share (proc_check.sh,
# output_check.sh); source it after ../lib.sh, with CNCTL and DEADLINE set:
# a scratch directory ($dir: out and err are cnctl's stdout and stderr),
# the cnctl running in the background ($cn, stopped at exit), fail, await,
# start, finish and interrupt. A check that leaves more behind sets
# cleanup_more to a function that removes it.

dir=$(mktemp -d "${TMPDIR:-/tmp}/cnctl-proc.XXXXXX") || exit 1
cn=
cleanup_more=
cleanup() {
	[ -n "$cn" ] && kill -CONT "$cn" 2>/dev/null && kill -TERM "$cn" 2>/dev/null
	[ -z "$cleanup_more" ] || "$cleanup_more"
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $1"
	show_tail 15 "$dir/out" "$dir/err"
	exit 1
}

# await FILE REGEX: until a line of FILE matches (cnctl alive), or fail.
# cnctl refused by the kernel (permission, no proc connector) is a skip.
await() {
	local start=$SECONDS
	until grep -q -E -e "$2" "$1" 2>/dev/null; do
		if [ -n "$cn" ] && ! kill -0 "$cn" 2>/dev/null; then
			wait "$cn"
			rc=$?
			case $rc in 3 | 4) skip "$(tail -n 1 "$dir/err")" ;; esac
			fail "cnctl exited ($rc) before '$2' appeared in $(basename "$1")"
		fi
		[ $((SECONDS - start)) -ge "$DEADLINE" ] && fail "no '$2' in $(basename "$1") after ${DEADLINE}s"
		sleep 0.05
	done
}

# start ARGS...: cnctl proc ARGS in the background, listening.
start() {
	# Gone first: the child truncates them only once it runs, and a
	# previous run's 'listening' must not be taken for this one's.
	rm -f "$dir/out" "$dir/err"
	"$CNCTL" proc "$@" >"$dir/out" 2>"$dir/err" &
	cn=$!
	# With --json or --ecs the message is a record on stdout.
	case " $* " in
	*" --json "* | *" --ecs "*)
		await "$dir/out" '"type":"start".*listening for proc events|listening for proc events.*"type":"start"'
		;;
	*) await "$dir/err" 'listening for proc events' ;;
	esac
}

# finish: a marker process after everything else, then SIGINT once cnctl
# printed the marker's exit (events of one socket come in order per CPU; the
# marker is forked by this shell after the workload was reaped).
finish() {
	(exit 0) &
	local m=$!
	wait "$m"
	# The table's line anchored at its start, and in JSON the action
	# before the pid: the exec line of this very grep (its command line
	# holds the pattern) must not match.
	await "$dir/out" "^[^ ]+ +exit +$m |\"exit\".*[{,]\"pid\":$m[,}]"
	interrupt
}

# interrupt: SIGINT to cnctl, which must end with status 0 (lib.sh).
interrupt() {
	stop_int "$cn" cnctl
	cn=
}
