/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_send.c - cn_send / cn_sendto / cn_reply: the bytes handed to sendmsg
 * (netlink header, cn_msg, payload), seq/ack genealogy and its flags.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_sys.h"

static int setup(void **state)
{
	*state = fake_open(CN_OPEN_ANY_SENDER, 0);
	return 0;
}

union buf {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(64)];
};

/* Check the bytes of sent message i: one nlmsghdr (NLMSG_DONE, length, our
 * port), then exactly the cn_msg and payload. */
static const struct cn_msg *check_bytes(struct cn_sock *s, unsigned i, const struct cn_msg *want,
					const void *payload, size_t len)
{
	const struct fake_sent *f = fake_sent(i);
	struct nlmsghdr nlh;
	const struct cn_msg *m;

	assert_non_null(f);
	assert_int_equal(f->len, NLMSG_HDRLEN + sizeof(struct cn_msg) + len);
	memcpy(&nlh, f->data, sizeof(nlh));
	assert_int_equal(nlh.nlmsg_len, f->len);
	assert_int_equal(nlh.nlmsg_type, NLMSG_DONE);
	assert_int_equal(nlh.nlmsg_pid, cn_port(s));
	m = fake_sent_cn(i);
	assert_int_equal(m->id.idx, want->id.idx);
	assert_int_equal(m->id.val, want->id.val);
	assert_int_equal(m->seq, want->seq);
	assert_int_equal(m->ack, want->ack);
	assert_int_equal(m->len, len);
	assert_int_equal(m->flags, 0);
	if (len)
		assert_memory_equal(m->data, payload, len);
	return m;
}

/* check_bytes, and the message went to port dst with an explicit address
 * (the setup's socket takes any sender, so it is not connected). */
static const struct cn_msg *check_sent(struct cn_sock *s, unsigned i, uint32_t dst,
				       const struct cn_msg *want, const void *payload, size_t len)
{
	assert_non_null(fake_sent(i));
	assert_true(fake_sent(i)->has_name);
	assert_int_equal(fake_sent(i)->dst_port, dst);
	return check_bytes(s, i, want, payload, len);
}

static void send_writes_seq_and_ack(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "hello", 5);
	uint32_t seq0, ack0, acks[8];

	assert_non_null(m);
	m->seq = 0xdead;
	m->ack = 0xbeef;
	assert_int_equal(cn_send(s, m, 0), 0);
	assert_int_equal(fake_calls.sendmsg, 1);
	/* msg holds what went out */
	check_sent(s, 0, 0, m, "hello", 5);
	seq0 = m->seq;
	ack0 = m->ack;

	/* seq increments by one per message; acks are fresh each time */
	acks[0] = ack0;
	for (unsigned i = 1; i < 8; i++) {
		assert_int_equal(cn_send(s, m, 0), 0);
		assert_int_equal(m->seq, seq0 + i);
		check_sent(s, i, 0, m, "hello", 5);
		acks[i] = m->ack;
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(acks[i], acks[j]);
	}
}

static void send_keep_flags(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 7, 8, NULL, 0);
	uint32_t seq0;

	assert_int_equal(cn_send(s, m, 0), 0);
	seq0 = m->seq;

	m->seq = 1234;
	m->ack = 5678;
	assert_int_equal(cn_send(s, m, CN_SEND_KEEP_SEQ), 0);
	assert_int_equal(m->seq, 1234);
	assert_int_not_equal(m->ack, 5678);
	check_sent(s, 1, 0, m, NULL, 0);
	assert_int_equal(fake_sent_cn(1)->seq, 1234);

	m->seq = 1;
	m->ack = 5678;
	assert_int_equal(cn_send(s, m, CN_SEND_KEEP_ACK), 0);
	assert_int_equal(m->ack, 5678);
	/* a kept seq does not consume the socket's counter */
	assert_int_equal(m->seq, seq0 + 1);
	check_sent(s, 2, 0, m, NULL, 0);
	assert_int_equal(fake_sent_cn(2)->ack, 5678);

	m->seq = 42;
	m->ack = 43;
	assert_int_equal(cn_send(s, m, CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK), 0);
	assert_int_equal(fake_sent_cn(3)->seq, 42);
	assert_int_equal(fake_sent_cn(3)->ack, 43);
}

static void sendto_port(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 1, 2, "abc", 3);

	assert_int_equal(cn_sendto(s, m, 4242, 0), 0);
	check_sent(s, 0, 4242, m, "abc", 3);
}

/* The kernel's connector takes 16,364 payload bytes (CN_MSG_MAX_LEN); the
 * boundary of every send call is test_size_limit.c's. */
static void send_largest_and_too_large(void **state)
{
	struct cn_sock *s = fake_sock(state);
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE)];
	} u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 1, 2, NULL, CN_MSG_MAX_LEN);

	memset(m->data, 'z', CN_MSG_MAX_LEN);
	assert_int_equal(cn_send(s, m, 0), 0);
	check_sent(s, 0, 0, m, m->data, CN_MSG_MAX_LEN);

	m->len = CN_MSG_MAX_LEN + 1;
	errno = 0;
	assert_int_equal(cn_send(s, m, 0), -EMSGSIZE);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(fake_calls.sendmsg, 1);
}

static void send_errors(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 1, 2, "abc", 3);

	/* EINTR is retried */
	fake_send_fail(EINTR, 1);
	assert_int_equal(cn_send(s, m, 0), 0);
	assert_int_equal(fake_calls.sendmsg, 2);
	assert_int_equal(fake_sent_count(), 1);

	fake_send_fail(EAGAIN, 1);
	errno = 0;
	assert_int_equal(cn_send(s, m, 0), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
	fake_send_fail(ECONNREFUSED, 1);
	errno = 0;
	assert_int_equal(cn_sendto(s, m, 99, 0), -ECONNREFUSED);
	assert_int_equal(errno, ECONNREFUSED);

	errno = 0;
	assert_int_equal(cn_send(s, m, 0x80), -EINVAL);
	errno = 0;
	assert_int_equal(cn_send(s, m, CN_REQUEST_OVERRUN_WAIT), -EINVAL); /* cn_request only */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_sendto(s, m, 99, CN_SEND_ACK), -EINVAL); /* only the kernel answers */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_send(s, NULL, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_send(NULL, m, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_sendto(s, m, 0, 0x80), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_sent_count(), 1);
}

static void reply_to_sender(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d = fake_dgram(777);
	struct cn_message in;
	struct cn_msg want;

	fake_add_cn(d, 9, 10, 55, 0x1000, "question", 8);
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(in.port, 777);

	assert_int_equal(cn_reply(s, &in, "answer", 6), 0);
	memset(&want, 0, sizeof(want));
	want.id.idx = 9;
	want.id.val = 10;
	want.seq = 55;
	want.ack = 0x1001;
	check_sent(s, 0, 777, &want, "answer", 6);
	/* what was sent is a reply under the strict policy */
	assert_int_equal(cn_is_reply(in.msg, fake_sent_cn(0), CN_MATCH_STRICT), 1);

	/* empty reply, and ack wraparound */
	fake_add_cn(fake_dgram(0), 9, 10, 56, 0xffffffffu, NULL, 0);
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_reply(s, &in, NULL, 0), 0);
	want.seq = 56;
	want.ack = 0;
	check_sent(s, 1, 0, &want, NULL, 0);

	errno = 0;
	assert_int_equal(cn_reply(s, &in, NULL, 3), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_reply(s, &in, "x", CONNECTOR_MAX_MSG_SIZE + 1), -EMSGSIZE);
	assert_int_equal(errno, EMSGSIZE);
	errno = 0;
	assert_int_equal(cn_reply(s, NULL, "x", 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_reply(NULL, &in, "x", 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
	in.msg = NULL;
	errno = 0;
	assert_int_equal(cn_reply(s, &in, "x", 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_sent_count(), 2);
}

/* A socket that takes only the kernel's messages is connected to it: small
 * messages to the kernel go out whole with send() (no address), the same
 * bytes as sendmsg would gather; large ones and other ports use sendmsg with
 * an address. */
static void connected_socket_sends_whole(void **state)
{
	struct cn_open_opts o = { .sz = sizeof(o) };
	struct cn_sock *t;
	union buf u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "hello", 5);
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(1000)];
	} big;
	struct cn_msg *b = cn_msg_init(&big, sizeof(big), 1, 2, NULL, 1000);

	(void)state;
	fake_reset();
	t = cn_open(NETLINK_CONNECTOR, &o);
	assert_non_null(t);
	assert_int_equal(cn_send(t, m, 0), 0);
	assert_int_equal(fake_calls.send, 1);
	assert_int_equal(fake_calls.sendmsg, 0);
	assert_false(fake_sent(0)->has_name);
	check_bytes(t, 0, m, "hello", 5);

	/* up to 256 bytes with the netlink header go whole, one more does not */
	memset(b->data, 'q', 1000);
	b->len = 256 - NLMSG_HDRLEN - sizeof(struct cn_msg);
	assert_int_equal(cn_send(t, b, 0), 0);
	assert_int_equal(fake_calls.send, 2);
	assert_int_equal(fake_calls.sendmsg, 0);
	check_bytes(t, 1, b, b->data, b->len);
	b->len++;
	assert_int_equal(cn_send(t, b, 0), 0);
	assert_int_equal(fake_calls.send, 2);
	assert_int_equal(fake_calls.sendmsg, 1);
	assert_true(fake_sent(2)->has_name);
	assert_int_equal(fake_sent(2)->dst_port, 0);
	check_bytes(t, 2, b, b->data, b->len);

	assert_int_equal(cn_sendto(t, m, 4242, 0), 0);
	assert_int_equal(fake_calls.sendmsg, 2);
	assert_true(fake_sent(3)->has_name);
	assert_int_equal(fake_sent(3)->dst_port, 4242);
	check_bytes(t, 3, m, "hello", 5);

	/* send() is retried on EINTR and reports other errors */
	fake_send_fail(EINTR, 1);
	assert_int_equal(cn_send(t, m, 0), 0);
	assert_int_equal(fake_calls.send, 4);
	assert_int_equal(fake_sent_count(), 5);
	fake_send_fail(EAGAIN, 1);
	errno = 0;
	assert_int_equal(cn_send(t, m, 0), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fake_sent_count(), 5);
	cn_close(t);
}

static void two_sockets_have_independent_sequences(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_open_opts o = { .sz = sizeof(o) };
	struct cn_sock *t = cn_open(NETLINK_CONNECTOR, &o);
	union buf u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 1, 2, NULL, 0);
	uint32_t a1, a2, b1;

	assert_non_null(t);
	assert_int_not_equal(cn_port(s), cn_port(t));
	assert_int_equal(cn_send(s, m, 0), 0);
	a1 = m->seq;
	assert_int_equal(cn_send(t, m, 0), 0);
	b1 = m->seq;
	assert_int_equal(cn_send(s, m, 0), 0);
	a2 = m->seq;
	assert_int_equal(a2, a1 + 1);
	(void)b1;
	assert_int_equal(((const struct nlmsghdr *)fake_sent(1)->data)->nlmsg_pid, cn_port(t));
	cn_close(t);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(send_writes_seq_and_ack),
		T(send_keep_flags),
		T(sendto_port),
		T(send_largest_and_too_large),
		T(send_errors),
		T(reply_to_sender),
		T(two_sockets_have_independent_sequences),
		T(connected_socket_sends_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
