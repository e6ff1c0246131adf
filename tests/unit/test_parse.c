/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test_parse.c - cn_parse_next: framing of datagrams holding netlink messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <libcn.h>

#include "w1_bundle.h"

/* A datagram under construction. */
struct dg {
	uint8_t b[4096] __attribute__((aligned(8)));
	size_t len;
};

static struct nlmsghdr *add_nl(struct dg *d, uint16_t type, const void *payload, size_t plen)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(d->b + d->len);

	memset(nlh, 0, NLMSG_SPACE(plen));
	nlh->nlmsg_len = (uint32_t)NLMSG_LENGTH(plen);
	nlh->nlmsg_type = type;
	memcpy(NLMSG_DATA(nlh), payload, plen);
	d->len += NLMSG_SPACE(plen);
	return nlh;
}

static struct nlmsghdr *add_cn(struct dg *d, uint32_t seq, const char *text)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	struct cn_msg *m = (struct cn_msg *)buf;
	size_t n = strlen(text);

	memset(buf, 0, sizeof(buf));
	m->id.idx = 0x123;
	m->id.val = 0x456;
	m->seq = seq;
	m->ack = seq * 3;
	m->len = (uint16_t)n;
	memcpy(m->data, text, n);
	return add_nl(d, NLMSG_DONE, m, sizeof(*m) + n);
}

static void add_err(struct dg *d, int error)
{
	struct nlmsgerr e;

	memset(&e, 0, sizeof(e));
	e.error = error;
	add_nl(d, NLMSG_ERROR, &e, sizeof(e));
}

/* Expect an error return equal to -err, with errno == err. */
static void expect_err(const struct dg *d, struct cn_parse_pos *off, int err)
{
	const struct cn_msg *m = (const void *)1;

	errno = 0;
	assert_int_equal(cn_parse_next(d->b, d->len, off, &m), -err);
	assert_int_equal(errno, err);
	assert_null(m);
}

static void expect_msg(const struct dg *d, struct cn_parse_pos *off, uint32_t seq, const char *text)
{
	const struct cn_msg *m = NULL;

	assert_int_equal(cn_parse_next(d->b, d->len, off, &m), 1);
	assert_non_null(m);
	assert_int_equal(m->id.idx, 0x123);
	assert_int_equal(m->id.val, 0x456);
	assert_int_equal(m->seq, seq);
	assert_int_equal(m->ack, seq * 3);
	assert_int_equal(m->len, strlen(text));
	assert_memory_equal(m->data, text, strlen(text));
	/* The message lies inside the datagram. */
	assert_true((const uint8_t *)m > d->b);
	assert_true((const uint8_t *)m->data + m->len <= d->b + d->len);
}

static void expect_end(const struct dg *d, struct cn_parse_pos *off)
{
	const struct cn_msg *m = (const void *)1;

	assert_int_equal(cn_parse_next(d->b, d->len, off, &m), 0);
	assert_null(m);
}

static void single_message(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	add_cn(&d, 7, "hello");
	expect_msg(&d, &off, 7, "hello");
	assert_int_equal(off.offset, d.len);
	expect_end(&d, &off);
	assert_int_equal(off.offset, d.len);
}

static void several_messages_offset_advances(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	size_t end1, end2;

	(void)state;
	add_cn(&d, 1, "a"); /* 16 + 20 + 1 -> padded to 40 */
	end1 = d.len;
	add_cn(&d, 2, "four");
	end2 = d.len;
	add_cn(&d, 3, "");
	assert_int_equal(end1, 40);

	expect_msg(&d, &off, 1, "a");
	assert_int_equal(off.offset, end1);
	expect_msg(&d, &off, 2, "four");
	assert_int_equal(off.offset, end2);
	expect_msg(&d, &off, 3, "");
	assert_int_equal(off.offset, d.len);
	expect_end(&d, &off);
}

static void last_message_without_padding(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	add_cn(&d, 1, "xyz");
	add_cn(&d, 2, "abc"); /* nlmsg_len 39, padded to 40 */
	d.len -= 1;	      /* the sender omitted the last padding byte */
	expect_msg(&d, &off, 1, "xyz");
	assert_int_equal(off.offset, 40);
	expect_msg(&d, &off, 2, "abc");
	assert_int_equal(off.offset, d.len);
	expect_end(&d, &off);
}

static void unpadded_message_followed_by_more_is_misparsed_not_crash(void **state)
{
	/* A sender that omits padding in the middle: the next header is read
	 * from the aligned offset; whatever happens must stay in bounds. */
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	const struct cn_msg *m;
	int r, n = 0;

	(void)state;
	add_cn(&d, 1, "xyz");
	add_cn(&d, 2, "abc");
	memmove(d.b + 39, d.b + 40, 40);
	d.len -= 1;
	while ((r = cn_parse_next(d.b, d.len, &off, &m)) != 0 && n++ < 10) {
		assert_true(off.offset <= d.len);
		if (r < 0 && r != -ENODATA)
			break;
	}
	assert_true(off.offset <= d.len);
}

static void truncated_header(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	add_cn(&d, 1, "ok");
	/* 10 stray bytes: less than a netlink header */
	memset(d.b + d.len, 0xab, 10);
	d.len += 10;
	expect_msg(&d, &off, 1, "ok");
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len); /* stop walking this datagram */
	expect_end(&d, &off);

	/* A datagram of only 4 bytes. */
	d.len = 4;
	off = (struct cn_parse_pos){ 0 };
	expect_err(&d, &off, EBADMSG);
}

static void nlmsg_len_larger_than_datagram(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	struct nlmsghdr *nlh;

	(void)state;
	nlh = add_cn(&d, 1, "hello");
	nlh->nlmsg_len = (uint32_t)d.len + 8;
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len);

	/* The same, as the second message of a datagram. */
	d.len = 0;
	off = (struct cn_parse_pos){ 0 };
	add_cn(&d, 1, "one");
	nlh = add_cn(&d, 2, "two");
	nlh->nlmsg_len = 0xffffffffu;
	expect_msg(&d, &off, 1, "one");
	expect_err(&d, &off, EBADMSG);
	expect_end(&d, &off);
}

static void nlmsg_len_smaller_than_header(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	struct nlmsghdr *nlh;

	(void)state;
	nlh = add_cn(&d, 1, "hello");
	nlh->nlmsg_len = NLMSG_HDRLEN - 1;
	expect_err(&d, &off, EBADMSG);
	nlh->nlmsg_len = 0; /* would loop forever if accepted */
	off = (struct cn_parse_pos){ 0 };
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len);
}

static void body_shorter_than_cn_msg(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	uint8_t junk[12] = { 0 };

	(void)state;
	add_nl(&d, NLMSG_DONE, junk, sizeof(junk));
	expect_err(&d, &off, EBADMSG);
}

static void cn_len_bigger_than_netlink(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	struct nlmsghdr *nlh;
	struct cn_msg *m;

	(void)state;
	nlh = add_cn(&d, 1, "hello"); /* 5 bytes, padded to 8 */
	m = NLMSG_DATA(nlh);
	m->len = 6; /* claims a byte the netlink message does not have */
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len);

	d.len = 0;
	off = (struct cn_parse_pos){ 0 };
	nlh = add_cn(&d, 1, "hello");
	m = NLMSG_DATA(nlh);
	m->len = 0xffff;
	expect_err(&d, &off, EBADMSG);
}

static void cn_len_smaller_beyond_padding(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	struct nlmsghdr *nlh;
	struct cn_msg *m;

	(void)state;
	/* 8-byte payload, no padding: cn_msg.len 4 leaves 4 bytes, more than
	 * alignment padding can explain and less than another record: the
	 * first record is returned, the cut one refused. */
	nlh = add_cn(&d, 1, "12345678");
	m = NLMSG_DATA(nlh);
	m->len = 4;
	expect_msg(&d, &off, 1, "1234");
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len);
	expect_end(&d, &off);

	/* cn_msg.len 0 in a message with a 16-byte body after the header. */
	d.len = 0;
	off = (struct cn_parse_pos){ 0 };
	nlh = add_cn(&d, 1, "0123456789abcdef");
	m = NLMSG_DATA(nlh);
	m->len = 0;
	expect_msg(&d, &off, 1, "");
	expect_err(&d, &off, EBADMSG);
	expect_end(&d, &off);
}

static void cn_len_smaller_within_padding_is_accepted(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	struct nlmsghdr *nlh;
	struct cn_msg *m;
	const struct cn_msg *out = NULL;

	(void)state;
	/* Payload 5 bytes, but the sender counted padding in nlmsg_len (8). */
	nlh = add_cn(&d, 1, "hello");
	nlh->nlmsg_len = (uint32_t)NLMSG_ALIGN(nlh->nlmsg_len);
	m = NLMSG_DATA(nlh);
	assert_int_equal(m->len, 5);
	assert_int_equal(cn_parse_next(d.b, d.len, &off, &out), 1);
	assert_ptr_equal(out, m);
	assert_int_equal(out->len, 5);
}

static void nlmsg_error_ack_and_errno(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	add_err(&d, 0);
	add_err(&d, -EPERM);
	add_cn(&d, 9, "after");
	expect_err(&d, &off, ENODATA); /* an ack: nothing for the caller */
	expect_err(&d, &off, EPERM);
	expect_msg(&d, &off, 9, "after"); /* walking continues */
	expect_end(&d, &off);
}

static void nlmsg_error_absurd(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	add_err(&d, 5); /* positive: not an errno */
	add_cn(&d, 9, "after");
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len);

	d.len = 0;
	off = (struct cn_parse_pos){ 0 };
	add_err(&d, -100000);
	expect_err(&d, &off, EBADMSG);

	d.len = 0;
	off = (struct cn_parse_pos){ 0 };
	add_err(&d, INT32_MIN);
	expect_err(&d, &off, EBADMSG);

	/* An NLMSG_ERROR too short to hold the error code. */
	d.len = 0;
	off = (struct cn_parse_pos){ 0 };
	add_nl(&d, NLMSG_ERROR, "", 0);
	expect_err(&d, &off, EBADMSG);
}

static void nlmsg_overrun_and_noop(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	add_nl(&d, NLMSG_NOOP, "", 0);
	add_nl(&d, NLMSG_OVERRUN, "", 0);
	add_cn(&d, 4, "x");
	expect_err(&d, &off, ENODATA);
	assert_int_equal(off.offset, NLMSG_HDRLEN);
	expect_err(&d, &off, ENOBUFS);
	assert_int_equal(off.offset, 2 * NLMSG_HDRLEN);
	expect_msg(&d, &off, 4, "x");
	expect_end(&d, &off);
}

static void empty_datagram_and_bad_args(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	const struct cn_msg *m;

	(void)state;
	expect_end(&d, &off);
	off = (struct cn_parse_pos){ .offset = 100 }; /* past the end */
	d.len = 40;
	expect_end(&d, &off);

	errno = 0;
	assert_int_equal(cn_parse_next(NULL, 10, &off, &m), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_parse_next(d.b, 10, NULL, &m), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_parse_next(d.b, 10, &off, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void other_nlmsg_type_carrying_cn_msg(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	struct nlmsghdr *nlh;

	(void)state;
	nlh = add_cn(&d, 5, "t");
	nlh->nlmsg_type = 0x20; /* not NLMSG_DONE: accepted (header doc) */
	expect_msg(&d, &off, 5, "t");
}

/* Three w1 replies in one netlink message (w1_bundle.h): unaligned records,
 * each with its own seq, ack, len and data. */
static const struct w1_record w1_three[] = {
	{ 5, 6, "abc" }, /* a data reply: ack = request seq + 1 */
	{ 5, 41, "" },	 /* a status reply: the request's own ack */
	{ 5, 6, "sensor" },
};

static void expect_w1(const struct dg *d, struct cn_parse_pos *off, const struct w1_record *r)
{
	const struct cn_msg *m = NULL;

	struct cn_msg h; /* records of a bundle are unaligned: copied */

	assert_int_equal(cn_parse_next(d->b, d->len, off, &m), 1);
	assert_non_null(m);
	memcpy(&h, m, sizeof(h));
	assert_int_equal(h.id.idx, CN_W1_IDX);
	assert_int_equal(h.id.val, CN_W1_VAL);
	assert_int_equal(h.seq, r->seq);
	assert_int_equal(h.ack, r->ack);
	assert_int_equal(h.len, strlen(r->data));
	assert_memory_equal((const uint8_t *)m + sizeof(h), r->data, strlen(r->data));
	assert_true((const uint8_t *)m + sizeof(h) + h.len <= d->b + d->len);
}

static void w1_bundle_gives_each_record(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	const struct cn_msg *m = NULL;

	(void)state;
	d.len = w1_bundle(d.b, w1_three, 3);
	/* 16 + (20 + 3) + 20 + (20 + 6) = 85, padded to 88 */
	assert_int_equal(d.len, 88);
	expect_w1(&d, &off, &w1_three[0]);
	expect_w1(&d, &off, &w1_three[1]);
	/* The second record starts at 16 + 23 = 39: unaligned. */
	assert_int_equal(off.offset, 59);
	expect_w1(&d, &off, &w1_three[2]);
	assert_int_equal(off.offset, d.len); /* the padding after it tolerated */
	assert_int_equal(cn_parse_next(d.b, d.len, &off, &m), 0);
}

static void w1_bundle_record_past_message_refused(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };
	uint16_t len = 7;

	(void)state;
	d.len = w1_bundle(d.b, w1_three, 3);
	/* The third record (unaligned) claims one byte more than the
	 * message holds. */
	memcpy(d.b + NLMSG_HDRLEN + 23 + 20 + offsetof(struct cn_msg, len), &len, sizeof(len));
	expect_w1(&d, &off, &w1_three[0]);
	expect_w1(&d, &off, &w1_three[1]);
	expect_err(&d, &off, EBADMSG);
	assert_int_equal(off.offset, d.len);
	expect_end(&d, &off);
}

static void w1_bundle_then_another_message(void **state)
{
	struct dg d = { .len = 0 };
	struct cn_parse_pos off = { 0 };

	(void)state;
	d.len = w1_bundle(d.b, w1_three, 2);
	add_cn(&d, 9, "next");
	expect_w1(&d, &off, &w1_three[0]);
	expect_w1(&d, &off, &w1_three[1]);
	expect_msg(&d, &off, 9, "next");
	expect_end(&d, &off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_message),
		cmocka_unit_test(several_messages_offset_advances),
		cmocka_unit_test(last_message_without_padding),
		cmocka_unit_test(unpadded_message_followed_by_more_is_misparsed_not_crash),
		cmocka_unit_test(truncated_header),
		cmocka_unit_test(nlmsg_len_larger_than_datagram),
		cmocka_unit_test(nlmsg_len_smaller_than_header),
		cmocka_unit_test(body_shorter_than_cn_msg),
		cmocka_unit_test(cn_len_bigger_than_netlink),
		cmocka_unit_test(cn_len_smaller_beyond_padding),
		cmocka_unit_test(cn_len_smaller_within_padding_is_accepted),
		cmocka_unit_test(nlmsg_error_ack_and_errno),
		cmocka_unit_test(nlmsg_error_absurd),
		cmocka_unit_test(nlmsg_overrun_and_noop),
		cmocka_unit_test(empty_datagram_and_bad_args),
		cmocka_unit_test(other_nlmsg_type_carrying_cn_msg),
		cmocka_unit_test(w1_bundle_gives_each_record),
		cmocka_unit_test(w1_bundle_record_past_message_refused),
		cmocka_unit_test(w1_bundle_then_another_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
