#!/usr/bin/env bash
# Install the build into a scratch prefix, build a consumer with nothing but
# pkg-config (shared and static) and one with find_package(libcn), run them, and check the shared library exports
# only cn_ symbols.
# Usage: check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name libcn.pc -printf '%h\n' | head -n1)
[ -n "$libdir" ] || { echo "FAIL: libcn.pc not installed"; exit 1; }
export PKG_CONFIG_PATH=$libdir
libs_dir=$(dirname "$libdir")


cc -Wall -Werror "$src/tests/install/consumer.c" -o "$prefix/consumer" \
	$(pkg-config --cflags --libs libcn) -Wl,-rpath,"$libs_dir"
"$prefix/consumer" | grep -qx "consumer: exit"

cc -Wall -Werror "$src/tests/install/consumer.c" -o "$prefix/consumer-static" \
	$(pkg-config --cflags libcn) "$libs_dir/libcn.a" $(pkg-config --static --libs libcn | sed 's/-lcn//')
"$prefix/consumer-static" | grep -qx "consumer: exit"

# find_package(libcn): the imported targets libcn::cn and libcn::cn_static.
cmake -S "$src/tests/install/cmake-consumer" -B "$prefix/cmake-consumer" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_RPATH="$libs_dir" >/dev/null
cmake --build "$prefix/cmake-consumer" >/dev/null
"$prefix/cmake-consumer/consumer" | grep -qx "consumer: exit"
"$prefix/cmake-consumer/consumer_static" | grep -qx "consumer: exit"
if ldd "$prefix/cmake-consumer/consumer_static" | grep -q libcn; then
	echo "FAIL: the static consumer links libcn dynamically"
	exit 1
fi

so=$(readlink -f "$libs_dir/libcn.so")
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libcn.so.0" ] || { echo "FAIL: soname is '$soname'"; exit 1; }
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' |
	grep -v -e '^cn_' -e '^LIBCN_' || true)
if [ -n "$bad" ]; then
	echo "FAIL: exported symbols outside cn_: $bad"
	exit 1
fi
# Every exported function has a man page (directly or through a .so link).
for f in $(nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sed 's/@.*//'); do
	[ -f "$prefix/share/man/man3/$f.3" ] || { echo "FAIL: no man page for $f"; exit 1; }
done
[ -f "$prefix/share/man/man3/libcn.3" ] || { echo "FAIL: no libcn.3"; exit 1; }
[ -f "$prefix/share/man/man1/cnctl.1" ] || { echo "FAIL: no cnctl.1"; exit 1; }
[ -x "$prefix/bin/cnctl" ] || { echo "FAIL: cnctl not installed"; exit 1; }
# Each page renders without a warning from man's formatter.
for page in "$prefix"/share/man/man1/cnctl.1 "$prefix"/share/man/man3/libcn.3; do
	warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
	[ -z "$warn" ] || { echo "FAIL: $page: $warn"; exit 1; }
done

echo "install check: pkg-config and find_package consumers (shared, static) ran; soname $soname; exports: $(nm -D --defined-only "$so" | grep -c ' T ') cn_ functions"
