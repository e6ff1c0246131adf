# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
#
# tests/vm/lib/vm.sh - the one QEMU boot logic and verdict of the VM tier
# (tests/vm/run-vm-tests.sh, run-dm-test.sh), the arch tier's i386 VM
# (tests/arch/vm-host-tests.sh) and the CBUS bench (bench/cbus/run).
# Sourced, POSIX sh. It picks a kernel, builds kmod against it, packs a
# busybox initramfs, boots it under QEMU/TCG (never KVM: it does not work on
# these machines) and judges the run: the guest's end, its TAP lines, the
# kernel log (vm_judge).
#
# Callers set VM_SRC (the source tree), then VM_WORK (a scratch directory,
# their --work) or call vm_work for a fresh one. VM_KEEP=1 keeps a fresh
# one (--keep); VM_ON_EXIT is a command vm_skip and vm_fail run before they
# exit (bench/cbus/run prints its results as NA). vm_judge and vm_verdict
# judge the console of a guest whose /init ends with vm_guest_end
# (tests/vm/lib/guest.sh).
#
# Kernels (vm_kernel NAME): Debian's, the newest ABI whose headers are
# installed (linux-headers-*) and whose image is either installed (/boot,
# /lib/modules) or unpacked into VM_KERNEL_CACHE by tests/vm/kernel-cache.sh
# (what scripts/install-deps does: the vm tier boots them, the system need
# not):
#   6.1      linux-image-6.1.0-N-amd64           (linux-headers-amd64)
#   6.1-rt   linux-image-6.1.0-N-rt-amd64        (linux-headers-rt-amd64)
#   6.12     linux-image-6.12.P+deb12-amd64      (from bookworm-security)
#   6.12-rt  linux-image-6.12.P+deb12-rt-amd64
#   7.2      unstable's linux-binary-7.2.P+debN-amd64, built against the
#            tree tests/kmod/kernel-trees.sh prepared in KMOD_TREE_CACHE
#            (Debian's own headers of unstable do not run on Debian 12)
#   7.2-rt   linux-binary-7.2.P+debN-rt-amd64, the same way
#   debug    tests/vm/debug-kernel/build.sh (6.12, KASAN, lockdep, ...)
# or KERNEL + KDIR from the environment (KVER picks /boot/vmlinuz-KVER).
VM_KERNEL_CACHE=${VM_KERNEL_CACHE:-/var/cache/libcn/kernels}
KMOD_TREE_CACHE=${KMOD_TREE_CACHE:-/var/cache/libcn/kmod-trees}

# The clock of the run's total (vm_verdict prints it).
VM_T0=$(date +%s)

# vm_skip MESSAGE: this host cannot run the test (tests/skip.sh: exit 77,
# CTest's skip, or a failure in CI).
. "$VM_SRC/tests/skip.sh"
vm_skip() {
	${VM_ON_EXIT:-:}
	skip "$@"
}

# vm_fail MESSAGE: the test failed (exit 1); a fresh work directory is kept.
vm_fail() {
	echo "FAIL: $*"
	${VM_ON_EXIT:-:}
	vm_keep_work
	exit 1
}

# vm_work NAME: VM_WORK made absolute (created if needed), or, when empty, a
# new /tmp/NAME.XXXXXX, removed at exit unless VM_KEEP=1 or the run failed.
vm_work() {
	if [ -z "${VM_WORK:-}" ]; then
		VM_WORK=$(mktemp -d "/tmp/$1.XXXXXX")
		[ "${VM_KEEP:-0}" = 1 ] || trap 'rm -rf "$VM_WORK"' EXIT
	fi
	mkdir -p "$VM_WORK"
	VM_WORK=$(cd "$VM_WORK" && pwd)
}

# vm_keep_work: do not remove the work directory at exit (a failed run).
vm_keep_work() {
	trap - EXIT
	[ -z "${VM_WORK:-}" ] || echo "== work directory kept: $VM_WORK"
}

# vm_image RELEASE: set vm_img (the image) and vm_mods (its modules
# directory, with modules.dep) of Debian's kernel RELEASE, installed or in
# VM_KERNEL_CACHE; status 1 when it is neither.
vm_image() {
	if [ -r "/boot/vmlinuz-$1" ] && [ -r "/lib/modules/$1/modules.dep" ]; then
		vm_img=/boot/vmlinuz-$1 vm_mods=/lib/modules/$1
	elif [ -r "$VM_KERNEL_CACHE/$1/boot/vmlinuz-$1" ]; then
		vm_img=$VM_KERNEL_CACHE/$1/boot/vmlinuz-$1 vm_mods=$VM_KERNEL_CACHE/$1/lib/modules/$1
	else
		return 1
	fi
}

# vm_kernel NAME: set VM_KERNEL (the image), VM_KDIR (a tree to build
# modules against), VM_KNAME (what the logs call it) and, for Debian's
# kernels, VM_KVER (the release) and VM_MODDIR (its modules, modules.dep).
vm_kernel() {
	VM_KNAME=$1
	VM_KVER=
	VM_MODDIR=
	if [ -n "${KERNEL:-}" ] || [ -n "${KVER:-}" ]; then
		VM_KERNEL=${KERNEL:-/boot/vmlinuz-$KVER}
		VM_KDIR=${KDIR:-/lib/modules/${KVER:-}/build}
		VM_KNAME=${KVER:-$VM_KERNEL}
		if [ -n "${KVER:-}" ] && vm_image "$KVER"; then
			VM_KERNEL=${KERNEL:-$vm_img}
			VM_KVER=$KVER VM_MODDIR=$vm_mods
		fi
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
		7.2) vm_glob='7.2.*+deb*-amd64' vm_not='-rt-|-cloud-' ;;
		7.2-rt) vm_glob='7.2.*+deb*-rt-amd64' vm_not='-cloud-' ;;
		*) vm_fail "unknown kernel '$1' (6.1, 6.1-rt, 6.12, 6.12-rt, 7.2, 7.2-rt, debug)" ;;
		esac
		# The newest ABI with headers (or a tree in KMOD_TREE_CACHE) and an image.
		vm_kver=$(for d in /lib/modules/$vm_glob/build "$KMOD_TREE_CACHE"/$vm_glob; do
			v=${d%/build}
			v=${v##*/}
			# (if: a candidate without an image is no failure of the loop)
			if [ -d "$d" ] && vm_image "$v"; then echo "$v"; fi
		done | { grep -Ev -- "$vm_not" || [ $? = 1 ]; } | sort -V | tail -n 1)
		[ -n "$vm_kver" ] ||
			vm_skip "kernel $1: no image of a $vm_glob kernel with headers, in /boot or $VM_KERNEL_CACHE (scripts/install-deps)"
		vm_image "$vm_kver"
		VM_KERNEL=$vm_img
		VM_KDIR=/lib/modules/$vm_kver/build
		[ -d "$VM_KDIR" ] || VM_KDIR=$KMOD_TREE_CACHE/$vm_kver
		VM_KNAME="$1 ($vm_kver)"
		VM_KVER=$vm_kver VM_MODDIR=$vm_mods
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

# vm_image_modules NAME...: the modules NAME of VM_KVER's image (VM_MODDIR),
# dependencies first, uncompressed for busybox's insmod, into
# VM_ROOT/lib/vm-mod, their load order in VM_ROOT/lib/vm-mod/order (the
# guest's /init loads them in it); a NAME built into the kernel is left
# out, one that is neither is a skip. The CBUS process-event bench and the
# arch tier's VM (tests/arch/vm-host-tests.sh) load 9p over virtio with it.
vm_image_modules() {
	[ -r "$VM_MODDIR/modules.dep" ] || vm_skip "no $VM_MODDIR/modules.dep (the kernel's modules)"
	mkdir -p "$VM_ROOT/lib/vm-mod"
	: >"$VM_ROOT/lib/vm-mod/order"
	for vm_m in "$@"; do
		vm_p=$(grep -E "/$vm_m\.ko(\.[a-z]+)?:" "$VM_MODDIR/modules.dep" | cut -d: -f1 || true)
		if [ -n "$vm_p" ]; then
			vm_add_module "$vm_p"
		elif ! grep -qE "/$vm_m\.ko" "$VM_MODDIR/modules.builtin" 2>/dev/null; then
			vm_skip "kernel $VM_KVER has no $vm_m (module or built in)"
		fi
	done
}

# vm_add_module PATH: one module of vm_image_modules (PATH relative to
# VM_MODDIR, as modules.dep has it), after its dependencies (which
# modules.dep lists in the reverse of their load order).
vm_add_module() {
	vm_n=$(basename "$1" | sed 's/\.ko.*$/.ko/')
	grep -qx "$vm_n" "$VM_ROOT/lib/vm-mod/order" && return 0
	for vm_d in $(grep "^$1:" "$VM_MODDIR/modules.dep" | cut -d: -f2 | tr ' ' '\n' | tac); do
		vm_add_module "$vm_d"
	done
	vm_n=$(basename "$1" | sed 's/\.ko.*$/.ko/')
	case "$1" in
	*.ko) cp "$VM_MODDIR/$1" "$VM_ROOT/lib/vm-mod/$vm_n" ;;
	*.ko.xz) xz -dc "$VM_MODDIR/$1" >"$VM_ROOT/lib/vm-mod/$vm_n" ;;
	*.ko.zst) zstd -qdc "$VM_MODDIR/$1" >"$VM_ROOT/lib/vm-mod/$vm_n" ;;
	*.ko.gz) gzip -dc "$VM_MODDIR/$1" >"$VM_ROOT/lib/vm-mod/$vm_n" ;;
	*) vm_fail "module $1: unknown compression" ;;
	esac
	echo "$vm_n" >>"$VM_ROOT/lib/vm-mod/order"
}

# vm_boot TIMEOUT APPEND...: pack VM_ROOT, boot VM_KERNEL with it and the
# kernel command line APPEND (console, panic, log buffer, tsc are added). The
# serial console goes to VM_LOG (VM_WORK/console.log, and .txt without
# CRs); VM_QRC is qemu's exit status (124: timeout), VM_BOOT_S the seconds
# the boot (and the guest's run) took. VM_SMP (2), VM_MEM (1G);
# VM_QEMU_ARGS: more qemu arguments (the arch tier shares directories over
# 9p with -virtfs).
#
# tsc=unstable: under multi-threaded TCG a vCPU can run a stale translation
# of kernel text that another vCPU patched, and meet the int3 of a static
# key being switched. Every boot switched one after SMP came up: the kernel
# marked sched_clock stable at its late initcalls (and, under TCG, its
# clocksource watchdog may take it back later). With the TSC unstable from
# the command line that key is never switched; the guest reads hpet instead.
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
	vm_t1=$(date +%s)
	(cd "$VM_ROOT" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$VM_WORK/initramfs.gz"
	VM_LOG=$VM_WORK/console.log
	rm -f "$VM_WORK/console.boot-1.log" # from an earlier run in this VM_WORK
	vm_boot_once "$@"
	# Two crashes that are not ours get one more boot, the first console
	# kept; anything else, or the same crash again, is judged as it is.
	vm_again=1
	if ! grep -q 'VM-GUEST-START' "$VM_LOG.txt" && vm_log_reports "$VM_LOG.txt" >/dev/null; then
		echo "== the guest kernel crashed during its own boot, before /init (nothing of ours had run):"
		vm_log_reports "$VM_LOG.txt" | sed -n '1,3s/^/==   /p'
	elif vm_tcg_poke_trap "$VM_LOG.txt"; then
		echo "== the guest kernel stopped at the int3 of a 5-byte NOP or jump being patched (a static key"
		echo "== or tracepoint switched while another vCPU ran it): under TCG, the emulator's"
		echo "== cross-modifying code, as at boot without our modules. Its report:"
		grep -m 2 -E 'Oops: int3|RIP: 0010' "$VM_LOG.txt" | sed 's/^/==   /'
	else
		vm_again=0
	fi
	if [ "$vm_again" = 1 ]; then
		mv "$VM_LOG" "$VM_WORK/console.boot-1.log"
		echo "== that console is kept in $VM_WORK/console.boot-1.log; booting once more (the"
		echo "== whole guest run again: a second such crash fails the test)"
		vm_boot_once "$@"
	fi
	VM_BOOT_S=$(($(date +%s) - vm_t1))
}

# vm_tcg_poke_trap LOG: did the kernel's first report stop at an int3 in the
# middle of a jump label's or tracepoint's 5-byte site in kernel text, now
# a NOP (0f 1f 44 00 00) or a jump (e9 and its offset): text_poke_bp's
# int3, met by a vCPU after the patching ended. The kernel's int3 handler
# covers the patching on a real CPU; under QEMU/TCG a vCPU can still run
# the old translation.
vm_tcg_poke_trap() {
	vm_first=$(grep -m 1 -A 12 -E 'Oops: |BUG: |general protection|double fault' "$1") || return 1
	case $vm_first in *'Oops: int3'*) ;; *) return 1 ;; esac
	case $vm_first in *'RIP: 0010:'*) ;; *) return 1 ;; esac
	case $vm_first in *'Code: '*' 0f <1f> 44 00 00'* | *'Code: '*' e9 <'??'> '??' '??' '??*) return 0 ;; esac
	return 1
}

# vm_boot_once APPEND...: one boot of vm_boot (VM_LOG, VM_QRC, $VM_LOG.txt).
vm_boot_once() {
	echo "== booting $VM_KNAME (smp ${VM_SMP:-2}, ${VM_MEM:-1G}, timeout ${vm_timeout}s); log: $VM_LOG"
	set +e
	timeout -k 10 "$vm_timeout" qemu-system-x86_64 -accel tcg -m "${VM_MEM:-1G}" \
		-smp "${VM_SMP:-2}" -nographic -no-reboot -nic none -kernel "$VM_KERNEL" \
		-initrd "$VM_WORK/initramfs.gz" ${VM_QEMU_ARGS:-} \
		-append "console=ttyS0 panic=-1 log_buf_len=8M tsc=unstable $*" </dev/null >"$VM_LOG" 2>&1
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

# vm_judge TAG [--quiet] [--dmesg-only] [--min-ok N]: judge the boot vm_boot
# just made, of a guest whose /init printed TAG-BEGIN and ended with
# vm_guest_end TAG. Prints the guest's output from TAG-BEGIN to its dmesg
# dump (not with --quiet), then a FAIL line for each of: qemu's exit status
# not 0 (124: timeout), no TAG-END (the guest did not finish), a "not ok"
# or "Bail out" line, fewer than N "ok" lines, and a kernel report
# (vm_log_reports) in the dmesg dump or the whole console without the
# guest's TAP lines (a crash before the dump; --dmesg-only when the guest's
# own output may hold such words), the first report in full. Writes
# VM_WORK/dmesg.txt and VM_WORK/kernel.txt; sets VM_OK, VM_NOTOK, VM_BAD
# (the reports) and VM_FAILED (1: failed). The caller adds its own checks
# with vm_judge_fail and ends with vm_verdict.
vm_judge() {
	vm_tag=$1
	shift
	vm_quiet=0 vm_dmesg_only=0 vm_min_ok=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--quiet) vm_quiet=1 ;;
		--dmesg-only) vm_dmesg_only=1 ;;
		--min-ok) vm_min_ok=$2; shift ;;
		*) vm_fail "vm_judge: unknown option $1" ;;
		esac
		shift
	done
	vm_txt=$VM_LOG.txt
	VM_FAILED=0
	[ "$vm_quiet" = 1 ] ||
		sed -n "/^$vm_tag-BEGIN/,/^$vm_tag-DMESG-BEGIN/{/^$vm_tag-DMESG-BEGIN/!p}" "$vm_txt"
	[ "$VM_QRC" = 0 ] || vm_judge_fail "qemu exit status $VM_QRC (124: timeout)"
	grep -q "^$vm_tag-END" "$vm_txt" || vm_judge_fail "guest did not finish"
	# grep -c: 1 is only "none"
	VM_OK=$(grep -c '^ok' "$vm_txt" || [ $? = 1 ])
	VM_NOTOK=$(grep -c '^not ok' "$vm_txt" || [ $? = 1 ])
	[ "$VM_NOTOK" = 0 ] || vm_judge_fail "$VM_NOTOK failed test(s)"
	[ "$VM_OK" -ge "$vm_min_ok" ] || vm_judge_fail "expected at least $vm_min_ok passed checks, saw $VM_OK"
	! grep -q '^Bail out' "$vm_txt" || vm_judge_fail "guest bailed out"
	sed -n "/^$vm_tag-DMESG-BEGIN/,/^$vm_tag-DMESG-END/p" "$vm_txt" >"$VM_WORK/dmesg.txt"
	if [ "$vm_dmesg_only" = 1 ]; then
		cp "$VM_WORK/dmesg.txt" "$VM_WORK/kernel.txt"
	else
		grep -Ev '^(ok|not ok|#|Bail out)' "$vm_txt" >"$VM_WORK/kernel.txt" || [ $? = 1 ]
	fi
	VM_BAD=$({ vm_log_reports "$VM_WORK/kernel.txt" || [ $? = 1 ]; } | awk '!seen[$0]++')
	if [ -n "$VM_BAD" ]; then
		vm_judge_fail "kernel log is not clean:"
		echo "$VM_BAD"
		echo "== the first report in full:"
		vm_first=$(echo "$VM_BAD" | head -n 1)
		if grep -q -F -x "$vm_first" "$VM_WORK/dmesg.txt"; then
			grep -F -x -m 1 -A 50 "$vm_first" "$VM_WORK/dmesg.txt"
		else
			grep -F -x -m 1 -A 50 "$vm_first" "$VM_WORK/kernel.txt"
		fi
	fi
}

# vm_judge_fail MESSAGE: one more failed check of vm_judge's verdict.
vm_judge_fail() {
	echo "FAIL: $*"
	VM_FAILED=1
}

# vm_verdict: the line that sums the run up (checks passed and failed when
# the guest printed any, the kernel log, the boot's and the whole run's
# seconds); after a failed check, where the console is, and exit 1 (the
# work directory kept). Returns when every check passed.
vm_verdict() {
	vm_sum=
	[ "$VM_OK$VM_NOTOK" = 00 ] || vm_sum="$VM_OK ok, $VM_NOTOK not ok; "
	echo "== $VM_KNAME: ${vm_sum}kernel log $([ -n "$VM_BAD" ] && echo dirty || echo clean);" \
		"boot+guest $VM_BOOT_S s, total $(($(date +%s) - VM_T0)) s"
	[ "$VM_FAILED" = 0 ] && return 0
	echo "== console log kept in $VM_LOG"
	${VM_ON_EXIT:-:}
	vm_keep_work
	exit 1
}
