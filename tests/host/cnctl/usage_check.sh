#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage_check.sh - cnctl command-line errors: run one case, check the exit
# status and that stderr is one line naming the offending argument.
# Usage: usage_check.sh CNCTL CASE      Exit: 0 pass, 1 fail.
set -u -o pipefail
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

# help_text [CMD]: cnctl [CMD] --help, read whole before anything reads it
# (a grep -q that stops at its match must not end cnctl with SIGPIPE),
# failing the check unless cnctl exits 0. The greps below read to the end
# (no -q) for the same reason: a help of over 4 KiB is printed in more than
# one write, and under pipefail a reader gone early fails the pipeline.
help_text() {
	local text
	# shellcheck disable=SC2086 # CMD: none or one word
	text=$("$CNCTL" $1 --help) || { echo "FAIL: cnctl ${1:+$1 }--help exited $?" >&2; exit 1; }
	printf '%s\n' "$text"
}

# help_of CMD OPTION: CMD is in cnctl --help, and CMD --help / help CMD show
# its usage line and OPTION.
help_of() {
	help_text "" | grep "^  $1 " >/dev/null || { echo "FAIL: cnctl --help lists no $1"; exit 1; }
	for form in "$1 --help" "help $1"; do
		# shellcheck disable=SC2086
		out=$("$CNCTL" $form) || { echo "FAIL: cnctl $form exited $?"; exit 1; }
		echo "$out" | grep "^Usage: cnctl $1" >/dev/null || { echo "FAIL: cnctl $form: no usage"; exit 1; }
		echo "$out" | grep -e "$2" >/dev/null || { echo "FAIL: cnctl $form: no $2"; exit 1; }
		echo "$out" | grep "^Exit status" >/dev/null || { echo "FAIL: cnctl $form: no exit status"; exit 1; }
	done
	echo "ok: cnctl $1 --help"
}

case $CASE in
bad_events)	run 2 "--events.*'forkk'" proc --events fork,forkk ;;
empty_events)	run 2 "--events" proc --events= ;;
tree_no_pid)	run 2 "--tree needs --pid" proc --tree ;;
bad_pid)	run 2 "--pid.*'0'" proc --pid 0 ;;
# pid_max is at most 2^22: no process has this pid.
no_such_pid)	run 2 "--pid value '2147483647': no such process" proc --pid 2147483647 ;;
empty_comm)	run 2 "--comm value '': an empty pattern" proc --comm '' ;;
thread_pid)
	# A thread's id is no process's: refused, naming the process.
	python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); time.sleep(30)' &
	py=$!
	trap 'kill "$py" 2>/dev/null; rm -f "$err"' EXIT
	for _ in $(seq 100); do
		tid=$(ls "/proc/$py/task" 2>/dev/null | grep -vx "$py" | head -n 1)
		[ -n "$tid" ] && break
		sleep 0.05
	done
	[ -n "$tid" ] || { echo "FAIL: no thread in python $py"; exit 1; }
	run 2 "--pid value '$tid': a thread of process $py (give $py)" proc --pid "$tid" ;;
help_width)
	# Every help fits 80 columns, and each option's line starts with it.
	for c in "" proc send listen request notify kmod; do
		# shellcheck disable=SC2086
		long=$(help_text "$c" | awk 'length > 79') || exit 1
		[ -z "$long" ] || { echo "FAIL: cnctl $c --help: lines over 79 columns: $long"; exit 1; }
	done
	help_text proc | grep -E '^      --user NAME ' >/dev/null ||
		{ echo "FAIL: proc --help: --user not on a line of its own"; exit 1; }
	echo "ok: every --help within 79 columns" ;;
bad_pgrp)	run 2 "--pgrp.*'x1'" proc --pgrp x1 ;;
bad_user)	run 2 "--uid/--user.*'no-such-user-x'" proc --user no-such-user-x ;;
bad_count)	run 2 "--count.*'-3'" proc --count -3 ;;
bad_rcvbuf)	run 2 "--rcvbuf.*'lots'" proc --rcvbuf lots ;;
missing_value)	run 2 "'--count'" proc --count ;;
unknown_option)	run 2 "'--frobnicate'" proc --frobnicate ;;
extra_arg)	run 2 "'extra'" proc extra ;;
bad_timeout)	run 2 "--timeout.*'soon'" proc --timeout soon ;;
negative_timeout) run 2 "--timeout.*'-1'" proc --timeout -1 ;;
bad_time)	run 2 "--time.*'utc'" proc --time utc ;;
bad_color)	run 2 "--color.*'sometimes'" proc --color sometimes ;;
huge_count)	run 2 "--count.*'18446744073709551616'" proc --count 18446744073709551616 ;;
zero_count)	run 2 "--count.*'0'" proc --count 0 ;;
unknown_command) run 2 "'frobnicate'" frobnicate ;;
no_command)	run 2 "no command" ;;
help)
	help_text "" | grep '^  proc ' >/dev/null || { echo "FAIL: cnctl --help lists no proc"; exit 1; }
	help_text proc | grep -e '--events' >/dev/null || { echo "FAIL: no proc --help"; exit 1; }
	echo "ok: --help" ;;
# Each subcommand is listed by cnctl --help, and its --help (also as
# "cnctl help CMD") shows its usage and an option of its own, exit 0.
help_send)	help_of send '--seq' ;;
help_listen)	help_of listen '--count' ;;
help_request)	help_of request '--match' ;;
help_notify)	help_of notify '--group' ;;
help_kmod)	help_of kmod '--json' ;;
# send
send_no_id)	run 2 "missing ID" send ;;
send_bad_id)	run 2 "ID '0x12g.1'" send 0x12g.1 hi ;;
send_id_no_dot)	run 2 "ID '291'" send 291 ;;
send_id_too_big) run 2 "ID '4294967296.1'" send 4294967296.1 ;;
send_bad_hex)	run 2 "--hex value 'abc'" send 1.1 --hex abc ;;
send_two_payloads) run 2 "payload once.*'text'" send 1.1 text --hex 00 ;;
send_missing_file) run 1 "--file '/nonexistent/x'" send 1.1 --file /nonexistent/x ;;
send_too_big)	head -c 16385 /dev/zero >"$err.big"; run 2 "--file '$err.big' is more than 16384" send 1.1 --file "$err.big"; rm -f "$err.big" ;;
send_bad_seq)	run 2 "--seq value 'x'" send 1.1 --seq x ;;
send_bad_ack)	run 2 "--ack value '-1'" send 1.1 --ack -1 ;;
send_bad_unit)	run 2 "--unit value '32'" send 1.1 --unit 32 ;;
send_unit_and_kmod) run 2 "--unit or --kmod" send 1.1 --unit 11 --kmod ;;
send_extra_arg)	run 2 "'extra'" send 1.1 data extra ;;
send_unknown_option) run 2 "'--frob'" send 1.1 --frob ;;
send_missing_value) run 2 "'--hex'" send 1.1 --hex ;;
# listen
listen_no_group) run 2 "missing GROUP" listen ;;
listen_bad_group) run 2 "GROUP 'one'" listen one ;;
listen_group_zero) run 2 "GROUP '0'" listen 0 ;;
listen_bad_id)	run 2 "--id value '1'" listen 1 --id 1 ;;
listen_bad_count) run 2 "--count value '0'" listen 1 --count 0 ;;
listen_bad_timeout) run 2 "--timeout value '1e3'" listen 1 --timeout 1e3 ;;
listen_bad_rcvbuf) run 2 "--rcvbuf value 'big'" listen 1 --rcvbuf big ;;
listen_unknown_option) run 2 "'-z'" listen 1 -z ;;
# request
request_no_id)	run 2 "missing ID" request ;;
request_bad_id)	run 2 "ID '1.'" request 1. ;;
request_bad_match) run 2 "--match value 'loose'" request 1.1 --match loose ;;
request_bad_timeout) run 2 "--timeout value '-5'" request 1.1 --timeout -5 ;;
request_bad_join) run 2 "--join value '0'" request 1.1 --join 0 ;;
request_missing_value) run 2 "'--timeout'" request 1.1 --timeout ;;
# notify
notify_no_idx)	run 2 "missing --idx" notify --val 1 --group 1 ;;
notify_no_val)	run 2 "missing --val" notify --idx 1 --group 1 ;;
notify_no_group) run 2 "missing --group" notify --idx 1 --val 1 ;;
notify_bad_idx)	run 2 "--idx value '1:0'" notify --idx 1:0 --val 1 --group 1 ;;
notify_bad_val)	run 2 "--val value '0xffffffff:2'" notify --idx 1 --val 0xffffffff:2 --group 1 ;;
notify_bad_group) run 2 "--group value '0'" notify --idx 1 --val 1 --group 0 ;;
notify_extra_arg) run 2 "'extra'" notify --idx 1 --val 1 --group 1 extra ;;
# One option table for all subcommands (tools/cnctl/option_table.c): a long name
# that another subcommand takes is still unknown here, and one that means
# something else elsewhere keeps this subcommand's meaning.
notify_join_unknown) run 2 "unknown option '--join'" notify --idx 1 --val 1 --join 1 ;;
request_group_unknown) run 2 "unknown option '--group'" request 1.1 --group 1 ;;
kmod_timeout_unknown) run 2 "unknown option '--timeout'" kmod --timeout 5 ;;
listen_hex_no_value) run 2 "option '--hex' takes no value" listen 1 --hex=ab ;;
send_hex_needs_value) run 2 "'--hex' needs a value" send 1.1 --hex ;;
# kmod
kmod_extra_arg)	run 2 "'extra'" kmod extra ;;
kmod_unknown_option) run 2 "'--unit'" kmod --unit 5 ;;
*)	echo "unknown case $CASE"; exit 1 ;;
esac
exit 0
