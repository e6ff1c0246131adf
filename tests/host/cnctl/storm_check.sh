#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# storm_check.sh - the cnctl storm check: `cnctl proc --json` and an
# independent raw netlink reader (raw_reader) listen side by side while
# fork_storm forks N children. Both must report the same number of fork
# events of those children (parent_pid == the storm's pid) and exit events of
# those children (matched by pid: an exit event carries parent 0 when the
# parent reaped the child before the kernel sent it), every line cnctl prints
# must be valid JSON, and when neither reported loss both counts must be
# exactly N (with the same sum of exit statuses as the storm saw).
# cnctl may not lose what the raw reader did not lose. When both lose (other
# load on the machine overran both buffers) the run proves nothing and is
# repeated, up to STORM_CHECK_ATTEMPTS (3) times.
#
# Usage: storm_check.sh CNCTL RAW_READER FORK_STORM [N] [RCVBUF]
# RCVBUF (e.g. 16M) is used for both readers.
# Exit: 0 pass, 1 fail, 77 skip (not root, no proc connector).
set -u -o pipefail

if [ -z "${STORM_CHECK_ATTEMPT:-}" ]; then
	attempts=${STORM_CHECK_ATTEMPTS:-3}
	for i in $(seq 1 "$attempts"); do
		STORM_CHECK_ATTEMPT=$i bash "$0" "$@"
		rc=$?
		[ $rc = 3 ] || exit $rc
		echo "attempt $i of $attempts inconclusive"
	done
	echo "FAIL: every attempt inconclusive (both readers lost events)"
	exit 1
fi

CNCTL=$1
RAW=$2
STORM=$3
N=${4:-10000}
RCVBUF=${5:-8M}
RCVBUF_BYTES=$(numfmt --from=iec "$RCVBUF") || exit 1
DEADLINE=${STORM_CHECK_DEADLINE:-300}	# seconds; a safety net, not a sync

. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "the storm check needs root"
command -v python3 >/dev/null || skip "python3 not found"
dir=$(mktemp -d "${TMPDIR:-/tmp}/cnctl-storm.XXXXXX") || exit 1
storm= raw= cn=
cleanup() {
	for p in $storm $raw $cn; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "files kept in $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

# fail MESSAGE [STATUS]: 1 fail, 3 inconclusive (retried by the caller)
fail() {
	echo "FAIL: $1"
	show_tail 5 "$dir/storm.err" "$dir/raw.err" "$dir/cnctl.err"
	[ "${2:-1}" = 1 ] && KEEP=1 # the outputs, for a post-mortem
	exit "${2:-1}"
}

start=$(date +%s)
expired() { [ $(($(date +%s) - start)) -ge "$DEADLINE" ]; }
alive() { kill -0 "$1" 2>/dev/null; }

# Wait (polling the marker, with a deadline) until file $2 matches $3 while
# process $1 runs. Returns 0 found, 1 the process ended, 2 deadline.
wait_marker() {
	while ! grep -q -e "$3" "$2" 2>/dev/null; do
		alive "$1" || { grep -q -e "$3" "$2" 2>/dev/null && return 0; return 1; }
		expired && return 2
		sleep 0.05
	done
	return 0
}

# The storm first: it prints its pid and waits for "go" on its stdin (a FIFO
# opened read-write, so neither side blocks in open).
mkfifo "$dir/go" || exit 1
exec 3<>"$dir/go"
"$STORM" "$N" <&3 >"$dir/storm.out" 2>"$dir/storm.err" &
storm=$!
wait_marker "$storm" "$dir/storm.out" '^[0-9]' || fail "fork_storm did not start"
P=$(head -n 1 "$dir/storm.out")
[ "$P" = "$storm" ] || fail "fork_storm says pid $P, the shell says $storm"

"$RAW" --parent "$P" --rcvbuf "$RCVBUF_BYTES" >"$dir/raw.out" 2>"$dir/raw.err" &
raw=$!
"$CNCTL" proc --json --rcvbuf "$RCVBUF" >"$dir/cnctl.out" 2>"$dir/cnctl.err" &
cn=$!

wait_marker "$raw" "$dir/raw.err" '^ready$'
case $? in
1)	wait "$raw"; rc=$?
	[ $rc = 77 ] && skip "raw reader: $(tail -n 1 "$dir/raw.err")"
	fail "raw_reader exited ($rc) before it was ready" ;;
2)	fail "raw_reader not ready after ${DEADLINE}s" ;;
esac
# With --json cnctl's messages are objects on stdout too.
wait_marker "$cn" "$dir/cnctl.out" 'listening for proc events'
case $? in
1)	wait "$cn"; rc=$?
	case $rc in
	3|4) skip "$(tail -n 1 "$dir/cnctl.err")" ;;
	esac
	fail "cnctl exited ($rc) before it was listening" ;;
2)	fail "cnctl not listening after ${DEADLINE}s" ;;
esac

# Go.
t0=$(date +%s.%N)
echo go >&3
exec 3>&-
wait "$storm"
rc=$?
storm=
t1=$(date +%s.%N)
[ $rc = 0 ] || fail "fork_storm failed ($rc)"
read -r storm_forks storm_sum <<<"$(sed -n 's/^forks=\([0-9]*\) exit_status_sum=\([0-9]*\)$/\1 \2/p' "$dir/storm.out")"
[ "$storm_forks" = "$N" ] || fail "fork_storm forked '$storm_forks', not $N"

# The raw reader stops by itself once it has the storm's exit event and an
# exit event for every child it saw fork.
while alive "$raw" && ! expired; do sleep 0.05; done
alive "$raw" && { echo "note: raw_reader did not see the whole storm end; stopping it"; kill -TERM "$raw"; }
wait "$raw"
rc=$?
raw=
[ $rc = 0 ] || fail "raw_reader failed ($rc)"

# Everything the raw reader received was queued to cnctl's socket at the same
# moment (one broadcast). A marker process forked now is therefore behind all
# of the storm in cnctl's queue: once cnctl prints it, cnctl is through.
( exit 0 ) &
marker=$!
wait "$marker"
wait_marker "$cn" "$dir/cnctl.out" "\"pid\":$marker,\"thread_id\":$marker[,}]"
case $? in
1)	fail "cnctl ended before the end of the storm" ;;
2)	echo "note: cnctl never printed the marker process $marker" ;;
esac
kill -INT "$cn"
wait "$cn"
rc=$?
cn=
[ $rc = 0 ] || fail "cnctl exited $rc after SIGINT (expected 0)"

# Every line valid JSON with a type; the events with the common keys; the
# storm's children counted; the summary and loss reports are objects too.
read -r cn_forks cn_exits cn_sum cn_lines cn_orphans cn_printed cn_lost cn_overruns cn_loss_lines <<<"$(python3 - "$dir/cnctl.out" "$P" <<'PY'
import json, sys
path, parent = sys.argv[1], int(sys.argv[2])
forks = exits = total = lines = orphans = losses = 0
summary = None
children = set()
with open(path, "rb") as f:
    data = f.read()
if data and not data.endswith(b"\n"):
    sys.exit("last line is not terminated")
for no, raw in enumerate(data.splitlines(), 1):
    try:
        ev = json.loads(raw.decode("utf-8"))
    except Exception as e:
        sys.exit("line %d is not valid JSON (%s): %r" % (no, e, raw[:200]))
    if ev.get("schema") != 3 or "type" not in ev:
        sys.exit("line %d has no type or schema 3: %r" % (no, raw[:200]))
    if ev["type"] == "summary":
        summary = ev
        continue
    if ev["type"] == "loss":
        losses += 1
        continue
    if ev["type"] != "event":
        continue
    lines += 1
    for k in ("action", "time", "cpu", "seq", "monotonic_ns", "pid", "thread_id"):
        if k not in ev:
            sys.exit("line %d has no %r: %r" % (no, k, raw[:200]))
    pid = ev["thread_id"]
    if ev["action"] == "fork" and ev["parent_pid"] == parent and ev["pid"] == pid:
        forks += 1
        children.add(pid)
    elif ev["action"] == "exit" and pid in children and ev["pid"] == pid:
        children.discard(pid)
        exits += 1
        # The event's own parent: parent_pid falls back to cnctl's tables.
        orphans += "parent_thread_id" not in ev
        if ev["status"] == "exited":
            total += ev["exit_code"]
if summary is None or not summary.get("gaps_tracked"):
    sys.exit("no summary object with gaps tracked: %r" % summary)
print(forks, exits, total, lines, orphans, summary["printed"], summary["missing"],
      summary["overruns"], losses)
PY
)"
[ -n "$cn_lines" ] || fail "cnctl output check failed (see above)"
[ "$cn_lines" = "$cn_printed" ] || fail "cnctl printed $cn_lines lines but its summary says $cn_printed"

read -r raw_forks raw_exits raw_sum raw_lost raw_overruns raw_orphans <<<"$(sed -E 's/^forks=([0-9]+) exits=([0-9]+) exit_status_sum=([0-9]+) lost=([0-9]+) overruns=([0-9]+) orphan_exits=([0-9]+)$/\1 \2 \3 \4 \5 \6/' "$dir/raw.out")"
[ -n "$raw_orphans" ] || fail "no result from raw_reader"

cn_loss=$((cn_lost + cn_overruns + cn_loss_lines))
raw_loss=$((raw_lost + raw_overruns))
secs=$(echo "$t1 - $t0" | bc 2>/dev/null || echo "?")
echo "storm: pid $P, $N forks in ${secs}s, exit status sum $storm_sum"
echo "cnctl: forks=$cn_forks exits=$cn_exits exit_status_sum=$cn_sum lost=$cn_lost overruns=$cn_overruns orphan_exits=$cn_orphans lines=$cn_lines"
echo "raw:   forks=$raw_forks exits=$raw_exits exit_status_sum=$raw_sum lost=$raw_lost overruns=$raw_overruns orphan_exits=$raw_orphans"

if [ $cn_loss -gt 0 ] && [ $raw_loss -eq 0 ]; then
	fail "cnctl lost events where the raw reader lost none"
fi
if [ $cn_loss -gt 0 ]; then
	fail "both readers lost events: other load outran both, inconclusive" 3
fi
# cnctl lost nothing: it must have seen the whole storm.
[ "$cn_forks" = "$N" ] && [ "$cn_exits" = "$N" ] && [ "$cn_sum" = "$storm_sum" ] ||
	fail "cnctl reported no loss but counted forks=$cn_forks exits=$cn_exits sum=$cn_sum"
if [ $raw_loss -eq 0 ]; then
	[ "$raw_forks" = "$cn_forks" ] && [ "$raw_exits" = "$cn_exits" ] &&
		[ "$raw_sum" = "$cn_sum" ] || fail "counts differ between cnctl and the raw reader"
else
	echo "note: the raw reader lost events (cnctl did not): counts compared with N only"
fi
echo "PASS"
exit 0
