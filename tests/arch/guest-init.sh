#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the arch tier's VM (tests/arch/vm-host-tests.sh): load the 9p
# modules, mount the host's root read-only and the cross build directory
# read-write over 9p, and run that build's host tests (ctest -L host) in a
# chroot of the host's root, on this 64-bit kernel: an i386 build's programs
# make their system calls through the kernel's compat (32-bit) entry points.
. /lib/vm-guest.sh
vm_guest_start
echo "ARCH-BEGIN kernel $(uname -r)"
. /lib/arch.conf # ARCH_SRC, ARCH_BUILD, ARCH_CTEST_FIRST, ARCH_CTEST_ARGS, ARCH_CI

vm_guest_insmod /lib/vm-mod "ARCH: insmod failed:"

r=/host
# The source and build directories last: they may be under /tmp (a tmpfs
# here), and the build may be inside the source.
vm_guest_host_root "$r" &&
	mount -t cgroup2 cgroup2 "$r/sys/fs/cgroup" &&
	vm_guest_9p cnsrc "$r$ARCH_SRC" ro &&
	vm_guest_9p cnbuild "$r$ARCH_BUILD" ||
	echo "ARCH: mounts failed"
# devtmpfs has no pts or shm directory, nor the links udev makes (bash's
# process substitution opens /dev/fd/N, which vm_guest_host_root links):
# made here (host tests open ptys).
mkdir -p "$r/dev/pts" "$r/dev/shm"
# What a booted machine has and host tests use: /run's directories of
# systemd and its journal (cnctl's journal checks mount their own over
# them), the loopback interface (node_exporter on 127.0.0.1) and, above,
# the cgroup2 hierarchy (the journal checks put cnctl in a unit's cgroup).
mkdir -p "$r/run/systemd" "$r/run/log"
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
ln -sf /proc/self/fd/0 "$r/dev/stdin"
ln -sf /proc/self/fd/1 "$r/dev/stdout"
ln -sf /proc/self/fd/2 "$r/dev/stderr"
mount -t devpts -o ptmxmode=0666 pts "$r/dev/pts"
mount -t tmpfs shm "$r/dev/shm"
# cmake/cross-exec runs the tests natively when the loader runs: it must
# here, or they would run under qemu-i386 (no compat system calls).
if chroot "$r" /lib/ld-linux.so.2 --version >/dev/null 2>&1; then
	echo "ARCH-NATIVE32 yes (kernel $(uname -r))"
else
	echo "ARCH-NATIVE32 no (kernel $(uname -r))"
fi

# in_build_ctest ARGS...: ctest ARGS in the build directory, in the chroot,
# through scripts/ctest-ci (CI's skip rule, as on the host).
in_build_ctest() {
	chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root CI="$ARCH_CI" /bin/sh -c 'src=$1 && cd "$2" && shift 2 && exec "$src/scripts/ctest-ci" "$@"' \
		sh "$ARCH_SRC" "$ARCH_BUILD" "$@"
}
echo "ARCH-HOST-BEGIN"
rc=0
# shellcheck disable=SC2086 # ARCH_CTEST_*: several arguments
if [ -n "$ARCH_CTEST_FIRST" ]; then
	in_build_ctest $ARCH_CTEST_FIRST || rc=$?
fi
rc2=0
# shellcheck disable=SC2086
in_build_ctest $ARCH_CTEST_ARGS || rc2=$?
[ "$rc" != 0 ] || rc=$rc2
echo "ARCH-HOST-RC $rc"
vm_guest_end ARCH
