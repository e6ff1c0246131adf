/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test_notify.c - kmod notification-request builders, validator and decoder. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <libcn.h>

#define BUFSZ CN_NOTIFY_SIZE(CN_NOTIFY_MAX_RANGES, 0)

static uint32_t rd32(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, 4);
	return v;
}

static const struct cn_range idx2[] = { { 0x123, 1 }, { 0x200, 16 } };
static const struct cn_range val3[] = { { 0x456, 2 }, { 0, 1 }, { 0xfffffff0u, 16 } };

/* Check the bytes of a control message as kmod reads them. */
static void check_layout(const struct cn_msg *m, uint32_t group)
{
	const uint8_t *p = (const uint8_t *)m;
	const size_t ranges = 2 + 3;

	assert_int_equal(sizeof(struct cn_ctl_msg), 16);
	assert_int_equal(sizeof(struct cn_notify_req), 8);
	assert_int_equal(rd32(p, 0), 0xffffffffu); /* id.idx */
	assert_int_equal(rd32(p, 4), 0xffffffffu); /* id.val */
	assert_int_equal(m->id.idx, CN_NOTIFY_IDX);
	assert_int_equal(m->id.val, CN_NOTIFY_VAL);
	assert_int_equal(m->seq, 0);
	assert_int_equal(m->ack, 0);
	assert_int_equal(m->flags, 0);
	assert_int_equal(m->len, 16 + ranges * 8);

	p = m->data;
	assert_int_equal(rd32(p, 0), 2);	   /* idx_notify_num */
	assert_int_equal(rd32(p, 4), 3);	   /* val_notify_num */
	assert_int_equal(rd32(p, 8), group);	   /* group */
	assert_int_equal(rd32(p, 12), ranges * 8); /* len */
	/* idx ranges first, then val ranges, each {first, range} */
	assert_int_equal(rd32(p, 16), 0x123);
	assert_int_equal(rd32(p, 20), 1);
	assert_int_equal(rd32(p, 24), 0x200);
	assert_int_equal(rd32(p, 28), 16);
	assert_int_equal(rd32(p, 32), 0x456);
	assert_int_equal(rd32(p, 36), 2);
	assert_int_equal(rd32(p, 40), 0);
	assert_int_equal(rd32(p, 44), 1);
	assert_int_equal(rd32(p, 48), 0xfffffff0u);
	assert_int_equal(rd32(p, 52), 16);
}

static void build_layout(void **state)
{
	union {
		struct cn_msg m;
		uint8_t b[BUFSZ + 16];
	} u;
	struct cn_msg *m;

	(void)state;
	memset(&u, 0xee, sizeof(u));
	m = cn_notify_build(&u, sizeof(u), idx2, 2, val3, 3, 5);
	assert_ptr_equal(m, &u.m);
	check_layout(m, 5);
	assert_int_equal(u.b[CN_NOTIFY_SIZE(2, 3)], 0xee); /* nothing written beyond */
	assert_int_equal(CN_NOTIFY_SIZE(2, 3), 20 + 16 + 5 * 8);
	assert_int_equal(cn_notify_validate(m->data, m->len), 0);

	memset(&u, 0xee, sizeof(u));
	m = cn_notify_build_remove(&u, sizeof(u), idx2, 2, val3, 3);
	assert_ptr_equal(m, &u.m);
	check_layout(m, 0);
	assert_int_equal(cn_notify_validate(m->data, m->len), 0);

	/* exactly CN_NOTIFY_SIZE is enough */
	m = cn_notify_build(&u, CN_NOTIFY_SIZE(2, 3), idx2, 2, val3, 3, 0xffffffffu);
	assert_non_null(m);
	check_layout(m, 0xffffffffu);
}

static void build_single_and_max(void **state)
{
	union {
		struct cn_msg m;
		uint8_t b[BUFSZ];
	} u;
	struct cn_range many[CN_NOTIFY_MAX_RANGES];
	struct cn_msg *m;

	(void)state;
	m = cn_notify_build(&u, sizeof(u), idx2, 1, val3, 1, 1);
	assert_non_null(m);
	assert_int_equal(m->len, 16 + 16);
	assert_int_equal(cn_notify_validate(m->data, m->len), 0);

	for (unsigned i = 0; i < CN_NOTIFY_MAX_RANGES; i++) {
		many[i].first = i * 10;
		many[i].range = i + 1;
	}
	m = cn_notify_build(&u, sizeof(u), many, CN_NOTIFY_MAX_RANGES - 1, many, 1, 3);
	assert_non_null(m);
	assert_int_equal(m->len, 16 + CN_NOTIFY_MAX_RANGES * 8);
	assert_int_equal(rd32(m->data, 16 + 62 * 8), 620); /* last idx range */
	assert_int_equal(rd32(m->data, 16 + 63 * 8), 0);   /* the one val range */
	assert_int_equal(rd32(m->data, 16 + 63 * 8 + 4), 1);
	assert_int_equal(cn_notify_validate(m->data, m->len), 0);
}

static void expect_build_fails(struct cn_msg *m, int err)
{
	assert_null(m);
	assert_int_equal(errno, err);
}

static void build_errors(void **state)
{
	union {
		struct cn_msg m;
		uint8_t b[BUFSZ + 64];
	} u;
	struct cn_range many[CN_NOTIFY_MAX_RANGES + 1] = { { 0, 1 } };

	(void)state;
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), idx2, 2, val3, 3, 0), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), idx2, 0, val3, 3, 1), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), idx2, 2, val3, 0, 1), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build_remove(&u, sizeof(u), idx2, 0, val3, 0), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), NULL, 2, val3, 3, 1), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), idx2, 2, NULL, 3, 1), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build(NULL, sizeof(u), idx2, 2, val3, 3, 1), EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build_remove(NULL, sizeof(u), idx2, 2, val3, 3), EINVAL);
	/* too many ranges: 64 + 1, with a buffer large enough for them */
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), many, CN_NOTIFY_MAX_RANGES, many, 1, 1),
			   EINVAL);
	errno = 0;
	expect_build_fails(cn_notify_build(&u, sizeof(u), many, 0xffffffffu, many, 2, 1), EINVAL);
	/* small buffer */
	errno = 0;
	expect_build_fails(cn_notify_build(&u, CN_NOTIFY_SIZE(2, 3) - 1, idx2, 2, val3, 3, 1),
			   EMSGSIZE);
	errno = 0;
	expect_build_fails(cn_notify_build_remove(&u, 20, idx2, 2, val3, 3), EMSGSIZE);
	errno = 0;
	expect_build_fails(cn_notify_build(&u, 0, idx2, 2, val3, 3, 1), EMSGSIZE);
}

/* A valid payload to break in different ways. */
struct ctl {
	uint32_t idx_num, val_num, group, len;
	uint32_t r[2 * 4];
};

static struct ctl good_ctl(void)
{
	struct ctl c = { 2, 2, 7, 4 * 8, { 1, 1, 2, 2, 3, 3, 4, 4 } };

	return c;
}

static void expect_invalid(const struct ctl *c, size_t len)
{
	errno = 0;
	assert_int_equal(cn_notify_validate(c, len), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
}

static void validate(void **state)
{
	struct ctl c = good_ctl();
	const size_t full = 16 + 4 * 8;

	(void)state;
	assert_int_equal(sizeof(c), full);
	assert_int_equal(cn_notify_validate(&c, full), 0);
	c.group = 0; /* a removal is well-formed too */
	assert_int_equal(cn_notify_validate(&c, full), 0);

	expect_invalid(&c, full - 1); /* payload shorter than ctl.len says */
	expect_invalid(&c, 15);	      /* not even a header */
	expect_invalid(&c, 0);
	c = good_ctl();
	c.idx_num = 0, c.val_num = 4; /* no idx range */
	expect_invalid(&c, full);
	c = good_ctl();
	c.idx_num = 4, c.val_num = 0; /* no val range */
	expect_invalid(&c, full);
	c = good_ctl();
	c.len = 3 * 8; /* len disagrees with the counts */
	expect_invalid(&c, full);
	c = good_ctl();
	c.len = 5 * 8;
	expect_invalid(&c, full);
	c = good_ctl();
	c.idx_num = 3; /* counts disagree with len */
	expect_invalid(&c, full);
	c = good_ctl();
	c.idx_num = 64, c.val_num = 1; /* too many ranges */
	c.len = 65 * 8;
	expect_invalid(&c, full);
	c = good_ctl();
	c.idx_num = 0x80000000u, c.val_num = 0x80000000u; /* sum wraps in 32 bits */
	c.len = 0;
	expect_invalid(&c, 16);
	c = good_ctl();
	c.idx_num = 0x20000002u; /* len = num * 8 wraps to 4 * 8 in 32 bits */
	expect_invalid(&c, full);
	errno = 0;
	assert_int_equal(cn_notify_validate(NULL, full), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	/* A payload with bytes after the ranges */
	{
		uint8_t big[sizeof(struct ctl) + 8];
		struct ctl g = good_ctl();

		memcpy(big, &g, sizeof(g));
		memset(big + sizeof(g), 0, 8);
		errno = 0;
		assert_int_equal(cn_notify_validate(big, sizeof(big)), -EBADMSG);
	}
}

static struct cn_msg note(uint32_t idx, uint32_t val, uint32_t ack, uint16_t len)
{
	struct cn_msg m;

	memset(&m, 0, sizeof(m));
	m.id.idx = idx;
	m.id.val = val;
	m.ack = ack;
	m.len = len;
	return m;
}

static void decode(void **state)
{
	struct cn_notification n;
	struct cn_msg m;

	(void)state;
	m = note(0x123, 0x456, CN_NOTIFY_ADDED, 0);
	memset(&n, 0xff, sizeof(n));
	assert_int_equal(cn_notify_decode(&m, &n), 0);
	assert_int_equal(n.idx, 0x123);
	assert_int_equal(n.val, 0x456);
	assert_int_equal(n.added, 1);

	m = note(0x123, 0x457, CN_NOTIFY_REMOVED, 0);
	memset(&n, 0xff, sizeof(n));
	assert_int_equal(cn_notify_decode(&m, &n), 0);
	assert_int_equal(n.idx, 0x123);
	assert_int_equal(n.val, 0x457);
	assert_int_equal(n.added, 0);

	/* not notifications */
	m = note(0x123, 0x456, 2, 0);
	errno = 0;
	assert_int_equal(cn_notify_decode(&m, &n), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	m = note(0x123, 0x456, 0x12345678, 0); /* an ordinary message's random ack */
	assert_int_equal(cn_notify_decode(&m, &n), -EBADMSG);
	m = note(0x123, 0x456, CN_NOTIFY_ADDED, 4); /* carries a payload */
	errno = 0;
	assert_int_equal(cn_notify_decode(&m, &n), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	m = note(CN_NOTIFY_IDX, CN_NOTIFY_VAL, CN_NOTIFY_ADDED, 0); /* the control id */
	assert_int_equal(cn_notify_decode(&m, &n), -EBADMSG);

	errno = 0;
	assert_int_equal(cn_notify_decode(NULL, &n), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_notify_decode(&m, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void built_message_is_not_a_notification(void **state)
{
	union {
		struct cn_msg m;
		uint8_t b[BUFSZ];
	} u;
	struct cn_notification n;
	struct cn_msg *m = cn_notify_build(&u, sizeof(u), idx2, 2, val3, 3, 5);

	(void)state;
	assert_non_null(m);
	assert_int_equal(cn_notify_decode(m, &n), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_layout),
		cmocka_unit_test(build_single_and_max),
		cmocka_unit_test(build_errors),
		cmocka_unit_test(validate),
		cmocka_unit_test(decode),
		cmocka_unit_test(built_message_is_not_a_notification),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
