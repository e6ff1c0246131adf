#!/usr/bin/env bash
# check-layers.sh SRCDIR OBJECT... - libcn's source files call each other in
# layers (docs/DESIGN.md, "Layers"): fails when the calls between the given
# object files (one per SRCDIR/*.c) form a circle, and names the files in
# it. Headers are part of the graph: a file that includes a header uses it,
# and a header uses the file whose function one of its inline functions
# calls, so a header that calls into a file including it is a circle too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 1 ] || { echo "usage: $0 SRCDIR OBJECT..." >&2; exit 2; }
src=$1
shift
. "$(dirname "$0")/../skip.sh"
command -v nm >/dev/null && command -v tsort >/dev/null || skip "needs nm and tsort (binutils, coreutils)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$@"; do
	f=$(basename "$o" .o)
	f=${f%.c}
	nm --defined-only "$o" | awk -v f="$f" '$2 ~ /^[TDBR]$/ { print $3, f }' >>"$tmp/defs"
	nm --undefined-only "$o" | awk -v f="$f" '{ print $2, f }' >>"$tmp/uses"
done
# An edge "caller callee" for every symbol one file uses and another defines.
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
	"$tmp/defs" "$tmp/uses" >"$tmp/edges"
# Headers: "file header" for each #include "header" of a source file or
# header, and "header file" for each function a header's inline code calls
# (a name followed by "(" inside braces, comments left out) that a source
# file defines.
for f in "$src"/*.c "$src"/*.h; do
	b=$(basename "$f")
	case $b in *.c) b=${b%.c} ;; esac
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | awk -v b="$b" '{ print b, $1 }' >>"$tmp/edges"
	case $f in *.h) ;; *) continue ;; esac
	awk -f "$here/strip-comments.awk" "$f" | awk '
		{
			out = $0
			if (out ~ /^#/)
				next
			n = split(out, c, "")
			word = ""
			gap = 0
			for (k = 1; k <= n; k++) {
				# A name, or the one before "(" across blanks
				# ("f (x)"); a blank then a name starts a new
				# one ("return f(x)").
				if (c[k] ~ /[A-Za-z0-9_]/) {
					if (gap)
						word = ""
					word = word c[k]
					gap = 0
					continue
				}
				if (c[k] == "(" && depth > 0 && word != "")
					print word
				if (c[k] == " " || c[k] == "\t") {
					gap = 1
					continue
				}
				word = ""
				gap = 0
				if (c[k] == "{") depth++
				if (c[k] == "}") depth--
			}
		}' | sort -u | awk -v h="$(basename "$f")" 'NR == FNR { def[$1] = $2; next }
			($1 in def) { print h, def[$1] }' "$tmp/defs" - >>"$tmp/edges"
done
# A header that is the inline half of one source file, whose slow half
# that file holds, is that file's node (docs/DESIGN.md, "Layers"): rx.h is
# recv.c's fast path and calls recv.c's walk.
halves='rx.h recv'
while read -r h f; do
	awk -v h="$h" -v f="$f" '{ if ($1 == h) $1 = f; if ($2 == h) $2 = f } $1 != $2' \
		"$tmp/edges" >"$tmp/edges.1"
	mv "$tmp/edges.1" "$tmp/edges"
done <<<"$halves"
sort -u -o "$tmp/edges" "$tmp/edges"
echo "$(wc -l <"$tmp/edges") calls and includes between $# files and their headers"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/err"; then
	echo "check-layers: source files call each other in a circle:" >&2
	cat "$tmp/err" >&2
	exit 1
fi
echo "check-layers: no circle"
