#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Guest /init of the dm-log-userspace test (tests/vm/run-dm-test.sh): the
# kernel's dm-mirror with a "userspace" log, served by examples/dm-ulog.
# Prints TAP lines (DMTEST-*) to the serial console; the host judges them
# and the kernel log.
. /lib/vm-guest.sh
vm_guest_start
export DM_DISABLE_UDEV=1 # no udev here: libdevmapper makes /dev/mapper nodes itself

echo
echo "DMTEST-BEGIN kernel $(uname -r)"
# t STATUS DESCRIPTION: a TAP line from an exit status.
t() {
	if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi
}
UUID=libcn-dm-ulog-vmtest
SECTORS=16384 # 8 MiB
REGION=1024   # 512 KiB: 16 regions
REGIONS=16
TABLE="0 $SECTORS mirror userspace 4 $UUID core 1 $REGION 2 /dev/loop0 0 /dev/loop1 0"

for m in dm-mod dm-log dm-region-hash dm-mirror dm-log-userspace loop; do
	[ -e /lib/dm/$m.ko ] || continue # built into this kernel
	insmod /lib/dm/$m.ko
	t $? "insmod $m"
done

# Two legs that differ: the first resync must make the second a copy of
# the first, which only happens when the server hands out resync work.
dd if=/dev/zero of=/tmp/leg0 bs=65536 count=128 2>/dev/null
dd if=/dev/urandom of=/tmp/leg1 bs=65536 count=128 2>/dev/null
losetup /dev/loop0 /tmp/leg0 && losetup /dev/loop1 /tmp/leg1
t $? "two 8 MiB loop devices"

# server N ARGS...: start dm-ulog, its stderr in /tmp/ulog-N.log; SERVER=pid.
server() {
	n=$1
	shift
	dm-ulog "$@" 2>/tmp/ulog-"$n".log &
	SERVER=$!
	i=0
	while ! grep -q serving /tmp/ulog-"$n".log 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q serving /tmp/ulog-"$n".log
}
# wait_sync SECONDS: until dmsetup status shows every region in sync.
wait_sync() {
	i=0
	while [ $i -lt "$1" ]; do
		ST=$(dmsetup status mir 2>&1)
		case "$ST" in *" $REGIONS/$REGIONS "*) return 0 ;; esac
		sleep 0.5
		i=$((i + 1))
	done
	echo "# dmsetup status: $ST"
	return 1
}
# legs_hold FILE SKIP: both legs hold FILE at 64 KiB block SKIP.
legs_hold() {
	dd if=/tmp/leg0 bs=65536 skip="$2" count=16 2>/dev/null | cmp -s - "$1" &&
		dd if=/tmp/leg1 bs=65536 skip="$2" count=16 2>/dev/null | cmp -s - "$1"
}
answered() { grep -c "^dm-ulog: $1 seq [0-9]*: answered" "$2"; }

# The first server answers the first STATUS_INFO and the first FLUSH with
# -EAGAIN: the kernel resends each at once, with a new seq.
server 1 --verbose --eagain STATUS_INFO --eagain FLUSH
t $? "dm-ulog serving"

dmsetup --noudevsync create mir --table "$TABLE"
t $? "dmsetup create mirror over loop0, loop1 with the userspace log"
wait_sync 120
t $? "initial resync done: $ST"
cmp -s /tmp/leg0 /tmp/leg1
t $? "resync made leg 1 a copy of leg 0"

dd if=/dev/urandom of=/tmp/data1 bs=65536 count=16 2>/dev/null
dd if=/tmp/data1 of=/dev/mapper/mir bs=65536 seek=16 conv=fsync 2>/dev/null
t $? "write 1 MiB through the mirror"
wait_sync 60
t $? "in sync after the write"
legs_hold /tmp/data1 16
t $? "both legs hold the data"
echo 3 >/proc/sys/vm/drop_caches
dd if=/dev/mapper/mir bs=65536 skip=16 count=16 2>/dev/null | cmp -s - /tmp/data1
t $? "the data reads back through the mirror"

L=/tmp/ulog-1.log
ST=$(dmsetup status mir)
case "$ST" in *COM_FAILURE*) r=1 ;; *) r=0 ;; esac
t $r "status after an EAGAIN answer: $ST"
for ty in STATUS_INFO FLUSH; do
	grep -q "refused $ty seq .*--eagain.*: Resource temporarily unavailable" $L &&
		[ "$(answered $ty $L)" -ge 1 ]
	t $? "$ty answered EAGAIN once, then answered when the kernel resent it"
done

dmsetup --noudevsync suspend mir && dmsetup --noudevsync resume mir
t $? "suspend and resume"
for ty in PRESUSPEND POSTSUSPEND RESUME; do
	[ "$(answered $ty $L)" -ge 1 ]
	t $? "$ty served"
done

# Hard case: the server dies while the mirror is active. A write then finds
# no listener in CN_IDX_DM (-ESRCH): the kernel retries CTR every 2 s
# (dm-log-userspace-base.c, userspace_do_request) and the write waits.
kill -9 $SERVER
wait $SERVER 2>/dev/null
dd if=/dev/urandom of=/tmp/data2 bs=65536 count=16 2>/dev/null
dd if=/tmp/data2 of=/dev/mapper/mir bs=65536 seek=64 conv=fsync 2>/dev/null &
DD=$!
sleep 5
kill -0 $DD 2>/dev/null
t $? "with the server gone, a write waits"
server 2 --verbose
t $? "dm-ulog restarted"
i=0
while kill -0 $DD 2>/dev/null && [ $i -lt 60 ]; do
	sleep 1
	i=$((i + 1))
done
wait $DD
t $? "the write completes once the server is back (${i} s)"
L=/tmp/ulog-2.log
[ "$(answered CTR $L)" -ge 1 ] && [ "$(answered RESUME $L)" -ge 1 ]
t $? "the kernel reconnected: CTR and RESUME to the new server"
dmesg | grep -q "Reconnected to userspace log server"
t $? "kernel: Reconnected to userspace log server"
# The new server's core log starts with every region out of sync (the
# state died with the old server): the kernel learns it from the first
# IS_REMOTE_RECOVERING answer (its in_sync_hint) and resyncs them all.
wait_sync 120
t $? "resynced after the restart: $ST"
[ "$(answered SET_REGION_SYNC $L)" -ge $REGIONS ]
t $? "the new server served the resync of all $REGIONS regions"
dmsetup --noudevsync suspend mir && dmsetup --noudevsync resume mir
t $? "suspend and resume after the restart"
legs_hold /tmp/data2 64 && legs_hold /tmp/data1 16 && cmp -s /tmp/leg0 /tmp/leg1
t $? "both legs hold both writes"

# Hard case: the server restarted while the mirror is idle. The new one
# does not know the log and answers the next request -ESRCH, which makes
# the kernel reconnect as above (CTR, RESUME, the request again).
kill -9 $SERVER
wait $SERVER 2>/dev/null
server 3 --verbose
t $? "dm-ulog killed and restarted at once"
dd if=/dev/urandom of=/tmp/data3 bs=65536 count=16 2>/dev/null
dd if=/tmp/data3 of=/dev/mapper/mir bs=65536 seek=96 conv=fsync 2>/dev/null &
DD=$!
i=0
while kill -0 $DD 2>/dev/null && [ $i -lt 60 ]; do
	sleep 1
	i=$((i + 1))
done
wait $DD
t $? "a write to the idle mirror completes (${i} s)"
L=/tmp/ulog-3.log
grep -q "refused .*unknown log" $L && [ "$(answered CTR $L)" -ge 1 ] &&
	[ "$(answered RESUME $L)" -ge 1 ]
t $? "the new server answered ESRCH for the log it did not know; the kernel reconnected"
[ "$(dmesg | grep -c 'Reconnected to userspace log server')" -ge 2 ]
t $? "kernel: reconnected a second time"
wait_sync 120
t $? "resynced again: $ST"
legs_hold /tmp/data3 96 && legs_hold /tmp/data2 64 && legs_hold /tmp/data1 16 &&
	cmp -s /tmp/leg0 /tmp/leg1
t $? "both legs hold all three writes"

dmsetup --noudevsync remove mir
t $? "dmsetup remove"
[ "$(answered DTR $L)" -ge 1 ]
t $? "DTR served"
kill $SERVER
wait $SERVER
t $? "dm-ulog exits 0 on SIGTERM"
for n in 1 2 3; do
	grep -E 'refused|answered;|overrun|answering' /tmp/ulog-$n.log | sed "s/^/# server $n: /"
	# What a server refused: the --eagain answers, and (the third)
	# requests for the log it did not know yet.
	! grep 'refused' /tmp/ulog-$n.log | grep -qv -e '--eagain' -e 'unknown log'
	t $? "server $n refused nothing else"
	! grep -q -e overrun -e answering /tmp/ulog-$n.log
	t $? "server $n: no overrun, every answer sent"
done

# The kernel's side: no answer lost or refused as malformed.
for msg in "Request timed out" "Incomplete message" "Insufficient space" \
	"failed to create log" "Error trying to resume"; do
	! dmesg | grep -q "$msg"
	t $? "kernel log: no '$msg'"
done
dmesg | grep -E 'dm-log-userspace|device-mapper' | sed 's/^/# dmesg: /'
losetup -d /dev/loop0
losetup -d /dev/loop1
echo "DMTEST-SUMMARY"
vm_guest_end DMTEST
