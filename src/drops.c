/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* drops.c - cn_drops: how many datagrams the kernel dropped for a socket
 * whose receive buffer was full, from the socket's own counter (sk_drops,
 * shown by /proc/net/netlink). Netlink reports an overrun once (ENOBUFS)
 * until the reader empties the queue, and drops everything meanwhile; this
 * counts every one of them. Socket layer: needs nothing above it. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

int cn_drops(const struct cn_sock *s, uint64_t *drops)
{
	char line[256];
	struct stat st;
	FILE *f;
	int r = -ENOENT;

	if (!s || !drops)
		return cn_fail(EINVAL);
	if (fstat(s->fd, &st) < 0)
		return cn_fail(errno);
	/* net/netlink/af_netlink.c, netlink_seq_show: sk Eth Pid Groups
	 * Rmem Wmem Dump Locks Drops Inode, one socket a line; the inode
	 * names ours. */
	f = fopen("/proc/net/netlink", "re");
	if (!f)
		return cn_fail(errno);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long d, ino;

		if (sscanf(line, "%*s %*d %*u %*x %*d %*d %*d %*d %llu %llu", &d, &ino) == 2 &&
		    ino == (unsigned long long)st.st_ino) {
			*drops = d;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r < 0 ? cn_fail(-r) : 0;
}
