#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/kmod/kernel-trees.sh - trees to build kmod against the newest
# kernel Debian ships (unstable's linux-source-VERSION, 7.2), plain and -rt,
# for the kmod tier's build matrix (tests/kmod/build-matrix.sh), from
# Debian's archive alone, into a cache keyed by what went into them:
#   - a private apt configuration (its own sources list, lists, cache and an
#     empty status; Debian's archive keyring) under the cache: the machine's
#     apt sources are left alone and nothing is installed (private-apt.sh;
#     tests/vm/kernel-cache.sh takes the same kernel's images through it);
#   - linux-source-VERSION, and the flavours' linux-headers-ABI-FLAVOUR for
#     their .config and Module.symvers (so modpost checks every symbol and
#     the modules' vermagic is the kernel's), unpacked with dpkg-deb -x;
#   - each flavour's tree prepared with this machine's gcc: olddefconfig
#     (the .config's compiler probes answered for it), modules_prepare, then
#     trimmed by the kernel's own scripts/package/install-extmod-build.
# Debian's own kbuild binaries and compiler for unstable need a newer glibc
# than Debian 12's (GLIBC_2.38: conf, modpost, genksyms, objtool), and
# gcc-16's options (-fmin-function-alignment) are unknown to gcc 12: hence
# the trees are prepared here, not used as packaged.
# scripts/install-deps runs this (test set), so tests only read the cache.
#
# Usage: kernel-trees.sh            (as root, or with a writable cache)
# Environment: KMOD_TREE_CACHE (default /var/cache/libcn/kmod-trees),
#   KMOD_TREE_SUITE (unstable), KMOD_TREE_VERSION (7.2).
# Prints the trees, one a line: CACHE/RELEASE (e.g. .../7.2.13+deb14-amd64).
# Exit: 0 every tree in place, 1 a download or a preparation failed.
set -euo pipefail
cache=${KMOD_TREE_CACHE:-/var/cache/libcn/kmod-trees}
suite=${KMOD_TREE_SUITE:-unstable}
version=${KMOD_TREE_VERSION:-7.2}
flavours=(amd64 rt-amd64)

# shellcheck source=tests/kmod/private-apt.sh
. "$(dirname "$0")/private-apt.sh"
private_apt "$cache" "$suite"
src_ver=$(apt-cache "${apt_opts[@]}" show "linux-source-$version" 2>/dev/null |
	sed -n 's/^Version: //p' | sort -V | tail -n 1)
[ -n "$src_ver" ] || {
	echo "kernel-trees: no linux-source-$version in $suite" >&2
	exit 1
}
# The ABI of that version's headers (7.2.13+deb14 for linux-headers-7.2.13+deb14-amd64).
abi=$(apt-cache "${apt_opts[@]}" pkgnames "linux-headers-$version." |
	sed -n 's/^linux-headers-\(.*\)-common$/\1/p' | sort -V | tail -n 1)
[ -n "$abi" ] || {
	echo "kernel-trees: no linux-headers-$version.*-common in $suite" >&2
	exit 1
}
# What a tree is made of: the source and the compiler.
key="$src_ver gcc-$(gcc -dumpfullversion)"

todo=()
for f in "${flavours[@]}"; do
	if [ "$(cat "$cache/$abi-$f.key" 2>/dev/null)" = "$key" ]; then
		echo "kernel-trees: $abi-$f in $cache ($key)" >&2
	else
		todo+=("$f")
	fi
done
if [ ${#todo[@]} -gt 0 ]; then
	work=$(mktemp -d "$cache/.prepare.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	debs=(linux-source-"$version")
	for f in "${todo[@]}"; do debs+=("linux-headers-$abi-$f"); done
	(cd "$work" && apt-get "${apt_opts[@]}" download "${debs[@]}" >download.log 2>&1) || {
		cat "$work/download.log"
		exit 1
	}
	for d in "$work"/*.deb; do dpkg-deb -x "$d" "$work/root"; done
	mkdir -p "$work/src"
	xz -T2 -dc "$work/root/usr/src/linux-source-$version.tar.xz" | tar -x -C "$work/src"
	srctree=$work/src/linux-source-$version
	for f in "${todo[@]}"; do
		release=$abi-$f
		out=$work/out-$f
		mkdir -p "$out"
		cp "$work/root/usr/src/linux-headers-$release/.config" "$out/.config"
		if ! { make -s -C "$srctree" O="$out" CC=gcc HOSTCC=gcc olddefconfig &&
			make -s -C "$srctree" O="$out" CC=gcc HOSTCC=gcc KERNELRELEASE="$release" \
				-j"$(nproc)" modules_prepare; } >"$work/$f.log" 2>&1; then
			tail -n 40 "$work/$f.log"
			echo "kernel-trees: preparing $release failed" >&2
			exit 1
		fi
		cp "$work/root/usr/src/linux-headers-$release/Module.symvers" "$out/"
		(cd "$out" && env srctree="$srctree" SRCARCH=x86 CC=gcc HOSTCC=gcc \
			sh "$srctree/scripts/package/install-extmod-build" "$work/tree-$f")
		rm -rf "${cache:?}/$release"
		mv "$work/tree-$f" "$cache/$release"
		echo "$key" >"$cache/$release.key"
		echo "kernel-trees: $release prepared in $cache/$release ($key)" >&2
	done
fi
# Trees of other ABIs (an older upload) are of no use any more.
for d in "$cache"/*/; do
	r=$(basename "$d")
	case "$r" in apt | "$abi"-*) continue ;; esac
	echo "kernel-trees: $r is not $suite's $version any more: removed" >&2
	rm -rf "${cache:?}/$r" "$cache/$r.key"
done
for f in "${flavours[@]}"; do echo "$cache/$abi-$f"; done
