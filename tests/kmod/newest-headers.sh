# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# tests/kmod/newest-headers.sh - sourced by the kmod tier's scripts
# (build-matrix.sh, dkms-build.sh) to pick the kernels they build against.
#
# newest PATTERN [-rt]: the newest installed kernel whose headers match
# PATTERN, of the plain or (-rt) the PREEMPT_RT flavour.
newest() {
	local d
	# shellcheck disable=SC2086 # $1 is a glob
	for d in /lib/modules/$1/build; do
		[ -e "$d" ] || continue
		d=${d#/lib/modules/}
		echo "${d%/build}"
	done | { # grep's 1: no kernel of that flavour
		if [ "${2:-}" = -rt ]; then grep -- '-rt-'; else grep -v -- '-rt-'; fi || [ $? = 1 ]
	} | sort -V | tail -n 1
}
