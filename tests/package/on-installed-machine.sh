#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run COMMAND as on a machine where libcn's own packages are installed (a
# developer who uses it), without installing them here: in a throw-away
# root (throwaway-root.sh) the packages of DEBS_DIR are installed, and
# COMMAND runs chrooted in it, with this machine's tools, headers and
# source tree underneath. How the package tier was shown to pass on such a
# machine (a nested throw-away root: overlay on overlay), e.g.
#   tests/package/on-installed-machine.sh build/tests/package/debs \
#       sh -c 'cd build && ctest -L package'
# Needs root, unshare and overlayfs.
# Usage: on-installed-machine.sh DEBS_DIR COMMAND...
set -euo pipefail
# shellcheck source=throwaway-root.sh
. "$(dirname "$0")/throwaway-root.sh"
if [ -z "${CN_IN_NAMESPACE:-}" ]; then
	why=$(troot_can_run) || {
		echo "on-installed-machine: $why" >&2
		exit 1
	}
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	CN_ROOT_DIR=$dir troot_reexec "$(readlink -f "$1")" "${@:2}"
	exit
fi
debs=$1
shift
troot_mount "$CN_ROOT_DIR"
cp "$debs"/*.deb "$TROOT/tmp/"
in_root sh -c 'dpkg -i /tmp/*.deb && rm /tmp/*.deb' >"$CN_ROOT_DIR/install.log" 2>&1 || {
	cat "$CN_ROOT_DIR/install.log"
	exit 1
}
echo "installed in the throw-away root: $(in_root dpkg-query -W -f '${Package} ' libcn0 libcn-dev cnctl cnbus-dkms 2>/dev/null)"
# The command's own namespaces and throw-away roots start from here.
env -u CN_IN_NAMESPACE -u CN_ROOT_DIR chroot "$TROOT" sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@"
