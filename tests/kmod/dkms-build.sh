#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# dkms-build.sh - kmod/dkms.conf works: "dkms add", "dkms build" and
# "dkms remove" of kmod for the Debian headers' kernel (the newest
# /lib/modules/6.1.0-*-amd64/build, or KVER), all in a scratch tree
# (--sourcetree, --dkmstree, a scratch signing key) that is removed after.
# The real system is not touched: no /usr/src, no /var/lib/dkms, no install.
#
# Usage: dkms-build.sh [SRC]   (SRC: the libcn source tree, default ../..)
# Exit: 0 built and removed, 1 failure, 77 dkms or the headers are missing
#       (with CI=true a missing tool is a failure: CI must run everything).
set -eu

SRC=$(cd "${1:-$(dirname "$0")/../..}" && pwd)

skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: cannot run in CI: $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
fail() { echo "FAIL: $*"; exit 1; }

command -v dkms >/dev/null || skip "dkms not installed (Debian package dkms)"
command -v make >/dev/null || skip "make not installed"
if [ -z "${KVER:-}" ]; then
	KVER=$(ls -d /lib/modules/6.1.0-*-amd64/build 2>/dev/null | sort -V | tail -n 1 |
		sed 's|^/lib/modules/||; s|/build$||')
fi
[ -n "$KVER" ] && [ -d "/lib/modules/$KVER/build" ] ||
	skip "no kernel headers /lib/modules/${KVER:-6.1.0-*-amd64}/build (linux-headers-amd64)"

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
SYS_BEFORE=$(ls -A /var/lib/dkms /usr/src 2>/dev/null | sort | tr '\n' ' ')

echo "== make dkms-tree DEST=$S/src/$NAME-$VERSION"
make -s -C "$SRC/kmod" dkms-tree DEST="$S/src/$NAME-$VERSION" || fail "make dkms-tree"
ls "$S/src/$NAME-$VERSION" "$S/src/$NAME-$VERSION/include/libcn"
# The tree must be sources only (no objects or generated files of a build in kmod/).
if ls "$S/src/$NAME-$VERSION" | grep -E '\.(o|ko|mod|mod\.c|cmd|symvers|order)$'; then
	fail "build products copied into the DKMS source tree"
fi

echo "== dkms add / build -k $KVER / status / remove (scratch trees)"
# shellcheck disable=SC2086
dkms add -m "$NAME" -v "$VERSION" $D || fail "dkms add"
# shellcheck disable=SC2086
if ! dkms build -m "$NAME" -v "$VERSION" -k "$KVER" $D; then
	find "$S/dkms" -name make.log -exec cat {} + 2>/dev/null || true
	fail "dkms build"
fi
LOG=$(find "$S/dkms/$NAME/$VERSION/$KVER" -name make.log | head -n 1)
[ -n "$LOG" ] || fail "no make.log from dkms build"
if grep -E "warning:|error:" "$LOG"; then
	fail "warnings in the dkms build"
fi
# shellcheck disable=SC2086
STATUS=$(dkms status -m "$NAME" -v "$VERSION" -k "$KVER" $D)
echo "$STATUS"
echo "$STATUS" | grep -q "built" || fail "dkms status does not say built"
for m in cnbus cnbus_test; do
	ko=$(ls "$S/dkms/$NAME/$VERSION/$KVER"/*/module/$m.ko* 2>/dev/null | head -n 1)
	[ -n "$ko" ] || fail "$m.ko not built"
	case "$ko" in
	*.xz) xz -dc "$ko" >"$S/$m.ko" ;;
	*.zst) zstd -qdc "$ko" >"$S/$m.ko" ;;
	*.gz) gzip -dc "$ko" >"$S/$m.ko" ;;
	*) cp "$ko" "$S/$m.ko" ;;
	esac
	vermagic=$(modinfo -F vermagic "$S/$m.ko")
	echo "$m: $(basename "$ko"), vermagic $vermagic, version $(modinfo -F version "$S/$m.ko")"
	case "$vermagic" in
	"$KVER "*) ;;
	*) fail "$m.ko vermagic '$vermagic' is not $KVER" ;;
	esac
done
# shellcheck disable=SC2086
dkms remove -m "$NAME" -v "$VERSION" --all $D || fail "dkms remove"
[ ! -e "$S/dkms/$NAME/$VERSION" ] || fail "dkms remove left $S/dkms/$NAME/$VERSION"

SYS_AFTER=$(ls -A /var/lib/dkms /usr/src 2>/dev/null | sort | tr '\n' ' ')
[ "$SYS_BEFORE" = "$SYS_AFTER" ] || fail "/var/lib/dkms or /usr/src changed: '$SYS_BEFORE' -> '$SYS_AFTER'"
echo "PASS: dkms add/build/remove of $NAME/$VERSION for $KVER"
