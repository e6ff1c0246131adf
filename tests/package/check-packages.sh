#!/usr/bin/env bash
# Build the .deb packages as a packager would (a build of its own with
# -DCMAKE_INSTALL_PREFIX=/usr, CPack), fail on any lintian error, install
# the library's packages on this machine, use what they installed (cnctl,
# pkg-config, find_package, man pages, the shlibs/symbols dependency a
# consumer gets), then remove them again. cnbus-dkms is built and linted
# here, and copied to DEBS_DIR for check-dkms-package.sh, which installs it
# in a throw-away root (here it would build modules into this machine's
# /lib/modules). Needs root; exits 77 (skipped) otherwise.
# Usage: check-packages.sh SOURCE_DIR [DEBS_DIR]
set -euo pipefail
src=$1
debs_dir=${2:-}
if [ "$(id -u)" -ne 0 ] || ! command -v dpkg >/dev/null || ! command -v lintian >/dev/null; then
	echo "SKIP: needs root, dpkg and lintian (scripts/install-deps test)"
	exit 77
fi
out=$(mktemp -d)
cleanup() {
	dpkg -r cnctl libcn-dev libcn0 >/dev/null 2>&1 || true
	rm -rf "$out"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

cmake -S "$src" -B "$out/build" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCN_BUILD_TESTS=OFF -DCN_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$out/build" -j2 --target cn cn_static cnctl man_pages deb_changelog >/dev/null
(cd "$out" && cpack --config "$out/build/CPackConfig.cmake" -B "$out/debs" >/dev/null 2>&1)
all_debs=("$out"/debs/*.deb)
[ ${#all_debs[@]} -eq 4 ] || fail "expected 4 packages, got ${#all_debs[@]}: ${all_debs[*]##*/}"
dkms_deb=("$out"/debs/cnbus-dkms_*_all.deb)
[ -f "${dkms_deb[0]}" ] || fail "no cnbus-dkms package"
debs=("$out"/debs/libcn0_*.deb "$out"/debs/libcn-dev_*.deb "$out"/debs/cnctl_*.deb)
ddebs=("$out"/debs/libcn0-dbgsym_*.ddeb "$out"/debs/cnctl-dbgsym_*.ddeb)
ls "${ddebs[@]}" >/dev/null || fail "no -dbgsym packages with the split debug symbols"

# Lintian: no error on the packages, the -dbgsym ones too (warnings are printed).
lintian --tag-display-limit 0 "${all_debs[@]}" "${ddebs[@]}" >"$out/lintian.txt" 2>&1 || true
grep -v '^running with root' "$out/lintian.txt" || true
errors=$(grep -c '^E:' "$out/lintian.txt" || true)
[ "$errors" -eq 0 ] || fail "lintian: $errors errors"

# Stripped: no .debug_info left in the shipped binaries; ldconfig runs
# through a trigger, not maintainer scripts.
dpkg-deb --ctrl-tarfile "$out"/debs/libcn0_*.deb | tar -t | grep -qx './triggers' ||
	fail "libcn0 has no ldconfig trigger"
dpkg-deb -x "$out"/debs/cnctl_*.deb "$out/x"
dpkg-deb -x "$out"/debs/libcn0_*.deb "$out/x"
for f in "$out"/x/usr/bin/cnctl "$out"/x/usr/lib/*/libcn.so.0.*; do
	! readelf -S "$f" | grep -q '\.debug_info' || fail "$f is not stripped"
done

if [ -n "$debs_dir" ]; then
	mkdir -p "$debs_dir"
	rm -f "$debs_dir"/*.deb
	cp "${all_debs[@]}" "$debs_dir"/
fi

dpkg -i "${debs[@]}" >/dev/null

# The tool runs from the system libdir (no RUNPATH in a package).
cnctl --version >/dev/null || fail "installed cnctl does not run"
! readelf -d /usr/bin/cnctl | grep -q -e RPATH -e RUNPATH || fail "cnctl carries an RPATH"

# pkg-config: plain paths (no /usr/lib/pkgconfig/../.. chains).
flags=$(pkg-config --cflags --libs libcn)
case $flags in *..*) fail "pkg-config paths are not clean: $flags" ;; esac
pkg-config --variable=libdir libcn | grep -qx "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)" ||
	fail "libdir is not the multiarch one: $(pkg-config --variable=libdir libcn)"

cc -Wall -Werror "$src/tests/install/consumer.c" -o "$out/consumer" $flags
"$out/consumer" | grep -qx "consumer: exit"
cmake -S "$src/tests/install/cmake-consumer" -B "$out/cm" >/dev/null
cmake --build "$out/cm" >/dev/null
"$out/cm/consumer" | grep -qx "consumer: exit"
man -w cn_recv >/dev/null 2>&1 || fail "man page cn_recv(3) not installed"

# A consumer's package gets a libcn0 dependency from libcn0's shlibs/symbols.
mkdir -p "$out/shl/debian"
printf 'Source: consumer\n\nPackage: consumer\nArchitecture: any\n' >"$out/shl/debian/control"
deps=$(cd "$out/shl" && dpkg-shlibdeps -O "$out/consumer" 2>&1)
echo "$deps" | grep -q 'libcn0 (>= ' || fail "no libcn0 dependency for a consumer: $deps"

dpkg -r cnctl libcn-dev libcn0 >/dev/null
! ls /usr/lib/*/libcn.so.0 >/dev/null 2>&1 || fail "libcn0 left files behind"
echo "packages: $(cd "$out/debs" && ls *.deb | tr '\n' ' ')lintian: 0 errors; the library's installed, used and removed cleanly"
