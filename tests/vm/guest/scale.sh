# shellcheck shell=sh
# tests/vm/guest/scale.sh - the scale boot's checks (run-vm-tests.sh
# --scale N): sourced by init.sh, which runs scale_checks N after the whole
# suite (the suite, the hotplug test among it, ran on this guest of many
# possible CPUs, a few of them online). Here: introspection with N more
# callbacks (cnbus_test callbacks=N), every one and every possible CPU
# listed by "cnctl kmod" (its generic netlink dump, read by cn_bus_query),
# in text and in JSON, and the removal of the N callbacks (cnbus_test's
# unload) timed. Result lines are TAP on the console ("ok - scale: ...").

# scale_tap STATUS DESCRIPTION: one TAP line.
scale_tap() {
	if [ "$1" = 0 ]; then echo "ok - scale: $2"; else echo "not ok - scale: $2"; fi
}

# uptime_ms: the time since boot in ms (/proc/uptime: 10 ms steps).
uptime_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

scale_checks() {
	N=$1
	POSSIBLE=$(cpus "$(cat /sys/devices/system/cpu/possible)")
	ONLINE=$(cpus "$(cat /sys/devices/system/cpu/online)")
	# What the boot asked for (possible_cpus=), as far as the kernel's NR_CPUS goes.
	WANT=$(sed -n 's/.*possible_cpus=\([0-9]*\).*/\1/p' /proc/cmdline)
	KMAX=$(($(cat /sys/devices/system/cpu/kernel_max) + 1))
	[ -n "$WANT" ] && [ "$WANT" -gt "$KMAX" ] && WANT=$KMAX
	echo "# scale: $N callbacks, cpus $ONLINE online, $POSSIBLE possible"
	[ -n "$WANT" ] && [ "$POSSIBLE" = "$WANT" ] && [ "$POSSIBLE" -gt "$ONLINE" ]
	scale_tap $? "the guest has $POSSIBLE possible CPUs (asked for ${WANT:-none}), $ONLINE online"

	insmod /lib/cnbus/cnbus.ko
	scale_tap $? "insmod cnbus"
	T0=$(uptime_ms)
	insmod /lib/cnbus/cnbus_test.ko period_ms=0 callbacks="$N"
	scale_tap $? "insmod cnbus_test callbacks=$N ($(($(uptime_ms) - T0)) ms)"
	TOTAL=$((N + 6)) # cnbus_test's own six and the N more

	T0=$(uptime_ms)
	/bin/cnctl kmod --json >/tmp/k.json 2>/tmp/k.err
	rc=$?
	echo "# cnctl kmod --json: exit $rc, $(wc -c </tmp/k.json) bytes, $(($(uptime_ms) - T0)) ms"
	sed 's/^/# stderr: /' /tmp/k.err
	scale_tap $rc "cnctl kmod --json exits 0"
	# Every one of the N, by id and name, and nothing else but the six.
	MANY=$(grep -o '{"idx":292,"val":[0-9]*,"name":"cnbus_test_many_[0-9]*"}' /tmp/k.json |
		sed 's/.*"val":\([0-9]*\),"name":"cnbus_test_many_\([0-9]*\)".*/\1 \2/' |
		awk '$1 == $2' | sort -un | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
	scale_tap $([ "$MANY" = "$N" ]; echo $?) "--json lists callbacks 0x124.0..$((N - 1)) by name ($MANY of $N)"
	ALL=$(grep -o '{"idx":[0-9]*,"val":[0-9]*,"name":"[^"]*"}' /tmp/k.json | wc -l)
	scale_tap $([ "$ALL" = "$TOTAL" ]; echo $?) "--json lists $ALL callbacks in all ($TOTAL registered)"
	# Every possible CPU once, 0..POSSIBLE-1 (CPU numbers are dense here),
	# the offline ones too: their counters stay.
	CPUS=$(grep -o '{"cpu":[0-9]*,"queued":[0-9]*,' /tmp/k.json | sed 's/{"cpu":\([0-9]*\),.*/\1/' |
		sort -un | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
	ENTRIES=$(grep -o '{"cpu":[0-9]*,' /tmp/k.json | wc -l)
	scale_tap $([ "$CPUS" = "$POSSIBLE" ] && [ "$ENTRIES" = "$POSSIBLE" ]; echo $?) \
		"--json lists every possible CPU once ($CPUS distinct of $ENTRIES, $POSSIBLE possible)"
	grep -q "\"possible_cpus\":$POSSIBLE," /tmp/k.json
	scale_tap $? "--json possible_cpus is $POSSIBLE"

	/bin/cnctl kmod >/tmp/k.txt 2>&1
	rc=$?
	head -n 4 /tmp/k.txt | sed 's/^/# cnctl kmod: /'
	grep -q "^callbacks: $TOTAL\$" /tmp/k.txt &&
		grep -q "^cbus (.*), $POSSIBLE of $POSSIBLE possible cpus:\$" /tmp/k.txt &&
		[ "$(grep -c '^  0x124\.0x[0-9a-f]*  cnbus_test_many_' /tmp/k.txt)" = "$N" ]
	scale_tap $((rc + $?)) "cnctl kmod lists $TOTAL callbacks and $POSSIBLE of $POSSIBLE possible CPUs (exit $rc)"

	# Removal: cnbus_del_callback waits for no RCU grace period (it took
	# one each: 17-20 s for 1,000 under TCG); the goal is under 1 s.
	T0=$(uptime_ms)
	rmmod cnbus_test
	rc=$?
	MS=$(($(uptime_ms) - T0))
	[ $rc = 0 ] && [ "$MS" -lt 1000 ]
	scale_tap $? "rmmod cnbus_test: $N callbacks removed in $MS ms (goal: under 1000 ms; exit $rc)"
	[ "$(/bin/cnctl kmod --json | grep -o '{"idx":' | wc -l)" = 0 ]
	scale_tap $? "no callback left"
	rmmod cnbus
	scale_tap $? "rmmod cnbus"
}
