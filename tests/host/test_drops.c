/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_drops.c - cn_drops against the running kernel, on a busy machine:
 * thousands of other netlink sockets open and a child opening and closing
 * more all the time. Each call must give the socket's own count of
 * datagrams dropped (equal to what a raw sender sent and the socket could
 * not read), never -ENOENT, and take about the same time with 5,000 others
 * as with none (printed, not asserted: docs/PERFORMANCE.md). It must also
 * answer for a socket of another network namespace, and with /proc
 * unmounted. /proc/net/netlink (cn_drops before SO_MEMINFO) fails each:
 * the kernel re-walks its socket table by position, so a socket created or
 * closed meanwhile makes it skip a line (af_netlink.c, netlink_seq_start),
 * and it lists the reader's namespace only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/netlink.h>
#include <cmocka.h>

#include "host_util.h"

#define TEST_IDX 0x7ff1u /* no kernel callback has it: the kernel's copy is dropped */
#define GROUP	 27u	 /* a connector group no kernel user sends to */
#define OTHERS	 4000	 /* netlink sockets kept open */
#define CHURNERS 1000	 /* netlink sockets a child closes and opens again */
#define SENT	 400	 /* multicasts to a socket that reads none of them */
#define CALLS	 3000	 /* cn_drops calls while the others churn */

static int open_bound(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);

	/* Bound: only then in the kernel's table (and /proc/net/netlink). */
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The child: CHURNERS sockets, each closed and opened again, for ever
 * (killed by the test, or when the test dies). */
static int churn(void *arg)
{
	static int fd[CHURNERS];

	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < CHURNERS; i++)
		fd[i] = open_bound();
	for (unsigned int i = 0;; i = (i + 1) % CHURNERS) {
		if (fd[i] >= 0)
			close(fd[i]);
		fd[i] = open_bound();
	}
	return 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* n cn_drops calls on s: the median ns in *median, and how many did not
 * give want (the first one's result and count in *r and *got). */
static int timed_calls(struct cn_sock *s, int n, uint64_t want, int64_t *median, int *r,
		       uint64_t *got)
{
	static int64_t t[CALLS];
	int wrong = 0;

	for (int i = 0; i < n; i++) {
		uint64_t drops = 0;
		int64_t t0 = now_ns();
		int ri = cn_drops(s, &drops);

		t[i] = now_ns() - t0;
		if ((ri != 0 || drops != want) && wrong++ == 0) {
			*r = ri;
			*got = drops;
		}
	}
	qsort(t, (size_t)n, sizeof(t[0]), cmp64);
	*median = t[n / 2];
	return wrong;
}

/* A socket in GROUP with the smallest buffer, sent SENT multicasts by a
 * raw socket: returns it, with *dropped = SENT - what it can read. */
static struct cn_sock *overrun_socket(uint64_t *dropped)
{
	struct cn_open_opts o = { .sz = sizeof(o), .flags = CN_OPEN_ANY_SENDER | CN_OPEN_NONBLOCK };
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, &o);
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = 1u << (GROUP - 1) };
	uint32_t pkt[(NLMSG_HDRLEN + sizeof(struct cn_msg) + 512) / 4] = { 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)pkt;
	struct cn_msg *m = NLMSG_DATA(nlh);
	struct cn_message msg;
	uint64_t got = 0;
	int fd, r;

	assert_non_null(s);
	host_keep(s);
	assert_true(cn_set_rcvbuf(s, 1) > 0);
	assert_int_equal(cn_join(s, GROUP), 0);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	assert_true(fd >= 0);
	nlh->nlmsg_len = sizeof(pkt);
	nlh->nlmsg_type = NLMSG_DONE;
	m->id.idx = TEST_IDX;
	m->len = 512;
	for (uint32_t i = 0; i < SENT; i++) {
		m->seq = i;
		assert_int_equal(
		    sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)),
		    (ssize_t)sizeof(pkt));
	}
	close(fd);
	assert_int_equal(cn_leave(s, GROUP), 0);
	while ((r = cn_recv(s, &msg, 0)) != -EAGAIN) {
		if (r == -ENOBUFS)
			continue; /* the overrun, reported once */
		assert_int_equal(r, 0);
		got += msg.msg->id.idx == TEST_IDX;
	}
	assert_true(got > 0 && got < SENT);
	*dropped = SENT - got;
	return s;
}

static void test_drops_right_and_constant_on_a_busy_machine(void **state)
{
	static int fd[OTHERS];
	struct rlimit rl;
	uint64_t dropped, got = 0;
	struct cn_sock *s;
	int64_t alone, busy;
	pid_t child;
	int n = 0, wrong, r = 0;

	(void)state;
	s = overrun_socket(&dropped);
	printf("# %llu of %d multicasts dropped for a socket with the smallest buffer\n",
	       (unsigned long long)dropped, SENT);
	wrong = timed_calls(s, CALLS, dropped, &alone, &r, &got);
	if (wrong)
		fail_msg("alone: %d of %d calls wrong; the first: %d, %llu (want 0, %llu)", wrong,
			 CALLS, r, (unsigned long long)got, (unsigned long long)dropped);

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < OTHERS + 64 && rl.rlim_max >= OTHERS + 64) {
		rl.rlim_cur = OTHERS + 64;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	for (; n < OTHERS && (fd[n] = open_bound()) >= 0; n++)
		;
	assert_true(n >= OTHERS / 2);
	child = host_spawn(churn, NULL);
	usleep(200000); /* its sockets open */
	wrong = timed_calls(s, CALLS, dropped, &busy, &r, &got);
	kill(child, SIGKILL);
	host_reap(child);
	for (int i = 0; i < n; i++)
		close(fd[i]);
	printf("# cn_drops: median %lld ns alone, %lld ns with %d sockets open and %d churning;"
	       " %d calls each, %d wrong\n",
	       (long long)alone, (long long)busy, n, CHURNERS, CALLS, wrong);
	if (wrong)
		fail_msg("busy: %d of %d calls wrong; the first: %d, %llu (want 0, %llu)", wrong,
			 CALLS, r, (unsigned long long)got, (unsigned long long)dropped);
	cn_close(s);
}

/* In a child: the socket opened before, asked from another network
 * namespace whose /proc is not mounted. */
static int drops_elsewhere(void *arg)
{
	struct cn_sock *s = arg;
	uint64_t want, drops;

	if (cn_drops(s, &want) != 0)
		return 10;
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0)
		return 11;
	if (cn_drops(s, &drops) != 0 || drops != want)
		return 12; /* another namespace */
	/* "none": valgrind checks the type string the kernel ignores here. */
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    umount2("/proc", MNT_DETACH) < 0)
		return 13;
	if (cn_drops(s, &drops) != 0 || drops != want)
		return 14; /* no /proc */
	return 0;
}

static void test_drops_in_another_namespace_without_proc(void **state)
{
	uint64_t dropped;
	struct cn_sock *s = overrun_socket(&dropped);
	int st;

	(void)state;
	st = host_reap(host_spawn(drops_elsewhere, s));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	cn_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drops_right_and_constant_on_a_busy_machine),
		cmocka_unit_test(test_drops_in_another_namespace_without_proc),
	};

	if (geteuid() != 0) {
		printf("# skip: root is needed to send multicasts on NETLINK_CONNECTOR\n");
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			return 1;
		return SKIP_EXIT;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
