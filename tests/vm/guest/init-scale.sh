#!/bin/busybox sh
# Guest /init for the scale run (run-vm-tests.sh --scale): introspection
# with many callbacks on a guest with many possible CPUs. Loads cnbus with
# the smallest CBUS rings (one per possible CPU), has cnbus_test register
# cnbus.scale=N more callbacks, and checks that "cnctl kmod" (its generic
# netlink dump, read by cn_bus_query) lists every callback and every
# possible CPU, in text and in JSON. Result lines are TAP on the console.
. /lib/vm-guest.sh
vm_guest_start

N=1000
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	cnbus.scale=*) N="${arg#cnbus.scale=}" ;;
	esac
done

# count_cpus LIST: how many CPUs a sysfs CPU list ("0-239", "0,2-5") names.
count_cpus() {
	echo "$1" | awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { k = split($i, r, "-");
		n += k == 2 ? r[2] - r[1] + 1 : 1 } print n }'
}
# tap STATUS DESCRIPTION: one TAP line.
tap() {
	if [ "$1" = 0 ]; then echo "ok - scale: $2"; else echo "not ok - scale: $2"; fi
}

POSSIBLE=$(count_cpus "$(cat /sys/devices/system/cpu/possible)")
ONLINE=$(count_cpus "$(cat /sys/devices/system/cpu/online)")
# What the boot asked for (possible_cpus=), as far as the kernel's NR_CPUS goes.
WANT=$(sed -n 's/.*possible_cpus=\([0-9]*\).*/\1/p' /proc/cmdline)
KMAX=$(($(cat /sys/devices/system/cpu/kernel_max) + 1))
[ -n "$WANT" ] && [ "$WANT" -gt "$KMAX" ] && WANT=$KMAX
echo
echo "VMTEST-BEGIN kernel $(uname -r) scale: $N callbacks, cpus $ONLINE online, $POSSIBLE possible"
[ -n "$WANT" ] && [ "$POSSIBLE" = "$WANT" ] && [ "$POSSIBLE" -gt "$ONLINE" ]
tap $? "the guest has $POSSIBLE possible CPUs (asked for ${WANT:-none}), $ONLINE online"

insmod /lib/cnbus/cnbus.ko cbus_qlen=1 cbus_budget=0
tap $? "insmod cnbus cbus_qlen=1 cbus_budget=0"
T0=$(date +%s)
insmod /lib/cnbus/cnbus_test.ko period_ms=0 callbacks="$N"
tap $? "insmod cnbus_test callbacks=$N ($(($(date +%s) - T0)) s)"
TOTAL=$((N + 5)) # cnbus_test's own five and the N more

T0=$(date +%s)
/bin/cnctl kmod --json >/tmp/k.json 2>/tmp/k.err
rc=$?
echo "# cnctl kmod --json: exit $rc, $(wc -c </tmp/k.json) bytes, $(($(date +%s) - T0)) s"
sed 's/^/# stderr: /' /tmp/k.err
tap $rc "cnctl kmod --json exits 0"
# Every one of the N, by id and name, and nothing else but the five.
MANY=$(grep -o '{"idx":292,"val":[0-9]*,"name":"cnbus_test_many_[0-9]*"}' /tmp/k.json |
	sed 's/.*"val":\([0-9]*\),"name":"cnbus_test_many_\([0-9]*\)".*/\1 \2/' |
	awk '$1 == $2' | sort -un | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
tap $([ "$MANY" = "$N" ]; echo $?) "--json lists callbacks 0x124.0..$((N - 1)) by name ($MANY of $N)"
ALL=$(grep -o '{"idx":[0-9]*,"val":[0-9]*,"name":"[^"]*"}' /tmp/k.json | wc -l)
tap $([ "$ALL" = "$TOTAL" ]; echo $?) "--json lists $ALL callbacks in all ($TOTAL registered)"
# Every possible CPU once, 0..POSSIBLE-1 (CPU numbers are dense here).
CPUS=$(grep -o '{"cpu":[0-9]*,"queued":[0-9]*,' /tmp/k.json | sed 's/{"cpu":\([0-9]*\),.*/\1/' |
	sort -un | awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
ENTRIES=$(grep -o '{"cpu":[0-9]*,' /tmp/k.json | wc -l)
tap $([ "$CPUS" = "$POSSIBLE" ] && [ "$ENTRIES" = "$POSSIBLE" ]; echo $?) \
	"--json lists every possible CPU once ($CPUS distinct of $ENTRIES, $POSSIBLE possible)"
grep -q "\"possible_cpus\":$POSSIBLE," /tmp/k.json
tap $? "--json possible_cpus is $POSSIBLE"

/bin/cnctl kmod >/tmp/k.txt 2>&1
rc=$?
head -n 4 /tmp/k.txt | sed 's/^/# cnctl kmod: /'
grep -q "^callbacks: $TOTAL\$" /tmp/k.txt &&
	grep -q "^cbus (.*), $POSSIBLE of $POSSIBLE possible cpus:\$" /tmp/k.txt &&
	[ "$(grep -c '^  0x124\.0x[0-9a-f]*  cnbus_test_many_' /tmp/k.txt)" = "$N" ]
tap $((rc + $?)) "cnctl kmod lists $TOTAL callbacks and $POSSIBLE of $POSSIBLE possible CPUs (exit $rc)"

T0=$(date +%s)
rmmod cnbus_test
tap $? "rmmod cnbus_test: $N callbacks removed ($(($(date +%s) - T0)) s)"
[ "$(/bin/cnctl kmod --json | grep -o '{"idx":' | wc -l)" = 0 ]
tap $? "no callback left"
rmmod cnbus
tap $? "rmmod cnbus"

vm_guest_end VMTEST
