#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/cbus-proc/execsnoop-cache.sh - execsnoop for bench/cbus-proc/run,
# taken out of Debian's libbpf-tools package into a cache instead of
# installed (as tests/vm/kernel-cache.sh does for the kernel images): it
# runs only in the bench's VM, whose kernel has the BTF it needs, never on
# this machine. scripts/install-deps runs this for its test and all sets.
#   apt-get download libbpf-tools; dpkg-deb -x it into $CBP_TOOLS_CACHE
# Its libraries (libelf1, zlib1g) are the machine's own: the guest runs it
# in a chroot of this machine's root.
#
# Usage: execsnoop-cache.sh   (as root, or with a writable cache)
# Environment: CBP_TOOLS_CACHE (default /var/cache/libcn/libbpf-tools).
# Prints the path of execsnoop; exit 0, or 1 when it cannot be had.
set -euo pipefail
cache=${CBP_TOOLS_CACHE:-/var/cache/libcn/libbpf-tools}
find_it() { find "$cache/root" -type f -name execsnoop -perm -u+x 2>/dev/null | head -n 1 || true; }
have=$(find_it)
if [ -z "$have" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/dl.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -q libbpf-tools) >&2 || {
		echo "execsnoop-cache.sh: apt-get download libbpf-tools failed" >&2
		exit 1
	}
	rm -rf "$cache/root"
	dpkg-deb -x "$tmp"/libbpf-tools_*.deb "$cache/root"
	have=$(find_it)
	[ -n "$have" ] || { echo "execsnoop-cache.sh: no execsnoop in libbpf-tools" >&2; exit 1; }
fi
echo "$have"
