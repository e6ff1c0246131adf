#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-arch.sh ARCH BUILD_DIR [--werror]: the arch tier for one Debian
# architecture. Configures and builds libcn, cnctl, the examples and the
# unit and host tests in BUILD_DIR with cmake/toolchain-ARCH.cmake (Debian's
# cross compiler, the architecture's multiarch libnl-3 and CMocka), checks
# that the programs are ARCH's, and runs:
#   i386   the unit tests and the host tests (root: the running kernel's
#          connector, through its 32-bit compat system calls). Where this
#          kernel does not run 32-bit programs (ia32 emulation off), the
#          host tests run in a VM on Debian's 6.12 (vm-host-tests.sh) and
#          the unit tests under qemu-i386-static.
#   armhf  the unit tests, under qemu-arm-static (or natively / binfmt_misc)
#   s390x  the unit tests, big-endian, under qemu-s390x-static
# Host tests need the connector, which qemu-user refuses to open
# (EPROTONOSUPPORT): they run natively or in the VM only.
# A unit test that skips (cmocka's skip(): no socket) fails the tier.
#
# Exit: 0 passed, 1 failed, 77 a cross compiler, library or qemu is missing
# (scripts/install-deps test installs them; in CI, CI=true, that fails).
# -j2 builds (two cores shared). Times per step are printed.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
arch=${1:?usage: run-arch.sh ARCH BUILD_DIR [--werror]}
dir=${2:?usage: run-arch.sh ARCH BUILD_DIR [--werror]}
werror=OFF
[ "${3:-}" = --werror ] && werror=ON

case $arch in
i386) triplet=i686-linux-gnu ma=i386-linux-gnu qemu=qemu-i386-static
	loader=/lib/ld-linux.so.2 magic='Intel 80386' ;;
armhf) triplet=arm-linux-gnueabihf ma=arm-linux-gnueabihf qemu=qemu-arm-static
	loader=/lib/ld-linux-armhf.so.3 magic='ARM, EABI5' ;;
s390x) triplet=s390x-linux-gnu ma=s390x-linux-gnu qemu=qemu-s390x-static
	loader=/lib/ld64.so.1 magic='MSB .*IBM S/390' ;;
*) echo "run-arch.sh: unknown architecture $arch (i386, armhf, s390x)" >&2; exit 2 ;;
esac

. "$src/tests/skip.sh"
fail() { echo "FAIL: $*"; exit 1; }
now() { date +%s; }

command -v "$triplet-gcc" >/dev/null || skip "no $triplet-gcc (scripts/install-deps test)"
[ -r "/usr/$triplet/include/stdio.h" ] || skip "no libc6-dev-$arch-cross (scripts/install-deps test)"
for pc in libnl-3.0 libnl-genl-3.0 cmocka; do
	[ -r "/usr/lib/$ma/pkgconfig/$pc.pc" ] || skip "no $pc for $arch in /usr/lib/$ma (scripts/install-deps test)"
done
[ -x "$loader" ] || skip "no $loader (libc6:$arch)"
command -v "$qemu" >/dev/null || "$loader" --version >/dev/null 2>&1 ||
	skip "no $qemu (qemu-user-static) to run $arch programs"

t0=$(now)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
echo "== $arch: configure and build in $dir (cmake/toolchain-$arch.cmake, CN_WERROR=$werror, -j2)"
cmake -S "$src" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$arch.cmake" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCN_WERROR="$werror" -DCN_BUILD_TESTS=ON \
	-DCN_BUILD_EXAMPLES=ON >"$dir/arch-configure.log" 2>&1 || {
	cat "$dir/arch-configure.log"
	fail "$arch: configure"
}
cmake --build "$dir" -j2 >"$dir/arch-build.log" 2>&1 || {
	grep -E -B2 -A6 'error|warning' "$dir/arch-build.log" | head -n 80
	fail "$arch: build"
}
for f in libcn.so tools/cnctl/cnctl tests/unit/unit_test_recv; do
	p=$dir/$f
	[ -e "$p" ] || continue
	file -L "$p" | grep -Eq "$magic" || fail "$arch: $f is not an $arch program: $(file -L "$p")"
done
t1=$(now)
echo "== $arch: built in $((t1 - t0)) s"

# ctest_no_skips LOG: a CTest run without skipped tests, and no cmocka test
# skipped inside a program that passed.
ctest_no_skips() {
	local f skips=
	for f in "$1" "$dir/Testing/Temporary/LastTest.log"; do
		[ -e "$f" ] || continue
		# grep's 1 is only "no skip"
		skips+=$(grep -E '\*\*\*Skipped|\[  SKIPPED \]' "$f" || [ $? = 1 ])
	done
	if [ -n "$skips" ]; then
		head -n 20 <<<"$skips"
		skip "$arch: tests skipped (above)"
	fi
}

# run_logged LOG COMMAND...: COMMAND's output to the terminal and LOG; its status.
run_logged() {
	local log=$1 rc
	shift
	set +e
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	return "$rc"
}

how="natively"
"$loader" --version >/dev/null 2>&1 || how="under $qemu"
echo "== $arch: unit tests ($how)"
run_logged "$dir/arch-unit.log" ctest --test-dir "$dir" -L unit -j2 --output-on-failure ||
	fail "$arch: unit tests"
ctest_no_skips "$dir/arch-unit.log"
t2=$(now)
echo "== $arch: unit tests in $((t2 - t1)) s"

if [ "$arch" = i386 ]; then
	[ "$(id -u)" = 0 ] || skip "i386 host tests need root"
	if "$loader" --version >/dev/null 2>&1; then
		echo "== i386: host tests on this kernel ($(uname -r)), 32-bit system calls"
		run_logged "$dir/arch-host.log" ctest --test-dir "$dir" -L host --output-on-failure ||
			fail "i386: host tests"
	else
		echo "== i386: this kernel ($(uname -r)) does not run 32-bit programs" \
			"($(dmesg 2>/dev/null | grep -m1 -o '32-bit emulation disabled.*' || echo 'ia32 emulation off'));"
		echo "== i386: host tests in a VM on a 64-bit Debian kernel (tests/arch/vm-host-tests.sh)"
		rc=0
		run_logged "$dir/arch-host.log" "$src/tests/arch/vm-host-tests.sh" "$dir" || rc=$?
		[ "$rc" = 77 ] && skip "i386: the VM cannot run here (above)"
		[ "$rc" = 0 ] || fail "i386: host tests in the VM"
	fi
	ctest_no_skips "$dir/arch-host.log"
	t3=$(now)
	echo "== i386: host tests in $((t3 - t2)) s"
fi
echo "PASS: $arch in $(($(now) - t0)) s"
