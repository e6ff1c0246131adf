#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-matrix.sh - kmod (cnbus.ko, cnbus_test.ko) and examples/kernel
# (cn_hello.ko) build with W=1 and -Werror (CNBUS_WERROR=1) against every
# kernel kmod supports:
#   - Debian's headers: the newest installed 6.1 and 6.12, plain and -rt
#     (/lib/modules/<kver>/build);
#   - the newest kernel Debian ships (unstable's 7.2), plain and -rt: trees
#     tests/kmod/kernel-trees.sh prepared from Debian's linux-source and
#     headers into KMOD_TREE_CACHE (default /var/cache/libcn/kmod-trees;
#     scripts/install-deps runs it), with Debian's Module.symvers.
# Every build runs in a scratch copy (make dkms-tree), never in kmod/.
#
# Usage: build-matrix.sh [SRC]   (SRC: the libcn source tree, default ../..)
#        KDIRS="dir ..." build-matrix.sh   builds only against those trees.
# Exit: 0 all built clean, 1 a build failed or warned, 77 some kernel's
#       headers or trees are missing (the others are still built); with
#       CI=true a missing kernel is a failure.
set -euo pipefail
. "$(dirname "$0")/../skip.sh"

SRC=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
S=$(mktemp -d /tmp/cnbus-matrix.XXXXXX)
trap 'rm -rf "$S"' EXIT
JOBS=${JOBS:-2}
failed=""
missing=""

# newest PATTERN [-rt]: tests/kmod/newest-headers.sh.
. "$(dirname "$0")/newest-headers.sh"

# build LABEL KDIR [make args]: kmod and the example against KDIR.
build() {
	label=$1 kdir=$2
	shift 2
	out=$S/$label
	echo "== $label: $kdir"
	make -s -C "$SRC/kmod" dkms-tree DEST="$out/kmod" >/dev/null
	cp -r "$SRC/examples/kernel" "$out/example"
	# The test build (CNBUS_TESTING=y, what the VM tier loads): what
	# dkms builds and more (tests/kmod/dkms-build.sh builds that).
	if ! make -C "$out/kmod" KDIR="$kdir" W=1 CNBUS_WERROR=1 CNBUS_TESTING=y -j"$JOBS" "$@" \
		>"$out/kmod.log" 2>&1; then
		cat "$out/kmod.log"
		echo "FAIL: $label: kmod does not build"
		failed="$failed $label"
		return 0
	fi
	if ! make -C "$out/example" KDIR="$kdir" CNBUS_DIR="$out/kmod" W=1 CNBUS_WERROR=1 "$@" \
		>"$out/example.log" 2>&1; then
		cat "$out/example.log"
		echo "FAIL: $label: examples/kernel does not build"
		failed="$failed $label"
		return 0
	fi
	# -Werror catches the compiler; this catches the rest (modpost,
	# objtool) except modpost's unresolved symbols of trees without
	# Module.symvers.
	if grep -i "warning" "$out/kmod.log" "$out/example.log" |
		grep -v "modpost: .*undefined\|modpost: suppressed .*unresolved"; then
		echo "FAIL: $label: warnings"
		failed="$failed $label"
		return 0
	fi
	for ko in kmod/cnbus.ko kmod/cnbus_proc.ko kmod/cnbus_test.ko example/cn_hello.ko; do
		[ -f "$out/$ko" ] || { echo "FAIL: $label: no $ko"; failed="$failed $label"; return 0; }
	done
	echo "ok: $label: $(modinfo -F vermagic "$out/kmod/cnbus.ko")"
}

if [ -n "${KDIRS:-}" ]; then
	for k in $KDIRS; do
		build "$(basename "$(dirname "$k")")-$(basename "$k")" "$k" KBUILD_MODPOST_WARN=1
	done
else
	for want in "6.1.0-*-amd64 " "6.1.0-*-amd64 -rt" "6.12.*-amd64 " "6.12.*-amd64 -rt"; do
		# shellcheck disable=SC2086
		kver=$(newest $want)
		if [ -z "$kver" ]; then
			missing="$missing ${want% }"
			continue
		fi
		build "$kver" "/lib/modules/$kver/build"
	done

	cache=${KMOD_TREE_CACHE:-/var/cache/libcn/kmod-trees}
	version=${KMOD_TREE_VERSION:-7.2}
	for rt in "" -rt; do
		kver=$(for d in "$cache/$version".*-amd64; do
			[ -e "$d" ] || continue
			echo "${d##*/}"
		done | { # grep's 1: no tree of that flavour
			if [ "$rt" = -rt ]; then grep -- '-rt-'; else grep -v -- '-rt-\|-cloud-'; fi || [ $? = 1 ]
		} | sort -V | tail -n 1)
		if [ -z "$kver" ]; then
			missing="$missing $cache/$version.*$rt-amd64 (tests/kmod/kernel-trees.sh)"
			continue
		fi
		build "$kver" "$cache/$kver"
	done
fi

if [ -n "$failed" ]; then
	echo "FAIL:$failed"
	exit 1
fi
if [ -n "$missing" ]; then
	skip "missing:$missing (the others built clean)"
fi
echo "PASS: kmod and examples/kernel build W=1 clean on every kernel"
