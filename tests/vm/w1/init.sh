#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Guest /init of the w1 test (tests/vm/run-w1-test.sh): the kernel's own w1
# core (wire.ko) and DS18B20 driver (w1_therm.ko) on fake_w1_master.ko, a
# bus master that emulates a DS18B20 and a DS2401 bit by bit; libcn's
# examples/w1 (w1_therm) talks to it through the w1 netlink interface.
# Prints TAP lines (W1TEST-*) to the serial console; the host judges them
# and the kernel log.
. /lib/vm-guest.sh
vm_guest_start

echo
echo "W1TEST-BEGIN kernel $(uname -r)"
t() {
	if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi
}
THERM=28-00000a1b2c3d
ID=01-000012345678
ABSENT=28-000000000bad
DEV=/sys/bus/w1/devices

for m in wire w1_therm; do
	insmod /lib/w1/$m.ko
	t $? "insmod $m (the kernel's own)"
done
insmod /lib/cnbus/fake_w1_master.ko temp_mc=-10125
t $? "insmod fake_w1_master temp_mc=-10125"

# The master's first search attaches both slaves (w1_process, at once).
i=0
while { [ ! -e $DEV/$THERM ] || [ ! -e $DEV/$ID ]; } && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -e $DEV/$THERM ] && [ -e $DEV/$ID ]
t $? "the kernel's search found $THERM and $ID"
MASTER=$(ls -d $DEV/w1_bus_master* 2>/dev/null | head -n 1)
MASTER_ID=${MASTER##*w1_bus_master}
[ -n "$MASTER_ID" ]
t $? "bus master $MASTER_ID"

# The kernel's own DS18B20 driver reads it through the same emulation
# (power supply, resolution from the scratchpad at attach; CONVERT T and
# READ SCRATCHPAD with its CRC check here).
[ "$(basename "$(readlink $DEV/$THERM/driver)")" = w1_slave_driver ] &&
	[ -e $DEV/$THERM/temperature ]
t $? "w1_therm bound the DS18B20"
T=$(cat $DEV/$THERM/temperature 2>&1)
[ "$T" = -10125 ]
t $? "w1_therm reads -10125 (got '$T')"
R=$(cat $DEV/$THERM/resolution 2>&1)
[ "$R" = 12 ]
t $? "w1_therm reads the resolution from the scratchpad: 12 (got '$R')"
P=$(cat $DEV/$THERM/ext_power 2>&1)
[ "$P" = 1 ]
t $? "w1_therm reads external power (got '$P')"

# run NAME EXPECTED_STATUS ARGS...: w1_therm, its output in /tmp/NAME.out.
run() {
	n=$1
	want=$2
	shift 2
	w1_therm "$@" >/tmp/"$n".out 2>/tmp/"$n".err
	rc=$?
	sed "s/^/# $n: /" /tmp/"$n".out /tmp/"$n".err
	[ "$rc" = "$want" ]
}

for B in "" --bundle; do
	L=${B:-unbundled}
	run masters$B 0 $B masters && [ "$(cat /tmp/masters$B.out)" = "master $MASTER_ID" ]
	t $? "$L: LIST_MASTERS lists master $MASTER_ID and ends without a status"

	# The search's status comes after its ids: its line last shows that
	# cn_request_all waited for it.
	run search$B 0 $B search "$MASTER_ID" &&
		[ "$(head -n 2 /tmp/search$B.out | sort)" = "rom $ID crc ok
rom $THERM crc ok" ] && [ "$(tail -n +3 /tmp/search$B.out)" = "search status ok" ]
	t $? "$L: SEARCH finds both ROM ids, each with its CRC, then its status"

	run read$B 0 $B --wait 0 read $THERM &&
		grep -qx "$THERM scratchpad 5e ff 4b 46 7f ff 0c 10 6a crc ok" /tmp/read$B.out &&
		grep -qx "$THERM temperature -10125" /tmp/read$B.out
	t $? "$L: SLAVE_CMD CONVERT T, READ SCRATCHPAD: -10125, CRC ok"

	run absent$B 4 $B --wait 0 read $ABSENT && grep -qx "w1_therm: $ABSENT: No such device" /tmp/absent$B.err
	t $? "$L: a slave the kernel does not know: -ENODEV"

	# Three w1 messages in one request: the kernel answers the unknown
	# slave at once, in the sender's system call, and the two others on
	# the master's thread; each answer goes to its own message. The
	# DS2401 has no scratchpad: its READ reads the idle bus, all 1s, whose
	# CRC fails (exit 3); answers swapped between the two would show.
	run three$B 3 $B --wait 0 read $ABSENT $THERM $ID &&
		grep -qx "w1_therm: $ABSENT: No such device" /tmp/three$B.err &&
		grep -qx "$THERM scratchpad 5e ff 4b 46 7f ff 0c 10 6a crc ok" /tmp/three$B.out &&
		grep -qx "$THERM temperature -10125" /tmp/three$B.out &&
		grep -qx "$ID scratchpad ff ff ff ff ff ff ff ff ff crc BAD (c9)" /tmp/three$B.out
	t $? "$L: one request for an absent slave, the DS18B20 and the DS2401"
done

# Slaves that do not answer (the fake's present mask). A reset with both:
# a presence pulse.
PRESENT=/sys/module/fake_w1_master/parameters/present
run reset 0 reset "$MASTER_ID" && [ "$(cat /tmp/reset.out)" = "reset $MASTER_ID: presence" ]
t $? "MASTER_CMD RESET: a presence pulse"
# The DS2401 alone answers the reset: the DS18B20 the kernel knows stays
# silent after MATCH ROM, and its scratchpad reads as the idle bus.
echo 2 >$PRESENT
run silent 3 --timeout 3000 --wait 0 read $THERM &&
	grep -qx "$THERM scratchpad ff ff ff ff ff ff ff ff ff crc BAD (c9)" /tmp/silent.out
t $? "a silent DS18B20 beside a DS2401: all 1s, CRC BAD"
# Nobody answers: the kernel's selection of a slave it knows fails
# (w1_process_cb: one -ENODEV status, with the first command), and a
# reset sees no presence pulse (status 255).
echo 0 >$PRESENT
run silent0 4 --timeout 3000 --wait 0 read $THERM &&
	grep -qx "w1_therm: $THERM: No such device" /tmp/silent0.err
t $? "SLAVE_CMD to a known slave on a silent bus: -ENODEV, at once"
run reset0 4 --timeout 3000 reset "$MASTER_ID" &&
	grep -qx "w1_therm: reset $MASTER_ID: no presence pulse (or no such master)" /tmp/reset0.err
t $? "MASTER_CMD RESET on a silent bus: status 255, -ENODEV"
echo 3 >$PRESENT

# A temperature chosen now, read through both paths. (The scratchpad's
# CRC-8 is 6a above and 9f here, as the DS18B20 datasheet's polynomial
# gives; the client checks it with its own code, the kernel's w1_therm
# with w1_calc_crc8.)
echo 25625 >/sys/module/fake_w1_master/parameters/temp_mc
run read2 0 --bundle --wait 0 read $THERM && grep -qx "$THERM temperature 25625" /tmp/read2.out &&
	grep -qx "$THERM scratchpad 9a 01 4b 46 7f ff 0c 10 9f crc ok" /tmp/read2.out
t $? "the temperature set at run time (25625) through libcn"
T=$(cat $DEV/$THERM/temperature 2>&1)
[ "$T" = 25625 ]
t $? "and through w1_therm (got '$T')"

rmmod fake_w1_master
t $? "rmmod fake_w1_master"
[ ! -e $DEV/$THERM ]
t $? "the slaves went with their master"
rmmod w1_therm && rmmod wire
t $? "rmmod w1_therm, wire"
dmesg | grep -E 'w1|fake_w1' | sed 's/^/# dmesg: /'
# w1_therm's warnings name its functions (w1_therm_add_slave: "power_mode
# may be corrupted", ...) or come from the slave's device.
! dmesg | grep -iE "(w1_therm|$THERM).*(corrupt|crc|error|fail|invalid)|Abort w1_search" >/dev/null
t $? "kernel log: no w1_therm complaint"
echo "W1TEST-SUMMARY"
vm_guest_end W1TEST
