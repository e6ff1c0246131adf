#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/vm/debug-kernel/build.sh - build (once) the vm tier's debug kernel:
# Debian's linux-source-6.12, "make ARCH=x86_64 tinyconfig" plus
# debug.config (KASAN, lockdep with raw lock nesting, atomic-sleep checks,
# kmemleak, debugobjects, SLUB debug, list debugging, and what the VM needs).
#
# The result is cached outside the clone, keyed by the source package's
# version, the compiler and a hash of debug.config and this script:
#   $DEBUG_KERNEL_CACHE/<key>/bzImage   the kernel to boot
#   $DEBUG_KERNEL_CACHE/<key>/build     a tree external modules build against
#                                       (make -C .../build M=...; prepared,
#                                       with Module.symvers; objects removed)
# A cached run only computes the key (a second or so). Prints the directory
# <key> as the last line on stdout; progress goes to stderr, the make output
# to <key>/build.log.
#
# Environment: DEBUG_KERNEL_CACHE (/var/cache/libcn/debug-kernel as root,
#   else ~/.cache/libcn/debug-kernel), DEBUG_KERNEL_SOURCE
#   (/usr/src/linux-source-6.12.tar.xz), JOBS (the number of CPUs).
# Exit: 0 built or cached, 1 the build failed or an option of debug.config
#       is not set in the resulting .config, 77 no kernel source or build
#       tools (scripts/install-deps installs them).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
FRAGMENT=$HERE/debug.config
if [ "$(id -u)" = 0 ]; then
	CACHE_ROOT=${DEBUG_KERNEL_CACHE:-/var/cache/libcn/debug-kernel}
else
	CACHE_ROOT=${DEBUG_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libcn/debug-kernel}
fi
SOURCE=${DEBUG_KERNEL_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
JOBS=${JOBS:-$(nproc)}

# Its stdout is the kernel directory: the reason goes to stderr, and the
# caller (tests/vm/lib/vm.sh) applies CI's rule (vm_skip).
skip() { echo "SKIP: $*" >&2; exit 77; }
[ -r "$SOURCE" ] || skip "$SOURCE missing (apt-get install linux-source-6.12)"
for tool in make gcc flex bison bc xz; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
[ -r /usr/include/libelf.h ] || skip "libelf-dev not installed (objtool needs it)"

# The key: what the kernel is built from and with.
SRC_VERSION=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null ||
	stat -c '%s-%Y' "$SOURCE")
CC_VERSION=$(gcc -dumpfullversion)
HASH=$(cat "$FRAGMENT" "$0" | sha256sum | cut -c1-12)
KEY="6.12-$SRC_VERSION-gcc$CC_VERSION-$HASH"
OUT=$CACHE_ROOT/$KEY
mkdir -p "$CACHE_ROOT"

# One build at a time per cache; a second caller waits and then finds it.
exec 9>"$CACHE_ROOT/.lock"
flock 9

if [ -e "$OUT/complete" ]; then
	echo "debug kernel: cached $OUT" >&2
	echo "$OUT"
	exit 0
fi

T0=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$OUT/build.log
echo "debug kernel: building $KEY (log: $LOG; 10-30 min on 2 cores)" >&2
tar -xJf "$SOURCE" -C "$OUT"
mv "$OUT"/linux-source-6.12 "$OUT/build"
cd "$OUT/build"
fail() { echo "FAIL: debug kernel: $*" >&2; tail -n 30 "$LOG" >&2; exit 1; }

{
	make ARCH=x86_64 tinyconfig &&
		scripts/kconfig/merge_config.sh -m .config "$FRAGMENT" &&
		make ARCH=x86_64 olddefconfig
} >"$LOG" 2>&1 || fail "configuration"

# Kconfig drops an option whose dependencies are missing (or clamps a
# number to its range) without a word: every "=y" or "=N" of the fragment
# must be in the .config as written, every "is not set" not.
MISSING=$(grep -E '^CONFIG_[A-Z0-9_]+=(y|[0-9]+)$' "$FRAGMENT" | while read -r want; do
	grep -qx "$want" .config || echo "$want"
done)
[ -z "$MISSING" ] || fail "not set in .config:" $MISSING
UNWANTED=$(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$FRAGMENT" | while read -r opt; do
	if grep -q "^$opt=" .config; then echo "$opt"; fi
done)
[ -z "$UNWANTED" ] || fail "set in .config against the fragment:" $UNWANTED

make ARCH=x86_64 -j"$JOBS" bzImage modules >>"$LOG" 2>&1 || fail "make"
[ -s Module.symvers ] || fail "no Module.symvers"
cp arch/x86/boot/bzImage "$OUT/bzImage"

# Keep what "make -C build M=..." needs (Makefiles, Kconfig, headers, the
# generated config, scripts/ and objtool, Module.symvers); drop the objects
# and the sources (about 2 GB).
rm -rf Documentation samples LICENSES .tmp_vmlinux* vmlinux vmlinux.o vmlinux.a
find . \( -path ./scripts -o -path ./tools \) -prune -o \
	-type f \( -name '*.o' -o -name '*.a' -o -name '*.c' -o -name '*.S' -o -name '*.ko' \) \
	-print0 | xargs -0 rm -f
T1=$(date +%s)
echo "$((T1 - T0))" >"$OUT/build-seconds"
touch "$OUT/complete"
echo "debug kernel: built in $((T1 - T0)) s: $OUT" >&2
echo "$OUT"
