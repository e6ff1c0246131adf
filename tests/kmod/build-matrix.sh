#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-matrix.sh - kmod (cnbus.ko, cnbus_test.ko) and examples/kernel
# (cn_hello.ko) build with W=1 and -Werror (CNBUS_WERROR=1) against every
# kernel kmod supports:
#   - Debian's headers: the newest installed 6.1 and 6.12, plain and -rt
#     (/lib/modules/<kver>/build);
#   - the trimmed external-module trees linux-<v>-extmod.tar.xz (6.18, 7.0)
#     in KERNEL_TREES (default: ../shared/kernels next to the main clone),
#     unpacked once into a cache under ${TMPDIR:-/tmp}; they hold no
#     Module.symvers, hence KBUILD_MODPOST_WARN=1 there.
# Every build runs in a scratch copy (make dkms-tree), never in kmod/.
#
# Usage: build-matrix.sh [SRC]   (SRC: the libcn source tree, default ../..)
#        KDIRS="dir ..." build-matrix.sh   builds only against those trees.
# Exit: 0 all built clean, 1 a build failed or warned, 77 some kernel's
#       headers or trees are missing (the others are still built); with
#       CI=true a missing kernel is a failure.
set -eu

SRC=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
S=$(mktemp -d /tmp/cnbus-matrix.XXXXXX)
trap 'rm -rf "$S"' EXIT
JOBS=${JOBS:-2}
failed=""
missing=""

# newest PATTERN [-rt]: the newest installed Debian headers matching PATTERN.
newest() {
	# shellcheck disable=SC2012,SC2086 # $1 is a glob
	ls -d /lib/modules/$1/build 2>/dev/null | sed 's|^/lib/modules/||; s|/build$||' |
		if [ "${2:-}" = -rt ]; then grep -- '-rt-'; else grep -v -- '-rt-'; fi |
		sort -V | tail -n 1
}

# tree TARBALL: the unpacked tree of TARBALL (cached), printed.
tree() {
	name=$(basename "$1" .tar.xz)
	cache=${TMPDIR:-/tmp}/cnbus-kernels
	stamp=$(stat -c '%s.%Y' "$1")
	if [ "$(cat "$cache/$name.stamp" 2>/dev/null)" != "$stamp" ]; then
		mkdir -p "$cache"
		tmp=$(mktemp -d "$cache/.unpack.XXXXXX")
		tar -xJf "$1" -C "$tmp" || { rm -rf "$tmp"; return 1; }
		rm -rf "${cache:?}/$name"
		mv "$tmp/$name" "$cache/$name"
		rm -rf "$tmp"
		echo "$stamp" >"$cache/$name.stamp"
	fi
	echo "$cache/$name"
}

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

	KERNEL_TREES=${KERNEL_TREES:-}
	if [ -z "$KERNEL_TREES" ]; then
		# ../shared/kernels next to the main clone (also from a worktree).
		common=$(git -C "$SRC" rev-parse --path-format=absolute --git-common-dir 2>/dev/null ||
			echo "$SRC/.git")
		KERNEL_TREES=$(dirname "$(dirname "$common")")/shared/kernels
	fi
	for v in 6.18 7.0; do
		tarball=$KERNEL_TREES/linux-$v-extmod.tar.xz
		if [ ! -f "$tarball" ]; then
			missing="$missing $tarball"
			continue
		fi
		kdir=$(tree "$tarball") || { failed="$failed $v(unpack)"; continue; }
		build "linux-$v" "$kdir" KBUILD_MODPOST_WARN=1
	done
fi

if [ -n "$failed" ]; then
	echo "FAIL:$failed"
	exit 1
fi
if [ -n "$missing" ]; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL: missing in CI:$missing"
		exit 1
	fi
	echo "SKIP: missing:$missing (the others built clean)"
	exit 77
fi
echo "PASS: kmod and examples/kernel build W=1 clean on every kernel"
