#!/usr/bin/env bash
# check-layers.sh OBJECT... - libcn's source files call each other in
# layers (docs/DESIGN.md, "Layers"): fails when the calls between the given
# object files (one per src/*.c) form a circle, and names the files in it.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 OBJECT..." >&2; exit 2; }
command -v nm >/dev/null && command -v tsort >/dev/null || exit 77
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
	"$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
echo "$(wc -l <"$tmp/edges") calls between $# files"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/err"; then
	echo "check-layers: source files call each other in a circle:" >&2
	cat "$tmp/err" >&2
	exit 1
fi
echo "check-layers: no circle"
