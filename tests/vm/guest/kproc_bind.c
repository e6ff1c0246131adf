// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kproc_bind.c - guest test of whose privilege cnbus.ko's bind hook looks
 * at when a socket joins cnbus_proc.ko's group: the joining task's, as the
 * kernel's own netlink code does (kmod/cnbus_main.c, cnbus_unit_bind), not
 * the credentials the socket was opened with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <libcn.h>
#include <libcn/cnbus_proc.h>
#include <libcn/kmod.h>

#include "vmtest.h"

static int drop_to_nobody(void)
{
	return setgroups(0, NULL) || setgid(65534) || setuid(65534) ? -1 : 0;
}

/* Read s until the exit record of pid comes (10 s): 0, or -1. */
static int exit_seen(struct cn_sock *s, pid_t pid)
{
	for (int waited = 0; waited < 10000;) {
		struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
		struct cn_bus_proc_event ev;
		int r = cn_bus_proc_recv(s, &ev, CN_RECV_DONTWAIT);

		if (r == 0 && ev.what == CN_PROC_EXIT && ev.pid == pid)
			return 0;
		if (r == -EAGAIN) {
			if (poll(&p, 1, 1000) == 0)
				waited += 1000;
		} else if (r && r != -ENOBUFS) {
			return -1;
		}
	}
	return -1;
}

/* The child of kproc_join_then_drop, as root; its exit status says what
 * failed (0: nothing). */
static int joined_then_dropped(void)
{
	struct cn_sock *joined = open_sock(0, 1 << 20), *later = open_sock(0, 0);
	pid_t p;

	if (!joined || !later || cn_bus_proc_listen(joined))
		return 20;
	if (drop_to_nobody())
		return 21;
	/* Opened by root, joined by nobody: refused. */
	if (cn_join(later, CNBUS_PROC_IDX) != -EPERM)
		return 22;
	/* Joined by root, read by nobody: the membership stays. */
	p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0 || waitpid(p, NULL, 0) != p)
		return 23;
	if (exit_seen(joined, p))
		return 24;
	cn_close(joined);
	cn_close(later);
	return 0;
}

/*
 * kproc_join_then_drop: the task that joins decides, as for the kernel's
 * own groups (netlink_bind and NETLINK_ADD_MEMBERSHIP check the caller's
 * CAP_NET_ADMIN; the connector's and generic netlink's bind hooks too):
 *   - a daemon that opens a socket and joins as root, then drops to nobody,
 *     keeps receiving the records;
 *   - a socket opened by root and not joined, in a task that dropped to
 *     nobody, cannot join;
 *   - a socket opened by nobody, passed to root (SCM_RIGHTS), can be
 *     joined by root: the opener's credentials are not looked at.
 */
int t_kproc_join_then_drop(void)
{
	int rc = 0, status, sp[2] = { -1, -1 }, fd = -1, r, group = CNBUS_PROC_IDX;
	pid_t pid;

	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0 || r == -EEXIST, "load cnbus_proc.ko: %s", strerror(-r));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(joined_then_dropped());
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "joined as root, dropped to nobody: exit %d (22: a join as nobody was not refused, "
	      "24: the root-made membership received nothing)",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) == 0, "socketpair");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, b = 'x';
		struct iovec iov = { .iov_base = &b, .iov_len = 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		int nfd;

		if (drop_to_nobody())
			_exit(30);
		nfd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, unit);
		if (nfd < 0)
			_exit(31);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &nfd, sizeof(int));
		_exit(sendmsg(sp[1], &m, 0) == 1 ? 0 : 32);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child that opens as nobody: exit %d",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	{
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, b;
		struct iovec iov = { .iov_base = &b, .iov_len = 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c;

		CHECK(recvmsg(sp[0], &m, 0) == 1, "recvmsg");
		c = CMSG_FIRSTHDR(&m);
		CHECK(c && c->cmsg_type == SCM_RIGHTS, "no descriptor passed");
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	}
	CHECK(setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) == 0,
	      "root joining a socket nobody opened: %s", strerror(errno));
	info("joined as root then dropped: kept; opened as root, joined as nobody: EPERM; opened "
	     "as nobody, joined as root: allowed");
out:
	if (fd >= 0)
		close(fd);
	if (sp[0] >= 0)
		close(sp[0]), close(sp[1]);
	mod_unload("cnbus_proc");
	return rc;
}
