#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libcn.so.0's ABI against the baseline abi/libcn.so.0.abi (abidiff, from
# abigail-tools): a function removed, or a change to a function's signature
# or to a type the public headers declare (a struct's layout, an enum's
# values), fails; functions added pass (a release that adds them puts them
# in a new version node of src/libcn.map, and the symbols file follows).
# The soname stays .so.0 through 0.x: this check is what keeps it honest.
# A change made on purpose is recorded with scripts/abi-baseline BUILD_DIR
# (the command is in the failure's message).
# Usage: check-abi.sh LIBRARY SOURCE_DIR
set -euo pipefail
so=$1
src=$2
# shellcheck source=../host/lib.sh
. "$src/tests/host/lib.sh"
fail() {
	echo "FAIL: $*"
	exit 1
}

command -v abidiff >/dev/null || skip "abidiff not installed (abigail-tools: scripts/install-deps test)"
base=$src/abi/libcn.so.0.abi
[ -f "$base" ] || fail "no baseline $base (scripts/abi-baseline BUILD_DIR makes it)"
# Without DWARF abidiff compares ELF symbols only and would miss every type.
readelf -S "$so" | grep '\.debug_info' >/dev/null || skip "$so has no debug information (a -g build: RelWithDebInfo)"
rc=0
out=$(abidiff --no-added-syms --drop-private-types --hd2 "$src/include" --fail-no-debug-info \
	"$base" "$so" 2>&1) || rc=$?
echo "$out"
# abidiff's status is a bit field: 1 error, 2 usage, 4 an ABI change,
# 8 an incompatible one.
[ "$rc" = 0 ] || fail "abidiff $base $so: status $rc (above). A change on purpose (0.1 is not" \
	"released, or a new release's additions): rebuild, run scripts/abi-baseline BUILD_DIR" \
	"and commit abi/libcn.so.0.abi with it"
echo "ABI: $so matches $base ($(grep -c '<elf-symbol ' "$base") symbols; additions allowed)"
