#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Guest /init for bench/cbus-proc/run: load the 9p modules, mount the
# host's root read-only and the bench's work directory read-write over 9p
# (as the arch tier's guest does), load cnbus.ko, run guest.sh in a chroot
# of the host's root (forkstat, execsnoop and the build's cnctl run there
# with the host's libraries), unload, dump the kernel log, power off.
. /lib/vm-guest.sh
vm_guest_start
. /lib/cbp.conf.init # CBP_SRC, CBP_WORK
echo "CBPVM-BEGIN kernel $(uname -r)"
while read -r m; do
	insmod "/lib/vm-mod/$m" || echo "Bail out! insmod $m"
done </lib/vm-mod/order

r=/host
mkdir -p "$r"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 cnroot "$r" &&
	mount -t proc proc "$r/proc" &&
	mount -t sysfs sys "$r/sys" &&
	mount -t devtmpfs dev "$r/dev" &&
	mount -t tmpfs tmp "$r/tmp" &&
	mount -t tmpfs run "$r/run" &&
	mount -t tracefs tracefs "$r/sys/kernel/tracing" &&
	mount -t debugfs debugfs "$r/sys/kernel/debug" &&
	{ [ -d "$r$CBP_SRC" ] || mkdir -p "$r$CBP_SRC"; } &&
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 cnsrc "$r$CBP_SRC" &&
	{ [ -d "$r$CBP_WORK" ] || mkdir -p "$r$CBP_WORK"; } &&
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 cnwork "$r$CBP_WORK" ||
	echo "Bail out! mounts"
ln -sf /proc/self/fd "$r/dev/fd"

if chroot "$r" /usr/sbin/insmod "$CBP_WORK/src/kmod/cnbus.ko"; then
	chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root /bin/bash "$CBP_SRC/bench/cbus-proc/guest.sh" "$CBP_WORK/cbp.conf"
	echo "# guest.sh exit $?"
	chroot "$r" /usr/sbin/rmmod cnbus || echo "Bail out! rmmod cnbus"
else
	echo "Bail out! insmod cnbus.ko"
fi
vm_guest_end CBPVM
