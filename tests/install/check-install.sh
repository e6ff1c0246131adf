#!/usr/bin/env bash
# Install the build into a scratch prefix, build a consumer with nothing but
# pkg-config (shared and static) and one with find_package(libcn), run them;
# check that pkg-config prints clean paths, that find_package(libcn) for the
# shared library works without libnl's .pc files, that the installed cnctl
# runs as installed, that the shared library exports exactly the CN_EXPORT
# functions of the installed headers, and a man page for each; the test
# module's header is not installed; share/doc holds upstream's documents
# (not the Debian packages') and cnctl-proc.service starts the cnctl
# installed with it.
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
fail() {
	echo "FAIL: $*"
	exit 1
}

# Plain absolute paths for the prefix installed to.
flags=$(pkg-config --cflags --libs libcn)
case $flags in *..*) fail "pkg-config paths are not clean: $flags" ;; esac
[ "$(pkg-config --variable=includedir libcn)" = "$prefix/include" ] ||
	fail "includedir is $(pkg-config --variable=includedir libcn), not $prefix/include"
# The test module's protocol is not a public header (cmake/CnInstall.cmake).
[ ! -e "$prefix/include/libcn/cnbus_test.h" ] || fail "libcn/cnbus_test.h installed"

# The installed cnctl runs as it is (RUNPATH to the prefix's libdir).
env -u LD_LIBRARY_PATH "$prefix/bin/cnctl" --version >/dev/null || fail "installed cnctl does not run"

cc -Wall -Werror "$src/tests/install/consumer.c" -o "$prefix/consumer" \
	$(pkg-config --cflags --libs libcn) -Wl,-rpath,"$libs_dir"
"$prefix/consumer" | grep -qx "consumer: exit"

cc -Wall -Werror "$src/tests/install/consumer.c" -o "$prefix/consumer-static" \
	$(pkg-config --cflags libcn) "$libs_dir/libcn.a" $(pkg-config --static --libs libcn | sed 's/-lcn//')
"$prefix/consumer-static" | grep -qx "consumer: exit"

# find_package(libcn) for the shared library alone needs no libnl .pc file:
# pkg-config here finds nothing at all.
mkdir "$prefix/no-pc"
PKG_CONFIG_LIBDIR=$prefix/no-pc PKG_CONFIG_PATH='' cmake -S "$src/tests/install/cmake-consumer" \
	-B "$prefix/shared-only" -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_STATIC=OFF >/dev/null ||
	fail "find_package(libcn) for libcn::cn needs pkg-config modules"
cmake --build "$prefix/shared-only" >/dev/null
"$prefix/shared-only/consumer" | grep -qx "consumer: exit"

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
	grep -v -e '^cn_' -e '^LIBCN_' || [ $? = 1 ])
if [ -n "$bad" ]; then
	echo "FAIL: exported symbols outside cn_: $bad"
	exit 1
fi
# The exports are exactly the CN_EXPORT functions of the installed headers
# (src/libcn.map lists each by name), in a LIBCN_ version node.
exported=$(nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sort)
names=$(echo "$exported" | sed 's/@.*//' | sort)
declared=$(cat "$prefix"/include/libcn.h "$prefix"/include/libcn/*.h |
	sed -n 's/^CN_EXPORT[^(]*[ *]\(cn_[a-z0-9_]*\)(.*/\1/p' | sort)
missing=$(comm -13 <(echo "$names") <(echo "$declared"))
extra=$(comm -23 <(echo "$names") <(echo "$declared"))
[ -z "$missing" ] || fail "declared CN_EXPORT but not exported (list in src/libcn.map):" $missing
[ -z "$extra" ] || fail "exported but not declared CN_EXPORT:" $extra
unversioned=$(grep -v '@@LIBCN_[0-9]*\.[0-9]*$' <<<"$exported" || [ $? = 1 ])
[ -z "$unversioned" ] || fail "exports outside a LIBCN_ version node:" $unversioned
# Every exported function has a man page (the group's page or a link to it).
for f in $names; do
	[ -e "$prefix/share/man/man3/$f.3.gz" ] || fail "no man page for $f"
	gzip -t "$prefix/share/man/man3/$f.3.gz" || fail "man page of $f is a dangling link"
done
[ -f "$prefix/share/man/man3/libcn.3.gz" ] || fail "no libcn.3.gz"
[ -f "$prefix/share/man/man1/cnctl.1.gz" ] || fail "no cnctl.1.gz"
[ -x "$prefix/bin/cnctl" ] || fail "cnctl not installed"
# Upstream's documents, not the Debian packages' (cmake/CnPackaging.cmake);
# the unit starts the cnctl installed here, wherever that is.
unit=$(find "$prefix" -name cnctl-proc.service)
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$unit")
[ "$exec_start" = "$prefix/bin/cnctl" ] || fail "$unit starts '$exec_start', not $prefix/bin/cnctl"
debian_docs=$(find "$prefix/share/doc" -name 'changelog*' -o -name copyright)
[ -z "$debian_docs" ] || fail "a plain install writes the Debian packages' documents:" $debian_docs
[ -f "$prefix/share/doc/libcn/COPYING" ] || fail "no share/doc/libcn/COPYING"
# Each page renders without a warning from man's formatter.
for page in "$prefix"/share/man/man1/cnctl.1.gz "$prefix"/share/man/man3/*.3.gz; do
	[ ! -L "$page" ] || continue # a link to a page checked here too
	warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "man -l $page exited $?: $warn"
	[ -z "$warn" ] || { echo "FAIL: $page: $warn"; exit 1; }
done

echo "install check: pkg-config and find_package consumers (shared, static) ran; soname $soname; exports: $(nm -D --defined-only "$so" | grep -c ' T ') cn_ functions"
