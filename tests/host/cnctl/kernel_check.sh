#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel_check.sh - cnctl send/listen/request/kmod against the running
# kernel's connector (NETLINK_CONNECTOR): one case per run.
# Usage: kernel_check.sh CNCTL CASE
# Exit: 0 pass, 1 fail, 77 skip (not root, or no proc connector).
set -u -o pipefail
CNCTL=$1
CASE=$2
T=$(mktemp -d) || exit 1
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait
	rm -rf "$T"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib.sh"

fail() {
	echo "FAIL: $*"
	for f in "$T"/*; do [ -s "$f" ] && { echo "--- ${f##*/}"; cat "$f"; }; done
	exit 1
}

[ "$(id -u)" = 0 ] || skip "needs root"

# An id nobody registers in the kernel's connector.
UNKNOWN=0x7ffffff0.0x1

# await FILE PATTERN: wait (up to 10 s) for a line a background cnctl prints
# once it is ready, e.g. after joining its group.
await() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 200 ] || fail "no '$2' in $1 after 10 s"
		sleep 0.05
	done
}

# json_num FILE KEY: the number of "KEY":N in the first line of FILE.
json_num() {
	sed -n "1s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"
}

# The proc connector's LISTEN op (PROC_CN_MCAST_LISTEN = 1, 4 bytes, little
# endian) is acknowledged with ack = request ack + 1 but a seq of its own:
# a real round trip under --match ack-only. Each LISTEN is undone with
# IGNORE (2) so the kernel's listener count stays balanced. Sockets on group
# 1 get large receive buffers: another test's fork storm may be running.
ignore() {
	"$CNCTL" send 1.1 --hex 02000000 >/dev/null || fail "send IGNORE"
}

case $CASE in
request_proc_ack)
	"$CNCTL" request 1.1 --hex 01000000 --match ack-only --timeout 2s --json --rcvbuf 64M \
		>"$T/out" 2>"$T/err"
	rc=$?
	ignore
	[ $rc = 0 ] || fail "request exited $rc"
	[ "$(wc -l <"$T/out")" = 1 ] || fail "expected one JSON line"
	grep -q '^{"idx":1,"val":1,.*"len":40,.*"port":0,"group":1,' "$T/out" ||
		fail "not a proc connector reply"
	ack=$(json_num "$T/out" ack)
	req_ack=$(json_num "$T/out" req_ack)
	[ -n "$ack" ] && [ -n "$req_ack" ] || fail "no ack / req_ack"
	[ "$ack" = "$(((req_ack + 1) % 4294967296))" ] || fail "ack $ack != req_ack $req_ack + 1"
	# struct proc_event: what (4 bytes) is PROC_EVENT_NONE (0) for the ack,
	# then cpu (4), timestamp_ns (8), ack.err (4) = 0.
	grep -q '"hex":"00000000[0-9a-f]\{24\}00000000' "$T/out" ||
		fail "payload is not a LISTEN ack with err 0"
	echo "ok: $(cat "$T/out")"
	;;
request_proc_strict_timeout)
	# The same round trip under --match strict never matches: the proc
	# connector overwrites seq (docs/DESIGN.md, "The proc connector"). The request times out: exit 5.
	"$CNCTL" request 1.1 --hex 01000000 --match strict --timeout 500ms --rcvbuf 64M >"$T/out" 2>"$T/err"
	rc=$?
	ignore
	[ $rc = 5 ] || fail "request --match strict exited $rc, expected 5 (timeout)"
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q "no reply to 0x1.0x1 .*within 500 ms" "$T/err" ||
		fail "expected one line naming the timeout"
	echo "ok: $(cat "$T/err")"
	;;
send_unknown_id)
	# The kernel's connector drops a message for an id nobody registered
	# without an error; nothing comes back (a request for it times out).
	"$CNCTL" send "$UNKNOWN" hello --seq 7 --ack 0x10 >"$T/out" 2>"$T/err" ||
		fail "send exited $?"
	grep -q '^sent 0x7ffffff0\.0x1 seq=7 ack=16 len=5 unit=11$' "$T/out" ||
		fail "unexpected send output"
	printf 'abc\000\001' >"$T/payload"
	"$CNCTL" send "$UNKNOWN" --file "$T/payload" --json >"$T/json" 2>>"$T/err" ||
		fail "send --file exited $?"
	grep -q '^{"idx":2147483632,"val":1,"seq":[0-9]*,"ack":[0-9]*,"len":5,"unit":11}$' \
		"$T/json" || fail "unexpected send --json output"
	"$CNCTL" request "$UNKNOWN" hello --timeout 300ms --no-join >"$T/req" 2>>"$T/err"
	rc=$?
	[ $rc = 5 ] || fail "request to an unknown id exited $rc, expected 5 (timeout)"
	[ -s "$T/req" ] && fail "request printed a reply"
	echo "ok: $(cat "$T/out" "$T/json")"
	;;
listen_proc)
	# cnctl listen 1 prints the proc connector's raw messages while some
	# socket has subscribed (here a cnctl proc in the background).
	"$CNCTL" proc --count 1000000 >/dev/null 2>"$T/proc.err" &
	PIDS="$PIDS $!"
	await "$T/proc.err" "listening for proc events"
	"$CNCTL" listen 1 --id 1.1 --count 6 --timeout 10s --json --rcvbuf 64M >"$T/out" 2>"$T/err" &
	lpid=$!
	PIDS="$PIDS $lpid"
	await "$T/err" "listening on unit 11, group 1"
	# Children fork, exec and exit: at least 3 events each. (Acks to other
	# sockets' LISTEN, e.g. a concurrent test's, come with ack != 0.)
	for i in 1 2 3; do /bin/true; done
	wait $lpid
	rc=$?
	[ $rc = 0 ] || fail "listen exited $rc"
	[ "$(grep -c '^{"idx":1,"val":1,"seq":[0-9]*,"ack":[0-9]*,"len":40,"flags":0,"port":0,"group":1,"hex":"[0-9a-f]\{80\}"}$' "$T/out")" = 6 ] ||
		fail "expected 6 proc event lines"
	grep -q "^cnctl: 6 messages printed, 0 overruns, 0 messages dropped by the kernel$" "$T/err" ||
		fail "no summary"
	echo "ok: $(head -n 1 "$T/out")"
	;;
listen_timeout)
	# Nobody sends to group 20: --count is not reached within --timeout.
	"$CNCTL" listen 20 --count 1 --timeout 200ms >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 5 ] || fail "listen exited $rc, expected 5 (timeout)"
	grep -q "0 of 1 messages within 200 ms" "$T/err" || fail "no timeout message"
	echo "ok: listen timeout exit 5"
	;;
kmod_absent)
	# Without kmod loaded: kmod and --kmod report it in one line, exit 4.
	if "$CNCTL" kmod >/dev/null 2>&1; then
		skip "kmod (cnbus.ko) is loaded here"
	fi
	for args in "kmod" "send --kmod 0x123.0x456 x" "notify --idx 1 --val 1 --group 1"; do
		# shellcheck disable=SC2086
		"$CNCTL" $args >"$T/out" 2>"$T/err"
		rc=$?
		[ $rc = 4 ] || fail "cnctl $args exited $rc, expected 4"
		[ "$(wc -l <"$T/err")" = 1 ] && grep -q "kmod is not loaded" "$T/err" ||
			fail "cnctl $args: expected one line saying kmod is not loaded"
		# ... and where a cnbus.ko comes from: it is not in any kernel.
		grep -q "make -C kmod.*kmod/cnbus.ko.*DKMS (kmod/README.md)" "$T/err" ||
			fail "cnctl $args: the hint does not say how to get cnbus.ko"
	done
	echo "ok: $(cat "$T/err")"
	;;
*)
	echo "unknown case $CASE"
	exit 1
	;;
esac
exit 0
