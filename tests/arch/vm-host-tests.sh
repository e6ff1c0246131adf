#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# vm-host-tests.sh BUILD_DIR [ctest args...]: run a 32-bit (i386) build's
# host tests on a 64-bit kernel that runs 32-bit programs, booted under
# QEMU/TCG, where this machine's kernel does not (ia32 emulation off: its
# log says "32-bit emulation disabled"). The guest mounts this machine's
# root, the source read-only and BUILD_DIR read-write over 9p, and runs
# `ctest -L host` in BUILD_DIR in a chroot of that root (guest-init.sh):
# the same programs, libraries and scripts as a run here, with every
# system call through the kernel's compat entry points.
#
# Without ctest args, cnctl's usage checks (cnctl_usage_*: a command line
# refused before any socket is opened, a few processes each) run first,
# two at a time (ctest -j2), then the other host tests one at a time as
# everywhere: under TCG every process costs a third of a second or more,
# and the usage checks were 60 of 101 tests and a quarter of the guest's
# time.
#
# Kernel: Debian 12's 6.12 (ARCH_VM_KERNEL, a name of tests/vm/lib/vm.sh's
# vm_kernel). Boot and judge: tests/vm/lib/vm.sh (a kernel report in the
# guest's log fails the run). VM_TIMEOUT (s, default 1500), VM_SMP, VM_MEM.
# Exit: 0 passed, 1 failed, 77 cannot run here (no qemu, kernel, busybox).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
VM_SRC=$SRC
. "$SRC/tests/vm/lib/vm.sh"
BUILD=$(cd "$1" && pwd)
shift
if [ $# -gt 0 ]; then
	CTEST_FIRST=
	CTEST_ARGS=$*
else
	CTEST_FIRST="-L host -R ^cnctl_usage_ -j2 --output-on-failure"
	# The journal storm (10,000 children, each entry through journald)
	# outlasts its bound under TCG; what it checks, journald's rate limit,
	# is the same for every word size: its overrun and restart cases run.
	CTEST_ARGS="-L host -E ^cnctl_usage_|^cnctl_journal_storm --output-on-failure"
fi

vm_host_tools
vm_kernel "${ARCH_VM_KERNEL:-6.12}"
VM_WORK=$BUILD/vm-work
rm -rf "$VM_WORK"
vm_work cn-arch-vm
mkdir -p "$VM_WORK/src"
vm_root "$SRC/tests/arch/guest-init.sh"
# The modules 9p over virtio needs, from the kernel's image
# (VM_ROOT/lib/vm-mod; guest-init.sh loads them).
vm_image_modules virtio_pci 9pnet_virtio 9p

cat >"$VM_ROOT/lib/arch.conf" <<CONF
ARCH_SRC='$SRC'
ARCH_BUILD='$BUILD'
ARCH_CTEST_FIRST='$CTEST_FIRST'
ARCH_CTEST_ARGS='$CTEST_ARGS'
ARCH_CI='${CI:-}'
CONF

VM_QEMU_ARGS="-virtfs local,path=/,mount_tag=cnroot,security_model=none,readonly=on,multidevs=remap"
# The source too (its cmake/cross-exec runs the tests): a clone under /tmp
# is hidden by the guest's tmpfs there.
VM_QEMU_ARGS="$VM_QEMU_ARGS -virtfs local,path=$SRC,mount_tag=cnsrc,security_model=none,readonly=on,multidevs=remap"
VM_QEMU_ARGS="$VM_QEMU_ARGS -virtfs local,path=$BUILD,mount_tag=cnbuild,security_model=none,multidevs=remap"
VM_MEM=${VM_MEM:-2G}
vm_boot "${VM_TIMEOUT:-1500}" quiet

# The guest's output (its ctest run), then the verdict (vm_judge). Kernel
# reports are looked for in the dmesg dump only: ctest's output of a
# failing test may hold the words vm_log_reports looks for.
vm_judge ARCH --dmesg-only
rc=$(sed -n 's/^ARCH-HOST-RC \([0-9]*\).*/\1/p' "$VM_LOG.txt" | tail -n 1)
if [ -z "$rc" ]; then
	tail -n 40 "$VM_LOG.txt"
	vm_judge_fail "the guest did not finish the host tests"
fi
! grep -q '^ARCH: insmod\|^ARCH: mounts failed' "$VM_LOG.txt" || vm_judge_fail "guest setup failed"
grep -q '^ARCH-NATIVE32 yes' "$VM_LOG.txt" || vm_judge_fail "the guest kernel did not run 32-bit programs"
[ "${rc:-1}" = 0 ] || vm_judge_fail "host tests failed in the guest (ctest exit ${rc:-none})"
vm_verdict
echo "PASS: host tests of $BUILD on $VM_KNAME"
