#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/cbus-proc/guest.sh - the measurements of bench/cbus-proc/run, run
# by the guest's /init (init.sh) in a chroot of the host's root (bash,
# forkstat, the build's cnctl and programs), with cnbus.ko loaded. One
# argument: the configuration file the host wrote (CBP_* variables). Every
# result is a "CBP ..." line on the console (key=value), rounds
# interleaved so the host's load hits every side alike:
#   fb      the fork bomb (cbp-forkbomb) in four set-ups, their order turned
#           by one each round: conn (the kernel's proc connector read by
#           cnctl proc --source connector), kmod (cnbus_proc.ko read by
#           cnctl proc --source kmod), idle (cnbus_proc.ko loaded, nobody
#           listening), none (not loaded, nobody listening);
#   storm   CBP_STORM children of cnb-storm exec'ing the static cbp-quick,
#           with no monitor (cnbus_proc.ko not loaded), cnctl proc on the
#           producer, forkstat, execsnoop: the machine's busy time
#           (/proc/uptime, /proc/stat), context switches and interrupts
#           from the storm's start until the monitor showed the end
#           marker, each monitor's own CPU, the execs it named;
#   loss    cbp-loss's forced overrun.
# CBP_PARTS (default "fb storm loss") names the parts this boot runs:
# bench/cbus-proc/run runs the storms in a boot of their own.
# With CBP_LATENCY=1 (bench/cbus-proc/run --latency) it does none of that:
# cbp-latency for each cbus_defer_us of CBP_LAT_DEFERS, sparse forks, then
# back to back: the records' latency to a reader.
# With CBP_STRACE=1 (bench/cbus-proc/run --strace) it does none of that:
# one storm per cnctl under `strace -c -f` (CBP_CNCTL_BEFORE first, when
# set, then the build's), each on cnbus_proc.ko, for the system calls per
# event of one build against another in the same boot.
set -u
# shellcheck source=/dev/null
. "$1" # CBP_BIN CBP_CNCTL CBP_KO CBP_ROUNDS CBP_STORM CBP_FB_SECS CBP_FB_WORKERS CBP_LOSS CBP_EXECSNOOP
out=/run/cbp
mkdir -p "$out"
hz=$(getconf CLK_TCK)
# The storm's binary in the guest's tmpfs: exec'd from the 9p share, each
# exec would wait for the host (an open there), time the guest's clock
# counts with background work in it.
cp "$CBP_BIN/cbp-quick" "$out/" || echo "Bail out! cp cbp-quick"
quick=$out/cbp-quick

# Milliseconds the whole machine was busy since boot: the CPUs' time less
# their idle and iowait, which the kernel keeps exactly (nohz); its user and
# system counts are sampled at ticks, which a CPU that wakes for a moment
# and goes idle again does not take, so they miss a monitor's short runs.
# Both files are read by one awk: between two processes the guest may idle
# (an exec waits for the 9p share) and its idle time grow alone.
busy() {
	awk -v n="$(nproc)" -v hz="$hz" 'FILENAME == "/proc/uptime" { up = $1 }
		/^cpu / { printf "%.0f\n", up * 1000 * n - ($5 + $6) * 1000 / hz }' /proc/uptime /proc/stat
}
# context switches and interrupts since boot, "CTXT INTR"
switches() { awk '/^ctxt / { c = $2 } /^intr / { i = $2 } END { print c, i }' /proc/stat; }
cpu_ms() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"; }
await() { # FILE PATTERN SECONDS
	for _ in $(seq $(($3 * 10))); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# cbp: no '$2' in $1 after $3 s"
	return 1
}
load_proc() { insmod "$CBP_KO/cnbus_proc.ko" || echo "Bail out! insmod cnbus_proc.ko"; }
unload_proc() { rmmod cnbus_proc || echo "Bail out! rmmod cnbus_proc"; }
# cnctl's summary (stderr, at SIGINT) as key=value: printed, lost, overruns,
# source; nothing for a monitor that is not cnctl.
summary() {
	[ -s "$1" ] || return 0
	sed -n -e 's/^cnctl: \([0-9]*\) events printed, \([0-9]*\) lost.*, \([0-9]*\) overruns$/cnctl_printed=\1 cnctl_lost=\2 cnctl_overruns=\3/p' \
		-e 's/^cnctl: events read from cnbus_proc.ko.*/cnctl_source=kmod/p' \
		-e "s/^cnctl: events read from the kernel's proc connector.*/cnctl_source=connector/p" "$1" | tr '\n' ' '
}
stop() { # PID: SIGINT, then wait for it
	kill -INT "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# start_monitor KIND FILE: start a monitor writing to FILE, wait until it
# listens; sets mon (its pid, empty for none).
start_monitor() {
	mon=
	case $1 in
	none) return 0 ;;
	conn) "$CBP_CNCTL" proc --source connector >"$2" 2>"$2.err" & ;;
	kmod) "$CBP_CNCTL" proc --source kmod >"$2" 2>"$2.err" & ;;
	forkstat) forkstat >"$2" 2>&1 & ;;
	execsnoop) "$CBP_EXECSNOOP" >"$2" 2>&1 & ;;
	esac
	mon=$!
	case $1 in
	conn | kmod) await "$2.err" listening 60 ;;
	forkstat)
		# forkstat says nothing when it is ready: a process it shows.
		for _ in $(seq 600); do
			bash -c 'exec -a cbp-ready true'
			grep -q . "$2" && break
			sleep 0.1
		done
		;;
	execsnoop) await "$2" PCOMM 120 ;; # its header, once its programs are attached
	esac
}

# the fork bomb under set-up $1, round $2
fb_run() {
	local f=$out/fb.$1 line
	[ "$1" = kmod ] || [ "$1" = idle ] && load_proc
	start_monitor "$([ "$1" = idle ] && echo none || echo "$1")" "$f"
	line=$("$CBP_BIN/cbp-forkbomb" "$CBP_FB_WORKERS" "$CBP_FB_SECS")
	if [ -n "$mon" ]; then
		stop "$mon"
		line="$line lines=$(grep -c . "$f") $(summary "$f.err")"
	fi
	[ "$1" = kmod ] || [ "$1" = idle ] && unload_proc
	echo "CBP fb round=$2 setup=$1 $line"
	rm -f "$f" "$f.err"
}

# named FILE: distinct storm children whose exec FILE shows with its argv
named() { grep -oE -e "$quick cnb-x-[0-9]+" "$1" | sort -u | wc -l; }

# the storm under monitor $1, round $2
storm_run() {
	local f=$out/storm.$1 b0 b1 c0=0 c1=0 s0 s1 i0 i1 line named_n=NA end=cnb-end-$2-$1
	[ "$1" = kmod ] && load_proc
	start_monitor "$1" "$f"
	[ -n "$mon" ] && c0=$(cpu_ms "$mon")
	read -r s0 i0 < <(switches)
	b0=$(busy)
	line=$("$CBP_BIN/cnb-storm" -n "$CBP_STORM" -e 1 -x "$quick")
	"$quick" "$end"
	case $1 in
	none) ;;
	*) await "$f" "$end" 300 ;;
	esac
	b1=$(busy)
	read -r s1 i1 < <(switches)
	if [ -n "$mon" ]; then
		c1=$(cpu_ms "$mon")
		stop "$mon"
		named_n=$(named "$f")
	fi
	[ "$1" = kmod ] && unload_proc
	echo "CBP storm round=$2 monitor=$1 busy_ms=$((b1 - b0)) ctxt=$((s1 - s0)) intr=$((i1 - i0)) mon_cpu_ms=$((c1 - c0)) named=$named_n $line" \
		"lines=$({ wc -l <"$f"; } 2>/dev/null || echo 0) $(summary "$f.err")"
	rm -f "$f" "$f.err"
}

# the storm read by `cnctl proc --source kmod` under strace -c: NAME CNCTL
strace_run() {
	local f=$out/strace.$1 line pid end=cnb-end-strace-$1
	load_proc
	strace -c -f -o "$f.sc" "$2" proc --source kmod >"$f" 2>"$f.err" &
	mon=$!
	await "$f.err" listening 120
	line=$("$CBP_BIN/cnb-storm" -n "$CBP_STORM" -e 1 -x "$quick")
	"$quick" "$end"
	await "$f" "$end" 300
	# SIGINT to cnctl, not to strace (which would detach and leave it).
	pid=$(pgrep -P "$mon" | head -n 1)
	kill -INT "$pid" 2>/dev/null
	wait "$mon" 2>/dev/null
	unload_proc
	echo "CBP strace cnctl=$1 named=$(named "$f") $line $(summary "$f.err")"
	sed "s/^/# cbp strace $1: /" "$f.sc"
	rm -f "$f" "$f.err" "$f.sc"
}

if [ "${CBP_LATENCY:-0}" = 1 ]; then
	echo "CBP begin latency kernel=$(uname -r) cpus=$(nproc)"
	param=/sys/module/cnbus/parameters/cbus_defer_us
	load_proc
	for d in $CBP_LAT_DEFERS; do
		if [ -w "$param" ]; then
			echo "$d" >"$param" || echo "# cbp: cbus_defer_us=$d refused"
		else
			d=none # a cnbus.ko without the parameter: once
		fi
		echo "CBP latency defer_us=$d gap_us=20000 $("$CBP_BIN/cbp-latency" "$CBP_LAT_SPARSE" 20000)"
		echo "CBP latency defer_us=$d gap_us=0 $("$CBP_BIN/cbp-latency" "$CBP_LAT_FORKS" 0)"
		[ "$d" = none ] && break
	done
	unload_proc
	echo "CBP end"
	exit 0
fi

if [ "${CBP_STRACE:-0}" = 1 ]; then
	echo "CBP begin strace kernel=$(uname -r) cpus=$(nproc)"
	[ -n "${CBP_CNCTL_BEFORE:-}" ] && strace_run before "$CBP_CNCTL_BEFORE"
	strace_run build "$CBP_CNCTL"
	echo "CBP end"
	exit 0
fi

parts=" ${CBP_PARTS:-fb storm loss} "
echo "CBP begin kernel=$(uname -r) cpus=$(nproc) hz=$hz parts=$(xargs <<<"$parts" | tr ' ' ,) forkstat=$(command -v forkstat || echo none) execsnoop=${CBP_EXECSNOOP:-none}"
setups=()
[[ $parts == *" fb "* ]] && setups=(conn kmod idle none)
monitors=()
[[ $parts == *" storm "* ]] && monitors=(none kmod)
[[ $parts == *" storm "* ]] && command -v forkstat >/dev/null && monitors+=(forkstat)
[[ $parts == *" storm "* ]] && [ -n "${CBP_EXECSNOOP:-}" ] && monitors+=(execsnoop)
for ((r = 1; r <= CBP_ROUNDS; r++)); do
	echo "CBP round=$r loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
	n=${#setups[@]}
	for ((i = 0; i < n; i++)); do
		fb_run "${setups[$(((i + r) % n))]}" "$r"
	done
	n=${#monitors[@]}
	for ((i = 0; i < n; i++)); do
		storm_run "${monitors[$(((i + r) % n))]}" "$r"
	done
	[[ $parts == *" loss "* ]] || continue
	load_proc
	echo "CBP loss round=$r $("$CBP_BIN/cbp-loss" "$CBP_LOSS" "$quick")"
	unload_proc
done
echo "CBP end"
