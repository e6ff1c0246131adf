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

# vm_guest_insmod DIR FAIL: load the modules DIR/order names (vm_image_modules'
# list, dependencies first), in that order; for each that fails, FAIL and
# the module's name are printed (the words the host's judge looks for).
vm_guest_insmod() {
	while read -r vm_m; do
		insmod "$1/$vm_m" || echo "$2 $vm_m"
	done <"$1/order"
}

# vm_guest_9p TAG DIR [ro]: mount the host's virtfs TAG at DIR (made when
# missing): read-write, or read-only and cached with ro (nothing changes it
# under the guest then).
vm_guest_9p() {
	[ -d "$2" ] || mkdir -p "$2" || return
	if [ "${3:-}" = ro ]; then
		mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 "$1" "$2"
	else
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 "$1" "$2"
	fi
}

# vm_guest_host_root ROOT: the host's root (virtfs tag cnroot) read-only at
# ROOT, for a chroot that runs the host's programs with its libraries: the
# guest's own proc, sys, dev, tmp and run mounted in it, /dev/fd linked.
# Nonzero when a mount failed. What the caller mounts under /tmp goes
# after this (the guest's tmpfs would hide it).
vm_guest_host_root() {
	vm_guest_9p cnroot "$1" ro &&
		mount -t proc proc "$1/proc" &&
		mount -t sysfs sys "$1/sys" &&
		mount -t devtmpfs dev "$1/dev" &&
		mount -t tmpfs tmp "$1/tmp" &&
		mount -t tmpfs run "$1/run" &&
		ln -sf /proc/self/fd "$1/dev/fd"
}
