#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-w1-test.sh - libcn as a w1 (1-Wire) client against the kernel's own
# w1 code: boot a Debian kernel under QEMU (TCG) with its wire.ko (w1 core
# and netlink interface) and w1_therm.ko, and tests/vm/w1/fake_w1_master.ko,
# a bus master that emulates a DS18B20 and a DS2401 bit by bit (built here
# against the kernel's headers); the guest (tests/vm/w1/init.sh) lists the
# masters, searches the bus and reads the DS18B20 with examples/w1
# (w1_therm), bundled and not. The boot logic and the verdict (vm_judge)
# are tests/vm/lib/vm.sh.
#
# Usage: run-w1-test.sh [--kernel 6.1|6.12] [--w1-therm PATH] [--libcn-a PATH]
#                       [--work DIR] [--keep]
#   --kernel    Debian's 6.1 (default) or 6.12, newest installed ABI
#   --w1-therm  a statically linked examples/w1 (CMake builds w1_therm_static);
#               without it the script compiles it with --libcn-a (default:
#               builds libcn with CMake in WORK)
# Environment: VM_TIMEOUT (seconds, default 600), VM_SMP, VM_MEM.
# Exit: 0 passed, 1 failed (a not ok line, or a kernel report in the log),
#       77 the host cannot run it (no qemu, kernel, headers, busybox, or a
#       kernel without w1 netlink: CONFIG_W1 with CONFIG_W1_CON).
set -euo pipefail

VM_SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$VM_SRC/tests/vm/lib/vm.sh"
KNAME=6.1
W1_THERM=
LIBCN_A=
VM_WORK=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KNAME=$2; shift 2 ;;
	--w1-therm) W1_THERM=$2; shift 2 ;;
	--libcn-a) LIBCN_A=$2; shift 2 ;;
	--work) VM_WORK=$2; shift 2 ;;
	--keep) VM_KEEP=1; shift ;;
	*) sed -n '/^# Usage/,/^# *--libcn-a)/p' "$0" >&2; exit 2 ;;
	esac
done
case "$KNAME" in 6.1 | 6.12) ;; *) echo "run-w1-test.sh: --kernel 6.1 or 6.12" >&2; exit 2 ;; esac

vm_host_tools
vm_work cn-w1-vm
mkdir -p "$VM_WORK/src"
rm -rf "${VM_WORK:?}/src/"*
vm_kernel "$KNAME"
KVER=$VM_KVER
MODS=$VM_MODDIR/kernel

# 1. The kernel's w1 must have its netlink interface: Debian builds w1 as
# modules (CONFIG_W1=m) with CONFIG_W1_CON=y on 6.1 and 6.12.
CONFIG=/boot/config-$KVER
[ -r "$CONFIG" ] || CONFIG=$VM_KERNEL_CACHE/$KVER/boot/config-$KVER
[ -r "$CONFIG" ] || vm_skip "no $CONFIG"
if ! grep -qx 'CONFIG_W1=m' "$CONFIG" || ! grep -qx 'CONFIG_W1_CON=y' "$CONFIG"; then
	vm_skip "kernel $KVER: w1 is not a module with netlink (CONFIG_W1=m, CONFIG_W1_CON=y)"
fi

# 2. The fake bus master, against the guest kernel's headers (W=1, no
# warning), and the client, static: the initramfs has no libcn or libnl.
vm_build_module tests/vm/w1 W=1 CNBUS_WERROR=1
if [ -z "$W1_THERM" ]; then
	W1_THERM=$VM_WORK/w1_therm
	vm_build_guest "$W1_THERM" "$VM_SRC/examples/w1/w1_therm.c"
fi
file -L "$W1_THERM" | grep -q "statically linked" || vm_fail "$W1_THERM is not static"

# 3. initramfs: busybox, the kernel's wire and w1_therm (uncompressed:
# busybox insmod reads plain ELF), fake_w1_master.ko (vm_root), w1_therm.
vm_root "$VM_SRC/tests/vm/w1/init.sh"
cp "$W1_THERM" "$VM_ROOT/bin/w1_therm"
mkdir -p "$VM_ROOT/lib/w1"
for m in wire w1_therm; do
	f=$(find "$MODS/drivers/w1" -name "$m.ko*" -print -quit)
	[ -n "$f" ] || vm_skip "kernel $KVER has no $m module (linux-image-* installed?)"
	case "$f" in
	*.xz) xz -dc "$f" >"$VM_ROOT/lib/w1/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$VM_ROOT/lib/w1/$m.ko" ;;
	*.gz) gzip -dc "$f" >"$VM_ROOT/lib/w1/$m.ko" ;;
	*) cp "$f" "$VM_ROOT/lib/w1/$m.ko" ;;
	esac
done

# 4. Boot, one per kernel.
vm_boot "${VM_TIMEOUT:-600}" "loglevel=4"

# 5. Judge (vm_judge: qemu, the guest's end, TAP lines, the kernel log).
vm_judge W1TEST --min-ok 29
grep -q '^W1TEST-SUMMARY' "$VM_LOG.txt" || vm_judge_fail "guest did not reach the end of its tests"
vm_verdict
echo "PASS"
