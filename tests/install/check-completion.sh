#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cnctl's bash completion as installed: `cmake --install` into a scratch
# prefix puts it where bash-completion looks (its pkg-config completionsdir
# under that prefix's datadir), bash-completion's own loader finds it there
# (XDG_DATA_DIRS, as for /usr/local/share), and it completes subcommands,
# each subcommand's own options and their values.
# Usage: check-completion.sh BUILD_DIR          Exit: 0 pass, 1 fail.
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || fail "bash-completion is not installed ($bc; scripts/install-deps installs it)"

cmake --install "$build" --prefix "$prefix" >/dev/null
want=$(pkg-config --define-variable=datadir="$prefix/share" --variable=completionsdir bash-completion) ||
	fail "pkg-config knows no bash-completion"
[ -f "$want/cnctl" ] || fail "no $want/cnctl; installed: $(find "$prefix" -path '*completion*' -type f)"
echo "ok: installed as $want/cnctl"

# complete LINE: the completions bash-completion's loader gives for LINE
# (a trailing space starts a new word), one a line, sorted.
complete_line() {
	PATH=$prefix/bin:$PATH XDG_DATA_DIRS=$prefix/share BASH_COMPLETION_USER_DIR=/nonexistent \
		bash --norc --noprofile -c '
		. '"$bc"'
		__load_completion cnctl || { echo "LOADER-FAILED"; exit 0; }
		read -ra COMP_WORDS <<<"$1"
		[[ $1 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$1 COMP_POINT=${#1}
		fn=$(complete -p cnctl | sed -n "s/.*-F \([^ ]*\).*/\1/p")
		"$fn" cnctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$1"
}
# expect LINE WORD...: the completions of LINE are exactly WORD...
expect() {
	local line=$1 got want
	shift
	got=$(complete_line "$line" | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "'$line' completes to '$got', expected '$want'"
	echo "ok: '$line' -> $got"
}
# has LINE WORD...: the completions of LINE include WORD... (and one line).
has() {
	local line=$1 got w
	shift
	got=$(complete_line "$line")
	for w in "$@"; do
		grep -qx -e "$w" <<<"$got" || fail "'$line' does not offer $w: $(tr '\n' ' ' <<<"$got")"
	done
	echo "ok: '$line' offers $*"
}

expect "cnctl li" listen
expect "cnctl help n" notify
has "cnctl " proc send listen request notify kmod --version
expect "cnctl listen --ti" --timeout
expect "cnctl proc --tim" --time --timeout
expect "cnctl proc --events fork,ex" fork,exec fork,exit
expect "cnctl proc --events cl" clone
# --user is an option of its own, completed with user names; --pid with
# the pids of /proc.
expect "cnctl proc --us" --user
has "cnctl proc --user ro" root
has "cnctl proc --pid " 1 $$
expect "cnctl proc --events exec,nonz" exec,nonzero_exit
expect "cnctl proc --time " clock iso mono
expect "cnctl request --match " ack-only strict
has "cnctl listen --timeout " 500ms 5s 1m 1h 1d
# Each subcommand's own options: listen has --hex without a value, so the
# word after it is completed again; notify has no --join, request has.
has "cnctl listen --hex --" --id --count --version
expect "cnctl notify --jo"
expect "cnctl request --jo" --join
# Every long option of every subcommand's --help is offered.
for c in proc send listen request notify kmod; do
	mapfile -t opts < <("$prefix/bin/cnctl" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u |
		while read -r o; do grep -q -e "^ *\(-[A-Za-z], \)*$o\b" <("$prefix/bin/cnctl" "$c" --help) && echo "$o"; done)
	has "cnctl $c --" "${opts[@]}"
done
