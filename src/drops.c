/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* drops.c - cn_drops: how many datagrams the kernel dropped for a socket
 * whose receive buffer was full, from the socket's own counter (sk_drops).
 * Netlink reports an overrun once (ENOBUFS) until the reader empties the
 * queue, and drops everything meanwhile; this counts every one of them.
 * Socket layer: needs nothing above it. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <asm/socket.h>
#include <linux/sock_diag.h>

#include "internal.h"

/* Its number differs between architectures (asm/socket.h): only the
 * headers know it. */
#ifndef SO_MEMINFO
#error "SO_MEMINFO missing: libcn needs the kernel's headers of Linux 4.12 or newer"
#endif

/* /proc/net/netlink, for kernels without SO_MEMINFO (before 4.12: older
 * than those libcn supports, kept for those still run; docs/INSTALL.md,
 * "Kernels"): one line per netlink socket of the reader's network namespace, found by
 * its inode. Linear in the sockets of the machine, and a socket created or
 * closed during the read can make the kernel's walk (by position) skip a
 * line: -ENOENT then. */
static int drops_from_proc(const struct cn_sock *s, uint64_t *drops)
{
	char line[256];
	struct stat st;
	FILE *f;
	int r = -ENOENT;

	if (fstat(s->fd, &st) < 0)
		return cn_fail(errno);
	/* net/netlink/af_netlink.c, netlink_seq_show: sk Eth Pid Groups
	 * Rmem Wmem Dump Locks Drops Inode. */
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

int cn_drops(const struct cn_sock *s, uint64_t *drops)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);

	if (!s || !drops)
		return cn_fail(EINVAL);
	/* The socket's own counter, in one system call whatever else is
	 * open (net/core/sock.c, sk_get_meminfo: SK_MEMINFO_DROPS is
	 * sk_drops, what /proc/net/netlink shows). */
	if (getsockopt(s->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0) {
		if (len > SK_MEMINFO_DROPS * sizeof(mem[0])) {
			*drops = mem[SK_MEMINFO_DROPS];
			return 0;
		}
	} else if (errno != ENOPROTOOPT) {
		return cn_fail(errno);
	}
	/* No SO_MEMINFO (a kernel before 4.12), or no drops in it. */
	return drops_from_proc(s, drops);
}
