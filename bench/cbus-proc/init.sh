#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Guest /init for bench/cbus-proc/run: load the 9p modules, mount the
# host's root read-only and the bench's work directory read-write over 9p
# (tests/vm/lib/guest.sh, as for the arch tier's guest), load cnbus.ko,
# run guest.sh in a chroot of the host's root (forkstat, execsnoop and the
# build's cnctl run there with the host's libraries), unload, dump the
# kernel log, power off.
. /lib/vm-guest.sh
vm_guest_start
. /lib/cbp.conf.init # CBP_SRC, CBP_WORK
echo "CBPVM-BEGIN kernel $(uname -r)"
vm_guest_insmod /lib/vm-mod "Bail out! insmod"

r=/host
vm_guest_host_root "$r" &&
	mount -t tracefs tracefs "$r/sys/kernel/tracing" &&
	mount -t debugfs debugfs "$r/sys/kernel/debug" &&
	vm_guest_9p cnsrc "$r$CBP_SRC" ro &&
	vm_guest_9p cnwork "$r$CBP_WORK" ||
	echo "Bail out! mounts"

if chroot "$r" /usr/sbin/insmod "$CBP_WORK/src/kmod/cnbus.ko"; then
	chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root /bin/bash "$CBP_SRC/bench/cbus-proc/guest.sh" "$CBP_WORK/cbp.conf"
	echo "# guest.sh exit $?"
	chroot "$r" /usr/sbin/rmmod cnbus || echo "Bail out! rmmod cnbus"
else
	echo "Bail out! insmod cnbus.ko"
fi
vm_guest_end CBPVM
