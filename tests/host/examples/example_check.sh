#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# example_check.sh - a proc example run against a known workload (workload.c:
# exit 3, SIGKILL, SIGSEGV with a core dump, a process of 3 threads that
# exits 4), its output lines about the workload's processes and threads
# compared, exactly, with what the workload's own waitpid saw; then against
# the processes of exits_workload.c (a main thread that leaves first, an
# exec by a thread, exit_group from a worker, vfork, a clone sharing the
# memory, a zombie reaped late, orphans, a threaded core dump): one exit
# line per process, with what its parent's waitpid saw.
#
# Usage: example_check.sh EXAMPLE WORKLOAD MODE EXITS_WORKLOAD
# Exit: 0 pass, 1 fail, 77 skip
#   MODE exits   the example prints process exits only (proc_exit_monitor,
#                proc_monitor_sd_event): "pid P exited with status N",
#                "pid P killed by signal S[ (core dumped)]", nothing for threads
#   MODE events  it prints every event (proc_monitor_epoll): also
#                "pid P forked by pid W", "pid P: coredump",
#                "thread T of pid P started" and "... ended"
# In CI (CI=true) a skip fails instead.
set -u -o pipefail
EXAMPLE=$1
WORKLOAD=$2
MODE=$3
EXITS=$4
DEADLINE=${EXAMPLE_CHECK_DEADLINE:-60}

. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (the proc connector's policy may refuse others)"

dir=$(mktemp -d "${TMPDIR:-/tmp}/cn-example.XXXXXX") || exit 1
ex=
cleanup() {
	[ -n "$ex" ] && kill "$ex" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $1"
	show_tail 20 "$dir/out" "$dir/err" "$dir/work"
	exit 1
}

# exit_seen PID: the example printed a line about PID's exit (in whatever
# form: the probe must not depend on what is being checked).
exit_seen() { grep -w -e "$1" "$dir/out" 2>/dev/null | grep exit >/dev/null; }

# probe: a process that exits 0, until the example printed its exit (the
# example is listening, and has read every event before it).
probe() {
	local start=$SECONDS p
	while :; do
		(exit 0) &
		p=$!
		wait "$p"
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			exit_seen "$p" && return 0
			sleep 0.05
		done
		kill -0 "$ex" 2>/dev/null || fail "$(basename "$EXAMPLE") exited: $(cat "$dir/err")"
		[ $((SECONDS - start)) -ge "$DEADLINE" ] && fail "no exit line of a probe after ${DEADLINE}s"
	done
}

# Where the SIGSEGV child's core goes (the system's setting is read, never
# changed): a relative core_pattern puts it in the child's directory, an
# absolute one is redirected to a tmpfs in a private mount namespace, a pipe
# hands it to a helper that would keep it: no SIGSEGV case then.
pattern=$(cat /proc/sys/kernel/core_pattern)
cores=$dir/cores
mkdir -p "$cores"
segv=segv
wrap=()
case $pattern in
'|'*)
	echo "# core_pattern pipes cores to a helper ($pattern): the SIGSEGV case is left out"
	segv=
	;;
/*)
	wrap=(unshare -m sh -c 'mount -t tmpfs cn-cores "$1" && shift && exec "$@"' _ "$(dirname "$pattern")")
	;;
*)
	case $pattern in */*) mkdir -p "$cores/$(dirname "$pattern")" ;; esac
	;;
esac

"$EXAMPLE" >"$dir/out" 2>"$dir/err" &
ex=$!
probe
# The workloads are the fixture, not what is tested: under ASan its leak
# check at exit would ptrace its own threads, events the example prints.
env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	"${wrap[@]}" "$WORKLOAD" "$cores" $segv >"$dir/work" 2>&1 || fail "the workload failed"
wpid=$(sed -n 's/^workload \([0-9]*\)$/\1/p' "$dir/work")
env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	"${wrap[@]}" "$EXITS" ${segv:+"$cores"} >"$dir/exits" 2>&1 </dev/null ||
	fail "the exits workload failed: $(cat "$dir/exits")"

# The exit lines expected about exits_workload's processes: one each, as
# its waitpid saw it (STATUS raw: a code, or a signal and the core bit).
: >"$dir/exits-want"
grep '^process ' "$dir/exits" >"$dir/exits-procs"
xids=()
while read -r _ _ pid st _; do
	xids+=("$pid")
	if [ $((st & 127)) = 0 ]; then
		echo "pid $pid exited with status $((st >> 8))"
	else
		echo "pid $pid killed by signal $((st & 127))$([ $((st & 128)) = 0 ] || echo ' (core dumped)')"
	fi >>"$dir/exits-want"
done <"$dir/exits-procs"
[ "${#xids[@]}" -ge 14 ] || fail "the exits workload reported ${#xids[@]} processes, not 14 or more"
xre="^pid ($(printf '%s|' "${xids[@]}" | sed 's/|$//')) (exited|killed)"
# Every expected line printed (the example reads on its own time; a
# deadline guards against a hang), then a probe: a second line would come
# before it.
start=$SECONDS
while [ "$(grep -c -E "$xre" "$dir/out")" -lt "${#xids[@]}" ]; do
	[ $((SECONDS - start)) -ge "$DEADLINE" ] && break
	sleep 0.1
done
probe
kill "$ex"
wait "$ex" 2>/dev/null
ex=

# What the workload's waitpid saw must be what it asked for (a core dumped).
want_status() { # NAME STATUS
	local got
	got=$(awk -v n="$1" '$1 == "child" && $2 == n { print $4 }' "$dir/work")
	[ "$got" = "$2" ] || fail "the workload's $1 child ended with wait status '$got', not $2 (core_pattern: $pattern)"
}
want_status exit3 768
want_status sigkill 9
[ -n "$segv" ] && want_status segv 139 # SIGSEGV | 0x80 (core dumped)
want_status threads 1024

# The lines expected about the workload's children, and every word that
# names one of them (their pids and thread ids).
: >"$dir/want"
ids=()
grep '^child ' "$dir/work" >"$dir/children"
while read -r _ name pid _ tids; do
	ids+=("$pid")
	case $name in
	exit3) echo "pid $pid exited with status 3" ;;
	sigkill) echo "pid $pid killed by signal 9" ;;
	segv) echo "pid $pid killed by signal 11 (core dumped)" ;;
	threads)
		echo "pid $pid exited with status 4"
		for t in $tids; do
			ids+=("$t")
			if [ "$MODE" = events ]; then
				echo "thread $t of pid $pid started"
				echo "thread $t of pid $pid ended"
			fi
		done
		;;
	esac >>"$dir/want"
	if [ "$MODE" = events ]; then
		echo "pid $pid forked by pid $wpid" >>"$dir/want"
		[ "$name" = segv ] && echo "pid $pid: coredump" >>"$dir/want"
	fi
done <"$dir/children" # a file, not <(...): the arch tier's i386 guest has no /dev/fd
[ "${#ids[@]}" -ge 6 ] || fail "the workload reported $((${#ids[@]})) pids and thread ids, not 6 or more"

re=$(printf '%s|' "${ids[@]}")
grep -E -w -e "${re%|}" "$dir/out" | sort >"$dir/got"
sort -o "$dir/want" "$dir/want"
if ! cmp -s "$dir/want" "$dir/got"; then
	echo "--- expected (the workload's waitpid) / +++ printed by $(basename "$EXAMPLE")"
	diff -u "$dir/want" "$dir/got" | tail -n +3
	fail "the example's lines about the workload differ"
fi
grep -E "$xre" "$dir/out" | sort >"$dir/exits-got"
sort -o "$dir/exits-want" "$dir/exits-want"
if ! cmp -s "$dir/exits-want" "$dir/exits-got"; then
	echo "--- expected (exits_workload's waitpid) / +++ printed by $(basename "$EXAMPLE")"
	diff -u "$dir/exits-want" "$dir/exits-got" | tail -n +3
	fail "the example's exit lines about the exits workload differ"
fi
echo "ok: $(basename "$EXAMPLE"): $(wc -l <"$dir/got") lines about the workload, $(wc -l <"$dir/exits-got") exits of the exits workload, as their waitpid saw them"
