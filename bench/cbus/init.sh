#!/bin/busybox sh
# Guest /init for bench/cbus/run: load kmod, run cbus_bench, unload, dump
# the kernel log, power off. Parameters come from the kernel command line
# (cbench.count, cbench.batch, cbench.len, cbench.burst, cbench.burst_irq,
# cbench.large, cbench.rounds: cbus_bench runs that many times, each after a
# CBENCH-ROUND line).
. /lib/vm-guest.sh
vm_guest_start

COUNT=20000 BATCH=256 LEN=32 BURST=50000 BURST_IRQ=3000 LARGE=1024 ROUNDS=1
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	cbench.count=*) COUNT="${arg#*=}" ;;
	cbench.batch=*) BATCH="${arg#*=}" ;;
	cbench.len=*) LEN="${arg#*=}" ;;
	cbench.burst=*) BURST="${arg#*=}" ;;
	cbench.burst_irq=*) BURST_IRQ="${arg#*=}" ;;
	cbench.large=*) LARGE="${arg#*=}" ;;
	cbench.rounds=*) ROUNDS="${arg#*=}" ;;
	esac
done

echo
echo "CBENCH-BEGIN kernel $(uname -r) cpus $(grep -c ^processor /proc/cpuinfo)"
if insmod /lib/cnbus/cnbus.ko && insmod /lib/cnbus/cnbus_test.ko period_ms=0; then
	i=1
	while [ "$i" -le "$ROUNDS" ]; do
		echo "CBENCH-ROUND $i"
		/bin/cbus_bench "$COUNT" "$BATCH" "$LEN" "$BURST" "$BURST_IRQ" "$LARGE"
		echo "# cbus_bench exit $?"
		i=$((i + 1))
	done
	rmmod cnbus_test
	rmmod cnbus
else
	echo "Bail out! insmod"
fi
vm_guest_end CBENCH
