/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_groups.c - cn_message.group for every group number. The kernel names
 * the group of a multicast in the sender's address (nl_groups) as a bit for
 * groups 1..32 only: a message multicast to group 0x123 comes with
 * nl_groups 0, like a unicast. Joining a group above 32 (or
 * CN_OPEN_PKTINFO) turns NETLINK_PKTINFO on, and the group is taken from
 * its cmsg; groups up to 32 keep the recvfrom path (no control data).
 * fake_sys.c delivers both as the kernel does.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/cn_proc.h>

#include "fake_sys.h"

#define BIG 0x123u /* kmod's test module multicasts to group 0x123 (291) */

/* Payload bytes of dgram()'s messages. 1: the datagram is padded, longer
 * than its message, so every receive path checks it field by field. 4: as
 * long as its message, as the kernel sends them, so the paths take it with
 * their one test (rx.h, cn__rx_next's fast half): the *_simple variants of the
 * tests below run with it. */
static size_t payload_len;

static int setup(void **state)
{
	payload_len = 1;
	*state = fake_open(0, 0);
	return 0;
}

static int setup_pktinfo(void **state)
{
	payload_len = 1;
	*state = fake_open(CN_OPEN_PKTINFO, 0);
	return 0;
}

static int setup_simple(void **state)
{
	setup(state);
	payload_len = 4;
	return 0;
}

static int setup_pktinfo_simple(void **state)
{
	setup_pktinfo(state);
	payload_len = 4;
	return 0;
}

/* A datagram holding one message (seq) that came through `group`. */
static struct fake_dgram *dgram(uint32_t group, uint32_t seq)
{
	struct fake_dgram *d = fake_dgram(0);

	d->group = group;
	fake_add_cn(d, BIG, 0x459, seq, 0, "msg!", payload_len);
	return d;
}

static void expect_group(struct cn_sock *s, uint32_t seq, uint32_t group)
{
	struct cn_message m;

	memset(&m, 0xff, sizeof(m));
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, seq);
	assert_int_equal(m.group, group);
}

static void small_groups_keep_recvfrom(void **state)
{
	struct cn_sock *s = fake_sock(state);

	assert_int_equal(cn_join(s, 5), 0);
	assert_int_equal(cn_join(s, 32), 0);
	assert_int_equal(fake_calls.pktinfo, 0);
	dgram(5, 1);
	dgram(32, 2);
	dgram(0, 3);
	expect_group(s, 1, 5);
	expect_group(s, 2, 32);
	expect_group(s, 3, 0);
	assert_int_equal(fake_calls.recvmsg, 0);
	assert_int_equal(fake_calls.recvfrom, 3);
}

static void group_above_32_reported_after_join(void **state)
{
	struct cn_sock *s = fake_sock(state);

	/* Before: indistinguishable from a unicast (the kernel's nl_groups). */
	dgram(BIG, 1);
	expect_group(s, 1, 0);

	assert_int_equal(cn_join(s, BIG), 0);
	assert_int_equal(fake_calls.last_join, BIG);
	assert_int_equal(fake_calls.pktinfo, 1);
	assert_int_equal(cn_join(s, BIG + 1), 0);
	assert_int_equal(fake_calls.pktinfo, 1); /* turned on once */
	dgram(BIG, 2);
	dgram(0, 3);
	dgram(5, 4);
	dgram(33, 5);
	expect_group(s, 2, BIG);
	expect_group(s, 3, 0);
	expect_group(s, 4, 5);
	expect_group(s, 5, 33);
	assert_int_equal(cn_recv(s, &(struct cn_message){ 0 }, CN_RECV_DONTWAIT), -EAGAIN);
}

static void batch_reports_groups(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message m[8];

	assert_int_equal(cn_join(s, BIG), 0);
	for (int round = 0; round < 2; round++) {
		dgram(BIG, 1);
		dgram(0, 2);
		dgram(7, 3);
		dgram(BIG + 5, 4);
		assert_int_equal(cn_recv_batch(s, m, 8, CN_RECV_DONTWAIT), 4);
		assert_int_equal(m[0].group, BIG);
		assert_int_equal(m[1].group, 0);
		assert_int_equal(m[2].group, 7);
		assert_int_equal(m[3].group, BIG + 5);
	}
	assert_int_equal(fake_calls.recvmmsg, 2);
}

static void open_flag_turns_pktinfo_on(void **state)
{
	struct cn_sock *s = fake_sock(state);

	assert_int_equal(fake_calls.pktinfo, 1);
	dgram(BIG, 1);
	dgram(1, 2);
	expect_group(s, 1, BIG);
	expect_group(s, 2, 1);
}

/* A datagram read before the join, partly walked: its other messages keep
 * the group nl_groups gave them. */
static void pending_datagram_keeps_its_group(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d = dgram(5, 1);

	fake_add_cn(d, BIG, 0x459, 2, 0, "n", 1);
	expect_group(s, 1, 5);
	assert_int_equal(cn_join(s, BIG), 0);
	expect_group(s, 2, 5);
}

/* Messages kept during cn_request keep their group. */
static void respond(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	dgram(BIG, 77);
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq, req->ack + 1, NULL, 0);
}

/* A request of 4 payload bytes (the same buffer for every test). */
static struct cn_msg *request(void)
{
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4)];
	} u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 0x200, 1, "req", 4);

	assert_non_null(req);
	return req;
}

static void request_keeps_group(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_msg *req = request();
	struct cn_message rep;

	assert_int_equal(cn_join(s, BIG), 0);
	fake_on_send(respond, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &rep), 0);
	assert_int_equal(rep.group, 0);
	expect_group(s, 77, BIG);
}

/* Messages kept during cn_async_complete keep their group too (its walk
 * takes whole datagrams with one test only without NETLINK_PKTINFO). */
static void async_keeps_group(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_msg *req = request();
	const struct cn_msg *sent;
	struct cn_completion c;

	assert_int_equal(cn_join(s, BIG), 0);
	assert_int_equal(cn_async_init(s, 4, CN_MATCH_STRICT, 1000), 0);
	assert_int_equal(cn_async_send(s, &req, NULL, 1, 0), 1);
	sent = fake_sent_hdr(0);
	assert_non_null(sent);
	dgram(BIG, 77);
	dgram(5, 78);
	fake_add_cn(fake_dgram(0), sent->id.idx, sent->id.val, sent->seq, sent->ack + 1, "rep!",
		    payload_len);
	assert_int_equal(cn_async_complete(s, &c, 1, 1000), 1);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.reply.group, 0);
	expect_group(s, 77, BIG);
	expect_group(s, 78, 5);
}

/* cn_proc_recv's fast path reads with the control data too: a datagram it
 * leaves to the generic path keeps the group of its other messages. */
static void proc_fallback_keeps_group(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct proc_event pe;
	struct cn_proc_event ev;
	struct fake_dgram *d;

	assert_int_equal(cn_join(s, BIG), 0);
	memset(&pe, 0, sizeof(pe));
	pe.what = PROC_EVENT_FORK;
	pe.event_data.fork.child_pid = 42;
	/* a lone proc event: the fast path */
	d = fake_dgram(0);
	d->group = CN_IDX_PROC;
	fake_add_cn(d, CN_IDX_PROC, CN_VAL_PROC, 1, 0, &pe, sizeof(pe));
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 42);
	/* a proc event and another message in one datagram: the generic path */
	d = fake_dgram(0);
	d->group = BIG;
	fake_add_cn(d, CN_IDX_PROC, CN_VAL_PROC, 2, 0, &pe, sizeof(pe));
	fake_add_cn(d, BIG, 0x459, 9, 0, "x", 1);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 42);
	expect_group(s, 9, BIG);
}

/* The control buffers of NETLINK_PKTINFO failing to allocate: -ENOMEM,
 * nothing half set up (a later join works and reports groups). */
static void pktinfo_alloc_failure_leaves_socket_usable(void **state)
{
	struct cn_sock *s = fake_sock(state);

	fake_calloc_fail(1);
	assert_int_equal(cn_join(s, BIG), -ENOMEM);
	assert_int_equal(fake_calls.pktinfo, 0);
	dgram(BIG, 1);
	expect_group(s, 1, 0); /* as before the join: nl_groups only */
	assert_int_equal(cn_join(s, BIG), 0);
	assert_int_equal(fake_calls.pktinfo, 1);
	dgram(BIG, 2);
	expect_group(s, 2, BIG);
}

/* A group the unit does not have: the join fails and PKTINFO, turned on
 * for it, is turned off again (single receives stay on recvfrom). */
static void failed_join_turns_pktinfo_off(void **state)
{
	struct cn_sock *s = fake_sock(state);

	fake_join_fail(EINVAL);
	assert_int_equal(cn_join(s, 33), -EINVAL);
	assert_int_equal(fake_calls.pktinfo, 1);
	assert_int_equal(fake_calls.pktinfo_off, 1);
	dgram(5, 1);
	expect_group(s, 1, 5);
	assert_int_equal(fake_calls.recvmsg, 0);
	assert_int_equal(fake_calls.recvfrom, 1);
}

/* With CN_OPEN_PKTINFO a failed join leaves PKTINFO on: it was not the
 * join's to turn off. */
static void failed_join_keeps_open_flag(void **state)
{
	struct cn_sock *s = fake_sock(state);

	fake_join_fail(EINVAL);
	assert_int_equal(cn_join(s, 33), -EINVAL);
	assert_int_equal(fake_calls.pktinfo_off, 0);
	dgram(BIG, 1);
	expect_group(s, 1, BIG);
}

int main(void)
{
#define T(f)  cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
#define TS(f) cmocka_unit_test_setup_teardown(f, setup_simple, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(small_groups_keep_recvfrom),
		T(group_above_32_reported_after_join),
		T(batch_reports_groups),
		cmocka_unit_test_setup_teardown(open_flag_turns_pktinfo_on, setup_pktinfo,
						fake_teardown),
		T(pending_datagram_keeps_its_group),
		T(request_keeps_group),
		T(proc_fallback_keeps_group),
		T(pktinfo_alloc_failure_leaves_socket_usable),
		T(failed_join_turns_pktinfo_off),
		cmocka_unit_test_setup_teardown(failed_join_keeps_open_flag, setup_pktinfo,
						fake_teardown),
		T(async_keeps_group),
		/* the same with datagrams as long as their message */
		TS(group_above_32_reported_after_join),
		TS(batch_reports_groups),
		cmocka_unit_test_setup_teardown(open_flag_turns_pktinfo_on, setup_pktinfo_simple,
						fake_teardown),
		TS(request_keeps_group),
		TS(async_keeps_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
