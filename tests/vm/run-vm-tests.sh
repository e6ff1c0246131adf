#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-vm-tests.sh - build kmod (and the example module examples/kernel)
# against one kernel, boot that kernel under QEMU (TCG, never KVM) with a
# busybox initramfs holding the modules and the guest test programs, and
# judge the serial console log strictly. The boot logic and the verdict
# (vm_judge) are tests/vm/lib/vm.sh.
#
# Usage: run-vm-tests.sh [--kernel NAME] [--light] [--guest-dir DIR]
#                        [--guest-bin PATH] [--libcn-a PATH] [--work DIR]
#                        [--tests "name ..."] [--cnctl PATH] [--scale N]
#                        [--cnbus-ko-dir DIR] [--keep]
#   --kernel     6.1 (default), 6.1-rt, 6.12, 6.12-rt, 7.2, 7.2-rt (Debian's,
#                newest ABI with headers and an image) or debug (tests/vm/debug-kernel/build.sh:
#                KASAN, lockdep, kmemleak, debugobjects; built once, cached).
#   --light      the whole suite with a tenth of the messages (bursts, echo
#                round trips, fault blaster): CTest uses it for the debug
#                kernel, where KASAN and lockdep slow kmod down ~10x.
#   --guest-dir  a directory of statically linked guest programs (CMake
#                builds one from tests/vm/guest); each goes to /bin.
#   --guest-bin  one statically linked guest program (may repeat).
#                Without either, the script compiles tests/vm/guest: each
#                *.c with a main() is a program, linked with the other *.c
#                and --libcn-a (default: builds libcn with CMake in WORK).
#   --work       scratch directory (default: a fresh mktemp -d).
#   --tests      run only these guest tests (see cnbus_vmtest.c).
#   --cnctl      a statically linked cnctl: the guest runs "cnctl kmod" (and
#                checks its exit status) before unloading cnbus.
#   --cnbus-ko-dir  boot DIR/<kernel release>/cnbus.ko, the module the
#                cnbus-dkms package built (tests/package, package_dkms),
#                instead of the one built here; it must be of the same
#                source (srcversion). Missing: the one built here, with a
#                note (with CI=true: a failure).
#   --scale      the scale boot (needs --cnctl): the suite on a guest with
#                SCALE_CPUS possible CPUs (default 240: qemu -smp 240, the
#                kernel's maxcpus=SCALE_ONLINE possible_cpus=240), SCALE_ONLINE
#                (3) of them online, then guest/scale.sh: N more callbacks
#                (cnbus_test callbacks=N) listed by cnctl kmod, and removed.
#   --keep       keep the work directory.
# Environment: KVER or KERNEL + KDIR (another kernel than --kernel's),
#   VM_TIMEOUT (seconds, default 900; 1800 for --scale, 2700 for debug),
#   VM_SMP (2), VM_MEM (1G), CNBUS_BURST (inserts per CPU in the burst
#   test, 50000), SCALE_CPUS (240), SCALE_ONLINE (3).
#
# Exit: 0 all passed, 1 a test failed or the kernel log is not clean,
#       77 the host cannot run it (no qemu, kernel, headers or busybox).
set -euo pipefail

VM_SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$VM_SRC/tests/vm/lib/vm.sh"
KNAME=6.1
LIGHT=0
GUEST_BINS=
GUEST_DIR=
LIBCN_A=
VM_WORK=
TESTS=
CNCTL=
SCALE=
CNBUS_KO_DIR=

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KNAME=$2; shift 2 ;;
	--light) LIGHT=1; shift ;;
	--guest-dir) GUEST_DIR=$2; shift 2 ;;
	--guest-bin) GUEST_BINS="$GUEST_BINS $2"; shift 2 ;;
	--libcn-a) LIBCN_A=$2; shift 2 ;;
	--work) VM_WORK=$2; shift 2 ;;
	--tests) TESTS=$2; shift 2 ;;
	--cnctl) CNCTL=$2; shift 2 ;;
	--scale) SCALE=$2; shift 2 ;;
	--keep) VM_KEEP=1; shift ;;
	--cnbus-ko-dir) CNBUS_KO_DIR=$2; shift 2 ;;
	*) sed -n '/^# Usage/,/^# *--keep/p' "$0" >&2; exit 2 ;;
	esac
done

vm_host_tools
vm_work cnbus-vm
vm_kernel "$KNAME"

# 1. kmod and the example module, W=1 clean.
rm -rf "$VM_WORK/src"
vm_build_module kmod W=1 -j2 CNBUS_TESTING=y
vm_build_module examples/kernel W=1
if grep -E "warning:|error:" "$VM_WORK/kmod-build.log" "$VM_WORK/examples-kernel-build.log"; then
	vm_fail "module build has warnings"
fi

# 2. The guest programs, static so the initramfs needs no libraries.
if [ -z "$GUEST_DIR$GUEST_BINS" ]; then
	GUEST_DIR=$VM_WORK/guest-bin
	mkdir -p "$GUEST_DIR"
	PROGS=$(grep -l '^int main(' "$VM_SRC"/tests/vm/guest/*.c)
	LIBSRC=$(grep -L '^int main(' "$VM_SRC"/tests/vm/guest/*.c || [ $? = 1 ])
	for p in $PROGS; do
		# shellcheck disable=SC2086 # word splitting of the source list
		vm_build_guest "$GUEST_DIR/$(basename "$p" .c)" "$p" $LIBSRC
	done
fi
[ -z "$GUEST_DIR" ] || GUEST_BINS="$GUEST_BINS $(find "$GUEST_DIR" -maxdepth 1 -type f -perm -u+x)"
[ -z "$CNCTL" ] || GUEST_BINS="$GUEST_BINS $CNCTL"

# 3. initramfs.
[ -z "$SCALE" ] || [ -n "$CNCTL" ] || vm_fail "--scale needs --cnctl (the guest runs cnctl kmod)"
vm_root "$VM_SRC/tests/vm/guest/init.sh"
cp "$VM_SRC/tests/vm/guest/scale.sh" "$VM_ROOT/lib/scale.sh"
for b in $GUEST_BINS; do
	file -L "$b" | grep -q "statically linked" || vm_fail "$b is not static"
	n=$(basename "$b")
	[ "$n" = cnctl_static ] && n=cnctl
	cp "$b" "$VM_ROOT/bin/$n"
done

# The cnbus.ko cnbus-dkms's DKMS build made, in place of the one built above.
if [ -n "$CNBUS_KO_DIR" ]; then
	ko=$CNBUS_KO_DIR/$(basename "$(dirname "$VM_KDIR")")/cnbus.ko
	if [ -f "$ko" ]; then
		[ "$(modinfo -F srcversion "$ko")" = "$(modinfo -F srcversion "$VM_ROOT/lib/cnbus/cnbus.ko")" ] ||
			vm_fail "$ko is not of this source (srcversion): run the package tier again"
		cp "$ko" "$VM_ROOT/lib/cnbus/cnbus.ko"
		echo "== cnbus.ko: the cnbus-dkms package's, $ko"
	elif [ "${CI:-}" = true ]; then
		vm_fail "no $ko: the package tier (package_dkms) makes it"
	else
		echo "NOTE: no $ko (the package tier makes it): booting the cnbus.ko built here"
	fi
fi

# 4. Boot.
APPEND="loglevel=4 slub_debug=FZP"
[ "$LIGHT" = 1 ] && APPEND="$APPEND cnbus.burst=5000 cnbus.echo=500 cnbus.fault=2000 cnbus.hotplug=5"
[ -n "${CNBUS_BURST:-}" ] && APPEND="$APPEND cnbus.burst=$CNBUS_BURST"
[ -n "$TESTS" ] && APPEND="$APPEND cnbus.tests=$(echo "$TESTS" | tr ' ' ,)"
if [ -n "$SCALE" ]; then
	# SCALE_CPUS present CPUs (qemu's pc machine takes up to 255), of
	# which the kernel brings SCALE_ONLINE up (maxcpus=): the rest stay
	# possible and offline (the hotplug test brings two up and down again),
	# so TCG runs a few vCPUs. Kernels from 6.9 on make possible only
	# the CPUs the firmware lists, and count qemu's hot-pluggable ones
	# (-smp 2,maxcpus=) only under a hypervisor they detect, which TCG is
	# not; 6.1 would take possible_cpus= alone.
	SCALE_CPUS=${SCALE_CPUS:-240}
	VM_SMP=$SCALE_CPUS
	# Booting 240 CPUs under TCG on a loaded host held the boot CPU in
	# free_reserved_area for over 20 s, before /init: the lockup detector's
	# threshold at its maximum (120 s) keeps it for real stalls.
	APPEND="$APPEND maxcpus=${SCALE_ONLINE:-3} possible_cpus=$SCALE_CPUS cnbus.scale=$SCALE watchdog_thresh=60"
fi
TIMEOUT=900
[ -n "$SCALE" ] && TIMEOUT=1800
[ "$KNAME" = debug ] && TIMEOUT=2700
vm_boot "${VM_TIMEOUT:-$TIMEOUT}" "$APPEND"

# 5. Judge (vm_judge: qemu, the guest's end, TAP lines, the kernel log).
vm_judge VMTEST
SUMMARIES=$(grep -c '^VMTEST-SUMMARY' "$VM_LOG.txt" || [ $? = 1 ])
[ "$SUMMARIES" -ge 2 ] || vm_judge_fail "expected 2 guest test runs, saw $SUMMARIES"
if [ -n "$SCALE" ]; then
	SCALE_OK=$(grep -c '^ok - scale:' "$VM_LOG.txt" || [ $? = 1 ])
	[ "$SCALE_OK" -ge 12 ] || vm_judge_fail "expected 12 scale checks, saw $SCALE_OK"
fi
# Every unload reports its CBUS totals: they must add up.
ACCT=$(sed -n 's/.*cbus: \([0-9]*\) queued at unload, drained; inserted \([0-9]*\) sent \([0-9]*\) dropped \([0-9]*\).*/\1 \2 \3 \4/p' "$VM_WORK/dmesg.txt")
[ -n "$ACCT" ] || vm_judge_fail "no CBUS totals at unload in the kernel log"
echo "$ACCT" | while read -r q i s x; do
	[ -n "$i" ] || continue
	if [ "$i" -eq $((s + x)) ]; then
		echo "ok - cnbus unload: $q queued messages drained; inserted $i = sent $s + dropped $x"
	else
		echo "not ok - cnbus unload: inserted $i != sent $s + dropped $x"
	fi
done | tee "$VM_WORK/acct.txt"
! grep -q '^not ok' "$VM_WORK/acct.txt" || vm_judge_fail "CBUS totals do not add up"
sed -n '/cnbus/{/cnbus_test: \(un\)\?loaded/!s/^/# dmesg: /p}' "$VM_WORK/dmesg.txt"
vm_verdict
echo "PASS"
exit 0
