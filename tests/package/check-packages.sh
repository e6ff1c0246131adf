#!/usr/bin/env bash
# Build the .deb packages as a packager would (README's recipe: a build of
# its own with -DCMAKE_INSTALL_PREFIX=/usr, CPack), lint them as Debian
# does (lintian -I --pedantic: not one tag, but those overridden with a
# reason in the package), check that the binaries are built with Debian's
# hardening flags and stripped as dh_strip strips, then, in a throw-away
# root (throwaway-root.sh: an overlay of / in a private mount namespace, so
# this machine's packages and dpkg database are never touched), install the
# library's packages with dpkg -i, use what they installed (cnctl,
# pkg-config, find_package, man pages, the shlibs/symbols dependency a
# consumer gets) and remove them again: nothing of them may be left.
# cnbus-dkms is built and linted here, and copied to DEBS_DIR for
# check-dkms-package.sh, which installs it in a throw-away root too.
# Needs root, dpkg, lintian, unshare and overlayfs; exits 77 (skipped)
# otherwise, or fails with CI=true (CI must run everything).
# Usage: check-packages.sh SOURCE_DIR [DEBS_DIR]
set -euo pipefail
src=$1
debs_dir=${2:-}
# shellcheck source=throwaway-root.sh
. "$(dirname "$0")/throwaway-root.sh"

fail() {
	echo "FAIL: $*"
	exit 1
}
. "$(dirname "$0")/../skip.sh"

if [ -z "${CN_IN_NAMESPACE:-}" ]; then
	why=$(troot_can_run) || skip "$why"
	for tool in dpkg dpkg-deb lintian readelf; do
		command -v "$tool" >/dev/null || skip "$tool not installed (scripts/install-deps test)"
	done
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT

	cmake -S "$src" -B "$out/build" -DCMAKE_INSTALL_PREFIX=/usr \
		-DCN_BUILD_TESTS=OFF -DCN_BUILD_EXAMPLES=OFF >"$out/configure.log" ||
		fail "configure: $(cat "$out/configure.log")"
	grep -q "Debian packages: dpkg-buildflags" "$out/configure.log" ||
		fail "the /usr build did not take dpkg-buildflags' flags: $(cat "$out/configure.log")"
	cmake --build "$out/build" -j2 >/dev/null
	(cd "$out/build" && cpack -G DEB -B "$out/debs" >"$out/cpack.log" 2>&1) ||
		fail "cpack: $(cat "$out/cpack.log")"
	all_debs=("$out"/debs/*.deb)
	[ ${#all_debs[@]} -eq 4 ] || fail "expected 4 packages, got ${#all_debs[@]}: ${all_debs[*]##*/}"
	dkms_deb=("$out"/debs/cnbus-dkms_*_all.deb)
	[ -f "${dkms_deb[0]}" ] || fail "no cnbus-dkms package"
	ddebs=("$out"/debs/libcn0-dbgsym_*.ddeb "$out"/debs/cnctl-dbgsym_*.ddeb)
	ls "${ddebs[@]}" >/dev/null || fail "no -dbgsym packages with the split debug symbols"

	# Lintian as Debian's archive checks, info and pedantic tags too: not
	# one tag on the four packages and the -dbgsym ones (a tag that stays
	# has an override with its reason in the package).
	# lintian's own status counts too (an error tag, or lintian dying);
	# grep's 1 is only "no line left".
	lintian -I --pedantic --tag-display-limit 0 "${all_debs[@]}" "${ddebs[@]}" >"$out/lintian.raw" 2>&1 ||
		fail "lintian exited $?: $(tail -n 20 "$out/lintian.raw")"
	grep -v '^running with root' "$out/lintian.raw" >"$out/lintian.txt" || [ $? = 1 ]
	if [ -s "$out/lintian.txt" ]; then
		cat "$out/lintian.txt"
		fail "lintian -I --pedantic: $(wc -l <"$out/lintian.txt") tags"
	fi
	echo "lintian -I --pedantic: no tag on ${all_debs[*]##*/} ${ddebs[*]##*/}"

	# ldconfig runs through a trigger, not maintainer scripts.
	dpkg-deb --ctrl-tarfile "$out"/debs/libcn0_*.deb | tar -t | grep -qx './triggers' ||
		fail "libcn0 has no ldconfig trigger"
	# The binaries: Debian's hardening (fortified calls, bind now, relro)
	# and stripped as dh_strip strips (no debug sections, no .comment or
	# .note; the static library's objects too); the test module's header
	# is not among the public headers.
	for deb in "$out"/debs/{libcn0,libcn-dev,cnctl}_*.deb; do
		dpkg-deb -x "$deb" "$out/x"
	done
	# (readelf's output kept first, its status checked: grep's 1 is only
	# "no such section".)
	for f in "$out"/x/usr/bin/cnctl "$out"/x/usr/lib/*/libcn.so.0.* "$out"/x/usr/lib/*/libcn.a; do
		sections=$(readelf -W -S "$f") || fail "readelf -S $f exited $?"
		extra=$(grep -E '\.debug_|\] \.comment |\] \.note ' <<<"$sections" || [ $? = 1 ])
		[ -z "$extra" ] || fail "$f is not stripped as dh_strip does: $extra"
	done
	for f in "$out"/x/usr/bin/cnctl "$out"/x/usr/lib/*/libcn.so.0.*; do
		elf=$(readelf -W -d -l --dyn-syms "$f")
		grep -q 'BIND_NOW' <<<"$elf" || fail "$f is not linked with -z now"
		grep -q 'GNU_RELRO' <<<"$elf" || fail "$f has no RELRO segment"
		grep -q '__[a-z]*_chk@' <<<"$elf" || fail "$f calls no fortified function"
	done
	[ ! -e "$out/x/usr/include/libcn/cnbus_test.h" ] ||
		fail "libcn-dev installs the test module's header libcn/cnbus_test.h"

	if [ -n "$debs_dir" ]; then
		mkdir -p "$debs_dir"
		rm -f "$debs_dir"/*.deb
		cp "${all_debs[@]}" "$debs_dir"/
	fi

	echo "== installing libcn0, libcn-dev and cnctl in a throw-away root"
	mkdir "$out/root"
	CN_ROOT_DIR=$out/root CN_OUT=$out troot_reexec "$@"
	echo "PASS: packages $(cd "$out/debs" && ls *.deb | tr '\n' ' ')lintian: no tag;" \
		"the library's installed, used and removed cleanly in a throw-away root"
	exit 0
fi

# In the private mount namespace: the throw-away root, with the scratch
# directory (the packages, the consumers' builds) shared.
out=$CN_OUT
troot_mount "$CN_ROOT_DIR"
troot_bind "$out"
troot_purge_installed cnctl-dbgsym libcn0-dbgsym cnctl libcn-dev libcn0
debs=("$out"/debs/libcn0_*.deb "$out"/debs/libcn-dev_*.deb "$out"/debs/cnctl_*.deb)
in_root dpkg -i "${debs[@]}" >"$out/install.log" 2>&1 || fail "dpkg -i: $(cat "$out/install.log")"

# The tool runs from the system libdir (no RUNPATH in a package).
in_root cnctl --version >/dev/null || fail "installed cnctl does not run"
! readelf -d "$TROOT/usr/bin/cnctl" | grep -q -e RPATH -e RUNPATH || fail "cnctl carries an RPATH"

# pkg-config: plain paths (no /usr/lib/pkgconfig/../.. chains).
flags=$(in_root pkg-config --cflags --libs libcn)
case $flags in *..*) fail "pkg-config paths are not clean: $flags" ;; esac
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
in_root pkg-config --variable=libdir libcn | grep -qx "/usr/lib/$multiarch" ||
	fail "libdir is not the multiarch one: $(in_root pkg-config --variable=libdir libcn)"

# shellcheck disable=SC2086 # pkg-config's flags
in_root cc -Wall -Werror "$src/tests/install/consumer.c" -o "$out/consumer" $flags
in_root "$out/consumer" | grep -qx "consumer: exit" || fail "the pkg-config consumer does not run"
in_root cmake -S "$src/tests/install/cmake-consumer" -B "$out/cm" >/dev/null
in_root cmake --build "$out/cm" >/dev/null
in_root "$out/cm/consumer" | grep -qx "consumer: exit" || fail "the find_package consumer does not run"
in_root man -w cn_recv >/dev/null 2>&1 || fail "man page cn_recv(3) not installed"

# A consumer's package gets a libcn0 dependency from libcn0's shlibs/symbols.
mkdir -p "$out/shl/debian"
printf 'Source: consumer\n\nPackage: consumer\nArchitecture: any\n' >"$out/shl/debian/control"
deps=$(in_root sh -c 'cd "$1" && dpkg-shlibdeps -O "$2"' sh "$out/shl" "$out/consumer" 2>&1)
echo "$deps" | grep -q 'libcn0 (>= ' || fail "no libcn0 dependency for a consumer: $deps"

# Purged, the packages leave nothing: what the upper layer holds that this
# machine lacks or has otherwise, but dpkg's database and log, the caches
# ldconfig and man-db keep, and the scratch files of the commands above.
in_root dpkg --purge cnctl libcn-dev libcn0 >"$out/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$out/purge.log")"
left=$(troot_left var/lib/dpkg var/log var/cache/man var/cache/ldconfig etc/ld.so.cache tmp root)
[ -z "$left" ] || fail "left after purge:
$left"
echo "installed, used and purged in the throw-away root: nothing left (upper layer checked against /)"
