#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage_check.sh - cnctl command-line errors: run one case, check the exit
# status and that stderr is one line naming the offending argument.
# Usage: usage_check.sh CNCTL CASE      Exit: 0 pass, 1 fail.
set -u
CNCTL=$1
CASE=$2
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT

# run EXPECTED_STATUS PATTERN ARGS...: stderr must be one line matching PATTERN.
run() {
	want=$1 pat=$2
	shift 2
	"$CNCTL" "$@" >/dev/null 2>"$err" </dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: cnctl $* exited $rc, expected $want"; cat "$err"; exit 1
	fi
	lines=$(wc -l <"$err")
	if [ "$lines" != 1 ] || ! grep -q -e "$pat" "$err"; then
		echo "FAIL: cnctl $*: expected one line matching '$pat' on stderr, got:"
		cat "$err"; exit 1
	fi
	echo "ok: cnctl $* -> $rc: $(cat "$err")"
}

case $CASE in
bad_events)	run 2 "--events.*'forkk'" proc --events fork,forkk ;;
empty_events)	run 2 "--events" proc --events= ;;
bad_count)	run 2 "--count.*'-3'" proc --count -3 ;;
bad_rcvbuf)	run 2 "--rcvbuf.*'lots'" proc --rcvbuf lots ;;
missing_value)	run 2 "'--count'" proc --count ;;
unknown_option)	run 2 "'--frobnicate'" proc --frobnicate ;;
extra_arg)	run 2 "'extra'" proc extra ;;
unknown_command) run 2 "'frobnicate'" frobnicate ;;
no_command)	run 2 "no command" ;;
help)
	"$CNCTL" --help | grep -q '^  proc ' || { echo "FAIL: cnctl --help lists no proc"; exit 1; }
	"$CNCTL" proc --help | grep -q -e '--events' || { echo "FAIL: no proc --help"; exit 1; }
	echo "ok: --help" ;;
*)	echo "unknown case $CASE"; exit 1 ;;
esac
exit 0
