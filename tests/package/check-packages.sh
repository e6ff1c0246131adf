#!/usr/bin/env bash
# Build the .deb packages with CPack, install them on this machine, use what
# they installed (cnctl, pkg-config, find_package, man pages), then remove
# them again. Needs root; exits 77 (skipped) otherwise.
# Usage: check-packages.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
if [ "$(id -u)" -ne 0 ] || ! command -v dpkg >/dev/null; then
	echo "SKIP: needs root and dpkg"
	exit 77
fi
out=$(mktemp -d)
cleanup() {
	dpkg -r cnctl libcn-dev libcn0 >/dev/null 2>&1 || true
	rm -rf "$out"
}
trap cleanup EXIT

(cd "$out" && cpack --config "$build/CPackConfig.cmake" -B "$out" >/dev/null)
debs=("$out"/*.deb)
[ ${#debs[@]} -eq 3 ] || { echo "FAIL: expected 3 packages, got ${#debs[@]}"; exit 1; }
dpkg -i "${debs[@]}" >/dev/null

cnctl --help | grep -q proc
pkg-config --exists libcn
cc -Wall -Werror "$src/tests/install/consumer.c" -o "$out/consumer" $(pkg-config --cflags --libs libcn)
"$out/consumer" | grep -qx "consumer: exit"
cmake -S "$src/tests/install/cmake-consumer" -B "$out/cm" >/dev/null
cmake --build "$out/cm" >/dev/null
"$out/cm/consumer" | grep -qx "consumer: exit"
[ -n "$(man -w cn_recv 2>/dev/null)" ] || [ -f /usr/share/man/man3/cn_recv.3 ] ||
	{ echo "FAIL: man page cn_recv(3) not installed"; exit 1; }

dpkg -r cnctl libcn-dev libcn0 >/dev/null
[ ! -e /usr/lib/libcn.so.0 ] || { echo "FAIL: libcn0 left files behind"; exit 1; }
echo "packages: $(cd "$out" && ls *.deb | tr '\n' ' ')installed, used and removed cleanly"
