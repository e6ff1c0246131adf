#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The release tarball (scripts/dist, of HEAD) stands on its own: it holds
# no .git, the licenses and a NEWS entry for its version; unpacked
# elsewhere it configures and builds with the tests and examples (-Werror)
# and passes the tiers of CN_TARBALL_TIERS (a ctest -L regex; in CI,
# CI=true, 'unit|install': the release is what a distribution builds and
# tests, and nothing of this checkout may be what made them pass; elsewhere
# 'unit', a minute; 'unit|host|install' runs the host tier from it too,
# which CI leaves out for its time budget, the main build running that tier
# against the same files); and it defines
# the same tests of the unit, host and install tiers as this build (none
# lost for want of a file git tracks but the tarball lacks, or one it does
# not track). A tarball build has no git to make a tarball with, so CMake
# adds this test only to a build of a git checkout.
# Usage: check-tarball.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tiers=unit
[ "${CI:-}" != true ] || tiers='unit|install'
tiers=${CN_TARBALL_TIERS:-$tiers}
fail() {
	echo "FAIL: $*"
	exit 1
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

tarball=$("$src/scripts/dist" "$dir")
tar -C "$dir" -xzf "$tarball"
name=$(basename "$tarball" .tar.gz)
top=$dir/$name
version=${name#libcn-}
[ ! -e "$top/.git" ] || fail "$tarball holds .git"
for f in COPYING kmod/COPYING NEWS abi/libcn.so.0.abi; do
	[ -f "$top/$f" ] || fail "$tarball has no $f"
done
grep -qx "$version" "$top/NEWS" || fail "NEWS has no entry for $version"

# The tarball's own build, niced: CI runs other stages beside it.
cmake -S "$top" -B "$top/build" -DCN_BUILD_TESTS=ON -DCN_BUILD_EXAMPLES=ON -DCN_WERROR=ON \
	>"$dir/configure.log" 2>&1 || fail "configure from the tarball: $(tail -n 20 "$dir/configure.log")"
nice -n 10 cmake --build "$top/build" -j"$(nproc)" >"$dir/build.log" 2>&1 ||
	fail "build from the tarball: $(grep -m 20 -e error -e Error "$dir/build.log")"
# The tarball's own ctest-ci: in CI a test skipped there fails it too.
(cd "$top/build" && ../scripts/ctest-ci --output-on-failure -L "$tiers") ||
	fail "ctest -L '$tiers' from the tarball"

# ctest -N: the same tests as this build's.
list() {
	(cd "$1" && ctest -N -L 'unit|host|install') | sed -n 's/^ *Test *#[0-9]*: //p' |
		grep -vx install_release_tarball | sort
}
diff -u <(list "$build") <(list "$top/build") ||
	fail "the tarball's build defines other tests than this one (- here, + tarball)"
echo "PASS: $name.tar.gz: no .git, licenses, NEWS; built and passed '$tiers' from it;" \
	"its unit, host and install tiers list the tests this build has ($(list "$build" | wc -l))"
