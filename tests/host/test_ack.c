/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_ack.c - CN_SEND_ACK against the running kernel's built-in connector
 * (NETLINK_CONNECTOR). Its input, cn_rx_skb, hands each message to the
 * callback and never calls netlink_ack: a request with NLM_F_ACK gets no
 * NLMSG_ERROR. cn_send must tell that apart (1: sent, no answer), the
 * message must still have its effect, and a raw socket confirms that no
 * answer is queued. kmod's answers are tested in the VM (tests/vm).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "host_util.h"

#define WAIT_MS 5000

/* Undo a LISTEN sent by hand: cn_proc_ignore undoes only its own. */
static void ignore_by_hand(struct cn_sock *s)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;

	assert_int_equal(cn_send(s, host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_IGNORE), 0), 0);
	assert_int_equal(cn_leave(s, CN_IDX_PROC), 0);
}

/* cn_send(CN_SEND_ACK) of a LISTEN: 1 (no answer), and the LISTEN took
 * effect: its proc ack reaches the group, in the socket's stream. */
static void test_builtin_sends_no_answer(void **state)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_sock *s = host_open(1 << 20);
	struct cn_msg *req = host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_LISTEN);
	struct cn_proc_event ev;
	struct cn_message m;
	uint32_t ack;
	int found = 0;

	(void)state;
	assert_non_null(req);
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_send(s, req, CN_SEND_ACK), 1);
	ack = req->ack;
	/* The proc connector's own ack (ack + 1), multicast during the send,
	 * among other listeners' traffic: cn_send read and kept it while it
	 * looked for the netlink answer. */
	for (int i = 0; i < 100000 && !found; i++) {
		int r = cn_recv(s, &m, CN_RECV_DONTWAIT);

		if (r == -ENOBUFS)
			continue;
		if (r == -EAGAIN)
			break;
		assert_int_equal(r, 0);
		if (cn_proc_decode(m.msg, &ev) == 0 && ev.what == CN_PROC_NONE &&
		    m.msg->ack == ack + 1)
			found = 1;
	}
	assert_true(found);
	ignore_by_hand(s);
	cn_close(s);
}

/* cn_request(CN_SEND_ACK) still ends with the reply (no answer is awaited
 * beyond it), and an id without a callback is not refused: the built-in
 * connector drops it silently (1). */
static void test_builtin_request_and_unknown_id(void **state)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_sock *s = host_open(1 << 20);
	struct cn_msg *req = host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_LISTEN);
	struct cn_message reply;
	struct cn_msg *other;

	(void)state;
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_request(s, req, CN_SEND_ACK, CN_MATCH_ACK_ONLY, WAIT_MS, &reply), 0);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	ignore_by_hand(s);

	other = cn_msg_init(&u, sizeof(u), 0x999, 0x999, "x", 1);
	assert_non_null(other);
	assert_int_equal(cn_send(s, other, CN_SEND_ACK), 1);
	cn_close(s);
}

/* The same request from a raw socket with NLM_F_ACK: nothing is queued for
 * it after send returns (kernel netlink input runs in the sender's system
 * call, so an answer would be there already). */
static void test_builtin_raw_no_nlmsg_error(void **state)
{
	/* Built in place: clang refuses a cn_msg (flexible array) inside a
	 * struct. */
	union {
		char b[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(uint32_t)];
		struct nlmsghdr align;
	} q;
	struct nlmsghdr *nlh = (struct nlmsghdr *)q.b;
	struct cn_msg *m = (struct cn_msg *)(q.b + NLMSG_HDRLEN);
	uint32_t op = PROC_CN_MCAST_IGNORE;
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	char buf[8192];
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	memset(&q, 0, sizeof(q));
	nlh->nlmsg_len = sizeof(q.b);
	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = 77;
	m->id.idx = CN_IDX_PROC;
	m->id.val = CN_VAL_PROC;
	m->len = sizeof(op);
	memcpy(m->data, &op, sizeof(op));
	assert_int_equal(sendto(fd, q.b, sizeof(q.b), 0, (struct sockaddr *)&a, sizeof(a)),
			 (ssize_t)sizeof(q.b));
	/* Not a member of any group: only a unicast answer could arrive. */
	errno = 0;
	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_sends_no_answer),
		cmocka_unit_test(test_builtin_request_and_unknown_id),
		cmocka_unit_test(test_builtin_raw_no_nlmsg_error),
	};

	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
