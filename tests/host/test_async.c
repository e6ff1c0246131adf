/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_async.c - many requests in flight against the running kernel's proc
 * connector: every LISTEN ack matched to its request exactly once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <linux/cn_proc.h>
#include <cmocka.h>

#include "host_util.h"

#define N 64

struct reqs {
	union {
		struct cn_msg m;
		char b[CN_MSG_SIZE(4)];
	} u[N];
	struct cn_msg *p[N];
	uint64_t cookie[N];
};

static void make_listens(struct reqs *r)
{
	uint32_t op = PROC_CN_MCAST_LISTEN;

	for (int i = 0; i < N; i++) {
		r->p[i] = cn_msg_init(&r->u[i], sizeof(r->u[i]), CN_IDX_PROC, CN_VAL_PROC, &op,
				      sizeof(op));
		r->cookie[i] = 1000 + (uint64_t)i;
	}
}

static void test_pipelined_listens_all_matched(void **state)
{
	static struct reqs r;
	struct cn_sock *s = host_open(4 << 20);
	struct cn_completion done[N];
	int seen[N] = { 0 }, total = 0;

	(void)state;
	make_listens(&r);
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_async_init(s, N, CN_MATCH_ACK_ONLY, 5000), 0);
	assert_int_equal(cn_async_send(s, r.p, r.cookie, N, 0), N);
	assert_int_equal(cn_async_inflight(s), N);
	/* The table is full: one more is refused, not silently dropped. */
	assert_int_equal(cn_async_send(s, r.p, r.cookie, 1, CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK),
			 -EBUSY);
	while (total < N) {
		int n = cn_async_complete(s, done, N, 5000);

		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			int k = (int)(done[i].cookie - 1000);
			struct cn_proc_event ev;

			assert_true(k >= 0 && k < N);
			assert_int_equal(done[i].status, 0);
			assert_int_equal(seen[k], 0);
			seen[k] = 1;
			assert_int_equal(done[i].reply.msg->ack, r.p[k]->ack + 1);
			assert_int_equal(cn_proc_decode(done[i].reply.msg, &ev), 0);
			assert_int_equal(ev.what, CN_PROC_NONE);
			assert_int_equal(ev.ack_err, 0);
		}
		total += n;
	}
	assert_int_equal(cn_async_inflight(s), 0);
	assert_int_equal(cn_async_complete(s, done, N, 0), 0);
	cn_close(s);
}

static void test_strict_match_times_out_and_keeps_acks(void **state)
{
	static struct reqs r;
	struct cn_sock *s = host_open(4 << 20);
	struct cn_completion done[N];
	int total = 0;

	(void)state;
	make_listens(&r);
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	/* The proc connector rewrites seq: strict matching can never succeed. */
	assert_int_equal(cn_async_init(s, N, CN_MATCH_STRICT, 200), 0);
	assert_int_equal(cn_async_send(s, r.p, NULL, 8, 0), 8);
	while (total < 8) {
		int n = cn_async_complete(s, done, N, 2000);

		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			assert_int_equal(done[i].status, -ETIMEDOUT);
			assert_true(done[i].cookie < 8);
		}
		total += n;
	}
	/* The acks were not lost: they wait for cn_recv. */
	assert_true(cn_pending(s) >= 8);
	cn_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipelined_listens_all_matched),
		cmocka_unit_test(test_strict_match_times_out_and_keeps_acks),
	};

	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
