#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# filtered_loss_check.sh - a filtered `cnctl proc` is never silent about
# loss (a listener that went quiet). `cnctl proc --events
# nonzero_exit` (filtered in the kernel: no sequence gap shows loss) writes
# into a pipe nobody reads, so it blocks and stops reading its socket while
# a storm makes ~2,600 non-zero exits; the kernel drops what does not fit
# and reports the overrun once, to a receive call cnctl never makes before
# SIGINT stops it. Its summary must still say how many events the kernel
# dropped (cn_drops), at least the storm's non-zero exits it did not print.
# Usage: filtered_loss_check.sh CNCTL FORK_STORM     Exit: 0 pass, 1 fail, 77 skip.
set -u -o pipefail
. "$(dirname "$0")/../lib.sh"
CNCTL=$1
STORM=$2
N=3000 # child i exits with i % 7: 2571 non-zero exits
[ "$(id -u)" = 0 ] || skip "needs root (proc connector)"
d=$(mktemp -d) || exit 1
cn=''
drain=''
cleanup() {
	[ -n "$cn" ] && kill "$cn" 2>/dev/null
	[ -n "$drain" ] && kill "$drain" 2>/dev/null
	exec 4>&- 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	cat "$d/cn.err" 2>/dev/null
	exit 1
}

mkfifo "$d/fifo" || exit 1
exec 4<>"$d/fifo" # held open and never read: cnctl's writes block once it is full
"$CNCTL" proc --events nonzero_exit --color never >"$d/fifo" 2>"$d/cn.err" &
cn=$!
for _ in $(seq 100); do
	grep -q "listening" "$d/cn.err" 2>/dev/null && break
	sleep 0.1
done
grep -q "filtered in the kernel" "$d/cn.err" || skip "no kernel filter here (before 6.6)"
echo go | "$STORM" $N 16 >"$d/storm.out" 2>&1 || fail "fork_storm failed"
# Stop it (the user's Ctrl-C), then let its blocked writes drain, as a
# terminal that scrolls again would.
kill -INT "$cn"
cat "$d/fifo" >/dev/null &
drain=$!
wait "$cn"
rc=$?
cn=
[ $rc = 0 ] || fail "cnctl proc exited $rc"
# What it printed reached the pipe: the FIFO's contents are lost with it,
# the count is in the summary.
printed=$(sed -nE 's/^cnctl: ([0-9]+) events printed, gaps not tracked: kernel filter, [0-9]+ overruns$/\1/p' "$d/cn.err")
[ -n "$printed" ] || fail "no summary line"
drops=$(sed -nE 's/^cnctl: ([0-9]+) events dropped by the kernel for this socket$/\1/p' "$d/cn.err")
[ -n "$drops" ] || fail "the summary does not say what the kernel dropped"
[ "$drops" -gt 0 ] || fail "cnctl printed $printed of 2571 non-zero exits and says the kernel dropped none"
[ $((printed + drops)) -ge 2571 ] || fail "printed $printed + dropped $drops < 2571 non-zero exits"
echo "ok: blocked filtered listener: $printed printed, $drops dropped by the kernel reported ($(grep -c . "$d/storm.out") storm line)"
