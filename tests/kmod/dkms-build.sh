#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# dkms-build.sh - kmod/dkms.conf works: "dkms add", "dkms build" and
# "dkms remove" of kmod for each Debian headers' kernel (the newest
# /lib/modules/6.1.0-*-amd64 and 6.12.*-amd64, or the kernels listed in
# KVER), all in a scratch tree (--sourcetree, --dkmstree, a scratch signing
# key) that is removed after. The real system is not touched: no /usr/src,
# no /var/lib/dkms, no install.
#
# The -rt flavours' headers are used too when installed. By default only
# cnbus.ko is built (cnbus_test.ko must not be installed on users'
# machines); CNBUS_DKMS_TEST=1 adds it, checked on the first kernel.
#
# Usage: dkms-build.sh [SRC]   (SRC: the libcn source tree, default ../..)
# Exit: 0 built and removed, 1 failure, 77 dkms or the headers are missing
#       (with CI=true a missing tool is a failure: CI must run everything).
set -euo pipefail
. "$(dirname "$0")/../skip.sh"

SRC=$(cd "${1:-$(dirname "$0")/../..}" && pwd)

fail() { echo "FAIL: $*"; exit 1; }

command -v dkms >/dev/null || skip "dkms not installed (Debian package dkms)"
command -v make >/dev/null || skip "make not installed"
# newest PATTERN [-rt]: tests/kmod/newest-headers.sh.
. "$(dirname "$0")/newest-headers.sh"
if [ -z "${KVER:-}" ]; then
	K61=$(newest '6.1.0-*-amd64')
	K612=$(newest '6.12.*-amd64')
	[ -n "$K61" ] || skip "no headers /lib/modules/6.1.0-*-amd64/build (linux-headers-amd64)"
	[ -n "$K612" ] ||
		skip "no headers /lib/modules/6.12.*-amd64/build (linux-headers-6.12.*+deb12-amd64)"
	# The -rt flavours too, when their headers are installed.
	KVER="$K61 $K612 $(newest '6.1.0-*-amd64' -rt) $(newest '6.12.*-amd64' -rt)"
fi
for k in $KVER; do
	[ -d "/lib/modules/$k/build" ] || skip "no kernel headers /lib/modules/$k/build"
done

NAME=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$SRC/kmod/dkms.conf")
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$SRC/kmod/dkms.conf")
[ -n "$NAME" ] && [ -n "$VERSION" ] || fail "no PACKAGE_NAME/PACKAGE_VERSION in kmod/dkms.conf"
grep -q "define CNBUS_VERSION *\"$VERSION\"" "$SRC/kmod/cnbus_internal.h" ||
	fail "dkms.conf PACKAGE_VERSION $VERSION differs from CNBUS_VERSION in cnbus_internal.h"

S=$(mktemp -d /tmp/cnbus-dkms.XXXXXX)
trap 'rm -rf "$S"' EXIT
# Signing (the kernel has CONFIG_MODULE_SIG): a scratch key, not /var/lib/dkms.
export mok_signing_key="$S/mok.key" mok_certificate="$S/mok.pub"
D="--sourcetree $S/src --dkmstree $S/dkms"
mkdir -p "$S/src" "$S/dkms"
# sys_state: what DKMS keeps system-wide (a directory may not exist).
sys_state() {
	local d
	for d in /var/lib/dkms /usr/src; do
		if [ -d "$d" ]; then ls -A "$d"; fi
	done | sort | tr '\n' ' '
}
SYS_BEFORE=$(sys_state)

echo "== make dkms-tree DEST=$S/src/$NAME-$VERSION"
make -s -C "$SRC/kmod" dkms-tree DEST="$S/src/$NAME-$VERSION" || fail "make dkms-tree"
ls "$S/src/$NAME-$VERSION" "$S/src/$NAME-$VERSION/include/libcn"
# The tree must be sources only (no objects or generated files of a build in kmod/).
tree=$(ls "$S/src/$NAME-$VERSION")
if grep -E '\.(o|ko|mod|mod\.c|cmd|symvers|order)$' <<<"$tree"; then
	fail "build products copied into the DKMS source tree"
fi

# unpack KO DEST: a built module, decompressed.
unpack() {
	case "$1" in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# build KVER WANT NOTWANT: dkms build for KVER; the modules WANT are built
# with KVER's vermagic, those in NOTWANT are not.
build() {
	kver=$1
	echo "== dkms build -k $kver (CNBUS_DKMS_TEST=${CNBUS_DKMS_TEST:-0})"
	# A rebuild with the other module set: "dkms unbuild" would look for
	# the new set's modules, so remove the scratch build as it does.
	rm -rf "${S:?}/dkms/$NAME/$VERSION/$kver"
	# shellcheck disable=SC2086
	if ! dkms build -m "$NAME" -v "$VERSION" -k "$kver" $D; then
		find "$S/dkms" -name make.log -exec cat {} + 2>/dev/null || true
		fail "dkms build for $kver"
	fi
	LOG=$(find "$S/dkms/$NAME/$VERSION/$kver" -name make.log | head -n 1)
	[ -n "$LOG" ] || fail "no make.log from dkms build for $kver"
	if grep -E "warning:|error:" "$LOG"; then
		fail "warnings in the dkms build for $kver"
	fi
	# shellcheck disable=SC2086
	STATUS=$(dkms status -m "$NAME" -v "$VERSION" -k "$kver" $D)
	echo "$STATUS"
	grep -q "built" <<<"$STATUS" || fail "dkms status does not say built for $kver"
	for m in $2; do
		ko=
		for f in "$S/dkms/$NAME/$VERSION/$kver"/*/module/$m.ko*; do
			[ -e "$f" ] && ko=$f && break
		done
		[ -n "$ko" ] || fail "$m.ko not built for $kver"
		unpack "$ko" "$S/$m.ko"
		vermagic=$(modinfo -F vermagic "$S/$m.ko")
		echo "$m: $(basename "$ko"), vermagic $vermagic, version $(modinfo -F version "$S/$m.ko")"
		case "$vermagic" in
		"$kver "*) ;;
		*) fail "$m.ko vermagic '$vermagic' is not $kver" ;;
		esac
	done
	for m in $3; do
		if ls "$S/dkms/$NAME/$VERSION/$kver"/*/module/$m.ko* 2>/dev/null; then
			fail "$m.ko built for $kver without CNBUS_DKMS_TEST=1"
		fi
	done
}

echo "== dkms add (scratch trees)"
# shellcheck disable=SC2086
dkms add -m "$NAME" -v "$VERSION" $D || fail "dkms add"
# The opt-in first: the default builds replace it, and "dkms remove"
# (default set) then finds every kernel built.
export CNBUS_DKMS_TEST=1
# shellcheck disable=SC2086
set -- $KVER
build "$1" "cnbus cnbus_proc cnbus_test" ""
CNBUS_DKMS_TEST=0
for k in $KVER; do
	build "$k" "cnbus cnbus_proc" cnbus_test
done
# shellcheck disable=SC2086
dkms remove -m "$NAME" -v "$VERSION" --all $D || fail "dkms remove"
[ ! -e "$S/dkms/$NAME/$VERSION" ] || fail "dkms remove left $S/dkms/$NAME/$VERSION"

SYS_AFTER=$(sys_state)
[ "$SYS_BEFORE" = "$SYS_AFTER" ] || fail "/var/lib/dkms or /usr/src changed: '$SYS_BEFORE' -> '$SYS_AFTER'"
echo "PASS: dkms add/build/remove of $NAME/$VERSION for $KVER"
