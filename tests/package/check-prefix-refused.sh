#!/usr/bin/env bash
# cpack -G DEB refuses a build configured for another prefix than /usr
# (CMake's default /usr/local here), saying how to configure one, and
# writes no package: its paths (libdir, libcn.pc, RUNPATH) would be
# /usr/local ones inside /usr packages (cmake/CnCpackChecks.cmake).
# Usage: check-prefix-refused.sh SOURCE_DIR
set -euo pipefail
src=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

cmake -S "$src" -B "$out/build" -DCMAKE_INSTALL_PREFIX=/usr/local \
	-DCN_BUILD_TESTS=OFF -DCN_BUILD_EXAMPLES=OFF >/dev/null
if (cd "$out" && cpack -G DEB --config "$out/build/CPackConfig.cmake" -B "$out/debs") >"$out/cpack.txt" 2>&1; then
	cat "$out/cpack.txt"
	fail "cpack -G DEB packaged a /usr/local build"
fi
cat "$out/cpack.txt"
grep -q 'this build installs to /usr/local' "$out/cpack.txt" || fail "no reason given"
grep -q -- '-DCMAKE_INSTALL_PREFIX=/usr$' "$out/cpack.txt" || fail "no way out given"
! ls "$out"/debs/*.deb 2>/dev/null || fail "packages written"
echo "PASS: cpack -G DEB refused the /usr/local build and said how to make packages"
