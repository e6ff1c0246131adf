# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# tests/package/throwaway-root.sh - the package tier's throw-away root: an
# overlay of / whose writes go to a tmpfs, in a private mount namespace.
# dpkg, its maintainer scripts and DKMS run there as on a real machine
# (this machine's packages, headers and tools underneath), and nothing of
# this machine changes: the namespace, its tmpfs and every write go when
# the script ends. Sourced (bash) by check-packages.sh and
# check-dkms-package.sh.
#
#   troot_can_run            status 1 (with a reason on stdout) when the
#                            root cannot be made here (not root, no
#                            unshare, no overlayfs)
#   troot_reexec ARGS...     run the calling script again, with ARGS, in a
#                            new private mount namespace (CN_IN_NAMESPACE=1)
#   troot_mount DIR          in that namespace: mount the root at DIR/root
#                            (writes in DIR/upper); sets TROOT, TROOT_UPPER
#   troot_bind DIR...        make this machine's DIR the root's DIR (files
#                            written there stay: the caller's scratch dirs)
#   in_root CMD...           run CMD in the root (chroot)
#   troot_purge_installed PKG...
#                            purge in the root whichever of PKG this machine
#                            has installed (a developer's own libcn): the
#                            test starts from a root without them, and what
#                            their purge removed is not counted by
#                            troot_left
#   troot_left PATH...       print what the upper layer holds that this
#                            machine does not (a file or directory left
#                            behind, a file changed or removed), but under
#                            PATH (relative to /, e.g. var/lib/dpkg), and
#                            but what troot_purge_installed left

troot_can_run() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "needs root"
		return 1
	fi
	if ! command -v unshare >/dev/null; then
		echo "unshare not installed"
		return 1
	fi
	if ! grep -qw overlay /proc/filesystems && ! modprobe overlay 2>/dev/null; then
		echo "no overlayfs for the throw-away root"
		return 1
	fi
}

troot_reexec() {
	CN_IN_NAMESPACE=1 unshare --mount --propagation private "$0" "$@"
}

troot_mount() {
	mount -t tmpfs cn-troot "$1"
	mkdir "$1/upper" "$1/work" "$1/root"
	mount -t overlay cn-troot -o "lowerdir=/,upperdir=$1/upper,workdir=$1/work" "$1/root"
	TROOT=$1/root
	TROOT_UPPER=$1/upper
	TROOT_BEFORE=$1/left-before
	: >"$TROOT_BEFORE"
	local fs
	for fs in proc sys dev; do
		mount --rbind "/$fs" "$TROOT/$fs"
	done
}

troot_bind() {
	local d
	for d in "$@"; do
		mkdir -p "$TROOT$d"
		mount --bind "$d" "$TROOT$d"
	done
}

in_root() {
	chroot "$TROOT" "$@"
}

troot_purge_installed() {
	local installed=() p
	for p in "$@"; do
		if dpkg-query -W -f '${db:Status-Status}\n' "$p" 2>/dev/null | grep -qvx not-installed; then
			installed+=("$p")
		fi
	done
	[ ${#installed[@]} -gt 0 ] || return 0
	echo "note: this machine has ${installed[*]} installed: purged in the throw-away root first"
	# --force-depends: the machine's own programs that need them are not
	# this test's business.
	in_root dpkg --purge --force-depends "${installed[@]}" >/dev/null
	troot_upper_diff >"$TROOT_BEFORE"
}

troot_left() {
	local prune=() p
	for p in "$@"; do
		prune+=(-path "./$p" -o)
	done
	# grep's 1 is only "nothing left"; find's or grep's error fails.
	troot_upper_diff "${prune[@]}" | grep -vxF -f "$TROOT_BEFORE" || [ $? = 1 ]
}

# troot_upper_diff FIND_PRUNE_ARGS...: troot_left's list, before what
# troot_purge_installed left is taken out.
troot_upper_diff() {
	local prune=("$@")
	(
		cd "$TROOT_UPPER"
		find . -mindepth 1 \( "${prune[@]}" -false \) -prune -o -print | while read -r f; do
			p=${f#.}
			if [ -d "$f" ]; then
				[ -d "$p" ] || echo "directory $p"
			elif [ -c "$f" ] && [ ! -e "$p" ]; then
				: # a whiteout of something this machine lacks
			elif [ -c "$f" ]; then
				echo "removed $p"
			elif [ ! -e "$p" ] || ! cmp -s "$f" "$p"; then
				echo "file $p"
			fi
		done
	)
}
