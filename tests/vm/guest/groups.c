// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * groups.c - delivery to multicast groups: a message forwarded to an id's
 * group reaches every subscriber.
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

/* Subscriber `who` (s) got 0x459's multicast: its payload, from the
 * group it was sent to. 0, or 1 with the reason printed. */
static int got_multicast(struct cn_sock *s, const char *who)
{
	struct cn_message got;
	int rc = 0, r;

	r = recv_id(s, CNBUS_TEST_IDX, CNBUS_TEST_MCAST, 5000, &got);
	CHECK(r == 0, "subscriber %s: %d", who, r);
	CHECK(got.msg->len == 13 && !strcmp((const char *)got.msg->data, "to the group"),
	      "%s payload", who);
	/* Group 0x123 is above 32: the kernel's nl_groups says 0 (as for a
	 * unicast); libcn reads it from NETLINK_PKTINFO, on since cn_join. */
	CHECK(got.group == CNBUS_TEST_IDX, "subscriber %s: group %u, want %u", who, got.group,
	      CNBUS_TEST_IDX);
out:
	return rc;
}

/* 0x459 forwards to group 0 (the id's group, 0x123): both subscribers get it. */
int t_group_two_subscribers(void)
{
	struct cn_sock *a = open_sock(0, 0), *b = open_sock(0, 0), *c = open_sock(0, 0);
	unsigned char buf[CN_MSG_SIZE(32)];
	struct cn_message rep, got;
	struct cn_msg *m;
	int32_t res[2];
	int rc = 0, r;

	CHECK(a && b && c, "cn_open");
	CHECK(cn_join(a, CNBUS_TEST_IDX) == 0 && cn_join(b, CNBUS_TEST_IDX) == 0, "cn_join");
	m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_MCAST, "to the group", 13);
	r = cn_request(c, m, 0, CN_MATCH_STRICT, 5000, &rep);
	CHECK(r == 0, "request: %d", r);
	CHECK(rep.msg->len == sizeof(res), "reply len %u", rep.msg->len);
	memcpy(res, rep.msg->data, sizeof(res));
	info("group 0 send: %d, unknown id send: %d", res[0], res[1]);
	CHECK(res[0] == 0, "cnbus_send to group 0 (lookup) returned %d", res[0]);
	CHECK(res[1] == -ENODEV, "cnbus_send for an unknown id returned %d", res[1]);
	rc = got_multicast(a, "a") || got_multicast(b, "b");
	if (rc)
		goto out;
	/* The request's reply is a unicast: group 0. */
	CHECK(rep.group == 0, "reply: group %u", rep.group);
	/* The requester did not join: it must not get the multicast. */
	r = recv_id(c, CNBUS_TEST_IDX, CNBUS_TEST_MCAST, 0, &got);
	CHECK(r == -ETIMEDOUT, "requester got the multicast: %d", r);
out:
	cn_close(a);
	cn_close(b);
	cn_close(c);
	return rc;
}
