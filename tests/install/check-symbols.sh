#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The libcn0 package's symbols file (generated from src/libcn.map's version
# nodes: cmake/CnPackaging.cmake) says exactly what the library exports:
# dpkg-gensymbols, Debian's own tool for it, compares the two at its
# strictest level (-c4: a symbol missing from either side fails).
# Usage: check-symbols.sh LIBRARY BUILD_DIR
set -euo pipefail
so=$(readlink -f "$1")
build=$(cd "$2" && pwd)
fail() {
	echo "FAIL: $*"
	exit 1
}
# shellcheck source=../host/lib.sh
. "$(dirname "$0")/../host/lib.sh"

command -v dpkg-gensymbols >/dev/null || skip "dpkg-gensymbols not installed (dpkg-dev)"
symbols=$build/debian/symbols
[ -f "$symbols" ] || fail "no $symbols (written when the build is configured)"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# dpkg-gensymbols writes into the package tree's DEBIAN/ and reads debian/.
mkdir "$dir/debian" "$dir/pkg"
(cd "$dir" && dpkg-gensymbols -v"$version" -plibcn0 -P"$dir/pkg" -e"$so" -I"$symbols" -c4 \
	-O"$dir/symbols.out") || fail "the symbols file $symbols and $so differ (above; src/libcn.map makes it)"
echo "symbols file: $(grep -c '@LIBCN_' "$symbols") symbols, as $so exports them (dpkg-gensymbols -c4)"
