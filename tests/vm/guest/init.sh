#!/bin/busybox sh
# Guest /init for the cnbus VM tests: load kmod, run the tests, unload,
# dump the kernel log, power off. Every result line goes to the serial
# console; run-vm-tests.sh on the host parses it.
# A tool that fails in a pipeline fails the check (busybox sh has pipefail);
# a pipeline's reader takes all it is given (grep without -q), so the
# writer never dies of SIGPIPE.
set -o pipefail
. /lib/vm-guest.sh
vm_guest_start
SCALE=

for arg in $(cat /proc/cmdline); do
	case "$arg" in
	cnbus.burst=*) export CNBUS_BURST="${arg#cnbus.burst=}" ;;
	cnbus.echo=*) export CNBUS_ECHO="${arg#cnbus.echo=}" ;;
	cnbus.fault=*) export CNBUS_FAULT="${arg#cnbus.fault=}" ;;
	cnbus.hotplug=*) export CNBUS_HOTPLUG="${arg#cnbus.hotplug=}" ;;
	cnbus.scale=*) SCALE="${arg#cnbus.scale=}" ;;
	cnbus.tests=*) TESTS="$(echo "${arg#cnbus.tests=}" | tr , ' ')" ;;
	esac
done

echo
echo "VMTEST-BEGIN kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo)"
# Active objects of the caches kmod allocates from (skbs, callbacks, notify
# requests). The kernel runs with slub_debug, so these counts are exact
# once the caches are shrunk: that also empties KASAN's quarantine (freed
# objects it holds back still count as active) on the debug kernel.
CACHES="skbuff_head_cache kmalloc-32 kmalloc-64 kmalloc-128 kmalloc-192 kmalloc-256 kmalloc-512 kmalloc-1k"
slab() {
	echo 3 >/proc/sys/vm/drop_caches
	for s in /sys/kernel/slab/*/shrink; do echo 1 >"$s"; done 2>/dev/null
	for c in $CACHES; do
		awk -v c="$c" '$1 == c { printf "%s=%s ", $1, $2 }' /proc/slabinfo
	done
}
echo "# slab before load: $(slab)"

# kmemleak (the debug kernel): what boot left is not ours; clear it so
# that every later report comes from the tests.
KMEMLEAK=/sys/kernel/debug/kmemleak
[ -e /sys/kernel/debug/kmemleak ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if [ -e $KMEMLEAK ]; then
	echo scan >$KMEMLEAK
	echo "# kmemleak: $(grep -c '^unreferenced object' $KMEMLEAK) object(s) from boot, cleared"
	echo clear >$KMEMLEAK
fi
# kmemleak_check WHEN: scan twice (an object must stay unreferenced over
# two scans) and print every report as "kmemleak: " lines, which the host
# counts as a dirty kernel log. kmemleak ignores objects younger than 5 s:
# the sleep lets what the last test or unload freed (or lost) age into view.
kmemleak_check() {
	[ -e $KMEMLEAK ] || return 0
	sleep 6
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	if [ -s $KMEMLEAK ]; then
		echo "not ok - kmemleak $1: $(grep -c '^unreferenced object' $KMEMLEAK) report(s)"
		sed 's/^/kmemleak: /' $KMEMLEAK
		echo clear >$KMEMLEAK
	else
		echo "ok - kmemleak $1: no report"
	fi
}

# A parameter out of its range (kmod/README.md's table), or not a decimal
# number, fails the load with a line naming the parameter and its range.
for p in unit=32 groups=31 groups=65537 max_notify=65537 cbus_qlen=0 cbus_qlen=65537 \
	cbus_budget=67108865 cbus_batch=0 cbus_batch=1025 cbus_defer_us=100001 cbus_qlen=many cbus_qlen=0x40; do
	said="cnbus: ${p%%=*} must be a number in \["
	n=$(dmesg | grep -c "$said")
	if insmod /lib/cnbus/cnbus.ko "$p" 2>/dev/null || [ -e /sys/module/cnbus ]; then
		echo "not ok - insmod cnbus $p: loaded"
		[ -e /sys/module/cnbus ] && rmmod cnbus
	elif [ "$(dmesg | grep -c "$said")" -gt "$n" ]; then
		line=$(dmesg | grep "$said" | tail -n 1)
		echo "ok - insmod cnbus $p: refused, \"${line#*] }\""
	else
		echo "not ok - insmod cnbus $p: refused without a message"
	fi
done

# The module's footprint: CBUS rings for the online CPUs only (cnbus.scale
# boots have many more possible ones).
memfree() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for s in /sys/kernel/slab/*/shrink; do echo 1 >"$s"; done 2>/dev/null
	awk '/^MemFree:/ { print $2 }' /proc/meminfo
}
cpus() { # cpus LIST: how many CPUs a sysfs CPU list ("0-239", "0,2-5") names
	echo "$1" | awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { k = split($i, r, "-");
		n += k == 2 ? r[2] - r[1] + 1 : 1 } print n }'
}
F0=$(memfree)
if insmod /lib/cnbus/cnbus.ko; then
	echo "ok - insmod cnbus"
else
	echo "not ok - insmod cnbus"
fi
F1=$(memfree)
ONLINE=$(cpus "$(cat /sys/devices/system/cpu/online)")
POSSIBLE=$(cpus "$(cat /sys/devices/system/cpu/possible)")
P=/sys/module/cnbus/parameters
RING=$((($(cat $P/cbus_qlen) * 128 + $(cat $P/cbus_budget)) / 1024))
USED=$((F0 - F1))
# A ring is one allocation (kvmalloc: at most twice its size); 4 MiB for
# the module's code and everything per possible CPU (a few hundred bytes).
if [ "$USED" -le $((ONLINE * RING * 2 + 4096)) ]; then r=ok; else r="not ok"; fi
echo "$r - cnbus footprint after load: $USED KiB; rings for the $ONLINE online CPUs:" \
	"$ONLINE x $RING KiB = $((ONLINE * RING)) KiB, for all $POSSIBLE possible: $((POSSIBLE * RING)) KiB"
cat /proc/net/cnbus | sed 's/^/# proc: /'

# cnctl, the command-line tool (a static build, when the harness copies one
# in): kmod's info, a request to the test module's echo, listen to its CBUS
# timer, send + listen through its multicast callback, notify. cnbus_test is
# loaded here and unloaded again before cnbus_vmtest loads its own.
if [ -x /bin/cnctl ]; then
	# tap STATUS DESCRIPTION [FILE]: a TAP line; on failure, FILE's lines as comments.
	tap() {
		if [ "$1" = 0 ]; then
			echo "ok - cnctl $2"
		else
			echo "not ok - cnctl $2"
			[ -n "$3" ] && sed 's/^/#   /' "$3"
		fi
	}
	# await FILE PATTERN: wait up to 10 s for a line in FILE (a background
	# cnctl's stderr says when it has joined its group).
	await() {
		i=0
		while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	}

	/bin/cnctl kmod >/tmp/c.out 2>&1
	rc=$?
	sed 's/^/# cnctl kmod: /' /tmp/c.out
	grep -q '^kmod .* on netlink unit [0-9]' /tmp/c.out
	tap $((rc + $?)) "kmod (exit $rc)" /tmp/c.out

	/bin/cnctl kmod --json >/tmp/c.out 2>&1
	rc=$?
	sed 's/^/# cnctl kmod --json: /' /tmp/c.out
	[ "$(grep -c '^{"unit":[0-9]*,"version":.*"cpus":\[{"cpu":0,.*}\]}$' /tmp/c.out)" = 1 ]
	tap $((rc + $?)) "kmod --json: one object (exit $rc)" /tmp/c.out

	if insmod /lib/cnbus/cnbus_test.ko period_ms=200; then
		# Echo: same seq, ack + 1, same payload.
		/bin/cnctl request --kmod 0x123.0x456 hello --timeout 2s >/tmp/c.out 2>&1
		rc=$?
		sed 's/^/# cnctl request: /' /tmp/c.out
		line=$(cat /tmp/c.out)
		seq=$(echo "$line" | sed -n 's/^0x123\.0x456 seq=\([0-9]*\) ack=\([0-9]*\) .*data="hello" (request seq=\([0-9]*\) ack=\([0-9]*\),.*/\1 \2 \3 \4/p')
		set -- $seq
		[ $# = 4 ] && [ "$1" = "$3" ] && [ "$2" = "$((($4 + 1) % 4294967296))" ]
		tap $((rc + $?)) "request --kmod 0x123.0x456 hello: echo with seq, ack + 1 (exit $rc)" /tmp/c.out

		/bin/cnctl request --kmod 0x123.0x999 x --timeout 200ms >/tmp/c.out 2>&1
		rc=$?
		[ $rc = 5 ]
		tap $? "request to an id without callback: timeout exit 5 (exit $rc)" /tmp/c.out

		# The timer's "cpu=C counter=N" CBUS messages reach group 0x123.
		/bin/cnctl listen --kmod 0x123 --id 0x123.0x456 --count 2 --timeout 10s --json >/tmp/c.out 2>/tmp/c.err
		rc=$?
		sed 's/^/# cnctl listen (timer): /' /tmp/c.out
		[ "$(grep -c '"idx":291,"val":1110,.*"text":"cpu=[0-9]* counter=[0-9]*"' /tmp/c.out)" = 2 ]
		tap $((rc + $?)) "listen --kmod 0x123: 2 timer messages (exit $rc)" /tmp/c.err

		# send to 0x123.0x459: the test module multicasts it to group 0x123
		# (reported as 291: above 32, libcn reads it from NETLINK_PKTINFO).
		# It exits at its first message; the timeout is for a lost one only (the
		# debug kernel on a loaded host once timed out at 10 s).
		/bin/cnctl listen --kmod 0x123 --id 0x123.0x459 --count 1 --timeout 60s >/tmp/l.out 2>/tmp/l.err &
		lpid=$!
		await /tmp/l.err "listening on unit"
		/bin/cnctl send --kmod 0x123.0x459 ping >/tmp/c.out 2>&1
		rc=$?
		sed 's/^/# cnctl send: /' /tmp/c.out
		grep -q '^sent 0x123\.0x459 seq=[0-9]* ack=[0-9]* len=4 unit=' /tmp/c.out
		tap $((rc + $?)) "send --kmod 0x123.0x459 ping (exit $rc)" /tmp/c.out
		wait $lpid
		rc=$?
		sed 's/^/# cnctl listen: /' /tmp/l.out
		grep -q '^0x123\.0x459 seq=[0-9]* ack=[0-9]* len=4 flags=0x0 port=0 group=291 data="ping"$' /tmp/l.out
		tap $((rc + $?)) "listen --kmod 0x123 --id 0x123.0x459 got the sent message (exit $rc)" /tmp/l.err

		# kmod with the test module's callbacks and some traffic behind it.
		/bin/cnctl kmod >/tmp/c.out 2>&1
		rc=$?
		sed 's/^/# cnctl kmod (cnbus_test loaded): /' /tmp/c.out
		grep -q '^  0x123\.0x456  ' /tmp/c.out && grep -q '^  0x123\.0x457  ' /tmp/c.out
		tap $((rc + $?)) "kmod lists the test module's callbacks (exit $rc)" /tmp/c.out

		# notify: unloading cnbus_test removes 0x123.0x456 and 0x123.0x457.
		/bin/cnctl notify --idx 0x123 --val 0x456:2 --group 7 --count 2 --timeout 60s --json >/tmp/n.out 2>/tmp/n.err &
		npid=$!
		await /tmp/n.err "notification request"
		rmmod cnbus_test
		wait $npid
		rc=$?
		sed 's/^/# cnctl notify: /' /tmp/n.out
		[ "$(grep -c '^{"event":"removed","idx":291,"val":111[01]}$' /tmp/n.out)" = 2 ]
		tap $((rc + $?)) "notify: 2 removals on rmmod cnbus_test (exit $rc)" /tmp/n.err
		/bin/cnctl kmod --json | grep '"notify_count":0,' >/dev/null
		tap $? "notify removed its request on exit"

		# notify stopped by SIGTERM removes its request too.
		/bin/cnctl notify --idx 0x123 --val 0x456 --group 7 >/tmp/n.out 2>/tmp/n.err &
		npid=$!
		await /tmp/n.err "notification request"
		/bin/cnctl kmod --json | grep '"notify_count":1,' >/dev/null
		tap $? "notify: kmod holds 1 request while it runs" /tmp/n.err
		kill -TERM $npid
		wait $npid
		rc=$?
		/bin/cnctl kmod --json | grep '"notify_count":0,' >/dev/null
		tap $((rc + $?)) "notify: SIGTERM exits 0 and removes the request (exit $rc)" /tmp/n.err

		# notify as nobody (uid 65534): kmod refuses the request (no
		# CAP_NET_ADMIN) and says so in its answer to that request
		# (CN_SEND_ACK): "permission denied", exit 3.
		mkdir -p /etc
		grep -q '^nobody:' /etc/passwd 2>/dev/null ||
			echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
		grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
		su -s /bin/sh nobody -c 'id -u; /bin/cnctl notify --idx 0x123 --val 0x456 --group 7 --timeout 2s' >/tmp/n.out 2>/tmp/n.err
		rc=$?
		sed 's/^/# cnctl notify (nobody): /' /tmp/n.out /tmp/n.err
		[ $rc = 3 ] && [ "$(cat /tmp/n.out)" = 65534 ] &&
			grep -q '^cnctl: permission denied: kmod answered the notification request with EPERM' /tmp/n.err
		tap $? "notify as uid 65534: kmod's answer EPERM, exit 3 (exit $rc)" /tmp/n.err
		/bin/cnctl kmod --json | grep '"notify_count":0,' >/dev/null
		tap $? "notify as uid 65534: no request added"
	else
		echo "not ok - cnctl: insmod cnbus_test"
	fi
	[ -e /sys/module/cnbus_test ] && rmmod cnbus_test

	# proc with cnbus_proc.ko loaded: it reads the module (auto), names
	# 20 processes that exec and exit at once from the records' argv
	# (cnbus_vmtest with argv[1] kproc-child exits at its start), and its
	# summary says the source. Without the module it reads the connector.
	if insmod /lib/cnbus/cnbus_proc.ko; then
		/bin/cnctl proc --json --events fork,exec,exit --timeout 60s >/tmp/p.out 2>/tmp/p.err &
		ppid=$!
		await /tmp/p.out '"type":"start"'
		i=0
		while [ $i -lt 20 ]; do
			/bin/cnbus_vmtest kproc-child "cnctl-$i" "$(printf 'x\377')"
			i=$((i + 1))
		done
		sleep 1
		kill -INT $ppid
		wait $ppid
		rc=$?
		n=$(grep -c '"action":"exec".*"argv":\["/bin/cnbus_vmtest","kproc-child","cnctl-[0-9]*",' /tmp/p.out)
		grep '"type":"start"\|"type":"summary"' /tmp/p.out | sed 's/^/# cnctl proc: /'
		[ "$n" = 20 ] && grep -q '"type":"summary".*"source":"cnbus_proc"' /tmp/p.out
		tap $((rc + $?)) "proc reads cnbus_proc.ko: $n of 20 short-lived execs named with their argv (exit $rc)" /tmp/p.err
		rmmod cnbus_proc
		/bin/cnctl proc --json --timeout 1s >/tmp/p.out 2>/tmp/p.err
		rc=$?
		grep -q '"type":"summary".*"source":"connector"' /tmp/p.out
		tap $((rc + $?)) "proc without cnbus_proc.ko reads the proc connector (exit $rc)" /tmp/p.err
	else
		echo "not ok - cnctl: insmod cnbus_proc"
	fi
fi

TESTING=
[ -e /sys/module/cnbus/parameters/cbus_worker_delay_us ] && TESTING=1
/bin/cnbus_vmtest /lib/cnbus/cnbus_test.ko $TESTS
echo "# cnbus_vmtest exit $?"

# The last test unloads cnbus itself; if it did not run, unload here.
if [ -e /sys/module/cnbus ]; then
	[ -e /sys/module/cnbus_test ] && rmmod cnbus_test
	refcnt=$(cat /sys/module/cnbus/refcnt 2>/dev/null)
	if [ "$refcnt" = 0 ]; then echo "ok - cnbus refcnt 0"; else echo "not ok - cnbus refcnt '$refcnt'"; fi
	rmmod cnbus
fi
if [ ! -e /sys/module/cnbus ]; then echo "ok - cnbus unloaded"; else echo "not ok - cnbus still loaded"; fi

S1="$(slab)"
echo "# slab after first unload: $S1"

# A second load after a full unload works.
# Small bounds, and a slow CBUS worker so messages are still queued when
# the last test unloads cnbus (the unload must drain them). The worker's
# delay is in test builds only (CNBUS_TESTING=y): not in the cnbus-dkms
# package's cnbus.ko, which the 6.1 boot may load.
DELAY=cbus_worker_delay_us=10000
[ -n "$TESTING" ] || { DELAY=; echo "# cnbus.ko is not a test build: no worker delay"; }
if insmod /lib/cnbus/cnbus.ko cbus_qlen=64 max_notify=4 $DELAY; then
	CNBUS_ECHO=500 CNBUS_BURST=5000 /bin/cnbus_vmtest /lib/cnbus/cnbus_test.ko $TESTS
	echo "# cnbus_vmtest (reload) exit $?"
	kmemleak_check "after the tests"
	[ -e /sys/module/cnbus_test ] && rmmod cnbus_test
	[ -e /sys/module/cnbus ] && rmmod cnbus
	if [ ! -e /sys/module/cnbus ]; then echo "ok - cnbus unloaded (reload)"; else echo "not ok - cnbus still loaded (reload)"; fi
else
	echo "not ok - insmod cnbus (reload)"
fi
S2="$(slab)"
echo "# slab after second unload: $S2"
# The second cycle runs every test again (thousands of messages, unload in
# flight): a leak per message or per unload shows.
leak=0
for c in $CACHES; do
	a=$(echo "$S1" | tr ' ' '\n' | sed -n "s/^$c=//p")
	b=$(echo "$S2" | tr ' ' '\n' | sed -n "s/^$c=//p")
	[ -n "$a" ] && [ -n "$b" ] || continue
	# Slack: per-CPU caches (e.g. the 64 skb heads NAPI keeps per CPU,
	# filled by skbs freed from hard IRQ) hold a bounded number.
	if [ $((b - a)) -gt 256 ]; then
		echo "# slab $c grew from $a to $b"
		leak=1
	fi
done
if [ $leak = 0 ]; then echo "ok - slab counts stable across a load/test/unload cycle"; else echo "not ok - slab counts grew"; fi
kmemleak_check "after unloading the modules"

# The scale boot (run-vm-tests.sh --scale N): many callbacks, many CPUs.
if [ -n "$SCALE" ]; then
	. /lib/scale.sh
	scale_checks "$SCALE"
fi

vm_guest_end VMTEST
