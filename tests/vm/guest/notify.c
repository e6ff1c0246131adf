// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * notify.c - notification requests (kmod's notify ids): added and removed
 * with notifications to the requested group, refused to an unprivileged
 * user, bounded in number.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>
#include <libcn/kmod.h>

#include "kstat.h"
#include "vmtest.h"

#define NOTIFY_GROUP 0x200

static int expect_notifications(struct cn_sock *g, int added)
{
	struct cn_notification n;
	struct cn_message m;
	unsigned int seen = 0, i;
	int rc = 0, r;

	for (i = 0; i < 4; i++) {
		/* Sent synchronously by (un)registration: already queued. */
		r = cn_recv(g, &m, CN_RECV_DONTWAIT);
		CHECK(r == 0, "notification %u: %d", i, r);
		CHECK(cn_notify_decode(m.msg, &n) == 0, "decode");
		CHECK(n.added == added, "added %d want %d", n.added, added);
		CHECK(n.idx == CNBUS_TEST_IDX && n.val >= CNBUS_TEST_ECHO_A &&
			  n.val <= CNBUS_TEST_MCAST,
		      "id %u.%u", n.idx, n.val);
		seen |= 1u << (n.val - CNBUS_TEST_ECHO_A);
	}
	CHECK(seen == 0xf, "seen mask %#x", seen);
	r = cn_recv(g, &m, CN_RECV_DONTWAIT);
	CHECK(r == -EAGAIN, "extra message: %d", r);
out:
	return rc;
}

int t_notify_add_remove(void)
{
	struct cn_range idx = { CNBUS_TEST_IDX, 1 }, val = { CNBUS_TEST_ECHO_A, 4 };
	unsigned char buf[CN_NOTIFY_SIZE(1, 1)];
	struct cn_sock *g = open_sock(0, 0), *c = open_sock(0, 0);
	struct cn_message m;
	struct kstat k0, k1;
	struct cn_msg *msg;
	int rc = 0, r;

	CHECK(g && c, "cn_open");
	CHECK(cn_join(g, NOTIFY_GROUP) == 0, "join");
	CHECK(kstat_get(&k0) == 0, "kstat");
	msg = cn_notify_build(buf, sizeof(buf), &idx, 1, &val, 1, NOTIFY_GROUP);
	CHECK(msg, "cn_notify_build");
	CHECK(cn_send(c, msg, 0) == 0, "send");
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.notify_count == k0.notify_count + 1, "notify_count %u", k1.notify_count);

	r = mod_unload("cnbus_test");
	CHECK(r == 0, "unload %d", r);
	if (expect_notifications(g, 0))
		goto fail;
	r = mod_load("period_ms=0");
	CHECK(r == 0, "load %d", r);
	if (expect_notifications(g, 1))
		goto fail;

	msg = cn_notify_build_remove(buf, sizeof(buf), &idx, 1, &val, 1);
	CHECK(msg, "cn_notify_build_remove");
	CHECK(cn_send(c, msg, 0) == 0, "send");
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.notify_count == k0.notify_count, "notify_count %u", k1.notify_count);
	r = reload_test_module("period_ms=0");
	CHECK(r == 0, "reload %d", r);
	r = cn_recv(g, &m, CN_RECV_DONTWAIT);
	CHECK(r == -EAGAIN, "notification after removal: %d", r);
out:
	cn_close(g);
	cn_close(c);
	return rc;
fail:
	rc = 1;
	goto out;
}

int t_notify_unprivileged(void)
{
	struct kstat k0, k1;
	int rc = 0, status;
	pid_t pid;

	CHECK(kstat_get(&k0) == 0, "kstat");
	pid = fork_as_nobody();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct cn_range idx = { 0, 0x1000 }, val = { 0, 0x1000 };
		unsigned char buf[CN_NOTIFY_SIZE(1, 1)];
		char raw[256];
		struct cn_sock *s;
		struct cn_msg *msg;
		int fd, r;

		s = open_sock(0, 0);
		if (!s)
			_exit(11);
		msg = cn_notify_build(buf, sizeof(buf), &idx, 1, &val, 1, NOTIFY_GROUP);
		if (!msg || cn_send(s, msg, 0))
			_exit(12);
		/* libcn's acked send: kmod's refusal of this very request. */
		r = cn_send(s, msg, CN_SEND_ACK);
		if (r != -EPERM || errno != EPERM)
			_exit(16);
		cn_close(s);
		/* The same with NLM_F_ACK: the refusal is -EPERM. */
		fd = raw_open();
		if (fd < 0)
			_exit(13);
		memset(raw, 0, sizeof(raw));
		memcpy(raw + NLMSG_HDRLEN, msg, CN_MSG_SIZE(msg->len));
		((struct nlmsghdr *)raw)->nlmsg_len = NLMSG_LENGTH(CN_MSG_SIZE(msg->len));
		((struct nlmsghdr *)raw)->nlmsg_type = NLMSG_DONE;
		((struct nlmsghdr *)raw)->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		((struct nlmsghdr *)raw)->nlmsg_seq = 99;
		if (raw_send(fd, raw, NLMSG_LENGTH(CN_MSG_SIZE(msg->len))))
			_exit(14);
		r = raw_wait_ack(fd, 99);
		_exit(r == -EPERM ? 0 : 15);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.refused[CNBUS_REFUSED_A_NOTIFY_PERM] ==
		  k0.refused[CNBUS_REFUSED_A_NOTIFY_PERM] + 3,
	      "notify_perm %" PRIu64 " -> %" PRIu64, k0.refused[CNBUS_REFUSED_A_NOTIFY_PERM],
	      k1.refused[CNBUS_REFUSED_A_NOTIFY_PERM]);
	CHECK(k1.notify_count == k0.notify_count, "a request was added");
out:
	return rc;
}

int t_notify_bound(void)
{
	struct cn_range idx = { 0x7000, 1 }, val = { 0, 1 };
	unsigned char buf[CN_NOTIFY_SIZE(1, 1)];
	struct cn_sock *c = open_sock(0, 0);
	struct kstat k0, k1;
	struct cn_msg *msg;
	unsigned int i, max;
	int rc = 0, r;

	CHECK(c, "cn_open");
	CHECK(kstat_get(&k0) == 0, "kstat");
	max = k0.max_notify;
	CHECK(max > 0 && max + 0x300 < k0.groups, "max_notify %u", max);
	for (i = 0; i <= max; i++) {
		int want = i + k0.notify_count < max ? 0 : -ENOSPC;

		/* kmod's answer to each request (CN_SEND_ACK): taken, then full. */
		msg = cn_notify_build(buf, sizeof(buf), &idx, 1, &val, 1, 0x300 + i);
		CHECK(msg, "build %u", i);
		r = cn_send(c, msg, CN_SEND_ACK);
		CHECK(r == want, "send %u: %d, want %d", i, r, want);
	}
	CHECK(kstat_get(&k1) == 0, "kstat");
	info("max_notify %u: count %u, full refusals %" PRIu64, max, k1.notify_count,
	     k1.refused[CNBUS_REFUSED_A_NOTIFY_FULL] - k0.refused[CNBUS_REFUSED_A_NOTIFY_FULL]);
	CHECK(k1.notify_count == max, "count %u", k1.notify_count);
	CHECK(k1.refused[CNBUS_REFUSED_A_NOTIFY_FULL] ==
		  k0.refused[CNBUS_REFUSED_A_NOTIFY_FULL] + 1 + k0.notify_count,
	      "full refusals");
	/* One removal removes every request with these ranges. */
	msg = cn_notify_build_remove(buf, sizeof(buf), &idx, 1, &val, 1);
	CHECK(msg && cn_send(c, msg, CN_SEND_ACK) == 0, "remove");
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.notify_count == k0.notify_count, "count after removal %u", k1.notify_count);
	/* Nothing left to remove: kmod says so. */
	r = cn_send(c, msg, CN_SEND_ACK);
	CHECK(r == -ENOENT, "second removal %d, want -ENOENT", r);
out:
	cn_close(c);
	return rc;
}
