#!/bin/busybox sh
# Guest /init for bench/cbus/run: load kmod, run cbus_bench, unload, dump
# the kernel log, power off. Parameters come from the kernel command line
# (cbench.count, cbench.batch, cbench.len, cbench.burst, cbench.burst_irq,
# cbench.large).
. /lib/vm-guest.sh
vm_guest_start

COUNT=20000 BATCH=256 LEN=32 BURST=50000 BURST_IRQ=3000 LARGE=1024
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	cbench.count=*) COUNT="${arg#*=}" ;;
	cbench.batch=*) BATCH="${arg#*=}" ;;
	cbench.len=*) LEN="${arg#*=}" ;;
	cbench.burst=*) BURST="${arg#*=}" ;;
	cbench.burst_irq=*) BURST_IRQ="${arg#*=}" ;;
	cbench.large=*) LARGE="${arg#*=}" ;;
	esac
done

echo
echo "CBENCH-BEGIN kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo)"
if insmod /lib/cnbus/cnbus.ko && insmod /lib/cnbus/cnbus_test.ko period_ms=0; then
	/bin/cbus_bench "$COUNT" "$BATCH" "$LEN" "$BURST" "$BURST_IRQ" "$LARGE"
	echo "# cbus_bench exit $?"
	rmmod cnbus_test
	rmmod cnbus
else
	echo "Bail out! insmod"
fi
vm_guest_end CBENCH
