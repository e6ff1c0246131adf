/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_size_limit.c - every send call refuses with -EMSGSIZE exactly what
 * the kernel's connector would drop without a word: a message whose
 * len + sizeof(struct cn_msg) is over CONNECTOR_MAX_MSG_SIZE
 * (drivers/connector/connector.c, cn_rx_skb), so 16,364 payload bytes go
 * out and 16,365 are refused before anything is sent. To another port the
 * limit is CONNECTOR_MAX_MSG_SIZE (libcn.h, CN_MSG_MAX_LEN).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/dm-log-userspace.h>

#include "fake_sys.h"

#define LIMIT 16364u

static union {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE + 1)];
} big;
static uint8_t payload[CONNECTOR_MAX_MSG_SIZE + 1];

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

/* A socket that takes messages from userspace peers too. */
static int setup_any_sender(void **state)
{
	*state = fake_open(CN_OPEN_ANY_SENDER, 0);
	return 0;
}

/* A message of len payload bytes to id 1.2 (cn_msg_init builds up to
 * CONNECTOR_MAX_MSG_SIZE; one more is set by hand). */
static struct cn_msg *msg_of(size_t len)
{
	size_t built = len > CONNECTOR_MAX_MSG_SIZE ? CONNECTOR_MAX_MSG_SIZE : len;
	struct cn_msg *m = cn_msg_init(&big, sizeof(big), 1, 2, NULL, built);

	assert_non_null(m);
	memset(m->data, 'z', len);
	m->len = (uint16_t)len;
	return m;
}

/* call() refused len with -EMSGSIZE (errno too) and sent nothing. */
#define ASSERT_REFUSED(call)                                                                       \
	do {                                                                                       \
		unsigned before = fake_sent_count();                                               \
		errno = 0;                                                                         \
		assert_int_equal((call), -EMSGSIZE);                                               \
		assert_int_equal(errno, EMSGSIZE);                                                 \
		assert_int_equal(fake_sent_count(), before);                                       \
	} while (0)

/* The last message sent carried len payload bytes. */
static void assert_sent_len(size_t len)
{
	unsigned n = fake_sent_count();

	assert_true(n > 0);
	assert_int_equal(fake_sent(n - 1)->len, NLMSG_HDRLEN + sizeof(struct cn_msg) + len);
	assert_int_equal(fake_sent_cn(n - 1)->len, len);
}

static void the_limit_is_the_kernels(void **state)
{
	(void)state;
	assert_int_equal(CN_MSG_MAX_LEN, LIMIT);
	assert_int_equal(CN_MSG_MAX_LEN + sizeof(struct cn_msg), CONNECTOR_MAX_MSG_SIZE);
}

static void send_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);

	assert_int_equal(cn_send(s, msg_of(LIMIT), 0), 0);
	assert_sent_len(LIMIT);
	ASSERT_REFUSED(cn_send(s, msg_of(LIMIT + 1), 0));
	ASSERT_REFUSED(cn_sendto(s, msg_of(LIMIT + 1), 0, 0));
	/* acked: refused before the send, nothing is armed */
	ASSERT_REFUSED(cn_send(s, msg_of(LIMIT + 1), CN_SEND_ACK));
	assert_int_equal(cn_send(s, msg_of(LIMIT), CN_SEND_ACK), 1); /* sent, no answer */
	assert_sent_len(LIMIT);
	/* genealogy is not touched by a refusal */
	msg_of(LIMIT + 1)->seq = 77;
	big.m.ack = 88;
	ASSERT_REFUSED(cn_send(s, &big.m, 0));
	assert_int_equal(big.m.seq, 77);
	assert_int_equal(big.m.ack, 88);
}

/* A userspace peer is not the connector: it takes CONNECTOR_MAX_MSG_SIZE. */
static void sendto_peer_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);

	assert_int_equal(cn_sendto(s, msg_of(CONNECTOR_MAX_MSG_SIZE), 4242, 0), 0);
	assert_sent_len(CONNECTOR_MAX_MSG_SIZE);
	ASSERT_REFUSED(cn_sendto(s, msg_of(CONNECTOR_MAX_MSG_SIZE + 1), 4242, 0));
}

static void request_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message reply;

	ASSERT_REFUSED(cn_request(s, msg_of(LIMIT + 1), 0, CN_MATCH_STRICT, 0, &reply));
	/* sent; nobody answers */
	assert_int_equal(cn_request(s, msg_of(LIMIT), 0, CN_MATCH_STRICT, 0, &reply), -ETIMEDOUT);
	assert_sent_len(LIMIT);
}

static void async_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(8)];
	} small;
	struct cn_msg *reqs[2] = { cn_msg_init(&small, sizeof(small), 1, 2, "x", 1), NULL };

	assert_int_equal(cn_async_init(s, 4, CN_MATCH_STRICT, 1000), 0);
	reqs[1] = msg_of(LIMIT + 1);
	/* the whole call is refused: not even the small one goes out */
	ASSERT_REFUSED(cn_async_send(s, reqs, NULL, 2, 0));
	assert_int_equal(cn_async_inflight(s), 0);
	reqs[1] = msg_of(LIMIT);
	assert_int_equal(cn_async_send(s, reqs, NULL, 2, 0), 2);
	assert_sent_len(LIMIT);
}

/* A request from port `port`, received: what the replies answer. */
static void receive_request(struct cn_sock *s, uint32_t port, struct cn_message *in)
{
	fake_add_cn(fake_dgram(port), 9, 10, 55, 0x1000, "question", 8);
	assert_int_equal(cn_recv(s, in, CN_RECV_DONTWAIT), 0);
}

static void reply_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;

	receive_request(s, 0, &in);
	assert_int_equal(cn_reply(s, &in, payload, LIMIT), 0);
	assert_sent_len(LIMIT);
	ASSERT_REFUSED(cn_reply(s, &in, payload, LIMIT + 1));
	/* every convention libcn answers a kernel user with (w1 takes none) */
	static const enum cn_reply_conv convs[] = { CN_REPLY_GENEALOGY, CN_REPLY_DM_ULOG,
						    CN_REPLY_UVESAFB, CN_REPLY_HV };
	for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		assert_int_equal(cn_reply_as(s, &in, convs[i], 0, payload, LIMIT), 0);
		assert_sent_len(LIMIT);
		ASSERT_REFUSED(cn_reply_as(s, &in, convs[i], 0, payload, LIMIT + 1));
	}
}

/* Answers to a userspace peer (a socket opened with CN_OPEN_ANY_SENDER
 * takes its requests): CONNECTOR_MAX_MSG_SIZE. */
static void reply_to_peer_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;

	receive_request(s, 777, &in);
	assert_int_equal(cn_reply(s, &in, payload, CONNECTOR_MAX_MSG_SIZE), 0);
	assert_sent_len(CONNECTOR_MAX_MSG_SIZE);
	ASSERT_REFUSED(cn_reply(s, &in, payload, CONNECTOR_MAX_MSG_SIZE + 1));
	assert_int_equal(
	    cn_reply_as(s, &in, CN_REPLY_GENEALOGY, 0, payload, CONNECTOR_MAX_MSG_SIZE), 0);
	ASSERT_REFUSED(
	    cn_reply_as(s, &in, CN_REPLY_GENEALOGY, 0, payload, CONNECTOR_MAX_MSG_SIZE + 1));
}

/* dm-log-userspace: the answer is the echoed struct dm_ulog_request and
 * the data, so 16,364 - 160 data bytes at most. A 16,205-byte answer was
 * accepted before and dropped by the kernel, which then resent its request
 * for ever. */
static void dm_ulog_reply_boundary(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct dm_ulog_request req;
	struct cn_message in;
	const size_t most = LIMIT - sizeof(req);

	assert_int_equal(sizeof(req), 160);
	memset(&req, 0, sizeof(req));
	req.request_type = DM_ULOG_GET_REGION_SIZE;
	fake_add_cn(fake_dgram(0), CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 3, 0, &req, sizeof(req));
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, payload, most), 0);
	assert_sent_len(LIMIT);
	ASSERT_REFUSED(cn_dm_ulog_reply(s, &in, 0, payload, most + 1));
	ASSERT_REFUSED(cn_dm_ulog_reply(s, &in, 0, payload, 16205));
	ASSERT_REFUSED(cn_dm_ulog_reply(s, &in, -ESRCH, payload, most + 1));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_limit_is_the_kernels),
		T(send_boundary),
		T(sendto_peer_boundary),
		T(request_boundary),
		T(async_boundary),
		T(reply_boundary),
		cmocka_unit_test_setup_teardown(reply_to_peer_boundary, setup_any_sender,
						fake_teardown),
		T(dm_ulog_reply_boundary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
