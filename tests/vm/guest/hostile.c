// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hostile.c - kmod against hostile and careless users (guest tests, run by
 * cnbus_vmtest). Each test reproduces a way a local user could hang, crash
 * or fool kmod:
 *
 *  counters_add_up   every received message is dispatched or refused once
 *                    (notification requests that take effect, EEXIST,
 *                    ENOENT, and a runt after a datagram's last message).
 *  notify_flood      a flood of notification requests from root (bounded
 *                    by max_notify) and from nobody (all refused).
 *  stalled_receiver  an unprivileged sender that never reads its socket:
 *                    the callbacks' replies must not block on it, and
 *                    unloading cnbus_test must not wait for it.
 *  unit_refused      cnbus.ko refuses a netlink unit another user has
 *                    registered (NETLINK_USERSOCK, ...), and bad ranges.
 *  burst_unbounded   nobody asks cnbus_test for 0xffffffff inserts per CPU:
 *                    refused (-EPERM); root asking beyond the bounds too.
 *
 * A hang is caught by a watchdog (poll with a timeout on a pipe), not by
 * timing: the timeouts are minutes above what the operations take.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>

#include "kstat.h"
#include "vmtest.h"

#define WATCHDOG_MS 30000 /* a hang, not slowness: each step takes < 1 s */

/* Wait up to timeout_ms for one byte on fd: 1 got it, 0 timeout/EOF. */
static int wait_byte(int fd, int timeout_ms, char *c)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) != 1)
		return 0;
	return read(fd, c, 1) == 1;
}

/* A control message (nlmsghdr + cn_msg + cn_ctl_msg + 2 ranges) in raw. */
static size_t notify_datagram(void *raw, uint32_t first, uint32_t group, uint32_t seq)
{
	struct cn_range idx = { first, 1 }, val = { 0, 1 };
	unsigned char buf[CN_NOTIFY_SIZE(1, 1)];
	struct nlmsghdr *h = raw;
	struct cn_msg *m;

	m = group ? cn_notify_build(buf, sizeof(buf), &idx, 1, &val, 1, group)
		  : cn_notify_build_remove(buf, sizeof(buf), &idx, 1, &val, 1);
	if (!m)
		return 0;
	memset(h, 0, NLMSG_SPACE(CN_MSG_SIZE(m->len)));
	h->nlmsg_len = NLMSG_LENGTH(CN_MSG_SIZE(m->len));
	h->nlmsg_type = NLMSG_DONE;
	h->nlmsg_seq = seq;
	memcpy(NLMSG_DATA(h), m, CN_MSG_SIZE(m->len));
	return h->nlmsg_len;
}

/* How much counter f of struct kstat grew from k0 to k1. */
#define D(f) (k1.f - k0.f)

/*
 * A send to a kernel socket runs its input synchronously: when sendto()
 * returns, the datagram has been counted. So no ack is needed here.
 */
int t_hostile_counters_add_up(void)
{
	char raw[512] __attribute__((aligned(8)));
	struct kstat k0, k1;
	size_t len;
	int rc = 0, fd = -1;

	fd = raw_open();
	CHECK(fd >= 0, "socket: %s", strerror(errno));
	CHECK(kstat_get(&k0) == 0, "kstat");
	/* add, add again (EEXIST), remove, remove again (ENOENT) */
	len = notify_datagram(raw, 0x7200, 0x300, 1);
	CHECK(len && raw_send(fd, raw, len) == 0, "send add");
	CHECK(raw_send(fd, raw, len) == 0, "send add again");
	len = notify_datagram(raw, 0x7200, 0, 2);
	CHECK(len && raw_send(fd, raw, len) == 0, "send remove");
	CHECK(raw_send(fd, raw, len) == 0, "send remove again");
	/* An echo with 8, then 15 stray bytes after it: each runt is one short message. */
	len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_B, 4, 4, 0, 3);
	len = NLMSG_ALIGN(len);
	memset(raw + len, 0x5a, 15);
	CHECK(raw_send(fd, raw, len + 8) == 0, "send echo + 8 bytes");
	CHECK(raw_send(fd, raw, len + 15) == 0, "send echo + 15 bytes");
	CHECK(kstat_get(&k1) == 0, "kstat");

	info("received +%" PRIu64 " dispatched +%" PRIu64 " refused +%" PRIu64 " (exists +%" PRIu64
	     " noent +%" PRIu64 " short +%" PRIu64 ")",
	     D(received), D(dispatched), kstat_refused_total(&k1) - kstat_refused_total(&k0),
	     D(refused[CNBUS_REFUSED_A_NOTIFY_EXISTS]), D(refused[CNBUS_REFUSED_A_NOTIFY_NOENT]),
	     D(refused[CNBUS_REFUSED_A_SHORT]));
	CHECK(D(received) == 8, "received +%" PRIu64 ", want 8", D(received));
	CHECK(D(dispatched) == 4, "dispatched +%" PRIu64 ", want 4 (add, remove, 2 echoes)",
	      D(dispatched));
	CHECK(D(refused[CNBUS_REFUSED_A_NOTIFY_EXISTS]) == 1, "notify_exists");
	CHECK(D(refused[CNBUS_REFUSED_A_NOTIFY_NOENT]) == 1, "notify_noent");
	CHECK(D(refused[CNBUS_REFUSED_A_SHORT]) == 2, "short (the runts)");
	CHECK(D(received) == D(dispatched) + kstat_refused_total(&k1) - kstat_refused_total(&k0),
	      "received != dispatched + refused during the test");
	/* Since load, over everything every test sent. */
	info("since load: received %" PRIu64 " dispatched %" PRIu64 " refused %" PRIu64,
	     k1.received, k1.dispatched, kstat_refused_total(&k1));
	CHECK(k1.received == k1.dispatched + kstat_refused_total(&k1),
	      "received %" PRIu64 " != dispatched %" PRIu64 " + refused %" PRIu64, k1.received,
	      k1.dispatched, kstat_refused_total(&k1));
	CHECK(k1.notify_count == k0.notify_count, "requests %u -> %u", k0.notify_count,
	      k1.notify_count);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Root fills the table (max_notify) and more; nobody floods; all removed. */
int t_hostile_notify_flood(void)
{
	char raw[512] __attribute__((aligned(8)));
	unsigned int i, n;
	struct kstat k0, k1;
	int rc = 0, fd = -1, status;
	size_t len;
	pid_t pid;

	CHECK(kstat_get(&k0) == 0, "kstat");
	n = k0.max_notify + 16;
	fd = raw_open();
	CHECK(fd >= 0, "socket");
	for (i = 0; i < n; i++) {
		len = notify_datagram(raw, 0x10000 + i, 0x300, i);
		CHECK(len && raw_send(fd, raw, len) == 0, "add %u", i);
	}
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		int cfd;

		if (become_nobody())
			_exit(10);
		cfd = raw_open();
		if (cfd < 0)
			_exit(11);
		for (i = 0; i < 1000; i++) {
			len = notify_datagram(raw, 0x20000 + i, 0x300 + i % 8, i);
			if (!len || raw_send(cfd, raw, len))
				_exit(12);
			len = notify_datagram(raw, 0x10000 + i % n, 0, i);
			if (!len || raw_send(cfd, raw, len))
				_exit(13);
		}
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody's flood: status %#x", status);
	CHECK(kstat_get(&k1) == 0, "kstat");
	info("max_notify %u: held %u -> %u; full +%" PRIu64 " perm +%" PRIu64, k0.max_notify,
	     k0.notify_count, k1.notify_count, D(refused[CNBUS_REFUSED_A_NOTIFY_FULL]),
	     D(refused[CNBUS_REFUSED_A_NOTIFY_PERM]));
	CHECK(k1.notify_count == k0.max_notify, "held %u, bound %u", k1.notify_count,
	      k0.max_notify);
	CHECK(D(refused[CNBUS_REFUSED_A_NOTIFY_FULL]) == n - (k0.max_notify - k0.notify_count),
	      "notify_full +%" PRIu64, D(refused[CNBUS_REFUSED_A_NOTIFY_FULL]));
	CHECK(D(refused[CNBUS_REFUSED_A_NOTIFY_PERM]) == 2000, "notify_perm +%" PRIu64,
	      D(refused[CNBUS_REFUSED_A_NOTIFY_PERM]));
	for (i = 0; i < n; i++) {
		len = notify_datagram(raw, 0x10000 + i, 0, i);
		CHECK(len && raw_send(fd, raw, len) == 0, "remove %u", i);
	}
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.notify_count == k0.notify_count, "held %u after removal, %u before",
	      k1.notify_count, k0.notify_count);
	CHECK(k1.received == k1.dispatched + kstat_refused_total(&k1),
	      "received %" PRIu64 " != dispatched %" PRIu64 " + refused %" PRIu64, k1.received,
	      k1.dispatched, kstat_refused_total(&k1));
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Unload name in a child; 0 when it returned 0 within timeout_ms, else -1. */
static int unload_watched(const char *name, int timeout_ms, pid_t *stuck)
{
	int p[2], status;
	pid_t pid;
	char c;

	*stuck = -1;
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		/* Blocking unload: waits for the module's users, as rmmod does. */
		c = syscall(SYS_delete_module, name, 0) ? 'f' : 'k';
		_exit(write(p[1], &c, 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	if (!wait_byte(p[0], timeout_ms, &c)) {
		close(p[0]);
		*stuck = pid;
		return -1;
	}
	close(p[0]);
	waitpid(pid, &status, 0);
	return c == 'k' ? 0 : -1;
}

/*
 * nobody sends echo requests with a big payload on a socket with the
 * smallest receive buffer and never reads it. Each callback replies to
 * that socket; once it is full, a reply must be dropped (counted,
 * ENOBUFS for the receiver), not wait for room: the wait holds the
 * callback, its sender and, through cnbus_del_callback(), the unload.
 */
int t_hostile_stalled_receiver(void)
{
	enum { REQUESTS = 64, PAYLOAD = 1024 };
	int to_parent[2] = { -1, -1 }, to_child[2] = { -1, -1 };
	int rc = 0, r, status, sent = 0, stuck_sender = 0;
	pid_t pid = -1, unloader = -1;
	struct kstat k0, k1;
	char c;

	CHECK(module_loaded("cnbus_test") || reload_test_module("period_ms=0") == 0, "load");
	CHECK(kstat_get(&k0) == 0, "kstat");
	CHECK(pipe(to_parent) == 0 && pipe(to_child) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		static char raw[NLMSG_SPACE(sizeof(struct cn_msg) + PAYLOAD)]
		    __attribute__((aligned(8)));
		int fd, one = 1, i, enobufs = 0;
		ssize_t n;

		close(to_parent[0]);
		close(to_child[1]);
		if (become_nobody())
			_exit(10);
		fd = raw_open();
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)))
			_exit(11);
		for (i = 0; i < REQUESTS; i++) {
			size_t len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, PAYLOAD,
					       PAYLOAD, 0, (uint32_t)i);

			if (raw_send(fd, raw, len))
				_exit(12);
			if (write(to_parent[1], "s", 1) != 1)
				_exit(13);
		}
		/* Hold the full socket until the parent has unloaded cnbus_test. */
		if (read(to_child[0], &c, 1) != 1)
			_exit(14);
		while ((n = recv(fd, raw, sizeof(raw), MSG_DONTWAIT)) > 0 ||
		       (n < 0 && errno == ENOBUFS))
			enobufs += n < 0;
		_exit(enobufs ? 0 : 15);
	}
	close(to_parent[1]);
	to_parent[1] = -1;
	close(to_child[0]);
	to_child[0] = -1;
	while (sent < REQUESTS && wait_byte(to_parent[0], WATCHDOG_MS, &c))
		sent++;
	info("nobody sent %d of %d echo requests without reading", sent, REQUESTS);
	stuck_sender = sent < REQUESTS;
	/* With a stuck sender this is the reported hang: rmmod in D state. */
	r = unload_watched("cnbus_test", WATCHDOG_MS, &unloader);
	info("unload cnbus_test with the stalled receiver: %s", r == 0	       ? "done"
								: unloader > 0 ? "hangs"
									       : "failed");
	if (unloader > 0 || stuck_sender) {
		/* Release the hang so the suite can go on: kill the sender. */
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		pid = -1;
		if (unloader > 0)
			waitpid(unloader, &status, 0);
	}
	CHECK(!stuck_sender, "the sender blocked in a callback's reply after %d requests", sent);
	CHECK(r == 0, "unload of cnbus_test %s", unloader > 0 ? "hung" : "failed");
	CHECK(write(to_child[1], "r", 1) == 1, "pipe");
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	pid = -1;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "receiver status %#x (15: no ENOBUFS reported)", status);
	CHECK(kstat_get(&k1) == 0, "kstat");
	info("reply_dropped +%" PRIu64, D(reply_dropped));
	CHECK(D(reply_dropped) > 0 && D(reply_dropped) < REQUESTS, "reply_dropped +%" PRIu64,
	      D(reply_dropped));
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (to_parent[i] >= 0)
			close(to_parent[i]);
		if (to_child[i] >= 0)
			close(to_child[i]);
	}
	if (!module_loaded("cnbus_test"))
		reload_test_module("period_ms=0");
	return rc;
}

/*
 * Units with a registered user: NETLINK_ROUTE (0), NETLINK_USERSOCK (2, no
 * kernel socket: netlink_kernel_create() accepts it), NETLINK_CONNECTOR
 * (11, the built-in connector), NETLINK_GENERIC (16); and two out of
 * range. cnbus must refuse all and load again on its default unit.
 */
int t_hostile_unit_refused(void)
{
	static const char *const bad[] = { "unit=0",  "unit=2",	 "unit=11",
					   "unit=16", "unit=-1", "unit=32" };
	struct kstat k;
	unsigned int i;
	int rc = 0, r, accepted = 0;

	if (module_loaded("cnbus_test"))
		CHECK(mod_unload("cnbus_test") == 0, "unload cnbus_test");
	r = mod_unload("cnbus");
	CHECK(r == 0, "unload cnbus: %d", r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = mod_load_beside("cnbus", bad[i]);
		info("insmod cnbus.ko %s: %d (%s)", bad[i], r, strerror(-r));
		if (r == 0) {
			accepted++;
			printf("#   cnbus.ko accepted %s\n", bad[i]);
			mod_unload("cnbus");
		}
	}
	CHECK(accepted == 0, "%d units in use were accepted", accepted);
out:
	if (!module_loaded("cnbus")) {
		r = mod_load_beside("cnbus", "");
		if (r) {
			printf("#   FAILED: cannot load cnbus.ko again: %d\n", r);
			rc = 1;
		}
	}
	if (module_loaded("cnbus") && !module_loaded("cnbus_test") &&
	    reload_test_module("period_ms=0"))
		rc = 1;
	if (!rc && (kstat_get(&k) || (int)k.unit != unit)) {
		printf("#   FAILED: cnbus is not back on unit %d\n", unit);
		rc = 1;
	}
	return rc;
}

/* Send a burst request of len bytes; wait for the answer (watchdog). */
static int burst_request(int as_nobody, const struct cnbus_test_burst *req, size_t len,
			 struct cnbus_test_burst *res)
{
	int p[2], status, r = -ETIMEDOUT;
	pid_t pid;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		unsigned char buf[CN_MSG_SIZE(sizeof(*req))];
		struct cn_message rep;
		struct cn_sock *s;
		struct cn_msg *m;

		close(p[0]);
		if (as_nobody && become_nobody())
			_exit(10);
		s = open_sock(0, 0);
		m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_BURST, req, len);
		if (!s || !m)
			_exit(11);
		/* The callback runs in this send(); the answer is queued by then. */
		if (cn_request(s, m, 0, CN_MATCH_STRICT, WATCHDOG_MS, &rep) ||
		    rep.msg->len != sizeof(*res))
			_exit(12);
		if (write(p[1], rep.msg->data, sizeof(*res)) != (ssize_t)sizeof(*res))
			_exit(13);
		_exit(0);
	}
	close(p[1]);
	{
		struct pollfd pf = { .fd = p[0], .events = POLLIN };

		if (poll(&pf, 1, WATCHDOG_MS) == 1 &&
		    read(p[0], res, sizeof(*res)) == (ssize_t)sizeof(*res))
			r = 0;
	}
	close(p[0]);
	if (r) {
		/* A request that hangs cannot be killed (the burst holds it): leave it. */
		kill(pid, SIGKILL);
		return r;
	}
	waitpid(pid, &status, 0);
	return 0;
}

int t_hostile_burst_unbounded(void)
{
	struct cnbus_test_burst req = { .count = 0xffffffffu }, res;
	int rc = 0, r;

	CHECK(module_loaded("cnbus_test") || reload_test_module("period_ms=0") == 0, "load");
	/* The 4-byte form (just the count), which every version accepts. */
	r = burst_request(1, &req, sizeof(req.count), &res);
	CHECK(r == 0, "nobody's burst of 0xffffffff per CPU: no answer (%d): it runs", r);
	info("nobody, count 0xffffffff: status %d, %u cpus, inserted %" PRIu64, res.status,
	     res.cpus, (uint64_t)res.inserted);
	CHECK(res.status == -EPERM && res.cpus == 0 && res.inserted == 0, "status %d", res.status);

	r = burst_request(0, &req, sizeof(req.count), &res);
	CHECK(r == 0 && res.status == -EINVAL && res.inserted == 0,
	      "root, count 0xffffffff: %d, status %d", r, res.status);
	req.count = 1;
	req.len = CNBUS_TEST_PAD_MAX + 1;
	r = burst_request(0, &req, sizeof(req), &res);
	CHECK(r == 0 && res.status == -EINVAL, "root, len %u: %d, status %d", req.len, r,
	      res.status);
	req.len = 0;
	req.flags = 0x80;
	r = burst_request(0, &req, sizeof(req), &res);
	CHECK(r == 0 && res.status == -EINVAL, "root, flags 0x80: %d, status %d", r, res.status);
	req.flags = 0;
	req.count = 10;
	r = burst_request(0, &req, sizeof(req), &res);
	CHECK(r == 0 && res.status == 0 && res.inserted + res.refused == 10ull * res.cpus,
	      "root, 10 per CPU: %d, status %d, inserted %" PRIu64, r, res.status,
	      (uint64_t)res.inserted);
out:
	return rc;
}
