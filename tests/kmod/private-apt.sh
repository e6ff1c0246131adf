# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# tests/kmod/private-apt.sh - the private apt configuration through which
# the kmod and vm tiers take packages of a Debian suite the machine does not
# use (unstable's newest kernel): its own sources list, lists, cache and an
# empty status under a directory of the caller's cache, Debian's archive
# keyring; the machine's apt sources are left alone and nothing is
# installed (apt-get download, apt-cache only). Sourced by
# tests/kmod/kernel-trees.sh (the build trees) and tests/vm/kernel-cache.sh
# (the images), which share one such directory, so one update serves both.
#
# private_apt DIR SUITE: set up DIR/apt for SUITE and update its lists;
# sets the array apt_opts, to give apt-get and apt-cache. Status 1 (the
# update's log printed on standard error) when the update fails.
private_apt() {
	local dir=$1/apt suite=$2 keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" >"$dir/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o Dir::State::status=/dev/null -o APT::Architecture=amd64 -o APT::Architectures::=amd64
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root -q
		# A mirror that serves a frozen copy of the suite serves an expired
		# Release file; its signature is still checked against the keyring.
		-o Acquire::Check-Valid-Until=false)
	apt-get "${apt_opts[@]}" update >"$dir/update.log" 2>&1 || {
		cat "$dir/update.log" >&2
		return 1
	}
}
