/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host_util.c - helpers for tests against the running kernel's connector. */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "host_util.h"

static void skip(const char *why)
{
	const char *ci = getenv("CI");

	if (ci && strcmp(ci, "true") == 0) {
		fprintf(stderr, "FAIL: cannot run in CI: %s\n", why);
		exit(1);
	}
	fprintf(stderr, "SKIP: %s\n", why);
	exit(SKIP_EXIT);
}

void host_require_proc_connector(void)
{
	struct cn_sock *s;
	int r;

	if (geteuid() != 0)
		skip("needs root");
	s = cn_open(NETLINK_CONNECTOR, NULL);
	if (!s)
		skip("no NETLINK_CONNECTOR in this kernel");
	r = cn_proc_listen(s, 0, 2000);
	cn_close(s);
	if (r < 0) {
		fprintf(stderr, "proc listen: %s\n", strerror(-r));
		skip("the kernel's proc connector does not answer");
	}
}

/*
 * What the tests allocated last (host_open()'s sockets, and what a test
 * passes to host_keep()) stays reachable from here. A child forked by
 * host_spawn() or fork() exits with its parent's allocations in its copy of
 * the heap; under valgrind --leak-check=full --error-exitcode=1 (CI) what only
 * a stack frame pointed to counts as lost in the child, and valgrind would
 * replace the child's exit status, which the tests assert, by 1. Leaks inside
 * libcn (what cn_close() or a _free() call fails to free) are still reported
 * in the parent.
 */
const void *host_kept[32]; /* not static: a write-only static would be optimised away */
static unsigned int kept_next;

void host_keep(const void *p)
{
	host_kept[kept_next++ % 32] = p;
}

struct cn_sock *host_open(int rcvbuf)
{
	struct cn_open_opts o = { .sz = sizeof(o), .rcvbuf = rcvbuf };
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, &o);

	if (!s) {
		fprintf(stderr, "cn_open: %s\n", strerror(errno));
		abort();
	}
	host_keep(s);
	return s;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int host_wait_event(struct cn_sock *s, uint32_t what, pid_t tgid, int timeout_ms,
		    struct cn_proc_event *ev)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		int r = cn_proc_recv(s, ev, CN_RECV_DONTWAIT);

		if (r == 0) {
			if ((uint32_t)ev->what == what && ev->tgid == tgid)
				return 0;
			continue;
		}
		if (r == -ENOBUFS) {
			/* Another process's storm may overrun us; the awaited
			 * event may still come, else the wait times out. */
			fprintf(stderr, "# overrun while waiting for an event\n");
			continue;
		}
		if (r != -EAGAIN)
			return r;
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
		poll(&p, 1, (int)left);
	}
}

pid_t host_spawn(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

int host_reap(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

struct cn_msg *host_mcast_op(void *buf, size_t size, uint32_t op)
{
	return cn_msg_init(buf, size, CN_IDX_PROC, CN_VAL_PROC, &op, sizeof(op));
}

int host_become_nobody(uint64_t caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	/* Keep the permitted set across setuid, when there is one to keep. */
	if (caps && prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0)
		return -errno;
	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return -errno;
	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = (uint32_t)caps;
	d[1].permitted = d[1].effective = (uint32_t)(caps >> 32);
	if (caps && syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L) < 0)
		return -errno;
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	if ((d[0].permitted | (uint64_t)d[1].permitted << 32) != caps ||
	    (d[0].effective | (uint64_t)d[1].effective << 32) != caps || d[0].inheritable ||
	    d[1].inheritable || getuid() != 65534 || getgid() != 65534)
		return -EPERM;
	return 0;
}

/* The probe's child: 0 both joins allowed, 1 both refused with EPERM,
 * 2 + a code otherwise. */
static int join_probe(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1u << (CN_IDX_PROC - 1) };
	int group = CN_IDX_PROC, fd, r1, e1, r2, e2;

	if (host_become_nobody(0) < 0)
		return 2;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return 3;
	r1 = setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group));
	e1 = errno;
	close(fd);
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return 3;
	r2 = bind(fd, (struct sockaddr *)&a, sizeof(a));
	e2 = errno;
	close(fd);
	if (r1 == 0 && r2 == 0)
		return 0;
	if (r1 < 0 && e1 == EPERM && r2 < 0 && e2 == EPERM)
		return 1;
	fprintf(stderr, "join probe: NETLINK_ADD_MEMBERSHIP %s, bind %s\n",
		r1 ? strerror(e1) : "ok", r2 ? strerror(e2) : "ok");
	return 4;
}

int host_nobody_may_join_proc(void)
{
	static int known = -1;
	int status;
	pid_t pid;

	if (known >= 0)
		return known;
	pid = fork();
	if (pid == 0)
		_exit(join_probe());
	status = host_reap(pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		fprintf(stderr, "join probe failed: status %#x\n", status);
		abort();
	}
	known = WEXITSTATUS(status) == 0;
	fprintf(stderr, "# this kernel %s uid 65534 without capabilities join CN_IDX_PROC\n",
		known ? "lets" : "refuses (EPERM)");
	return known;
}
