#!/usr/bin/env bash
# check-recv-calls.sh SRCDIR - where libcn receives (docs/DESIGN.md,
# "Decisions": one receive path). Fails when the calls of recv, recvfrom,
# recvmsg or recvmmsg in SRCDIR's *.c and *.h (comments left out) are in
# more than one function, or when a libnl call that receives (nl_recv*,
# nl_pickup*, nl_wait_for_ack, genl_ctrl_*) is in any file but kmod.c,
# whose generic netlink socket is libnl's (the connector socket is read
# directly). Names each call with its file, line and function.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 SRCDIR" >&2; exit 2; }
# calls SRCDIR REGEX: "file:line: in function" for each call of a name
# matching REGEX.
calls() {
	local f
	for f in "$1"/*.c "$1"/*.h; do
		awk -f "$here/strip-comments.awk" "$f" | awk -v file="$(basename "$f")" -v re="$2" '
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
			if (out ~ "(^|[^A-Za-z0-9_.>])(" re ")[ \t]*\\(")
				print file ":" FNR ": in " fn
		}'
	done
}
sites=$(calls "$1" 'recv|recvfrom|recvmsg|recvmmsg')
libnl=$(calls "$1" 'nl_recv[a-z_]*|nl_pickup[a-z_]*|nl_wait_for_ack|genl_ctrl_[a-z_]*')
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
echo "libnl calls that receive in src/:"
echo "$libnl"
if [ -n "$libnl" ] && grep -v '^kmod\.c:' <<<"$libnl" >&2; then
	echo "check-recv-calls: libnl receives outside kmod.c (above)" >&2
	exit 1
fi
