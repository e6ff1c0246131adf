#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-dm-test.sh - the kernel's dm-log-userspace served by examples/dm-ulog:
# boot a Debian kernel under QEMU (TCG) with its own dm-mirror,
# dm-log-userspace (and what they need) and loop modules, dmsetup with its
# libraries and a static dm-ulog; the guest (tests/vm/dm/init.sh) builds a
# mirror with a "userspace" log over two loop devices and runs it through
# resync, writes, suspend/resume, EAGAIN answers and the server's death and
# restart. The boot logic and the verdict are tests/vm/lib/vm.sh.
#
# Usage: run-dm-test.sh [--kernel 6.1|6.12] [--dm-ulog PATH] [--libcn-a PATH]
#                       [--work DIR] [--keep]
#   --kernel   Debian's 6.1 (default) or 6.12, newest installed ABI
#   --dm-ulog  a statically linked dm-ulog (CMake builds dm_ulog_static);
#              without it the script compiles examples/dm-ulog with
#              --libcn-a (default: builds libcn with CMake in WORK)
# Environment: VM_TIMEOUT (seconds, default 600), VM_SMP, VM_MEM.
# Exit: 0 passed, 1 failed (a not ok line, or a kernel report in the log),
#       77 the host cannot run it (no qemu, kernel, busybox, dmsetup).
set -euo pipefail

VM_SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$VM_SRC/tests/vm/lib/vm.sh"
KNAME=6.1
DM_ULOG=
LIBCN_A=
VM_WORK=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KNAME=$2; shift 2 ;;
	--dm-ulog) DM_ULOG=$2; shift 2 ;;
	--libcn-a) LIBCN_A=$2; shift 2 ;;
	--work) VM_WORK=$2; shift 2 ;;
	--keep) VM_KEEP=1; shift ;;
	*) sed -n '/^# Usage/,/^# *--libcn-a)/p' "$0" >&2; exit 2 ;;
	esac
done
case "$KNAME" in 6.1 | 6.12) ;; *) echo "run-dm-test.sh: --kernel 6.1 or 6.12" >&2; exit 2 ;; esac

vm_host_tools
DMSETUP=$(command -v dmsetup || true)
[ -n "$DMSETUP" ] || vm_skip "dmsetup not installed (scripts/install-deps)"
vm_work cn-dm-vm
rm -rf "${VM_WORK:?}/src"
mkdir -p "$VM_WORK/src"
vm_kernel "$KNAME"
KVER=$VM_KVER
MODS=$VM_MODDIR/kernel

# 1. The server, static: the initramfs has no libcn or libnl.
if [ -z "$DM_ULOG" ]; then
	DM_ULOG=$VM_WORK/dm-ulog
	vm_build_guest "$DM_ULOG" "$VM_SRC/examples/dm-ulog/main.c" "$VM_SRC/examples/dm-ulog/core_log.c"
fi
file -L "$DM_ULOG" | grep -q "statically linked" || vm_fail "$DM_ULOG is not static"

# 2. initramfs: busybox, the modules (uncompressed: busybox insmod reads
# plain ELF), dmsetup and the shared libraries it loads.
vm_root "$VM_SRC/tests/vm/dm/init.sh"
cp "$DM_ULOG" "$VM_ROOT/bin/dm-ulog"
mkdir -p "$VM_ROOT/lib/dm"
for m in dm-mod dm-log dm-region-hash dm-mirror dm-log-userspace loop; do
	f=$(find "$MODS/drivers/md" "$MODS/drivers/block" -name "$m.ko*" -print -quit)
	if [ -z "$f" ]; then
		grep -q "/$m.ko" "$VM_MODDIR/modules.builtin" 2>/dev/null ||
			vm_skip "kernel $KVER has no $m module (its image: scripts/install-deps)"
		continue
	fi
	case "$f" in
	*.xz) xz -dc "$f" >"$VM_ROOT/lib/dm/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$VM_ROOT/lib/dm/$m.ko" ;;
	*.gz) gzip -dc "$f" >"$VM_ROOT/lib/dm/$m.ko" ;;
	*) cp "$f" "$VM_ROOT/lib/dm/$m.ko" ;;
	esac
done
cp "$DMSETUP" "$VM_ROOT/bin/dmsetup"
for lib in $(ldd "$DMSETUP" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
	mkdir -p "$VM_ROOT$(dirname "$lib")"
	cp -L "$lib" "$VM_ROOT$lib"
done

# 3. Boot, one per kernel.
vm_boot "${VM_TIMEOUT:-600}" "loglevel=4"

# 4. Judge (vm_judge: qemu, the guest's end, TAP lines, the kernel log).
vm_judge DMTEST --min-ok 30
grep -q '^DMTEST-SUMMARY' "$VM_LOG.txt" || vm_judge_fail "guest did not reach the end of its tests"
vm_verdict
echo "PASS"
