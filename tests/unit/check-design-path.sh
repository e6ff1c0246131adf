#!/usr/bin/env bash
# check-design-path.sh ROOT - docs/DESIGN.md's "The path of a message" stays
# true: every numbered step cites a function as `name` (src/FILE:LINE), and
# each such citation in the section names a function defined at that line
# (the line starts the definition: column 0, the name, then its parameter
# list). Fails on a step without a citation or a citation that is not so,
# and names each.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 ROOT" >&2; exit 2; }
root=$1
doc=$root/docs/DESIGN.md
section=$(awk '/^## The path of a message/ { on = 1; next } /^## / { on = 0 } on' "$doc")
if [ -z "$section" ]; then
	echo "check-design-path: no section \"The path of a message\" in $doc" >&2
	exit 1
fi
bad=0
# Each numbered step with the lines that continue it (indented), as one
# line: it must cite a function.
steps=$(awk '/^[0-9]+\. / { if (s != "") print s; s = $0; next }
	/^   / && s != "" { s = s " " $0; next } { if (s != "") print s; s = "" }
	END { if (s != "") print s }' <<<"$section")
cite='`[A-Za-z_][A-Za-z0-9_]*`[[:space:]]*\(src/[A-Za-z0-9_./]+:[0-9]+\)'
while IFS= read -r step; do
	if ! grep -Eq "$cite" <<<"$step"; then
		echo "check-design-path: step without a \`function\` (src/FILE:LINE): ${step:0:60}" >&2
		bad=1
	fi
done <<<"$steps"
n=0
while IFS= read -r c; do
	name=$(sed -E 's/^`([^`]*)`.*/\1/' <<<"$c")
	file=$(sed -E 's/.*\((src\/[^:]*):.*/\1/' <<<"$c")
	line=$(sed -E 's/.*:([0-9]+)\)$/\1/' <<<"$c")
	n=$((n + 1))
	text=$(sed -n "${line}p" "$root/$file" 2>/dev/null || true)
	if ! grep -Eq "^[A-Za-z_].*[^A-Za-z0-9_]$name\(" <<<"$text" || grep -Eq ';[[:space:]]*$' <<<"$text"; then
		echo "check-design-path: $file:$line is not where $name is defined: \"$text\"" >&2
		bad=1
	fi
done < <(tr '\n' ' ' <<<"$section" | grep -Eo "$cite")
if [ "$n" -eq 0 ]; then
	echo "check-design-path: no citation found" >&2
	exit 1
fi
[ "$bad" = 0 ] || exit 1
echo "check-design-path: $n citations, each at its function's definition"
