#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-dm-test.sh - the kernel's dm-log-userspace served by examples/dm-ulog:
# boot a Debian kernel under QEMU (TCG) with its own dm-mirror,
# dm-log-userspace (and what they need) and loop modules, dmsetup with its
# libraries and a static dm-ulog; the guest (tests/vm/dm/init.sh) builds a
# mirror with a "userspace" log over two loop devices and runs it through
# resync, writes, suspend/resume, EAGAIN answers and the server's death and
# restart. The boot logic is tests/vm/lib/vm.sh.
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
set -eu

VM_SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$VM_SRC/tests/vm/lib/vm.sh"
KNAME=6.1
DM_ULOG=
LIBCN_A=
VM_WORK=
KEEP=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KNAME=$2; shift 2 ;;
	--dm-ulog) DM_ULOG=$2; shift 2 ;;
	--libcn-a) LIBCN_A=$2; shift 2 ;;
	--work) VM_WORK=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	*) sed -n '/^# Usage/,/^# *--libcn-a)/p' "$0" >&2; exit 2 ;;
	esac
done
case "$KNAME" in 6.1 | 6.12) ;; *) echo "run-dm-test.sh: --kernel 6.1 or 6.12" >&2; exit 2 ;; esac

vm_skip() { echo "SKIP: $*"; exit 77; }
vm_fail() { echo "FAIL: $*"; exit 1; }
T0=$(date +%s)
vm_host_tools
DMSETUP=$(command -v dmsetup || true)
[ -n "$DMSETUP" ] || vm_skip "dmsetup not installed (scripts/install-deps)"
if [ -z "$VM_WORK" ]; then
	VM_WORK=$(mktemp -d /tmp/cn-dm-vm.XXXXXX)
	[ "$KEEP" = 1 ] || trap 'rm -rf "$VM_WORK"' EXIT
fi
mkdir -p "$VM_WORK/src"
VM_WORK=$(cd "$VM_WORK" && pwd)
rm -rf "${VM_WORK:?}/src/"*
vm_kernel "$KNAME"
KVER=${VM_KDIR#/lib/modules/}
KVER=${KVER%/build}
MODS=/lib/modules/$KVER/kernel

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
	f=$(find "$MODS/drivers/md" "$MODS/drivers/block" -name "$m.ko*" | head -n 1)
	if [ -z "$f" ]; then
		grep -q "/$m.ko" "/lib/modules/$KVER/modules.builtin" 2>/dev/null ||
			vm_skip "kernel $KVER has no $m module (linux-image-* installed?)"
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
T1=$(date +%s)
vm_boot "${VM_TIMEOUT:-600}" "loglevel=4"
T2=$(date +%s)
LOG=$VM_LOG.txt

# 4. Judge.
sed -n '/DMTEST-BEGIN/,/^DMTEST-DMESG-BEGIN/p' "$LOG" | grep -v '^DMTEST-DMESG-BEGIN' || true
FAIL=0
[ "$VM_QRC" = 0 ] || { echo "FAIL: qemu exit status $VM_QRC (124: timeout)"; FAIL=1; }
grep -q '^DMTEST-END' "$LOG" || { echo "FAIL: guest did not finish"; FAIL=1; }
grep -q '^DMTEST-SUMMARY' "$LOG" || { echo "FAIL: guest did not reach the end of its tests"; FAIL=1; }
OK=$(grep -c '^ok' "$LOG" || true)
NOTOK=$(grep -c '^not ok' "$LOG" || true)
[ "$NOTOK" = 0 ] || { echo "FAIL: $NOTOK failed check(s)"; FAIL=1; }
[ "$OK" -ge 30 ] || { echo "FAIL: only $OK checks passed"; FAIL=1; }
grep -Ev '^(ok|not ok|#)' "$LOG" >"$VM_WORK/kernel.txt" || true
BAD=$(vm_log_reports "$VM_WORK/kernel.txt" | awk '!seen[$0]++' || true)
if [ -n "$BAD" ]; then
	echo "FAIL: kernel log is not clean:"
	echo "$BAD"
	echo "== the first report in full:"
	grep -F -x -A 50 "$(echo "$BAD" | head -n 1)" "$VM_WORK/kernel.txt" | head -n 50
	FAIL=1
fi
echo "== $VM_KNAME: $OK ok, $NOTOK not ok; kernel log $([ -n "$BAD" ] && echo dirty || echo clean);" \
	"boot+guest $((T2 - T1)) s, total $(($(date +%s) - T0)) s"
if [ "$FAIL" != 0 ]; then
	echo "== console log kept in $VM_LOG"
	trap - EXIT
	exit 1
fi
echo "PASS"
