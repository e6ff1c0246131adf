#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# grammar_check.sh - one command-line grammar across cnctl's subcommands:
# --timeout means the same duration in proc, listen, request and notify (and
# fails with the same usage error), --version works everywhere, and an error
# on another netlink unit names that unit.
# Usage: grammar_check.sh CNCTL CASE      Exit: 0 pass, 1 fail, 77 skip.
set -u -o pipefail
. "$(dirname "$0")/../lib.sh"
CNCTL=$1
CASE=$2
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The usage error of `cnctl CMD ARGS... --timeout VALUE`, without the
# subcommand's name: it must be the same text for every subcommand.
timeout_err() {
	value=$1 cmd=$2
	shift 2
	"$CNCTL" "$cmd" "$@" --timeout "$value" >/dev/null 2>"$T/err" </dev/null
	rc=$?
	[ "$rc" = 2 ] || fail "cnctl $cmd $* --timeout '$value' exited $rc, expected 2"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "cnctl $cmd --timeout '$value': not one line"
	sed "s/^cnctl $cmd: //; s/'cnctl $cmd --help'/HELP/" "$T/err"
}

# Milliseconds since some fixed point (date +%s%N: GNU date).
now_ms() { echo $(($(date +%s%N) / 1000000)); }

case $CASE in
timeout_refusals)
	# 0 and nonsense refused by all four, with one message naming the
	# value, the units and the bounds.
	for v in 0 1e3 -1 "5 s" 25d 1.5.2 2sec ""; do
		ref=$(timeout_err "$v" listen 20) || exit 1
		echo "$ref" | grep -q "invalid --timeout value '$v'.*1ms to 24d.*seconds" ||
			fail "listen --timeout '$v': $ref"
		for c in "proc" "request 1.1" "notify --idx 1 --val 1 --group 1"; do
			# shellcheck disable=SC2086
			got=$(timeout_err "$v" $c) || exit 1
			[ "$got" = "$ref" ] || fail "cnctl $c --timeout '$v' said '$got', listen said '$ref'"
		done
	done
	echo "ok: --timeout refusals are the same usage error in proc, listen, request, notify"
	;;
timeout_same_meaning)
	# `listen --timeout 2s`, `listen --timeout 2` and `proc --timeout 2s`
	# all run for 2 s (in parallel: one wait). Group 20 has no sender.
	[ "$(id -u)" = 0 ] || skip "cnctl proc needs root"
	t0=$(now_ms)
	"$CNCTL" listen 20 --timeout 2s -q >"$T/l1" 2>&1 & l1=$!
	"$CNCTL" listen 20 --timeout 2 -q >"$T/l2" 2>&1 & l2=$!
	"$CNCTL" proc --timeout 2s -q >/dev/null 2>"$T/p" & p=$!
	for pid in $l1 $l2 $p; do
		wait "$pid" || fail "pid $pid (listen/proc --timeout 2s) exited $?: $(cat "$T/l1" "$T/l2" "$T/p")"
		el=$(($(now_ms) - t0))
		[ "$el" -ge 1990 ] || fail "a --timeout of 2 s ended after $el ms"
	done
	[ "$el" -lt 3500 ] || fail "--timeout 2s runs ended only after $el ms"
	echo "ok: listen --timeout 2s, listen --timeout 2 and proc --timeout 2s all ran 2 s ($el ms)"
	;;
version_everywhere)
	want=$("$CNCTL" --version) || fail "cnctl --version exited $?"
	echo "$want" | grep -q '^cnctl (libcn) [0-9]' || fail "cnctl --version: '$want'"
	for c in proc send listen request notify kmod; do
		got=$("$CNCTL" $c --version </dev/null 2>&1) || fail "cnctl $c --version exited $?"
		[ "$got" = "$want" ] || fail "cnctl $c --version: '$got', expected '$want'"
	done
	echo "ok: --version in every subcommand: $want"
	;;
unit_named)
	# Unit 2 (NETLINK_USERSOCK) exists but nothing in the kernel receives
	# on it: the error names unit 2, not the kernel's connector.
	for c in "send --unit 2 1.1 x" "request --unit 2 1.1 x --timeout 1s"; do
		# shellcheck disable=SC2086
		"$CNCTL" $c >/dev/null 2>"$T/err"
		rc=$?
		[ $rc = 4 ] || fail "cnctl $c exited $rc, expected 4: $(cat "$T/err")"
		grep -q "netlink unit 2" "$T/err" || fail "cnctl $c: unit 2 not named: $(cat "$T/err")"
		! grep -q "NETLINK_CONNECTOR" "$T/err" || fail "cnctl $c blames NETLINK_CONNECTOR: $(cat "$T/err")"
	done
	echo "ok: errors on unit 2 name unit 2: $(cat "$T/err")"
	;;
*)	echo "unknown case $CASE"; exit 1 ;;
esac
exit 0
