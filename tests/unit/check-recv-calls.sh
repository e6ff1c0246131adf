#!/usr/bin/env bash
# check-recv-calls.sh SRCDIR - one function of libcn makes every receive
# system call (docs/DESIGN.md, "Decisions": one receive funnel): fails when
# the calls of recv, recvfrom, recvmsg or recvmmsg in SRCDIR's *.c and *.h
# (comments left out) are in more than one function, and names each call
# with its file, line and function.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 SRCDIR" >&2; exit 2; }
sites=$(for f in "$1"/*.c "$1"/*.h; do
	awk -f "$here/strip-comments.awk" "$f" | awk -v file="$(basename "$f")" '
		{
			out = $0
			sub(/\/\/.*/, "", out)
			# A definition starts at column 0 and is not a declaration:
			# the function is the name before its parameter list.
			if (out ~ /^[A-Za-z_].*\(/ && out !~ /;[ \t]*$/) {
				d = out
				gsub(/__attribute__[ \t]*\(\([^)]*\)\)/, "", d)
				if (match(d, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
					fn = substr(d, RSTART, RLENGTH)
					sub(/[ \t]*\($/, "", fn)
				}
			}
			if (out ~ /(^|[^A-Za-z0-9_.>])(recv|recvfrom|recvmsg|recvmmsg)[ \t]*\(/)
				print file ":" FNR ": in " fn
		}'
done)
funcs=$(awk '{ print $1, $NF }' <<<"$sites" | sed 's/:[0-9]*:/:/' | sort -u)
echo "receive system calls in src/:"
echo "$sites"
if [ -z "$sites" ]; then
	echo "check-recv-calls: no receive system call found (is SRCDIR libcn's src/?)" >&2
	exit 1
fi
if [ "$(wc -l <<<"$funcs")" -ne 1 ]; then
	echo "check-recv-calls: receive system calls in more than one function:" >&2
	echo "$funcs" >&2
	exit 1
fi
echo "check-recv-calls: one function makes them: $funcs"
