#!/usr/bin/env bash
# The tiers that build and install packages (package, kmod, install) leave
# this machine's dpkg database as they found it: a user's installed libcn,
# cnctl or cnbus-dkms stays installed, nothing is added. CTest runs this
# before those tiers (snapshot, a fixture's setup) and after them (compare,
# its cleanup): `dpkg -l` and /var/lib/dpkg/status must be byte for byte
# what they were. Anything else that installs or removes packages on the
# machine meanwhile (apt, another user) fails it too: it cannot tell who.
# Usage: check-dpkg-unchanged.sh snapshot|compare DIR
set -euo pipefail
. "$(dirname "$0")/../skip.sh"
mode=$1
dir=$2
status=/var/lib/dpkg/status

if ! command -v dpkg >/dev/null || [ ! -r "$status" ]; then
	skip "no dpkg database ($status)"
fi

case $mode in
snapshot)
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$status" "$dir/status"
	dpkg -l >"$dir/dpkg-l.txt"
	echo "dpkg database: $(grep -c '^Package:' "$dir/status") packages recorded in $dir"
	;;
compare)
	[ -r "$dir/status" ] || {
		echo "FAIL: no snapshot in $dir (the package_dpkg_before test makes it)"
		exit 1
	}
	dpkg -l >"$dir/dpkg-l.after.txt"
	rc=0
	diff -u "$dir/dpkg-l.txt" "$dir/dpkg-l.after.txt" || {
		echo "FAIL: dpkg -l changed (- before, + after)"
		rc=1
	}
	cmp -s "$dir/status" "$status" || {
		diff -u "$dir/status" "$status" | head -n 60 || true
		echo "FAIL: $status changed (- before, + after)"
		rc=1
	}
	[ "$rc" = 1 ] || echo "dpkg database unchanged: dpkg -l and $status as before"
	exit "$rc"
	;;
*)
	echo "usage: $0 snapshot|compare DIR" >&2
	exit 2
	;;
esac
