# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
#
# tests/vm/lib/guest.sh - the guest side of tests/vm/lib/vm.sh: vm_root
# puts it in the initramfs as /lib/vm-guest.sh, and each /init (busybox sh)
# sources it first.

# vm_guest_start: busybox applets, /proc, /sys, /dev. VM-GUEST-START tells
# the host (vm_boot) that the kernel finished its own boot and ran /init.
vm_guest_start() {
	echo "VM-GUEST-START"
	/bin/busybox --install -s /bin
	export PATH=/bin
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
}

# vm_guest_end TAG: the kernel log between TAG-DMESG-BEGIN and
# TAG-DMESG-END (the host judges it), TAG-END, power off.
vm_guest_end() {
	echo "$1-DMESG-BEGIN"
	dmesg
	echo "$1-DMESG-END"
	echo "$1-END"
	poweroff -f
}
