#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages are reproducible: reprotest builds them twice from a
# copy of the source (README's recipe: a /usr build, cpack -G DEB), the
# second time with every variation it has but user_group (it needs spare
# users and sudo): environment, build path, kernel (uname), ASLR, CPU count,
# the clock (faketime), file order (disorderfs), domain and host name, home,
# locale, PATH, time zone, umask. Every .deb and .ddeb must be bit for bit
# the same. On a difference, each package that differs is shown (what
# dpkg-deb lists, the md5sums of its files), reprotest keeps both builds
# in STORE_DIR, and reprotest --auto-build names the variations that make
# the difference: it builds again varying one more of them at a time
# (about a build each, only after a failure; the test's timeout allows
# 20). Causes found and fixed: cmake/CnFixDebs.cmake (times, modes),
# cmake/CnInstall.cmake (the build tree's RPATH).
# Needs reprotest, faketime, disorderfs (FUSE: /dev/fuse) and dpkg-dev;
# exits 77 (skipped) otherwise, or fails with CI=true.
# Usage: check-reproducible.sh SOURCE_DIR STORE_DIR
# Environment: CN_REPRO_VARIATIONS, reprotest's --variations (default
#   +all,-user_group; e.g. -all,+time to check one cause's fix quickly).
set -euo pipefail
src=$1
store=$2
# shellcheck source=../host/lib.sh
. "$src/tests/host/lib.sh"
fail() {
	echo "FAIL: $*"
	exit 1
}

for tool in reprotest faketime disorderfs dpkg-deb; do
	command -v "$tool" >/dev/null || skip "$tool not installed (scripts/install-deps test)"
done
[ -c /dev/fuse ] || skip "no /dev/fuse for disorderfs (reprotest's fileordering)"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The source without build trees or git: reprotest copies it for each build.
mkdir "$dir/src"
tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$dir/src" -xf -
rm -rf "$store"
build='cmake -S . -B b -DCMAKE_INSTALL_PREFIX=/usr -DCN_BUILD_TESTS=OFF -DCN_BUILD_EXAMPLES=OFF >/dev/null &&
	cmake --build b -j2 >/dev/null && cd b && cpack -G DEB -B ../debs >/dev/null'
vary=(--no-diffoscope "--variations=${CN_REPRO_VARIATIONS:-+all,-user_group}" -s src "$build" 'debs/*.deb debs/*.ddeb')
# quiet LOG: LOG without the locale warnings of the locale variation.
quiet() {
	grep -v -e '^perl: warning' -e '^\s*LANG' -e '^\s*LC_' -e 'are supported and installed' "$1"
}
rc=0
(cd "$dir" && reprotest --store-dir="$store" "${vary[@]}") >"$dir/reprotest.log" 2>&1 || rc=$?
quiet "$dir/reprotest.log" | tail -n 30
[ "$rc" != 0 ] || {
	echo "PASS: the packages are the same bit for bit across reprotest's variations (${CN_REPRO_VARIATIONS:-+all,-user_group})"
	exit 0
}
[ -d "$store/experiment-1" ] || fail "reprotest: status $rc, no builds to compare (above)"
for a in "$store"/control/source-root/debs/*.*deb; do
	b=$store/experiment-1/source-root/debs/${a##*/}
	cmp -s "$a" "$b" && continue
	echo "--- ${a##*/} differs: its listing, its files' md5sums (- control, + varied)"
	diff -u <(dpkg-deb -c "$a") <(dpkg-deb -c "$b") || true
	diff -u <(dpkg-deb -I "$a" md5sums) <(dpkg-deb -I "$b" md5sums) || true
done
echo "--- which variations make the difference (reprotest --auto-build):"
(cd "$dir" && reprotest --auto-build "${vary[@]}") >"$dir/auto.log" 2>&1 || true
quiet "$dir/auto.log" | grep -A 1 -e '^Observed unreproducibility' -e '^Not reproducible' -e '^Reproducible' ||
	quiet "$dir/auto.log" | tail -n 30
named=$(sed -n '/^Observed unreproducibility/{n;p;}' "$dir/auto.log")
[ -n "$named" ] || named="no single variation (above)"
fail "the packages differ between two builds (above; both builds in $store);" \
	"the variations that make them differ: $named"
