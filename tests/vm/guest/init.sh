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
slab() { awk '$1 == "skbuff_head_cache" || $1 == "kmalloc-64" { printf "%s=%s ", $1, $2 }' /proc/slabinfo 2>/dev/null; }
echo "# slab before: $(slab)"

if insmod /lib/cnbus/cnbus.ko; then
	echo "ok - insmod cnbus"
else
	echo "not ok - insmod cnbus"
fi
cat /proc/net/cnbus | sed 's/^/# proc: /'

/bin/cnbus_vmtest /lib/cnbus/cnbus_test.ko $TESTS
echo "# cnbus_vmtest exit $?"

# Nothing may hold cnbus now: the test module is gone and sockets closed.
[ -e /sys/module/cnbus_test ] && rmmod cnbus_test
refcnt=$(cat /sys/module/cnbus/refcnt 2>/dev/null)
if [ "$refcnt" = 0 ]; then echo "ok - cnbus refcnt 0"; else echo "not ok - cnbus refcnt '$refcnt'"; fi
if rmmod cnbus && [ ! -e /sys/module/cnbus ]; then
	echo "ok - rmmod cnbus"
else
	echo "not ok - rmmod cnbus"
fi

# A second load after a full unload works.
if insmod /lib/cnbus/cnbus.ko cbus_qlen=16 max_notify=4; then
	CNBUS_ECHO=200 CNBUS_BURST=5000 /bin/cnbus_vmtest /lib/cnbus/cnbus_test.ko kmod_info echo notify_bound cbus_burst_process
	echo "# cnbus_vmtest (reload) exit $?"
	[ -e /sys/module/cnbus_test ] && rmmod cnbus_test
	if rmmod cnbus; then echo "ok - rmmod cnbus (reload)"; else echo "not ok - rmmod cnbus (reload)"; fi
else
	echo "not ok - insmod cnbus (reload)"
fi
echo "# slab after: $(slab)"

echo "VMTEST-DMESG-BEGIN"
dmesg
echo "VMTEST-DMESG-END"
echo "VMTEST-END"
poweroff -f
