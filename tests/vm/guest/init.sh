#!/bin/busybox sh
# Guest /init for the cnbus VM tests: load kmod, run the tests, unload,
# dump the kernel log, power off. Every result line goes to the serial
# console; run-vm-tests.sh on the host parses it.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
export PATH=/bin

for arg in $(cat /proc/cmdline); do
	case "$arg" in
	cnbus.burst=*) export CNBUS_BURST="${arg#cnbus.burst=}" ;;
	cnbus.echo=*) export CNBUS_ECHO="${arg#cnbus.echo=}" ;;
	cnbus.tests=*) TESTS="$(echo "${arg#cnbus.tests=}" | tr , ' ')" ;;
	esac
done

echo
echo "VMTEST-BEGIN kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo)"
# Active objects of the caches kmod allocates from (skbs, callbacks, notify
# requests). The kernel runs with slub_debug, so these counts are exact.
CACHES="skbuff_head_cache kmalloc-32 kmalloc-64 kmalloc-128 kmalloc-192 kmalloc-256 kmalloc-512 kmalloc-1k"
slab() {
	for c in $CACHES; do
		awk -v c="$c" '$1 == c { printf "%s=%s ", $1, $2 }' /proc/slabinfo
	done
}
echo "# slab before load: $(slab)"

if insmod /lib/cnbus/cnbus.ko; then
	echo "ok - insmod cnbus"
else
	echo "not ok - insmod cnbus"
fi
cat /proc/net/cnbus | sed 's/^/# proc: /'

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
# the last test unloads cnbus (the unload must drain them).
if insmod /lib/cnbus/cnbus.ko cbus_qlen=64 max_notify=4 cbus_worker_delay_us=10000; then
	CNBUS_ECHO=500 CNBUS_BURST=5000 /bin/cnbus_vmtest /lib/cnbus/cnbus_test.ko $TESTS
	echo "# cnbus_vmtest (reload) exit $?"
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

echo "VMTEST-DMESG-BEGIN"
dmesg
echo "VMTEST-DMESG-END"
echo "VMTEST-END"
poweroff -f
