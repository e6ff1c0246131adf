#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every installed header compiles on its own, as C99 and C11 with -pedantic
# and every warning an error (gcc, and clang when installed): a program that
# builds with strict ISO C flags can include libcn.
# Usage: check-headers.sh BUILD_DIR          Exit: 0 pass, 1 fail.
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
inc=$prefix/include
mapfile -t headers < <(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort)
# libcn.h, libcn/kmod.h, libcn/kmod_genl.h, libcn/proto.h (not the test
# module's libcn/cnbus_test.h).
[ "${#headers[@]}" -ge 4 ] || { echo "FAIL: only ${#headers[@]} headers installed in $inc"; exit 1; }
compilers=(gcc)
command -v clang >/dev/null && compilers+=(clang)
bad=0
for cc in "${compilers[@]}"; do
	for std in c99 c11; do
		for h in "${headers[@]}"; do
			printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >"$prefix/t.c"
			if ! "$cc" -std=$std -pedantic -Wall -Wextra -Werror -I"$inc" -c "$prefix/t.c" \
				-o "$prefix/t.o" 2>"$prefix/err"; then
				echo "FAIL: <$h> with $cc -std=$std -pedantic -Werror:"
				cat "$prefix/err"
				bad=1
			fi
		done
	done
done
[ $bad = 0 ] || exit 1
echo "ok: ${headers[*]} compile with ${compilers[*]} -std=c99/c11 -pedantic -Wall -Wextra -Werror"
