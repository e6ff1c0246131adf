#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# output_check.sh - what `cnctl proc` writes where: a closed stdout is
# refused (and fails every command that prints once: --help, --version), a reader that goes away ends cnctl quietly (the table, --json
# and --ecs alike), the JSON schema's names mean what ECS's and
# OpenTelemetry's process fields of the same names mean, and --ecs writes
# documents whose every field is an ECS field of its published type
# (ecs_check.py against ecs_fields.csv), with loss and the summary still in
# the stream.
#
# Usage: output_check.sh CNCTL CASE [THREAD_EXITS [FORK_STORM]]
# Exit: 0 pass, 1 fail, 77 skip (in CI, CI=true, a skip fails instead).
# Other processes on the machine create events too: every check looks at
# the pids this script started. Waits are for markers, bounded by a
# deadline that only guards against a hang.
set -u -o pipefail
CNCTL=$1
CASE=$2
THREADS=${3:-}
STORM=${4:-}
DEADLINE=${OUTPUT_CHECK_DEADLINE:-60}
HERE=$(dirname "$0")

. "$HERE/../lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (the proc connector, a setuid program run as nobody)"
command -v python3 >/dev/null || skip "no python3"

. "$HERE/proc_lib.sh"
load=
stop_load() {
	[ -z "$load" ] || kill "$load" 2>/dev/null
}
cleanup_more=stop_load

# workload: what every schema check reads: an exit 3, a SIGKILL, a setuid
# program run by nobody, a process whose threads start and end. Leaves
# their pids in $dir/pids.
workload() {
	# Alive a while: an exec's command line is read from /proc.
	sh -c 'sleep 0.2; exit 3' &
	local p3=$!
	wait "$p3"
	sh -c 'kill -9 $$' &
	local p9=$!
	wait "$p9"
	# mount(8) is setuid root: run by nobody, it runs as root for nobody.
	setpriv --reuid=65534 --regid=65534 --clear-groups mount >/dev/null &
	local pm=$!
	wait "$pm"
	"$THREADS" >"$dir/tids" &
	local pt=$!
	wait "$pt"
	local t1 t2
	read -r _ t1 t2 <"$dir/tids"
	echo "$p3 $p9 $pm $pt $t1 $t2" >"$dir/pids"
}

case $CASE in
closed_stdout)
	# stdout closed: the netlink socket must not take fd 1 and be written
	# to; cnctl refuses before listening, says why on stderr, exits 1.
	bad=
	for mode in "" --json --ecs; do
		timeout "$DEADLINE" "$CNCTL" proc $mode --count 5 >&- 2>"$dir/err"
		rc=$?
		if [ "$rc" != 1 ] || ! grep -q "standard output" "$dir/err" ||
			grep -q "events printed" "$dir/err"; then
			echo "cnctl proc $mode --count 5 >&-: exit $rc (expected 1), said: $(cat "$dir/err")"
			bad=1
		else
			echo "ok: cnctl proc $mode >&-: $(cat "$dir/err")"
		fi
	done
	# What prints once and ends (--help, --version, of cnctl and of each
	# command) fails the same way at its end: one line, exit 1.
	for args in --version -V --help -h "help proc" "proc --help" "proc --version" \
		"send --help" "listen --version" "request --help" "notify --help" "kmod --version"; do
		# shellcheck disable=SC2086 # the words of args are the arguments
		timeout "$DEADLINE" "$CNCTL" $args >&- 2>"$dir/err"
		rc=$?
		if [ "$rc" != 1 ] || [ "$(wc -l <"$dir/err")" != 1 ] || ! grep -q "stdout" "$dir/err"; then
			echo "cnctl $args >&-: exit $rc (expected 1, one line), said: $(cat "$dir/err")"
			bad=1
		else
			echo "ok: cnctl $args >&-: $(cat "$dir/err")"
		fi
	done
	[ -z "$bad" ] || fail "a closed stdout not refused"
	;;
reader_gone)
	# `cnctl proc | head -1`: the shell's pipeline gets status 0 from
	# cnctl in every mode, and nothing on stderr but its start and the
	# loss it met while the reader was there (other work on the machine
	# may overrun it): no summary claiming lines head never read, no
	# error.
	(while :; do /bin/true; done) &
	load=$!
	bad=
	for mode in "" --json --ecs; do
		timeout "$DEADLINE" "$CNCTL" proc $mode 2>"$dir/err" | head -n 1 >"$dir/out"
		rc=${PIPESTATUS[0]}
		grep -v -e "listening for proc events" -e "lost events" "$dir/err" >"$dir/rest"
		if [ "$rc" != 0 ] || [ ! -s "$dir/out" ] || [ -s "$dir/rest" ]; then
			echo "cnctl proc $mode | head -1: exit $rc (expected 0), said: $(cat "$dir/rest")"
			bad=1
		else
			echo "ok: cnctl proc $mode | head -1: exit 0, quiet"
		fi
	done
	[ -z "$bad" ] || fail "a reader that went away not taken quietly"
	;;
json_names)
	# Schema 3: exit_code is the shell's status (the raw status is
	# wait_status), pid the process and thread_id the task, a thread's
	# exit names its process's parent, event and user are no strings
	# (action, user_name), --extra gives the real user beside the
	# effective one.
	start --json --extra --rcvbuf 4M
	workload
	finish
	python3 - "$dir/out" $(cat "$dir/pids") "$$" <<'PY' || fail "JSON schema 3"
import json, sys
path = sys.argv[1]
p3, p9, pm, pt, t1, t2, shell = map(int, sys.argv[2:])
docs = [json.loads(l) for l in open(path, "rb")]
ev = [d for d in docs if d["type"] == "event"]
failed = []
def check(what, ok):
    print(("ok: " if ok else "FAIL: ") + what)
    failed.extend([] if ok else [what])
def one(docs):
    return docs[0] if len(docs) == 1 else {}
def exits(tid):
    return one([d for d in ev if d.get("action") == "exit" and d.get("thread_id") == tid])
gone = {"event", "user", "uid", "tgid", "timestamp_ns", "exit_status", "exit_signal",
        "parent_tgid", "tracer_tgid"}
check("schema 3 on every line", all(d.get("schema") == 3 for d in docs))
check("no key of schema 2 left", not any(gone & d.keys() for d in docs))
x3, x9 = exits(p3), exits(p9)
check("exit 3: exit_code 3, wait_status 768",
      x3.get("exit_code") == 3 and x3.get("wait_status") == 768)
check("SIGKILL: exit_code 137, term_signal 9",
      x9.get("exit_code") == 137 and x9.get("term_signal") == 9)
check("SIGCHLD is parent_signal", x3.get("parent_signal") == 17)
check("parent_pid is the parent process", x3.get("parent_pid") == shell)
xm = [d for d in ev if d.get("action") == "exec" and d.get("pid") == pm]
check("a setuid exec run by nobody: user_id 0, real_user_id 65534",
      bool(xm) and xm[-1].get("user_id") == 0 and xm[-1].get("real_user_id") == 65534)
check("user_name and real_user_name strings",
      bool(xm) and xm[-1].get("user_name") == "root" and isinstance(xm[-1].get("real_user_name"), str))
# The main thread leaves first and t2 ends last: the main thread's and t1's
# exits are threads', t2's is the process's (no "thread", thread_id t2).
for t in (pt, t1):
    tx = exits(t)
    check("thread %d's exit: pid is its process" % t, tx.get("pid") == pt and tx.get("thread") is True)
    check("thread %d's exit: parent_pid is its process's parent" % t, tx.get("parent_pid") == shell)
tx = exits(t2)
check("the last thread's exit is the process's", tx.get("pid") == pt and "thread" not in tx)
check("the process's exit names its parent", tx.get("parent_pid") == shell)
ids3 = {d.get("entity_id") for d in ev if d.get("pid") == p3}
ids9 = {d.get("entity_id") for d in ev if d.get("pid") == p9}
check("one entity_id for each process, two for two", len(ids3) == 1 and None not in ids3 and ids3 != ids9)
sys.exit(1 if failed else 0)
PY
	;;
ecs_fields)
	# Every field of every document an ECS field of its type, on real
	# events; what the process fields hold for the workload; loss and the
	# summary in the stream.
	[ -x "$STORM" ] || fail "no fork storm program"
	start --ecs --rcvbuf 4M
	workload
	# Two processes with one pid (ns_last_pid set below it): two ids.
	sh -c 'exit 0' &
	r1=$!
	wait "$r1"
	for try in $(seq 50); do
		echo $((r1 - 1)) >/proc/sys/kernel/ns_last_pid
		sh -c 'exit 0' &
		r2=$!
		wait "$r2"
		[ "$r2" = "$r1" ] && break
	done
	[ "$r2" = "$r1" ] || skip "pid $r1 not given out again in 50 tries (a busy machine)"
	finish
	mv "$dir/out" "$dir/ecs"
	# A loss: cnctl stopped while a burst overruns its 16 KiB buffer.
	start --ecs --rcvbuf 16K
	kill -STOP "$cn"
	echo go | "$STORM" 400 >/dev/null
	kill -CONT "$cn"
	await "$dir/out" '"type":"loss"'
	interrupt
	mv "$dir/out" "$dir/loss"
	cat "$dir/ecs" "$dir/loss" >"$dir/out"
	python3 "$HERE/ecs_check.py" "$HERE/ecs_fields.csv" "$HERE/ecs_event_values.csv" "$dir/out" ||
		fail "documents that are not ECS"
	python3 - "$dir/out" $(cat "$dir/pids") "$$" "$r1" <<'PY' || fail "ECS process fields"
import datetime, json, sys, time
path = sys.argv[1]
p3, p9, pm, pt, t1, t2, shell, reused = map(int, sys.argv[2:])
docs = [json.loads(l) for l in open(path, "rb")]
ev = [d for d in docs if d["event"]["kind"] == "event" and "process" in d]
def of(pid, action):
    return [d for d in ev if d["process"]["pid"] == pid and d["event"]["action"] == action]
now = time.time()
for d in docs:
    # Wall clock: never the monotonic clock read as an epoch.
    t = datetime.datetime.strptime(d["@timestamp"][:19], "%Y-%m-%dT%H:%M:%S")
    t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
    assert abs(t - now) < 86400, d["@timestamp"]
    assert d["ecs"]["version"] == "9.3.0", d
end3, = of(p3, "exit")
assert end3["event"]["category"] == ["process"] and end3["event"]["type"] == ["end"], end3
assert end3["process"]["exit_code"] == 3 and end3["process"]["parent"]["pid"] == shell, end3
start3 = of(p3, "exec")[-1]
assert start3["event"]["type"] == ["start"], start3
pr = start3["process"]
assert pr["args"] == ["sh", "-c", "sleep 0.2; exit 3"] and pr["args_count"] == 3, pr
assert pr["command_line"] == "sh -c sleep 0.2; exit 3", pr
assert of(p3, "fork")[0]["event"]["type"] == ["start"]
ids = {d["process"]["entity_id"] for d in of(p3, "fork") + of(p3, "exec") + of(p3, "exit")}
assert len(ids) == 1, ids
end9, = of(p9, "exit")
assert end9["process"]["exit_code"] == 137, end9
assert end9["process"]["entity_id"] not in ids
m = of(pm, "exec")[-1]["process"]
assert m["user"]["id"] == "0" and m["real_user"]["id"] == "65534", m
# The main thread and t1 end as threads (info); t2, the last, ends the
# process (end).
for t, kind in ((pt, "info"), (t1, "info"), (t2, "end")):
    tx = [d for d in of(pt, "exit") if d["process"]["thread"]["id"] == t]
    assert len(tx) == 1, tx
    p = tx[0]["process"]
    assert p["parent"]["pid"] == shell and tx[0]["event"]["type"] == [kind], tx
    assert p["entity_id"] == of(pt, "fork")[0]["process"]["entity_id"], tx
two = {d["process"]["entity_id"] for d in of(reused, "exit")}
assert len(of(reused, "exit")) == 2 and len(two) == 2, of(reused, "exit")
loss = [d for d in docs if d["event"]["action"] == "loss"]
assert loss and all(d["event"]["kind"] == "metric" for d in loss), loss
assert sum(d["cnctl"]["missing"] + d["cnctl"]["overruns"] for d in loss) > 0, loss
summaries = [d for d in docs if d["event"]["action"] == "summary"]
assert len(summaries) == 2 and summaries[-1]["cnctl"]["overruns"] > 0, summaries
print("ok: ECS fields hold", json.dumps(end9["process"]))
PY
	;;
*)
	echo "unknown case $CASE"
	exit 1
	;;
esac
