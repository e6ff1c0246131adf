#!/usr/bin/env bash
# `cmake --install` with CMake's default prefix (/usr/local), as a user
# would, inside a private mount namespace whose /usr/local is an empty
# tmpfs (the machine's own /usr/local is not touched). Then, with nothing
# but default search paths: the installed cnctl runs (no ldconfig, no
# LD_LIBRARY_PATH), an outside CMake project finds libcn with
# find_package(libcn), and pkg-config finds libcn.pc with clean paths.
# Needs root and unshare; exits 77 (skipped) otherwise.
# Usage: check-default-prefix.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/../skip.sh"
build=$1
src=$2
if [ -z "${CN_IN_NAMESPACE:-}" ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
		skip "needs root and unshare"
	fi
	prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
	if [ "$prefix" != /usr/local ]; then
		skip "the build installs to $prefix, not the default /usr/local"
	fi
	CN_IN_NAMESPACE=1 exec unshare --mount --propagation private "$0" "$@"
fi
fail() {
	echo "FAIL: $*"
	exit 1
}

mount -t tmpfs cn-usr-local /usr/local
mkdir /usr/local/work
cmake --install "$build" >/dev/null

/usr/local/bin/cnctl --version >/dev/null || fail "/usr/local/bin/cnctl does not run"

env -u CMAKE_PREFIX_PATH cmake -S "$src/tests/install/cmake-consumer" -B /usr/local/work/cm >/dev/null ||
	fail "find_package(libcn) does not find libcn in /usr/local"
cmake --build /usr/local/work/cm >/dev/null
/usr/local/work/cm/consumer | grep -qx "consumer: exit"

flags=$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs libcn) || fail "pkg-config does not find libcn"
case $flags in *..*) fail "pkg-config paths are not clean: $flags" ;; esac
# shellcheck disable=SC2086
cc -Wall -Werror "$src/tests/install/consumer.c" -o /usr/local/work/consumer $flags
LD_LIBRARY_PATH=$(pkg-config --variable=libdir libcn) /usr/local/work/consumer | grep -qx "consumer: exit"
echo "default prefix: /usr/local/bin/cnctl runs; find_package and pkg-config ($flags) consumers built and ran"
