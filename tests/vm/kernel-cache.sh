#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/vm/kernel-cache.sh - the kernel images the vm tier boots, taken out
# of Debian's packages into a cache instead of installed: the VM boots an
# image with its own initramfs and needs nothing of it in /boot or
# /lib/modules, while installing one costs an update-initramfs, a DKMS
# autoinstall and ~400 MB under /lib/modules each (scripts/install-deps
# runs this instead). For each kernel release given, or else the newest
# release of each flavour the tier boots, unless its image is installed:
#   - 6.1, 6.1-rt, 6.12, 6.12-rt: the headers are installed (kmod builds
#     against them) and the image comes from the machine's apt sources
#     (apt-get download linux-image-RELEASE);
#   - 7.2, 7.2-rt (unstable's): the trees tests/kmod/kernel-trees.sh
#     prepared in KMOD_TREE_CACHE stand for the headers, and the image comes
#     through that script's private apt configuration
#     (tests/kmod/private-apt.sh): linux-binary-RELEASE (the image; the
#     linux-image-RELEASE of that suite only depends on it),
#     linux-modules-RELEASE and linux-base-RELEASE (modules.order,
#     modules.builtin);
#   dpkg-deb -x them into $VM_KERNEL_CACHE/RELEASE  (boot/vmlinuz-RELEASE,
#                                                   lib/modules/RELEASE,
#                                                   also from a /usr/lib one)
#   depmod -b: modules.dep for the tests that load the image's own modules
#              (run-dm-test.sh's dm-mirror, the arch tier's 9p)
# tests/vm/lib/vm.sh (vm_image) boots it from there. Releases whose headers
# or tree are gone (an ABI bump) are removed from the cache.
#
# Usage: kernel-cache.sh [RELEASE...]   (as root, or with a writable cache)
# Environment: VM_KERNEL_CACHE (default /var/cache/libcn/kernels),
#   KMOD_TREE_CACHE (default /var/cache/libcn/kmod-trees), KMOD_TREE_SUITE
#   (unstable).
# Exit: 0 every image in place, 1 a download or unpack failed.
set -euo pipefail
cache=${VM_KERNEL_CACHE:-/var/cache/libcn/kernels}
trees=${KMOD_TREE_CACHE:-/var/cache/libcn/kmod-trees}

# newest GLOB EXCLUDE: the newest release with headers (or a tree in
# KMOD_TREE_CACHE) matching GLOB.
newest() {
	local d
	for d in /lib/modules/$1/build "$trees"/$1; do
		[ -d "$d" ] || continue
		d=${d%/build}
		echo "${d##*/}"
	done | { grep -Ev -- "$2" || [ $? = 1 ]; } | sort -V | tail -n 1
}

# headers RELEASE: status 0 when RELEASE has headers to build kmod
# against: installed, or a tree of tests/kmod/kernel-trees.sh.
headers() {
	[ -d "/lib/modules/$1/build" ] || { [ "$1" != apt ] && [ -d "$trees/$1" ]; }
}

releases=("$@")
if [ ${#releases[@]} -eq 0 ]; then
	# The flavours of tests/vm/lib/vm.sh's vm_kernel.
	for want in '6.1.0-*-amd64|-rt-|-cloud-' '6.1.0-*-rt-amd64|-cloud-' \
		'6.12.*+deb*-amd64|-rt-|-cloud-' '6.12.*+deb*-rt-amd64|-cloud-' \
		'7.2.*+deb*-amd64|-rt-|-cloud-' '7.2.*+deb*-rt-amd64|-cloud-'; do
		r=$(newest "${want%%|*}" "${want#*|}")
		[ -z "$r" ] || releases+=("$r")
	done
fi

# download DIR RELEASE: the packages of RELEASE's image into DIR: from the
# machine's apt sources when its headers are installed, else through the
# private apt configuration of KMOD_TREE_CACHE's trees.
private_ready=0
download() {
	local pkgs p
	if [ -d "/lib/modules/$2/build" ]; then
		(cd "$1" && apt-get download -q "linux-image-$2" >download.log 2>&1) && return 0
		# Lists older than the headers' (or none): once more after an update.
		apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
		(cd "$1" && apt-get download -q "linux-image-$2" >download.log 2>&1)
		return
	fi
	if [ "$private_ready" = 0 ]; then
		# shellcheck source=tests/kmod/private-apt.sh
		. "$(dirname "$0")/../kmod/private-apt.sh"
		private_apt "$trees" "${KMOD_TREE_SUITE:-unstable}" || return 1
		private_ready=1
	fi
	pkgs=()
	for p in linux-binary-"$2" linux-modules-"$2" linux-base-"$2"; do
		apt-cache "${apt_opts[@]}" show "$p" >/dev/null 2>&1 && pkgs+=("$p")
	done
	# A suite whose linux-image-RELEASE still holds the image.
	[[ " ${pkgs[*]} " == *" linux-binary-$2 "* ]] || pkgs+=("linux-image-$2")
	(cd "$1" && apt-get "${apt_opts[@]}" download "${pkgs[@]}" >download.log 2>&1)
}

mkdir -p "$cache"
# Releases whose headers are gone: their images are of no use any more.
for d in "$cache"/*/; do
	[ -d "$d" ] || continue
	r=$(basename "$d")
	headers "$r" || {
		echo "kernel-cache: $r has no headers any more: removed from $cache"
		rm -rf "${cache:?}/$r"
	}
done

for r in "${releases[@]}"; do
	if [ -r "/boot/vmlinuz-$r" ] && [ -r "/lib/modules/$r/modules.dep" ]; then
		echo "kernel-cache: $r is installed (/boot/vmlinuz-$r)"
		continue
	fi
	if [ -r "$cache/$r/boot/vmlinuz-$r" ]; then
		echo "kernel-cache: $r in $cache/$r"
		continue
	fi
	tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
	# apt's sandbox user writes the download.
	chmod 755 "$tmp"
	download "$tmp" "$r" || {
		cat "$tmp/download.log"
		rm -rf "$tmp"
		echo "kernel-cache: downloading the image of $r failed" >&2
		exit 1
	}
	for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
	# A merged-/usr package (unstable's): its modules and image in
	# usr/lib/modules/RELEASE, moved where vm_image looks.
	if [ -d "$tmp/root/usr/lib/modules/$r" ] && [ ! -d "$tmp/root/lib/modules/$r" ]; then
		mkdir -p "$tmp/root/lib/modules"
		mv "$tmp/root/usr/lib/modules/$r" "$tmp/root/lib/modules/$r"
	fi
	if [ -r "$tmp/root/lib/modules/$r/vmlinuz" ] && [ ! -e "$tmp/root/boot/vmlinuz-$r" ]; then
		mkdir -p "$tmp/root/boot"
		mv "$tmp/root/lib/modules/$r/vmlinuz" "$tmp/root/boot/vmlinuz-$r"
	fi
	[ -r "$tmp/root/boot/vmlinuz-$r" ] || {
		rm -rf "$tmp"
		echo "kernel-cache: the packages of $r have no vmlinuz" >&2
		exit 1
	}
	depmod -b "$tmp/root" "$r"
	rm -rf "${cache:?}/$r"
	mv "$tmp/root" "$cache/$r"
	echo "kernel-cache: $r unpacked into $cache/$r ($(cd "$tmp" && echo *.deb))"
	rm -rf "$tmp"
done
