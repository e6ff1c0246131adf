#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/vm/kernel-cache.sh - the kernel images the vm tier boots, taken out
# of Debian's packages into a cache instead of installed: the VM boots an
# image with its own initramfs and needs nothing of it in /boot or
# /lib/modules, while installing one costs an update-initramfs, a DKMS
# autoinstall and ~400 MB under /lib/modules each (scripts/install-deps
# runs this instead). For each kernel release given, or else the newest
# release with installed headers of each flavour the tier boots (6.1,
# 6.1-rt, 6.12, 6.12-rt: the headers are installed, kmod builds against
# them), unless its image is installed:
#   apt-get download linux-image-RELEASE
#   dpkg-deb -x it into $VM_KERNEL_CACHE/RELEASE  (boot/vmlinuz-RELEASE,
#                                                 lib/modules/RELEASE)
#   depmod -b: modules.dep for the tests that load the image's own modules
#              (run-dm-test.sh's dm-mirror, the arch tier's 9p)
# tests/vm/lib/vm.sh (vm_image) boots it from there. Releases whose headers
# are gone (an ABI bump) are removed from the cache.
#
# Usage: kernel-cache.sh [RELEASE...]   (as root, or with a writable cache)
# Environment: VM_KERNEL_CACHE (default /var/cache/libcn/kernels).
# Exit: 0 every image in place, 1 a download or unpack failed.
set -euo pipefail
cache=${VM_KERNEL_CACHE:-/var/cache/libcn/kernels}

# newest GLOB EXCLUDE: the newest release with headers matching GLOB.
newest() {
	local d
	for d in /lib/modules/$1/build; do
		[ -d "$d" ] || continue
		d=${d#/lib/modules/}
		echo "${d%/build}"
	done | { grep -Ev -- "$2" || [ $? = 1 ]; } | sort -V | tail -n 1
}

releases=("$@")
if [ ${#releases[@]} -eq 0 ]; then
	# The flavours of tests/vm/lib/vm.sh's vm_kernel.
	for want in '6.1.0-*-amd64|-rt-|-cloud-' '6.1.0-*-rt-amd64|-cloud-' \
		'6.12.*+deb*-amd64|-rt-|-cloud-' '6.12.*+deb*-rt-amd64|-cloud-'; do
		r=$(newest "${want%%|*}" "${want#*|}")
		[ -z "$r" ] || releases+=("$r")
	done
fi

mkdir -p "$cache"
# Releases whose headers are gone: their images are of no use any more.
for d in "$cache"/*/; do
	[ -d "$d" ] || continue
	r=$(basename "$d")
	[ -d "/lib/modules/$r/build" ] || {
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
	if ! (cd "$tmp" && apt-get download -q "linux-image-$r" >download.log 2>&1); then
		# Lists older than the headers' (or none): once more after an update.
		apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
		(cd "$tmp" && apt-get download -q "linux-image-$r" >download.log 2>&1) || {
			cat "$tmp/download.log"
			rm -rf "$tmp"
			echo "kernel-cache: apt-get download linux-image-$r failed" >&2
			exit 1
		}
	fi
	deb=("$tmp"/linux-image-*.deb)
	dpkg-deb -x "${deb[0]}" "$tmp/root"
	[ -r "$tmp/root/boot/vmlinuz-$r" ] || {
		rm -rf "$tmp"
		echo "kernel-cache: ${deb[0]##*/} has no boot/vmlinuz-$r" >&2
		exit 1
	}
	depmod -b "$tmp/root" "$r"
	rm -rf "${cache:?}/$r"
	mv "$tmp/root" "$cache/$r"
	echo "kernel-cache: $r unpacked into $cache/$r (${deb[0]##*/})"
	rm -rf "$tmp"
done
