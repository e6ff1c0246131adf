#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# journal_check.sh - cnctl-proc.service's output in the real journal: Debian
# 12's systemd-journald, run on its own in a private mount namespace (its
# sockets, config and journal on tmpfs there; the machine's journal is
# never touched), and cnctl started as systemd starts the unit: the unit's
# ExecStart arguments, stdout and stderr on journald's stream socket (as
# StandardOutput=journal), in a cgroup named after the unit (journald names
# and rate-limits an entry's unit by its sender's cgroup), and the unit's
# LogRateLimitIntervalSec=/LogRateLimitBurst= handed to journald as systemd
# 252 hands them (a link per unit in /run/systemd/units, left out for 0).
# The checks read the journal with the recipes of cnctl(1) and the unit.
#
# Usage: journal_check.sh CNCTL UNIT_FILE FORK_STORM CASE
#   storm    fork_storm's 10,000 children (20,000 fork and exit events)
#            reach the journal whole: every event entry cnctl counted is
#            there, none suppressed, the recipes read them
#   overrun  a forced overrun is an entry at warning priority
#   restart  journald stops and starts again while cnctl runs: the entries
#            it could not take are counted, told in the journal at warning
#            priority once it is back, and in --metrics
# Exit: 0 pass, 1 fail, 77 skip (CI=true: a skip fails).
set -u -o pipefail
CNCTL=$1
UNIT=$2
STORM=$3
CASE=$4
DEADLINE=${JOURNAL_CHECK_DEADLINE:-300} # seconds; a hang guard, not a sync
JOURNALD=${JOURNALD:-/lib/systemd/systemd-journald}
CG_NAME=cnctl-proc.service

. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace, cgroups, the proc connector)"
for c in unshare jq journalctl systemd-cat systemd-analyze; do
	command -v "$c" >/dev/null || skip "no $c (scripts/install-deps test)"
done
[ -x "$JOURNALD" ] || skip "no $JOURNALD (systemd)"

# The rest runs in a mount namespace of its own: what is mounted there
# goes with it.
if [ -z "${JOURNAL_CHECK_NS:-}" ]; then
	exec unshare --mount --propagation private env JOURNAL_CHECK_NS=1 bash "$0" "$@"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/cnctl-journal.XXXXXX") || exit 1
jd= cn= storm= cgroups=()
cleanup() {
	[ -n "$storm" ] && kill "$storm" 2>/dev/null
	[ -n "$cn" ] && kill -CONT "$cn" 2>/dev/null && kill -TERM "$cn" 2>/dev/null
	[ -n "$cn" ] && wait "$cn" 2>/dev/null
	[ -n "$jd" ] && kill -TERM "$jd" 2>/dev/null && wait "$jd" 2>/dev/null
	for g in "${cgroups[@]}"; do
		rmdir "$g" 2>/dev/null
	done
	[ -n "${KEEP:-}" ] && echo "files kept in $dir" || rm -rf "$dir"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $1"
	show_tail 10 "$dir/journald.log"
	[ -s "$dir/cnctl.json" ] && jq -r '.MESSAGE' "$dir/cnctl.json" | tail -n 10
	exit 1
}

await() { # await CMD...: until CMD succeeds while journald or cnctl run, or fail
	await_cmd "$DEADLINE" "$jd $cn" "$@"
	case $? in
	1) fail "journald or cnctl exited before: $*" ;;
	2) fail "not after ${DEADLINE}s: $*" ;;
	esac
}

# A private journald: its runtime directory, sockets and config on tmpfs,
# volatile storage big enough for the storm, no kernel log, no forwarding.
# Its default rate limit is a strict machine's (systemd's own default,
# 10,000 in 30 s, is raised with the free space, up to 4 or 5 times on a
# big disk; older systemd had 1,000): the unit's setting must hold
# whatever the machine's is, and the storm passes this one.
mount -t tmpfs -o size=4g tmpfs /run/systemd || exit 1
mount -t tmpfs tmpfs /run/log || exit 1
mount -t tmpfs tmpfs /var/log/journal 2>/dev/null || true
mkdir -p /run/systemd/journal /run/systemd/units /run/log/journal "$dir/conf"
cat >"$dir/conf/journald.conf" <<'EOF'
[Journal]
Storage=volatile
RuntimeMaxUse=2G
ReadKMsg=no
Audit=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
RateLimitIntervalSec=30s
RateLimitBurst=1000
EOF
mount --bind "$dir/conf/journald.conf" /etc/systemd/journald.conf || exit 1
"$JOURNALD" >"$dir/journald.log" 2>&1 &
jd=$!
await test -S /run/systemd/journal/socket
await test -S /run/systemd/journal/stdout

# The unit's rate limit, as systemd 252's unit_export_log_ratelimit_*()
# writes it for journald (microseconds; nothing for 0).
rate() { sed -n "s/^$1=//p" "$UNIT" | tail -n 1; }
interval=$(rate LogRateLimitIntervalSec)
burst=$(rate LogRateLimitBurst)
if [ -n "$interval" ]; then
	us=$(systemd-analyze timespan "$interval" | sed -n 's/^ *μs: //p')
	[ -n "$us" ] || fail "LogRateLimitIntervalSec=$interval: not a time span"
	[ "$us" != 0 ] && ln -s "$us" "/run/systemd/units/log-rate-limit-interval:$CG_NAME"
fi
[ -n "$burst" ] && [ "$burst" != 0 ] && ln -s "$burst" "/run/systemd/units/log-rate-limit-burst:$CG_NAME"

# The unit's cgroup, in each hierarchy journald may read a sender's from.
for h in /sys/fs/cgroup/unified /sys/fs/cgroup/systemd /sys/fs/cgroup; do
	[ -f "$h/cgroup.procs" ] || continue
	[ -e "$h/$CG_NAME" ] && fail "$h/$CG_NAME exists: another run?"
	mkdir "$h/$CG_NAME" || fail "mkdir $h/$CG_NAME"
	cgroups+=("$h/$CG_NAME")
done
[ ${#cgroups[@]} -gt 0 ] || skip "no cgroup hierarchy to put the unit's process in"

args=$(sed -n 's/^ExecStart=[^ ]* proc //p' "$UNIT")
[ -n "$args" ] || fail "no 'cnctl proc' in $UNIT's ExecStart"
extra=()
[ "$CASE" = overrun ] && extra=(--rcvbuf 16K) # after the unit's: it wins
# ExecStart's --metrics path is the unit's RuntimeDirectory: here a private one.
args=$(sed "s|--metrics [^ ]*|--metrics $dir/cnctl-proc.prom|" <<<"$args")
# shellcheck disable=SC2016
CGS="${cgroups[*]}" sh -c 'for g in $CGS; do echo $$ >"$g/cgroup.procs" || exit 1; done
	exec systemd-cat --identifier=cnctl-proc "$@"' \
	sh "$CNCTL" proc $args "${extra[@]}" </dev/null &
cn=$!
# The recipes, as cnctl(1) gives them.
journal() { journalctl -u cnctl-proc -o json "$@"; }
started() { journal | jq -e -s 'any(.[]; .TYPE == "start")' >/dev/null 2>&1; }
await started
[ "$(journal | jq -r 'select(.TYPE == "start") | ._SYSTEMD_UNIT' | head -n 1)" = "$CG_NAME" ] ||
	fail "journald did not name the unit of cnctl's entries"

finish() {
	stop_int "$cn" cnctl
	cn=
	journal >"$dir/cnctl.json"
	jq -e -s 'any(.[]; .TYPE == "summary")' "$dir/cnctl.json" >/dev/null ||
		fail "no summary entry"
}

case $CASE in
storm)
	N=10000
	mkfifo "$dir/go"
	exec 3<>"$dir/go"
	"$STORM" "$N" <&3 >"$dir/storm.out" 2>&1 &
	storm=$!
	await grep -q '^[0-9]' "$dir/storm.out"
	P=$(head -n 1 "$dir/storm.out")
	echo go >&3
	wait "$storm"
	storm=
	# A marker forked after the storm is behind all of it in cnctl's
	# queue: once its exit is in the journal, the storm went through.
	(exit 3) &
	marker=$!
	wait "$marker"
	# (Or journald said it suppressed entries: then the marker may be one.)
	suppressed() { journalctl -o cat | grep -E "Suppressed [0-9]+ messages from $CG_NAME"; }
	seen() { journal ACTION=exit PID="$marker" | grep . >/dev/null || suppressed >/dev/null; }
	await seen
	suppressed && fail "journald suppressed cnctl's entries"
	finish
	# The storm's children: forks with its pid as parent, and the next exit
	# of each (a pid is used again once free), in the journal's order.
	read -r forks exits events printed missing overruns lost <<<"$(jq -r -s --arg p "$P" '
		[.[] | select(.TYPE == "event")] as $ev
		| (reduce $ev[] as $e ({kids: {}, forks: 0, exits: 0};
			if $e.ACTION == "fork" and $e.PARENT_PID == $p and $e.PID == $e.THREAD_ID then
				.kids[$e.PID] = 1 | .forks += 1
			elif $e.ACTION == "exit" and .kids[$e.PID] and $e.PID == $e.THREAD_ID then
				.kids |= del(.[$e.PID]) | .exits += 1
			else . end)) as $c
		| (.[] | select(.TYPE == "summary")) as $s
		| [$c.forks, $c.exits, ($ev | length), $s.PRINTED, $s.MISSING, $s.OVERRUNS,
		   ([.[] | select(.TYPE == "journal_loss") | .LOST_ENTRIES | tonumber] | add // 0)]
		| @tsv' "$dir/cnctl.json")"
	echo "storm: $N children; journal: $events event entries, $forks forks and $exits exits of the storm's children"
	echo "cnctl's summary: printed=$printed missing=$missing overruns=$overruns; journal entries lost: $lost"
	[ "$lost" = 0 ] || fail "cnctl could not hand $lost entries to journald"
	[ "$events" = "$printed" ] || fail "$events event entries in the journal, cnctl wrote $printed"
	if [ "$missing" = 0 ] && [ "$overruns" = 0 ]; then
		[ "$forks" = "$N" ] && [ "$exits" = "$N" ] ||
			fail "no loss reported, but $forks forks and $exits exits of $N children"
	else
		echo "note: the kernel dropped events for cnctl (reported: $missing missing, $overruns overruns)"
	fi
	# The recipes of cnctl(1) and the README: one line per event, found
	# by its fields; ARGV the JSON array of the schema (an exec whose
	# process was gone before its command line was read has none).
	# grep without -q reads to the end: journalctl must not die of SIGPIPE.
	journalctl -u cnctl-proc -o cat ACTION=exit EXIT_CODE=3 | grep "^exit $marker .* exit 3$" >/dev/null ||
		fail "no readable MESSAGE for the marker's exit: $(journalctl -u cnctl-proc -o cat ACTION=exit PID="$marker")"
	journalctl -u cnctl-proc -o cat | grep "^exit $marker " >/dev/null || fail "-o cat: no line for the marker"
	journalctl -u cnctl-proc ACTION=exec -o json | jq -e -s 'map(select(.ARGV)) | length > 0 and
		all(.[]; .ARGV | fromjson | type == "array")' >/dev/null ||
		fail "no exec entry with ARGV as a JSON array"
	echo "ok: $events event entries, as cnctl counted; none suppressed"
	;;
overrun)
	kill -STOP "$cn"
	for i in $(seq 400); do /bin/true; done # 1,200 events: past 16 KiB
	kill -CONT "$cn"
	loss() { journalctl -u cnctl-proc -p warning -o json | jq -e -s 'any(.[]; .TYPE == "loss")' >/dev/null; }
	await loss
	finish
	journalctl -u cnctl-proc -p warning | tail -n 3
	jq -e -s 'all(.[] | select(.TYPE == "loss"); .PRIORITY == "4")' "$dir/cnctl.json" >/dev/null ||
		fail "a loss entry not at warning (4)"
	jq -e -s 'any(.[]; .TYPE == "loss" and (.OVERRUNS | tonumber) > 0)' "$dir/cnctl.json" >/dev/null ||
		fail "no loss entry counts the overrun"
	jq -e -s 'any(.[]; .TYPE == "summary" and .PRIORITY == "4")' "$dir/cnctl.json" >/dev/null ||
		fail "the summary of a run with loss is not at warning"
	jq -e -s 'all(.[] | select(.TYPE == "event"); .PRIORITY == "6")' "$dir/cnctl.json" >/dev/null ||
		fail "events not at info"
	echo "ok: the overrun is at warning priority"
	;;
restart)
	kill -TERM "$jd"
	wait "$jd"
	jd=
	for i in $(seq 20); do /bin/true; done # 60 events journald cannot take
	"$JOURNALD" >>"$dir/journald.log" 2>&1 &
	jd=$!
	# Events until one goes through: then cnctl tells what was lost.
	told() { /bin/true; journal | jq -e -s 'any(.[]; .TYPE == "journal_loss")' >/dev/null; }
	await told
	finish
	journalctl -u cnctl-proc -p warning -o cat | grep 'handed to journald' | head -n 3
	lost=$(jq -r -s '[.[] | select(.TYPE == "journal_loss" and .PRIORITY == "4") | .LOST_ENTRIES | tonumber] | add // 0' "$dir/cnctl.json")
	counted=$(sed -n 's/^cnctl_proc_events_lost_total{source="journal"} //p' "$dir/cnctl-proc.prom")
	echo "journal_loss entries: $lost entries lost; --metrics: $counted"
	[ "$lost" -gt 0 ] || fail "no entry lost while journald was stopped?"
	[ "$lost" = "$counted" ] || fail "the journal was told $lost lost entries, --metrics counts $counted"
	echo "ok: the entries journald could not take were counted and told"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
exit 0
