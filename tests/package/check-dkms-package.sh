#!/usr/bin/env bash
# cnbus-dkms as an admin meets it: the package check-packages.sh built (the
# documented cpack -G DEB) is linted (0 errors, 0 warnings), its contents
# checked (/usr/src/cnbus-VERSION holds exactly what `make -C kmod
# dkms-tree` writes, dkms.conf included), then it is installed with dpkg -i
# in a throw-away root (throwaway-root.sh: an overlay of / whose writes go
# to a tmpfs, inside a private mount namespace), so this machine's /usr/src,
# /var/lib/dkms, /lib/modules and dpkg database are never touched. There its postinst must have built and
# installed cnbus.ko (not cnbus_test.ko) through DKMS for Debian's 6.1 and
# 6.12 kernels (vermagic, depmod finds it); dpkg --purge must remove all of
# it, leaving no file the package or DKMS made for it (the overlay's upper
# layer shows every file written).
#
# The -rt flavours' headers are hidden in the throw-away root: the plain
# 6.1 and 6.12 are what this test is about, and each kernel costs a module
# build (~15 s); tests/kmod/dkms-build.sh builds the -rt ones. So are the
# running kernel's, if it has any: the postinst must then say, in one line,
# that no module was built for it and that installing its headers fixes it.
#
# The cnbus.ko built for 6.1 is left in KO_DIR/<kernel release>/cnbus.ko:
# the vm tier boots it (run-vm-tests.sh --cnbus-ko-dir).
#
# Needs root, unshare, overlayfs, dkms and the headers; exits 77 (skipped)
# otherwise, or fails with CI=true (CI must run everything).
# Usage: check-dkms-package.sh SOURCE_DIR DEBS_DIR KO_DIR
set -euo pipefail
src=$1
debs_dir=$2
ko_dir=$3
# shellcheck source=throwaway-root.sh
. "$(dirname "$0")/throwaway-root.sh"

fail() {
	echo "FAIL: $*"
	exit 1
}
. "$(dirname "$0")/../skip.sh"
# newest PATTERN: the newest plain (not -rt) kernel whose headers match.
newest() {
	# shellcheck disable=SC2012,SC2086 # $1 is a glob
	ls -d /lib/modules/$1/build 2>/dev/null | sed 's|^/lib/modules/||; s|/build$||' |
		grep -v -- '-rt-' | sort -V | tail -n 1
}

if [ -z "${CN_IN_NAMESPACE:-}" ]; then
	why=$(troot_can_run) || skip "$why"
	for tool in dkms lintian dpkg-deb; do
		command -v "$tool" >/dev/null || skip "$tool not installed (scripts/install-deps test)"
	done
	found=("$debs_dir"/cnbus-dkms_*_all.deb)
	deb=${found[0]}
	[ -f "$deb" ] || fail "no cnbus-dkms_*_all.deb in $debs_dir (made by the package_debs test)"
	k61=$(newest '6.1.0-*-amd64')
	k612=$(newest '6.12.*-amd64')
	[ -n "$k61" ] || skip "no headers /lib/modules/6.1.0-*-amd64/build (linux-headers-amd64)"
	[ -n "$k612" ] || skip "no headers /lib/modules/6.12.*-amd64/build (linux-headers-6.12-amd64)"

	# Lintian: 0 errors and 0 warnings; info and pedantic tags are printed.
	# lintian's own status counts too; grep's 1 is only "no line left".
	lintian --info --pedantic --tag-display-limit 0 "$deb" >"$debs_dir/lintian-cnbus-dkms.raw" 2>&1 ||
		fail "lintian exited $?: $(tail -n 20 "$debs_dir/lintian-cnbus-dkms.raw")"
	grep -v '^running with root' "$debs_dir/lintian-cnbus-dkms.raw" >"$debs_dir/lintian-cnbus-dkms.txt" ||
		[ $? = 1 ]
	cat "$debs_dir/lintian-cnbus-dkms.txt"
	! grep -q '^[EW]:' "$debs_dir/lintian-cnbus-dkms.txt" || fail "lintian: errors or warnings on $deb"

	# Contents: the source tree is exactly the dkms-tree one, and the
	# package's version is dkms.conf's.
	version=$(dpkg-deb -f "$deb" Version)
	dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/kmod/dkms.conf")
	[ "$version" = "$dkms_version" ] || fail "package version $version, dkms.conf's $dkms_version"
	tree=$(mktemp -d)
	# The namespace's tmpfs goes with it; its mount point is removed here.
	trap 'rm -rf "$tree"' EXIT
	make -s -C "$src/kmod" dkms-tree DEST="$tree/want"
	(cd "$tree/want" && find . -type f | sort) >"$tree/want.txt"
	dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' |
		sed -n "s|^\./usr/src/cnbus-$version/|./|p" | sort >"$tree/got.txt"
	diff -u "$tree/want.txt" "$tree/got.txt" ||
		fail "/usr/src/cnbus-$version in the package differs from make dkms-tree (- tree, + package)"
	grep -qx './dkms.conf' "$tree/got.txt" || fail "no dkms.conf in the package"

	echo "== cnbus-dkms $version: installing in a throw-away root with the headers of $k61 and $k612"
	T0=$(date +%s)
	mkdir "$tree/root"
	CN_ROOT_DIR=$tree/root CN_DEB=$deb CN_VERSION=$version CN_KERNELS="$k61 $k612" troot_reexec "$@"
	echo "PASS: cnbus-dkms $version built cnbus.ko for $k61 and $k612 on install, purge left nothing ($(($(date +%s) - T0)) s)"
	exit 0
fi

# In the private mount namespace: the throw-away root.
t=$CN_ROOT_DIR
troot_mount "$t"
r=$TROOT
troot_purge_installed cnbus-dkms
# Only the plain flavours' headers (see the top).
for d in "$r"/lib/modules/*-rt-*; do
	[ ! -e "$d" ] || rm -rf "$d"
done
# The running kernel without its headers, the usual first-time mistake
# (this machine's kernel has none anyway): the postinst must say so.
running=$(uname -r)
[ ! -e "$r/lib/modules/$running/build" ] || rm -rf "$r/lib/modules/$running/build"

# dkms's common.postinst builds for every kernel in /lib/modules when the
# running one is not installed (this machine, a container, CI), else for
# the running and the newest kernel only: then ask for all, so both are
# built wherever the test runs.
if [ -d "/lib/modules/$(uname -r)" ]; then
	echo "note: running kernel $(uname -r) is installed: autoinstall_all_kernels=1 in the throw-away root"
	echo autoinstall_all_kernels=1 >>"$r/etc/dkms/framework.conf"
fi
cp "$CN_DEB" "$r/tmp/cnbus-dkms.deb"
if ! in_root dpkg -i /tmp/cnbus-dkms.deb >"$t/install.log" 2>&1; then
	cat "$t/install.log"
	find "$r/var/lib/dkms/cnbus" -name make.log -exec cat {} + 2>/dev/null || true
	fail "dpkg -i cnbus-dkms"
fi
cat "$t/install.log"
rm "$r/tmp/cnbus-dkms.deb"
want="cnbus-dkms: no cnbus module was built for the running kernel $running: its headers are missing; apt install linux-headers-$running builds it"
grep -qFx "$want" "$t/install.log" || fail "the postinst did not say: $want"
echo "ok: the postinst said that $running has no headers, and what fixes it"

# Built and installed for both kernels, where modprobe finds it; the test
# module is not installed on an admin's machine.
for k in $CN_KERNELS; do
	status=$(in_root dkms status -m cnbus -v "$CN_VERSION" -k "$k")
	echo "$status"
	echo "$status" | grep -q ': installed' || fail "dkms status for $k: '$status'"
	ko=$(in_root modinfo -k "$k" -F filename cnbus) || fail "modinfo -k $k cnbus: not found by depmod"
	case $ko in
	/lib/modules/"$k"/updates/dkms/cnbus.ko*) ;;
	*) fail "cnbus for $k is $ko, not DKMS's" ;;
	esac
	! in_root modinfo -k "$k" -F filename cnbus_test 2>/dev/null || fail "cnbus_test.ko installed for $k"
	mkdir -p "$t/ko/$k"
	case $ko in
	*.xz) xz -dc "$r$ko" >"$t/ko/$k/cnbus.ko" ;;
	*.zst) zstd -qdc "$r$ko" >"$t/ko/$k/cnbus.ko" ;;
	*.gz) gzip -dc "$r$ko" >"$t/ko/$k/cnbus.ko" ;;
	*) cp "$r$ko" "$t/ko/$k/cnbus.ko" ;;
	esac
	vermagic=$(modinfo -F vermagic "$t/ko/$k/cnbus.ko")
	case $vermagic in
	"$k "*) ;;
	*) fail "cnbus.ko for $k has vermagic '$vermagic'" ;;
	esac
	kover=$(modinfo -F version "$t/ko/$k/cnbus.ko")
	[ "$kover" = "$CN_VERSION" ] || fail "cnbus.ko for $k is version $kover"
	echo "cnbus.ko for $k: $ko, vermagic $vermagic"
done
# The 6.1 module, for the vm tier.
# shellcheck disable=SC2086 # the list of kernels
set -- $CN_KERNELS
rm -rf "${ko_dir:?}"
mkdir -p "$ko_dir/$1"
cp "$t/ko/$1/cnbus.ko" "$ko_dir/$1/cnbus.ko"

# Purge: DKMS forgets the module, every file goes.
in_root dpkg --purge cnbus-dkms >"$t/purge.log" 2>&1 || {
	cat "$t/purge.log"
	fail "dpkg --purge cnbus-dkms"
}
cat "$t/purge.log"
# The test's own change to framework.conf (above) undone before the scan.
cp /etc/dkms/framework.conf "$r/etc/dkms/framework.conf"
[ -z "$(in_root dkms status -m cnbus)" ] || fail "dkms still knows cnbus: $(in_root dkms status -m cnbus)"
for k in $CN_KERNELS; do
	! in_root modinfo -k "$k" -F filename cnbus 2>/dev/null || fail "cnbus still found for $k after purge"
done
# What is left in the upper layer that the lower (this machine) lacks or
# has otherwise: a file or directory left behind. Not counted: dpkg's own
# database and log, DKMS's module signing key (made at the first build by
# dkms itself, kept for every later module as Debian's dkms does), the
# headers this test hid, and depmod's indexes (modules.dep, modules.alias,
# ...): for a kernel whose image is not installed (its headers are, its
# image is in tests/vm/kernel-cache.sh's cache) DKMS's depmod writes them
# where there were none, and the purge's depmod rewrites them, it does not
# remove them (that cnbus is gone from them, modinfo checks above).
left=$(troot_left var/lib/dpkg var/log tmp var/lib/dkms/mok.key var/lib/dkms/mok.pub |
	grep -E -v -e '^removed (/usr)?/lib/modules/[^/]*-rt-' -e "^removed (/usr)?/lib/modules/$running/build\$" \
		-e '^file (/usr)?/lib/modules/[^/]+/modules\.[a-z.]+$' || [ $? = 1 ])
[ -z "$left" ] || fail "left after purge:
$left"
echo "purged: no file left (upper layer checked against /)"
