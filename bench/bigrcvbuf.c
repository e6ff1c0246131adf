/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bigrcvbuf.c - libcnb-bigrcvbuf.so, an LD_PRELOAD shim for bench/proc-cost:
 * every netlink socket the program opens gets a receive buffer of
 * $CNB_RCVBUF bytes (SO_RCVBUFFORCE, root), so that a program without a
 * buffer option (forkstat) rides out the same storm as `cnctl proc
 * --rcvbuf`, and the cost comparison is not skewed by one side's losses.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);
	const char *env = getenv("CNB_RCVBUF");
	int fd;

	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	fd = real(domain, type, protocol);
	if (fd >= 0 && domain == AF_NETLINK && env) {
		int size = atoi(env);

		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	}
	return fd;
}
