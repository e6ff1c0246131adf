#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-layers.sh - the files of cnbus.ko form layers, not a circle: each
# calls only functions defined in itself or in the files before it in
# LAYERS (the order kmod/cnbus_internal.h gives). A call to a function of a
# later file fails the check.
#
# Usage: check-layers.sh [SRC]   (SRC: the libcn source tree, default ../..)
# Exit: 0 layered, 1 a call goes up a layer.
set -euo pipefail

SRC=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
LAYERS="cnbus_params.c cnbus_dev.c cnbus_notify.c cnbus_core.c cnbus_cbus.c cnbus_genl.c cnbus_main.c"

# Every kmod file of cnbus.ko is in LAYERS (a new file must take a place).
for f in $(sed -n 's/^cnbus-y := //p' "$SRC/kmod/Kbuild" | sed 's/\.o\b/.c/g'); do
	case " $LAYERS " in *" $f "*) ;; *)
		echo "FAIL: $f is in kmod/Kbuild but not in LAYERS"
		exit 1
		;;
	esac
done

# defs FILE: the functions FILE defines (a line starting with a type, then
# name and '(' ; static or not).
defs() {
	# grep's 1: a file that defines none
	{ grep -E '^[a-z][a-zA-Z0-9_ *]*[ *]cnbus_[a-z0-9_]+\(' "$SRC/kmod/$1" || [ $? = 1 ]; } |
		sed -E 's/^.*[ *](cnbus_[a-z0-9_]+)\(.*/\1/' | sort -u
}

rc=0
i=0
for f in $LAYERS; do
	i=$((i + 1))
	j=0
	for g in $LAYERS; do
		j=$((j + 1))
		[ $j -gt $i ] || continue
		# Calls in f of functions g defines (g above f).
		for fn in $(defs "$g"); do
			if grep -nE "\\b$fn\\(" "$SRC/kmod/$f" | grep -v "^[0-9]*:[a-z].*[ *]$fn(" >/dev/null; then
				echo "not ok - $f calls $fn() of $g, a layer above it"
				rc=1
			fi
		done
	done
done
[ $rc = 0 ] && echo "ok - kmod layers: $LAYERS (each calls only those before it)"
exit $rc
