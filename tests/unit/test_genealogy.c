/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test_genealogy.c - cn_is_reply under both policies, and cn_msg_init. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <libcn.h>

static struct cn_msg mk(uint32_t idx, uint32_t val, uint32_t seq, uint32_t ack)
{
	struct cn_msg m;

	memset(&m, 0, sizeof(m));
	m.id.idx = idx;
	m.id.val = val;
	m.seq = seq;
	m.ack = ack;
	return m;
}

static void strict_policy(void **state)
{
	struct cn_msg req = mk(0x123, 0x456, 100, 5000);
	struct cn_msg r;

	(void)state;
	r = mk(0x123, 0x456, 100, 5001);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 1);
	r = mk(0x123, 0x456, 101, 5001); /* wrong seq */
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
	r = mk(0x123, 0x456, 100, 5000); /* same ack: the request itself */
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
	r = mk(0x123, 0x456, 100, 5002); /* wrong ack */
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
	r = mk(0x123, 0x457, 100, 5001); /* different val */
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
	r = mk(0x124, 0x456, 100, 5001); /* different idx */
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
}

static void ack_only_policy(void **state)
{
	struct cn_msg req = mk(CN_IDX_PROC, CN_VAL_PROC, 100, 5000);
	struct cn_msg r;

	(void)state;
	r = mk(CN_IDX_PROC, CN_VAL_PROC, 100, 5001);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 1);
	/* The proc connector overwrites seq: still a reply under ack-only. */
	r = mk(CN_IDX_PROC, CN_VAL_PROC, 7, 5001);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 1);
	r = mk(CN_IDX_PROC, CN_VAL_PROC, 100, 5000);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 0);
	r = mk(CN_IDX_PROC, CN_VAL_PROC, 100, 4999);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 0);
	r = mk(CN_IDX_PROC + 1, CN_VAL_PROC, 100, 5001);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 0);
	r = mk(CN_IDX_PROC, CN_VAL_PROC + 1, 100, 5001);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 0);
}

static void ack_wraparound(void **state)
{
	struct cn_msg req = mk(1, 2, 3, 0xffffffffu);
	struct cn_msg r = mk(1, 2, 3, 0);

	(void)state;
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 1);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_ACK_ONLY), 1);
	r.ack = 0xffffffffu;
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
	/* seq wraps the same way as any number: 0xffffffff is just a seq */
	req = mk(1, 2, 0xffffffffu, 10);
	r = mk(1, 2, 0xffffffffu, 11);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 1);
	r.seq = 0;
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 0);
}

static void is_reply_null(void **state)
{
	struct cn_msg req = mk(1, 2, 3, 4), r = mk(1, 2, 3, 5);

	(void)state;
	assert_int_equal(cn_is_reply(NULL, &r, CN_MATCH_STRICT), 0);
	assert_int_equal(cn_is_reply(&req, NULL, CN_MATCH_STRICT), 0);
	assert_int_equal(cn_is_reply(&req, &r, CN_MATCH_STRICT), 1);
}

static void msg_init_sizes(void **state)
{
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(64)];
	} u;
	struct cn_msg *m;
	const char payload[] = "payload!";

	(void)state;
	assert_int_equal(sizeof(struct cn_msg), 20);
	assert_int_equal(CN_MSG_SIZE(0), 20);
	assert_int_equal(CN_MSG_SIZE(10), 30);

	memset(&u, 0xee, sizeof(u));
	m = cn_msg_init(&u, sizeof(u), 0x123, 0x456, payload, 8);
	assert_ptr_equal(m, &u.m);
	assert_int_equal(m->id.idx, 0x123);
	assert_int_equal(m->id.val, 0x456);
	assert_int_equal(m->seq, 0);
	assert_int_equal(m->ack, 0);
	assert_int_equal(m->len, 8);
	assert_int_equal(m->flags, 0);
	assert_memory_equal(m->data, payload, 8);
	assert_int_equal(u.b[CN_MSG_SIZE(8)], 0xee); /* nothing written past the message */

	/* Exactly CN_MSG_SIZE(len) bytes are enough. */
	m = cn_msg_init(&u, CN_MSG_SIZE(8), 1, 2, payload, 8);
	assert_non_null(m);
	/* data NULL: payload left for the caller, length still set */
	memset(&u, 0xee, sizeof(u));
	m = cn_msg_init(&u, sizeof(u), 1, 2, NULL, 16);
	assert_non_null(m);
	assert_int_equal(m->len, 16);
	assert_int_equal(u.b[20], 0xee);
	/* len 0 */
	m = cn_msg_init(&u, CN_MSG_SIZE(0), 1, 2, NULL, 0);
	assert_non_null(m);
	assert_int_equal(m->len, 0);
}

static void msg_init_errors(void **state)
{
	static uint8_t big[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE + 8)] __attribute__((aligned(8)));
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(8)];
	} u;
	struct cn_msg *m;

	(void)state;
	assert_int_equal(CONNECTOR_MAX_MSG_SIZE, 16384);
	errno = 0;
	assert_null(cn_msg_init(NULL, 100, 1, 2, NULL, 0));
	assert_int_equal(errno, EINVAL);

	errno = 0;
	assert_null(cn_msg_init(&u, CN_MSG_SIZE(8) - 1, 1, 2, "12345678", 8));
	assert_int_equal(errno, EMSGSIZE);
	errno = 0;
	assert_null(cn_msg_init(&u, sizeof(struct cn_msg) - 1, 1, 2, NULL, 0));
	assert_int_equal(errno, EMSGSIZE);
	errno = 0;
	assert_null(cn_msg_init(&u, 0, 1, 2, NULL, 0));
	assert_int_equal(errno, EMSGSIZE);

	/* The largest payload is accepted, one more byte is not. */
	m = cn_msg_init(big, sizeof(big), 1, 2, NULL, CONNECTOR_MAX_MSG_SIZE);
	assert_non_null(m);
	assert_int_equal(m->len, CONNECTOR_MAX_MSG_SIZE);
	errno = 0;
	assert_null(cn_msg_init(big, sizeof(big), 1, 2, NULL, CONNECTOR_MAX_MSG_SIZE + 1));
	assert_int_equal(errno, EMSGSIZE);
	/* A length that would wrap the u16 len field must not be truncated. */
	errno = 0;
	assert_null(cn_msg_init(big, sizeof(big), 1, 2, NULL, 65536 + 4));
	assert_int_equal(errno, EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strict_policy),  cmocka_unit_test(ack_only_policy),
		cmocka_unit_test(ack_wraparound), cmocka_unit_test(is_reply_null),
		cmocka_unit_test(msg_init_sizes), cmocka_unit_test(msg_init_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
