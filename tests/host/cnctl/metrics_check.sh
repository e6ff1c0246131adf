#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# metrics_check.sh - `cnctl proc --metrics` read by the real node_exporter
# (Debian's prometheus-node-exporter), its textfile collector alone, on
# 127.0.0.1 with a private directory, set up as cnctl(1)'s recipe for the
# unit says: cnctl writes its RuntimeDirectory's file, the collector's
# directory holds a link to it. A forced overrun (a small buffer, cnctl
# stopped, a burst): a scrape while cnctl runs shows the overrun, and the
# counters scraped after cnctl's exit equal its own summary's.
#
# Usage: metrics_check.sh CNCTL   Exit: 0 pass, 1 fail, 77 skip (CI=true:
# a skip fails).
set -u -o pipefail
CNCTL=$1
DEADLINE=${METRICS_CHECK_DEADLINE:-120} # seconds; a hang guard, not a sync
EXPORTER=${NODE_EXPORTER:-prometheus-node-exporter}

. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (a forced small receive buffer)"
for c in "$EXPORTER" python3 jq; do
	command -v "$c" >/dev/null || skip "no $c (scripts/install-deps test)"
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/cnctl-metrics.XXXXXX") || exit 1
ne= cn=
cleanup() {
	[ -n "$cn" ] && kill -CONT "$cn" 2>/dev/null && kill -TERM "$cn" 2>/dev/null
	[ -n "$ne" ] && kill -TERM "$ne" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $1"
	show_tail 10 "$dir/exporter.log" "$dir/out" "$dir/scrape"
	exit 1
}

await() { # await CMD...: until CMD succeeds while node_exporter or cnctl run, or fail
	await_cmd "$DEADLINE" "$ne $cn" "$@"
	case $? in
	1) fail "node_exporter or cnctl exited before: $*" ;;
	2) fail "not after ${DEADLINE}s: $*" ;;
	esac
}

mkdir "$dir/textfile" "$dir/run"
ln -s "$dir/run/cnctl-proc.prom" "$dir/textfile/cnctl-proc.prom"
# A free port on 127.0.0.1 (chosen by the kernel, then given back).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$EXPORTER" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$dir/textfile" >"$dir/exporter.log" 2>&1 &
ne=$!
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
	"http://127.0.0.1:$port/metrics" >"$dir/scrape" 2>/dev/null; }
await scrape

"$CNCTL" proc --json --rcvbuf 16K --metrics "$dir/run/cnctl-proc.prom" >"$dir/out" 2>&1 </dev/null &
cn=$!
await grep -q '"type":"start"' "$dir/out"
metric() { sed -n "s/^$1 //p" "$dir/scrape"; }
has_file() { scrape && [ -n "$(metric cnctl_proc_events_read_total)" ]; }
await has_file

kill -STOP "$cn"
for i in $(seq 400); do /bin/true; done # 1,200 events: past 16 KiB
kill -CONT "$cn"
overrun() { scrape && [ "$(metric cnctl_proc_receive_overruns_total)" -gt 0 ] 2>/dev/null; }
await overrun
echo "while cnctl runs: $(grep -E '^cnctl_proc_(receive_overruns|events_lost)' "$dir/scrape" | tr '\n' ' ')"

kill -INT "$cn"
wait "$cn"
rc=$?
cn=
[ "$rc" = 0 ] || fail "cnctl exited $rc after SIGINT"
scrape || fail "no scrape after cnctl's exit"
grep '^cnctl_' "$dir/scrape"
grep -q '^node_textfile_scrape_error 0$' "$dir/scrape" || fail "node_exporter could not read the file"
summary=$(jq -c 'select(.type == "summary")' "$dir/out")
[ -n "$summary" ] || fail "no summary"
echo "summary: $summary"
check() { # check METRIC SUMMARY_KEY
	local want got
	want=$(jq -r ".$2" <<<"$summary")
	got=$(metric "$1")
	[ "$got" = "$want" ] || fail "$1 is '$got', the summary's $2 is '$want'"
}
check cnctl_proc_events_read_total read
check cnctl_proc_events_written_total printed
check 'cnctl_proc_events_lost_total{source="sequence_gap"}' missing
check cnctl_proc_receive_overruns_total overruns
check cnctl_proc_kernel_drops_total kernel_drops
check cnctl_proc_resyncs_total resyncs
[ "$(metric cnctl_proc_receive_overruns_total)" -gt 0 ] || fail "no overrun counted"
echo "ok: the scraped counters are the summary's"
