#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-vm-tests.sh - build kmod (and the example module examples/kernel)
# against Debian's 6.1 headers, boot Debian's kernel under QEMU (TCG, never
# KVM) with a busybox initramfs holding the modules and the guest test
# binary, and judge the serial console log.
#
# Usage: run-vm-tests.sh [--guest-bin PATH] [--libcn-a PATH] [--work DIR]
#                        [--tests "name ..."] [--cnctl PATH] [--keep]
#   --guest-bin  statically linked cnbus_vmtest (CMake target cnbus_vmtest);
#                without it the script compiles tests/vm/guest/*.c with gcc
#                against --libcn-a (default: builds libcn with CMake in WORK).
#   --work       scratch directory (default: a fresh mktemp -d).
#   --tests      run only these guest tests (see cnbus_vmtest.c).
#   --cnctl      a statically linked cnctl: the guest runs "cnctl kmod" (and
#                checks its exit status) before unloading cnbus.
# Environment: KVER (6.1.0-57-amd64), KDIR, KERNEL, VM_TIMEOUT (seconds,
#   default 900), VM_SMP (2), VM_MEM (1G), CNBUS_BURST (inserts per CPU in
#   the burst test, default 50000).
#
# Exit: 0 all passed, 1 a test failed or the kernel log is not clean,
#       77 the host cannot run it (no qemu, kernel, headers or busybox).
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
KVER=${KVER:-6.1.0-57-amd64}
KDIR=${KDIR:-/lib/modules/$KVER/build}
KERNEL=${KERNEL:-/boot/vmlinuz-$KVER}
VM_TIMEOUT=${VM_TIMEOUT:-900}
VM_SMP=${VM_SMP:-2}
VM_MEM=${VM_MEM:-1G}
GUEST_BIN=
LIBCN_A=
WORK=
TESTS=
CNCTL=
KEEP=0

while [ $# -gt 0 ]; do
	case "$1" in
	--guest-bin) GUEST_BIN=$2; shift 2 ;;
	--libcn-a) LIBCN_A=$2; shift 2 ;;
	--work) WORK=$2; shift 2 ;;
	--tests) TESTS=$2; shift 2 ;;
	--cnctl) CNCTL=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	*) echo "usage: $0 [--guest-bin PATH] [--libcn-a PATH] [--work DIR] [--tests LIST]" >&2; exit 2 ;;
	esac
done

skip() { echo "SKIP: $*"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
[ -r "$KERNEL" ] || skip "kernel $KERNEL not readable"
[ -d "$KDIR" ] || skip "kernel headers $KDIR missing"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] && file -L "$BUSYBOX" 2>/dev/null | grep -q "statically linked" ||
	{ [ -x /bin/busybox ] && BUSYBOX=/bin/busybox; }
[ -n "$BUSYBOX" ] || skip "busybox(-static) not installed"
command -v cpio >/dev/null || skip "cpio not installed"

if [ -z "$WORK" ]; then
	WORK=$(mktemp -d /tmp/cnbus-vm.XXXXXX)
	[ "$KEEP" = 1 ] || trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

# 1. kmod, built on a copy so the source tree stays clean.
rm -rf "$WORK/src"
mkdir -p "$WORK/src/kmod" "$WORK/src/include/libcn"
cp "$SRC"/kmod/Kbuild "$SRC"/kmod/Makefile "$SRC"/kmod/*.c "$SRC"/kmod/*.h "$WORK/src/kmod/"
cp "$SRC"/include/libcn/*.h "$WORK/src/include/libcn/"
echo "== building kmod against $KDIR"
make -s -C "$WORK/src/kmod" KDIR="$KDIR" W=1 -j2 >"$WORK/kmod-build.log" 2>&1 || {
	cat "$WORK/kmod-build.log"; echo "FAIL: kmod build"; exit 1; }
if grep -E "warning:|error:" "$WORK/kmod-build.log"; then
	echo "FAIL: kmod build has warnings"; exit 1
fi

# 1b. The example kernel module (examples/kernel), against kmod's symbols.
mkdir -p "$WORK/src/examples/kernel"
cp "$SRC"/examples/kernel/Kbuild "$SRC"/examples/kernel/Makefile "$SRC"/examples/kernel/*.c \
	"$WORK/src/examples/kernel/"
echo "== building examples/kernel against $KDIR"
make -s -C "$WORK/src/examples/kernel" KDIR="$KDIR" W=1 >"$WORK/example-build.log" 2>&1 || {
	cat "$WORK/example-build.log"; echo "FAIL: examples/kernel build"; exit 1; }
if grep -E "warning:|error:" "$WORK/example-build.log"; then
	echo "FAIL: examples/kernel build has warnings"; exit 1
fi

# 2. The guest test binary, static so the initramfs needs no libraries.
if [ -z "$GUEST_BIN" ]; then
	if [ -z "$LIBCN_A" ]; then
		echo "== building libcn"
		cmake -S "$SRC" -B "$WORK/libcn-build" -DBUILD_TESTING=OFF >"$WORK/libcn-build.log" 2>&1 &&
			cmake --build "$WORK/libcn-build" --target cn_static -j2 >>"$WORK/libcn-build.log" 2>&1 || {
			cat "$WORK/libcn-build.log"; echo "FAIL: libcn build"; exit 1; }
		LIBCN_A="$WORK/libcn-build/libcn.a"
	fi
	GUEST_BIN="$WORK/cnbus_vmtest"
	gcc -O2 -g -Wall -Wextra -Werror -static -I"$SRC/include" -I/usr/include/libnl3 \
		-o "$GUEST_BIN" "$SRC"/tests/vm/guest/cnbus_vmtest.c "$SRC"/tests/vm/guest/hostile.c \
		"$SRC"/tests/vm/guest/kstat.c \
		"$LIBCN_A" -l:libnl-genl-3.a -l:libnl-3.a -lpthread -lm 2>"$WORK/guest-build.log" || {
		cat "$WORK/guest-build.log"; echo "FAIL: guest test build"; exit 1; }
fi
file -L "$GUEST_BIN" | grep -q "statically linked" || { echo "FAIL: $GUEST_BIN is not static"; exit 1; }

# 3. initramfs.
ROOT="$WORK/root"
rm -rf "$ROOT"
mkdir -p "$ROOT/bin" "$ROOT/proc" "$ROOT/sys" "$ROOT/dev" "$ROOT/tmp" "$ROOT/lib/cnbus"
cp "$BUSYBOX" "$ROOT/bin/busybox"
cp "$GUEST_BIN" "$ROOT/bin/cnbus_vmtest"
if [ -n "$CNCTL" ]; then
	file -L "$CNCTL" | grep -q "statically linked" || { echo "FAIL: $CNCTL is not static"; exit 1; }
	cp "$CNCTL" "$ROOT/bin/cnctl"
fi
cp "$WORK/src/kmod/cnbus.ko" "$WORK/src/kmod/cnbus_test.ko" "$ROOT/lib/cnbus/"
cp "$WORK/src/examples/kernel/cn_hello.ko" "$ROOT/lib/cnbus/"
cp "$SRC/tests/vm/guest/init.sh" "$ROOT/init"
chmod 755 "$ROOT/init"
(cd "$ROOT" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$WORK/initramfs.gz"

# 4. Boot. TCG only: KVM does not work on these machines.
APPEND="console=ttyS0 panic=-1 loglevel=4 slub_debug=FZP"
[ -n "${CNBUS_BURST:-}" ] && APPEND="$APPEND cnbus.burst=$CNBUS_BURST"
[ -n "$TESTS" ] && APPEND="$APPEND cnbus.tests=$(echo "$TESTS" | tr ' ' ,)"
LOG="$WORK/console.log"
echo "== booting $KERNEL (smp $VM_SMP, $VM_MEM, timeout ${VM_TIMEOUT}s); log: $LOG"
set +e
timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 -accel tcg -m "$VM_MEM" -smp "$VM_SMP" \
	-nographic -no-reboot -nic none -kernel "$KERNEL" -initrd "$WORK/initramfs.gz" \
	-append "$APPEND" </dev/null >"$LOG" 2>&1
QRC=$?
set -e
tr -d '\r' <"$LOG" >"$LOG.txt"

# 5. Judge.
sed -n '/VMTEST-BEGIN/,/^VMTEST-DMESG-BEGIN/p' "$LOG.txt" | grep -v '^VMTEST-DMESG-BEGIN' || true
FAIL=0
[ "$QRC" = 0 ] || { echo "FAIL: qemu exit status $QRC (124: timeout)"; FAIL=1; }
grep -q '^VMTEST-END' "$LOG.txt" || { echo "FAIL: guest did not finish"; FAIL=1; }
NOTOK=$(grep -c '^not ok' "$LOG.txt" || true)
OK=$(grep -c '^ok' "$LOG.txt" || true)
SUMMARIES=$(grep -c '^VMTEST-SUMMARY' "$LOG.txt" || true)
[ "$NOTOK" = 0 ] || { echo "FAIL: $NOTOK failed test(s)"; FAIL=1; }
[ "$SUMMARIES" -ge 2 ] || { echo "FAIL: expected 2 guest test runs, saw $SUMMARIES"; FAIL=1; }
grep -q '^Bail out' "$LOG.txt" && { echo "FAIL: guest bailed out"; FAIL=1; }
sed -n '/^VMTEST-DMESG-BEGIN/,/^VMTEST-DMESG-END/p' "$LOG.txt" >"$WORK/dmesg.txt"
BAD=$(grep -E 'BUG|WARNING|Oops|refcount|Call Trace|general protection|Kernel panic' "$WORK/dmesg.txt" || true)
PANIC=$(grep -E 'Kernel panic|BUG:|Oops' "$LOG.txt" || true)
if [ -n "$BAD$PANIC" ]; then
	echo "FAIL: kernel log is not clean:"
	printf '%s\n%s\n' "$BAD" "$PANIC" | sed '/^$/d'
	FAIL=1
fi
# Every unload reports its CBUS totals: they must add up.
ACCT=$(sed -n 's/.*cbus: \([0-9]*\) queued at unload, drained; inserted \([0-9]*\) sent \([0-9]*\) sent_direct \([0-9]*\) dropped \([0-9]*\).*/\1 \2 \3 \4 \5/p' "$WORK/dmesg.txt")
[ -n "$ACCT" ] || { echo "FAIL: no CBUS totals at unload in the kernel log"; FAIL=1; }
echo "$ACCT" | while read -r q i s d x; do
	[ -n "$i" ] || continue
	if [ "$i" -eq $((s + d + x)) ]; then
		echo "ok - cnbus unload: $q queued messages drained; inserted $i = sent $s + direct $d + dropped $x"
	else
		echo "not ok - cnbus unload: inserted $i != sent $s + direct $d + dropped $x"
	fi
done | tee "$WORK/acct.txt"
grep -q '^not ok' "$WORK/acct.txt" && FAIL=1
grep -E 'cnbus' "$WORK/dmesg.txt" | grep -v 'cnbus_test: \(un\)\?loaded' | sed 's/^/# dmesg: /' || true
echo "== $OK ok, $NOTOK not ok; kernel log $( [ -n "$BAD$PANIC" ] && echo dirty || echo clean )"
if [ "$FAIL" != 0 ]; then
	echo "== console log kept in $LOG"
	trap - EXIT
	exit 1
fi
echo "PASS"
exit 0
