# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lib.sh - what the host tier's shell checks share; source it:
#   . "$(dirname "$0")/../lib.sh"
# (bash). A check keeps its own fail(), naming its own outputs.

# skip REASON: exit 77 (skipped), or fail in CI (tests/skip.sh).
. "${BASH_SOURCE[0]%/*}/../skip.sh"

# show_tail N FILE...: the last N lines of each FILE that is not empty,
# under its name (what a failure shows of the outputs).
show_tail() {
	local n=$1 f
	shift
	for f; do
		[ -s "$f" ] && { echo "--- ${f##*/} (last lines)"; tail -n "$n" "$f"; }
	done
	return 0
}

# await_cmd SECONDS "PID..." CMD...: run CMD every 0.1 s until it succeeds.
# Returns 0; 1 once one of the PIDs (space-separated) has ended (the
# processes CMD waits on); 2 after SECONDS, a hang guard, not a sync.
await_cmd() {
	local secs=$1 pids=$2 start=$SECONDS p
	shift 2
	until "$@"; do
		for p in $pids; do
			kill -0 "$p" 2>/dev/null || return 1
		done
		[ $((SECONDS - start)) -ge "$secs" ] && return 2
		sleep 0.1
	done
	return 0
}

# stop_int PID WHAT: end the process PID with SIGINT, as a person at its
# terminal would, and fail (the caller's fail()) unless it exits 0: a
# program that takes SIGINT as its way to end must end cleanly on it.
stop_int() {
	local pid=$1 what=$2 rc=0
	kill -INT "$pid" || fail "$what ($pid) had already ended before SIGINT"
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || fail "$what exited $rc after SIGINT"
}
