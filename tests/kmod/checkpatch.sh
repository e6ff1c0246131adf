#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# checkpatch.sh - kmod reads like kernel code: the kernel's
# scripts/checkpatch.pl --strict --no-tree -f on every kmod/*.c and *.h
# and the vm tier's module tests/vm/w1/*.c (generated *.mod.c aside)
# reports no error, no warning and no check.
# checkpatch.pl, spelling.txt and const_structs.checkpatch come from
# Debian's linux-source-6.12 (/usr/src/linux-source-6.12.tar.xz), unpacked
# once into a cache under ${TMPDIR:-/tmp} (about 20 s; then instant).
#
# Usage: checkpatch.sh [SRC]   (SRC: the libcn source tree, default ../..)
# Exit: 0 clean, 1 a report, 77 no linux-source-6.12 or perl (a failure
#       with CI=true).
set -eu
. "$(dirname "$0")/../skip.sh"

SRC=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
[ -r "$TARBALL" ] || skip "no $TARBALL (apt-get install linux-source-6.12)"
command -v perl >/dev/null || skip "no perl"

top=$(basename "$TARBALL" .tar.xz)
cache=${TMPDIR:-/tmp}/cnbus-checkpatch
stamp=$(stat -c '%s.%Y' "$TARBALL")
if [ "$(cat "$cache/$top.stamp" 2>/dev/null)" != "$stamp" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.unpack.XXXXXX")
	tar -xJf "$TARBALL" -C "$tmp" "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" || { rm -rf "$tmp"; exit 1; }
	rm -rf "${cache:?}/$top"
	mv "$tmp/$top" "$cache/$top"
	rm -rf "$tmp"
	echo "$stamp" >"$cache/$top.stamp"
fi
CHECKPATCH=$cache/$top/scripts/checkpatch.pl

rc=0
n=0
for f in "$SRC"/kmod/*.c "$SRC"/kmod/*.h "$SRC"/tests/vm/w1/*.c; do
	case "$f" in *.mod.c) continue ;; esac
	n=$((n + 1))
	# checkpatch exits 0 only for a file with no report; any other status
	# fails, also one without a line (perl or the script died).
	st=0
	out=$(cd "$(dirname "$f")" && perl "$CHECKPATCH" --strict --no-tree --no-summary --terse \
		-f "$(basename "$f")" 2>&1) || st=$?
	if [ -n "$out" ] || [ "$st" != 0 ]; then
		[ -z "$out" ] || echo "$out"
		echo "$f: checkpatch exited with status $st"
		rc=1
	fi
done
if [ $rc = 0 ]; then
	echo "checkpatch --strict: $n kernel files, 0 errors, 0 warnings, 0 checks"
else
	echo "FAIL: checkpatch --strict reported the lines above"
fi
exit $rc
