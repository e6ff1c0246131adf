# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
#
# tests/vm/lib/vm.sh - the one QEMU boot logic of the VM tier
# (tests/vm/run-vm-tests.sh) and the CBUS bench (bench/cbus/run). Sourced,
# POSIX sh. It picks a kernel, builds kmod against it, packs a busybox
# initramfs, boots it under QEMU/TCG (never KVM: it does not work on these
# machines) and judges the kernel log.
#
# Callers set VM_SRC (the source tree) and VM_WORK (a scratch directory)
# and define vm_skip MESSAGE (exit 77) and vm_fail MESSAGE (exit 1).
#
# Kernels (vm_kernel NAME): Debian's from apt, newest installed ABI of each
#   6.1      linux-image-6.1.0-N-amd64           (linux-image-amd64)
#   6.1-rt   linux-image-6.1.0-N-rt-amd64        (linux-image-rt-amd64)
#   6.12     linux-image-6.12.P+deb12-amd64      (-unsigned, from bookworm)
#   6.12-rt  linux-image-6.12.P+deb12-rt-amd64
#   debug    tests/vm/debug-kernel/build.sh (6.12, KASAN, lockdep, ...)
# or KERNEL + KDIR from the environment (KVER picks /boot/vmlinuz-KVER).

# vm_kernel NAME: set VM_KERNEL (the image), VM_KDIR (a tree to build
# modules against) and VM_KNAME (what the logs call it).
vm_kernel() {
	VM_KNAME=$1
	if [ -n "${KERNEL:-}" ] || [ -n "${KVER:-}" ]; then
		VM_KERNEL=${KERNEL:-/boot/vmlinuz-$KVER}
		VM_KDIR=${KDIR:-/lib/modules/${KVER:-}/build}
		VM_KNAME=${KVER:-$VM_KERNEL}
	elif [ "$1" = debug ]; then
		vm_dk=$("$VM_SRC/tests/vm/debug-kernel/build.sh") || {
			vm_rc=$?
			[ "$vm_rc" = 77 ] && vm_skip "debug kernel: no linux-source-6.12 or build tools"
			vm_fail "debug kernel build (tests/vm/debug-kernel/build.sh)"
		}
		VM_KERNEL=$vm_dk/bzImage
		VM_KDIR=$vm_dk/build
	else
		case "$1" in
		6.1) vm_glob='6.1.0-*-amd64' vm_not='-rt-|-cloud-' ;;
		6.1-rt) vm_glob='6.1.0-*-rt-amd64' vm_not='-cloud-' ;;
		6.12) vm_glob='6.12.*+deb*-amd64' vm_not='-rt-|-cloud-' ;;
		6.12-rt) vm_glob='6.12.*+deb*-rt-amd64' vm_not='-cloud-' ;;
		*) vm_fail "unknown kernel '$1' (6.1, 6.1-rt, 6.12, 6.12-rt, debug)" ;;
		esac
		# The newest ABI whose image and headers are both installed.
		vm_kver=$(for d in /lib/modules/$vm_glob/build; do
			v=${d#/lib/modules/}
			v=${v%/build}
			[ -d "$d" ] && [ -r "/boot/vmlinuz-$v" ] && echo "$v"
		done | grep -Ev -- "$vm_not" | sort -V | tail -n 1 || true)
		[ -n "$vm_kver" ] || vm_skip "kernel $1: no /boot/vmlinuz-$vm_glob with headers (scripts/install-deps)"
		VM_KERNEL=/boot/vmlinuz-$vm_kver
		VM_KDIR=/lib/modules/$vm_kver/build
		VM_KNAME="$1 ($vm_kver)"
	fi
	[ -r "$VM_KERNEL" ] || vm_skip "kernel $VM_KERNEL not readable"
	[ -d "$VM_KDIR" ] || vm_skip "kernel headers $VM_KDIR missing"
}

# vm_host_tools: skip unless qemu, a static busybox and cpio are there; sets
# VM_BUSYBOX.
vm_host_tools() {
	command -v qemu-system-x86_64 >/dev/null || vm_skip "qemu-system-x86_64 not installed"
	VM_BUSYBOX=$(command -v busybox || true)
	if [ -z "$VM_BUSYBOX" ] || ! file -L "$VM_BUSYBOX" 2>/dev/null | grep -q "statically linked"; then
		VM_BUSYBOX=
		[ -x /bin/busybox ] && file -L /bin/busybox | grep -q "statically linked" &&
			VM_BUSYBOX=/bin/busybox
	fi
	[ -n "$VM_BUSYBOX" ] || vm_skip "busybox-static not installed"
	command -v cpio >/dev/null || vm_skip "cpio not installed"
}

# vm_build_module DIR [make args...]: copy VM_SRC/DIR (a Kbuild module
# directory, with its subdirectories) and include/libcn into VM_WORK/src and
# build it there against VM_KDIR, so the source tree stays clean. Output in
# VM_WORK/<dir>-build.log.
vm_build_module() {
	vm_dir=$1
	shift
	vm_log=$VM_WORK/$(echo "$vm_dir" | tr / -)-build.log
	rm -rf "${VM_WORK:?}/src/$vm_dir"
	mkdir -p "$VM_WORK/src/$vm_dir" "$VM_WORK/src/include/libcn"
	cp "$VM_SRC/include/libcn/"*.h "$VM_WORK/src/include/libcn/"
	cp -R "$VM_SRC/$vm_dir/." "$VM_WORK/src/$vm_dir/"
	# Objects from a build in the source tree belong to another kernel.
	find "$VM_WORK/src/$vm_dir" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name Module.symvers -o -name modules.order \) -delete
	echo "== building $vm_dir against $VM_KDIR"
	make -s -C "$VM_WORK/src/$vm_dir" KDIR="$VM_KDIR" "$@" >"$vm_log" 2>&1 || {
		cat "$vm_log"
		vm_fail "$vm_dir build"
	}
}

# vm_build_guest OUT SOURCES...: a static guest program from C sources,
# linked with libcn.a (LIBCN_A, built in VM_WORK when empty) and libnl.
vm_build_guest() {
	vm_out=$1
	shift
	if [ -z "${LIBCN_A:-}" ]; then
		echo "== building libcn"
		{ cmake -S "$VM_SRC" -B "$VM_WORK/libcn-build" -DBUILD_TESTING=OFF \
			-DCMAKE_BUILD_TYPE=Release &&
			cmake --build "$VM_WORK/libcn-build" --target cn_static -j2; } \
			>"$VM_WORK/libcn-build.log" 2>&1 || {
			cat "$VM_WORK/libcn-build.log"
			vm_fail "libcn build"
		}
		LIBCN_A=$VM_WORK/libcn-build/libcn.a
	fi
	gcc -O2 -g -Wall -Wextra -Werror -static -D_GNU_SOURCE -I"$VM_SRC/include" \
		-I"$VM_SRC/tests/vm/guest" -I/usr/include/libnl3 -o "$vm_out" "$@" "$LIBCN_A" \
		-l:libnl-genl-3.a -l:libnl-3.a -lpthread -lm 2>"$vm_out.build.log" || {
		cat "$vm_out.build.log"
		vm_fail "guest build ($vm_out)"
	}
}

# vm_root INIT: start the initramfs tree VM_ROOT (= VM_WORK/root): busybox,
# INIT as /init (it sources /lib/vm-guest.sh, tests/vm/lib/guest.sh), the
# modules built by vm_build_module in /lib/cnbus. The
# caller adds its programs to $VM_ROOT/bin.
vm_root() {
	VM_ROOT=$VM_WORK/root
	rm -rf "$VM_ROOT"
	mkdir -p "$VM_ROOT/bin" "$VM_ROOT/proc" "$VM_ROOT/sys" "$VM_ROOT/dev" "$VM_ROOT/tmp" \
		"$VM_ROOT/lib/cnbus"
	cp "$VM_BUSYBOX" "$VM_ROOT/bin/busybox"
	cp "$VM_SRC/tests/vm/lib/guest.sh" "$VM_ROOT/lib/vm-guest.sh"
	cp "$1" "$VM_ROOT/init"
	chmod 755 "$VM_ROOT/init"
	find "$VM_WORK/src" -name '*.ko' -exec cp {} "$VM_ROOT/lib/cnbus/" \;
}

# vm_boot TIMEOUT APPEND...: pack VM_ROOT, boot VM_KERNEL with it and the
# kernel command line APPEND (console, panic, log buffer are added). The
# serial console goes to VM_LOG (VM_WORK/console.log, and .txt without
# CRs); VM_QRC is qemu's exit status (124: timeout). VM_SMP (2), VM_MEM (1G);
# VM_QEMU_ARGS: more qemu arguments (the arch tier shares directories over
# 9p with -virtfs).
#
# One retry, for one case only: the guest kernel reported a crash during
# its own boot, before it ran /init (no VM-GUEST-START line), so before any
# module or program of ours existed in the guest. Multi-threaded TCG has
# shown this (an int3 Oops in sched_clock_cpu at 2.4 s, from a static key
# patched while the other vCPU ran a stale translation). The first console
# is kept as console.boot-1.log and its first report is printed. Anything
# after VM-GUEST-START, and any hang, is judged as it is.
vm_boot() {
	vm_timeout=$1
	shift
	(cd "$VM_ROOT" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$VM_WORK/initramfs.gz"
	VM_LOG=$VM_WORK/console.log
	rm -f "$VM_WORK/console.boot-1.log" # from an earlier run in this VM_WORK
	vm_boot_once "$@"
	if ! grep -q 'VM-GUEST-START' "$VM_LOG.txt" && vm_log_reports "$VM_LOG.txt" >/dev/null; then
		mv "$VM_LOG" "$VM_WORK/console.boot-1.log"
		echo "== the guest kernel crashed during its own boot, before /init (nothing of ours had run):"
		vm_log_reports "$VM_WORK/console.boot-1.log" | tr -d '\r' | head -n 3 | sed 's/^/==   /'
		echo "== that console is kept in $VM_WORK/console.boot-1.log; booting once more"
		vm_boot_once "$@"
	fi
}

# vm_boot_once APPEND...: one boot of vm_boot (VM_LOG, VM_QRC, $VM_LOG.txt).
vm_boot_once() {
	echo "== booting $VM_KNAME (smp ${VM_SMP:-2}, ${VM_MEM:-1G}, timeout ${vm_timeout}s); log: $VM_LOG"
	set +e
	timeout -k 10 "$vm_timeout" qemu-system-x86_64 -accel tcg -m "${VM_MEM:-1G}" \
		-smp "${VM_SMP:-2}" -nographic -no-reboot -nic none -kernel "$VM_KERNEL" \
		-initrd "$VM_WORK/initramfs.gz" ${VM_QEMU_ARGS:-} \
		-append "console=ttyS0 panic=-1 log_buf_len=8M $*" </dev/null >"$VM_LOG" 2>&1
	VM_QRC=$?
	set -e
	tr -d '\r' <"$VM_LOG" >"$VM_LOG.txt"
}

# vm_log_reports FILE: print the lines of a kernel log (dmesg) that report
# a kernel problem: BUG (KASAN, atomic sleep, "scheduling while atomic",
# lockdep's "Invalid wait context"), WARNING (lockdep, refcount, list
# corruption), Oops, panics, hung tasks, lockups, RCU stalls, ODEBUG,
# KASAN, UBSAN and kmemleak reports. Status 0 when there is one.
vm_log_reports() {
	grep -E -e 'BUG|WARNING|Oops|Kernel panic|general protection|Call Trace' \
		-e 'KASAN|UBSAN|ODEBUG|kmemleak|unreferenced object|lockdep|locking correctness' \
		-e 'scheduling while atomic|Invalid wait context|sleeping function called' \
		-e 'blocked for more than|hung_task|soft lockup|hard LOCKUP|rcu.*stall|INFO:' \
		-e 'refcount_t|list_(add|del) corruption|double fault|stack-protector|segfault' "$1" |
		grep -Ev -e 'KernelAddressSanitizer initialized|kmemleak: Kernel memory leak detector initialized' \
			-e 'kmemleak: Automatic memory scanning thread started|ODEBUG: selftest passed' \
			-e 'Lock dependency validator|RCU lockdep checking is enabled' \
			-e '^VMTEST|^CBENCH|^#'
}
