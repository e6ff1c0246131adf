# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lib.sh - what the host tier's shell checks share; source it:
#   . "$(dirname "$0")/../lib.sh"
# (bash). A check keeps its own fail(), naming its own outputs.

# skip REASON: exit 77, CTest's skip; in CI (CI=true) everything must run,
# so a skip fails there instead.
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (a skip in CI): $1"
		exit 1
	fi
	echo "SKIP: $1"
	exit 77
}

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
