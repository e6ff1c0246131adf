# SPDX-License-Identifier: LGPL-2.1-or-later
#
# skip.sh - the test tiers' one skip rule; source it (sh or bash):
#   . "$(dirname "$0")/../skip.sh"
# A test that cannot run here (no root, no kernel support, a missing
# package) skips: exit 77, which CTest reports as skipped. CI must run
# everything, so with CI=true a skip is a failure (exit 1) instead;
# scripts/ctest-ci catches a test that exits 77 without this.

# skip REASON...: skip the test (or fail it in CI) with REASON.
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (a skip in CI): $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
