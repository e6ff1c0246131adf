#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every man page example that is a whole program (it has a main) must
# compile against the headers of the tree, with the project's warnings as
# errors: a renamed call or a changed struct breaks the page's example,
# not only the code. Fragments (a struct shown, a few lines of a call) are
# left alone. Usage: check-man-examples.sh SRCDIR [CC]
set -euo pipefail
src=$1
cc=${2:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0 n=0
for page in "$src"/docs/man/*.3; do
	# Each .EX ... .EE block into its own file, roff escapes undone.
	awk -v out="$tmp/$(basename "$page")" '
		/^\.EX/ { k++; f = out "." k ".c"; inside = 1; next }
		/^\.EE/ { inside = 0; next }
		inside {
			gsub(/\\e/, "\\"); gsub(/\\-/, "-"); gsub(/\\\(aq/, "'\''")
			gsub(/\\\(dq/, "\""); gsub(/\\&/, "")
			print > f
		}' "$page"
done
for f in "$tmp"/*.c; do
	[ -e "$f" ] || continue
	grep -q 'main(' "$f" || continue
	n=$((n + 1))
	if ! "$cc" -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$src/include" \
		$(pkg-config --cflags libnl-3.0 2>/dev/null) -c -o "$f.o" "$f" 2>"$f.err"; then
		echo "man page example does not compile: $(basename "${f%.*.c}")" >&2
		cat "$f.err" >&2
		bad=1
	fi
done
[ "$n" -gt 0 ] || { echo "check-man-examples: no example found" >&2; exit 1; }
[ $bad = 0 ] && echo "check-man-examples: $n examples compile"
exit $bad
