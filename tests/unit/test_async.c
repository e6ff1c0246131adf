/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_async.c - asynchronous requests (cn_async_init / send / complete):
 * one sendmmsg per batch, replies matched by genealogy in any order through
 * the in-flight index, unrelated messages kept, timeouts, capacity, partial
 * sends, and the argument checks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "fake_sys.h"

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

#define MAXREQ 1024

static union req {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(8)];
} reqbuf[MAXREQ];
static struct cn_msg *reqs[MAXREQ];

static void make_reqs(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t v = i;

		reqs[i] = cn_msg_init(&reqbuf[i], sizeof(reqbuf[i]), 0x123, 0x456, &v, sizeof(v));
		assert_non_null(reqs[i]);
	}
}

/* Queue the reply to request i (as sent) in datagram d (NULL: a new one). */
static void reply_to(struct fake_dgram *d, unsigned i, int seq_delta)
{
	const struct cn_msg *h = fake_sent_hdr(i);

	assert_non_null(h);
	fake_add_cn(d ? d : fake_dgram(0), h->id.idx, h->id.val, h->seq + (uint32_t)seq_delta,
		    h->ack + 1, &i, sizeof(i));
}

static void send_batch_one_syscall(void **state)
{
	struct cn_sock *s = fake_sock(state);
	const uint64_t cookies[3] = { 1000, 2000, 3000 };
	const struct fake_sent *f;

	make_reqs(3);
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), 0);
	assert_int_equal(cn_async_inflight(s), 0);
	assert_int_equal(cn_async_send(s, reqs, cookies, 3, 0), 3);
	assert_int_equal(fake_calls.sendmmsg, 1);
	assert_int_equal(fake_calls.sendmsg, 0);
	assert_int_equal(fake_sent_count(), 3);
	assert_int_equal(cn_async_inflight(s), 3);
	for (unsigned i = 0; i < 3; i++) {
		struct nlmsghdr nlh;
		const struct cn_msg *m = fake_sent_cn(i);

		f = fake_sent(i);
		assert_int_equal(f->len, NLMSG_HDRLEN + sizeof(struct cn_msg) + 4);
		memcpy(&nlh, f->data, sizeof(nlh));
		assert_int_equal(nlh.nlmsg_len, f->len);
		assert_int_equal(nlh.nlmsg_type, NLMSG_DONE);
		assert_int_equal(nlh.nlmsg_pid, cn_port(s));
		assert_int_equal(f->dst_port, 0);
		/* genealogy written back into each request, as cn_send does */
		assert_int_equal(m->seq, reqs[i]->seq);
		assert_int_equal(m->ack, reqs[i]->ack);
		assert_int_equal(m->len, 4);
		assert_memory_equal(m->data, &i, 4);
		if (i)
			assert_int_equal(reqs[i]->seq, reqs[i - 1]->seq + 1);
	}
	assert_int_not_equal(reqs[0]->ack, reqs[1]->ack);
}

/* Small and large requests in one batch: the small ones are copied whole
 * (one iovec), the large ones gathered; the bytes sent are the same either
 * way, and each is matched to its reply. */
static void send_small_and_large(void **state)
{
	struct cn_sock *s = fake_sock(state);
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(1000)];
	} big[4];
	/* payloads: small, large, the largest copied whole, one byte more */
	const uint32_t lens[4] = { 4, 1000, 256 - NLMSG_HDRLEN - sizeof(struct cn_msg),
				   257 - NLMSG_HDRLEN - sizeof(struct cn_msg) };
	struct cn_msg *mixed[4];
	struct cn_completion c[4];

	for (unsigned i = 0; i < 4; i++) {
		mixed[i] = cn_msg_init(&big[i], sizeof(big[i]), 1, 2, NULL, lens[i]);
		assert_non_null(mixed[i]);
		memset(mixed[i]->data, 'a' + (int)i, lens[i]);
	}
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), 0);
	assert_int_equal(cn_async_send(s, mixed, NULL, 4, 0), 4);
	assert_int_equal(fake_calls.sendmmsg, 1);
	for (unsigned i = 0; i < 4; i++) {
		const struct fake_sent *f = fake_sent(i);
		struct nlmsghdr nlh;

		assert_int_equal(f->len, NLMSG_HDRLEN + sizeof(struct cn_msg) + lens[i]);
		memcpy(&nlh, f->data, sizeof(nlh));
		assert_int_equal(nlh.nlmsg_len, f->len);
		assert_int_equal(nlh.nlmsg_type, NLMSG_DONE);
		assert_int_equal(nlh.nlmsg_seq, mixed[i]->seq);
		assert_int_equal(nlh.nlmsg_pid, cn_port(s));
		assert_memory_equal(f->data + NLMSG_HDRLEN, mixed[i],
				    sizeof(struct cn_msg) + lens[i]);
	}
	for (unsigned i = 0; i < 4; i++)
		reply_to(NULL, 3 - i, 0);
	assert_int_equal(cn_async_complete(s, c, 4, 0), 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(c[i].status, 0);
		assert_int_equal(c[i].cookie, 3 - i);
	}
}

static void complete_out_of_order_keeps_others(void **state)
{
	struct cn_sock *s = fake_sock(state);
	const uint64_t cookies[3] = { 1000, 2000, 3000 };
	struct cn_completion c[8];
	struct cn_message m;
	struct fake_dgram *d;
	int n;

	make_reqs(3);
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), 0);
	assert_int_equal(cn_async_send(s, reqs, cookies, 3, 0), 3);
	d = fake_dgram(0);
	reply_to(d, 2, 0);
	fake_add_cn(d, 5, 6, 7, 8, "other", 5); /* unrelated */
	reply_to(d, 0, 1);			/* wrong seq: not a strict reply */
	reply_to(NULL, 0, 0);
	reply_to(NULL, 1, 0);

	memset(c, 0, sizeof(c));
	n = cn_async_complete(s, c, 8, 1000);
	assert_true(n >= 1);
	if (n < 3) {
		int k = cn_async_complete(s, c + n, 8 - (unsigned)n, 1000);

		assert_true(k >= 1);
		n += k;
	}
	if (n < 3) {
		int k = cn_async_complete(s, c + n, 8 - (unsigned)n, 1000);

		assert_true(k >= 1);
		n += k;
	}
	assert_int_equal(n, 3);
	assert_int_equal(c[0].cookie, 3000);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[1].cookie, 1000);
	assert_int_equal(c[2].cookie, 2000);
	assert_int_equal(c[1].status, 0);
	assert_int_equal(c[2].status, 0);
	assert_int_equal(cn_async_inflight(s), 0);
	/* nothing in flight: returns 0 at once */
	assert_int_equal(cn_async_complete(s, c, 8, 1000), 0);

	/* the unrelated message and the near miss were kept, in order */
	assert_int_equal(cn_pending(s), 2);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->id.idx, 5);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->id.idx, 0x123);
	assert_int_equal(m.msg->seq, reqs[0]->seq + 1);
}

static void ack_only_policy_and_default_cookies(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[4];

	make_reqs(2);
	assert_int_equal(cn_async_init(s, 4, CN_MATCH_ACK_ONLY, 5000), 0);
	assert_int_equal(cn_async_send(s, reqs, NULL, 2, 0), 2);
	reply_to(NULL, 1, 99); /* another seq: fine under ack-only */
	assert_int_equal(cn_async_complete(s, c, 4, 1000), 1);
	assert_int_equal(c[0].cookie, 1); /* the index in reqs */
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[0].reply.msg->ack, reqs[1]->ack + 1);
	assert_int_equal(cn_async_inflight(s), 1);
}

static void timeout_completion(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[4];
	const uint64_t cookie = 77;
	struct timespec t0, t1;
	int n;

	make_reqs(1);
	assert_int_equal(cn_async_init(s, 4, CN_MATCH_STRICT, 20), 0);
	assert_int_equal(cn_async_send(s, reqs, &cookie, 1, 0), 1);
	/* the caller's wait of 0 does not wait: nothing yet */
	assert_int_equal(cn_async_complete(s, c, 4, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = cn_async_complete(s, c, 4, 5000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].cookie, 77);
	assert_int_equal(c[0].status, -ETIMEDOUT);
	assert_null(c[0].reply.msg);
	assert_int_equal(cn_async_inflight(s), 0);
	/* the reply arriving late is not a completion: it is kept */
	reply_to(NULL, 0, 0);
	assert_int_equal(cn_async_complete(s, c, 4, 0), 0);
}

static void capacity_and_busy(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[8];

	make_reqs(5);
	assert_int_equal(cn_async_init(s, 3, CN_MATCH_STRICT, 5000), 0);
	assert_int_equal(cn_async_send(s, reqs, NULL, 5, 0), 3); /* the free capacity */
	assert_int_equal(cn_async_inflight(s), 3);
	errno = 0;
	assert_int_equal(cn_async_send(s, reqs + 3, NULL, 2, 0), -EBUSY);
	assert_int_equal(errno, EBUSY);
	errno = 0;
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), -EBUSY);
	assert_int_equal(errno, EBUSY);

	reply_to(NULL, 1, 0);
	assert_int_equal(cn_async_complete(s, c, 8, 1000), 1);
	assert_int_equal(c[0].cookie, 1);
	assert_int_equal(cn_async_send(s, reqs + 3, NULL, 2, 0), 1);
	assert_int_equal(cn_async_inflight(s), 3);
}

static void partial_and_failed_send(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[8];

	make_reqs(3);
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), 0);
	fake_sendmmsg_limit(1);
	assert_int_equal(cn_async_send(s, reqs, NULL, 3, 0), 1);
	assert_int_equal(cn_async_inflight(s), 1);
	fake_sendmmsg_limit(0);

	fake_send_fail(EAGAIN, 1);
	errno = 0;
	assert_int_equal(cn_async_send(s, reqs + 1, NULL, 2, 0), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(cn_async_inflight(s), 1);

	/* only the request that went out completes */
	reply_to(NULL, 0, 0);
	assert_int_equal(cn_async_complete(s, c, 8, 1000), 1);
	assert_int_equal(c[0].cookie, 0);
	assert_int_equal(cn_async_inflight(s), 0);

	/* a message too large is refused before anything is sent */
	reqs[1]->len = CONNECTOR_MAX_MSG_SIZE + 1;
	errno = 0;
	assert_int_equal(cn_async_send(s, reqs, NULL, 2, 0), -EMSGSIZE);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(cn_async_inflight(s), 0);
	assert_int_equal(fake_sent_count(), 1);
}

static void overrun_while_completing(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[8];

	make_reqs(1);
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), 0);
	assert_int_equal(cn_async_send(s, reqs, NULL, 1, 0), 1);
	fake_error(ENOBUFS);
	errno = 0;
	assert_int_equal(cn_async_complete(s, c, 8, 1000), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	reply_to(NULL, 0, 0);
	assert_int_equal(cn_async_complete(s, c, 8, 1000), 1);
}

/* Many requests in flight, answered in a shuffled order: every reply must
 * find its request through the open-addressed index (insertions and
 * deletions with long probe runs). */
static void many_in_flight_shuffled(void **state)
{
	struct cn_sock *s = fake_sock(state);
	static uint64_t cookies[MAXREQ];
	static unsigned order[MAXREQ];
	static unsigned char done[MAXREQ];
	struct cn_completion c[64];
	const unsigned n = 1000;
	unsigned got = 0, i;

	make_reqs(n);
	for (i = 0; i < n; i++) {
		cookies[i] = 0x100000000ull + i;
		order[i] = i;
		done[i] = 0;
		/* Colliding acks: the table for capacity 2000 has 4096 slots,
		 * and acks that differ by a multiple of 4096 hash to the same
		 * home slot, so ten groups of 100 requests make long,
		 * overlapping probe runs. */
		reqs[i]->ack = (i % 10) * 3 + (i / 10) * 4096u;
	}
	srand(12345);
	for (i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)rand() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	/* capacity above n: see send_fills_capacity_in_one_syscall */
	assert_int_equal(cn_async_init(s, 2 * n, CN_MATCH_STRICT, 60000), 0);
	assert_int_equal(cn_async_send(s, reqs, cookies, n, CN_SEND_KEEP_ACK), (int)n);
	assert_int_equal(fake_calls.sendmmsg, (n + 63) / 64);
	assert_int_equal(cn_async_inflight(s), n);

	for (unsigned k = 0; k < n; k += 50) {
		for (i = k; i < k + 50 && i < n; i++)
			reply_to(NULL, order[i], 0);
		while (fake_queued() || got < k + 50) {
			int r = cn_async_complete(s, c, 64, 1000);

			assert_true(r > 0);
			for (int j = 0; j < r; j++) {
				uint64_t idx = c[j].cookie - 0x100000000ull;

				assert_int_equal(c[j].status, 0);
				assert_true(idx < n);
				assert_int_equal(done[idx], 0);
				done[idx] = 1;
				assert_int_equal(c[j].reply.msg->seq, reqs[idx]->seq);
			}
			got += (unsigned)r;
			if (got >= n)
				break;
		}
	}
	assert_int_equal(got, n);
	assert_int_equal(cn_async_inflight(s), 0);
	assert_int_equal(cn_pending(s), 0);
}

/* Half of many colliding requests are answered, the rest time out: each
 * cookie completes exactly once, whether by reply or by expiry. */
static void replies_and_expiry_mixed(void **state)
{
	struct cn_sock *s = fake_sock(state);
	static uint64_t cookies[MAXREQ];
	static unsigned char done[MAXREQ];
	struct cn_completion c[64];
	const unsigned n = 600;
	unsigned got = 0, replied = 0, expired = 0;

	make_reqs(n);
	for (unsigned i = 0; i < n; i++) {
		cookies[i] = i;
		done[i] = 0;
		reqs[i]->ack = (i % 6) * 5 + (i / 6) * 2048u; /* capacity 1000: 2048 slots */
	}
	assert_int_equal(cn_async_init(s, 1000, CN_MATCH_STRICT, 30), 0);
	assert_int_equal(cn_async_send(s, reqs, cookies, n, CN_SEND_KEEP_ACK), (int)n);
	for (unsigned i = 0; i < n; i += 2) {
		if (fake_queued() >= FAKE_QUEUE - 1)
			break;
		reply_to(NULL, (i * 7) % n, 0); /* a scattered even-ish subset */
	}
	while (got < n) {
		int r = cn_async_complete(s, c, 64, 5000);

		assert_true(r > 0);
		for (int j = 0; j < r; j++) {
			assert_true(c[j].cookie < n);
			assert_int_equal(done[c[j].cookie], 0);
			done[c[j].cookie] = 1;
			if (c[j].status == 0)
				replied++;
			else
				assert_int_equal(c[j].status, -ETIMEDOUT), expired++;
		}
		got += (unsigned)r;
	}
	assert_int_equal(got, n);
	assert_true(replied > 0);
	assert_int_equal(replied + expired, n);
	assert_int_equal(cn_async_inflight(s), 0);
}

/* Reply to reqs[i] as it was sent, with `ack` as the reply's ack. */
static void reply_req(unsigned i, uint32_t ack, uint32_t seq_delta)
{
	fake_add_cn(fake_dgram(0), reqs[i]->id.idx, reqs[i]->id.val, reqs[i]->seq + seq_delta, ack,
		    &i, sizeof(i));
}

/* Acks that cn_async_send generates name their entry (the reply's ack
 * carries the entry's index in its low bits), and acks the caller keeps go
 * through the index: both kinds in flight at once, even with the same
 * reply ack, each matched by its whole genealogy; a reply naming an entry
 * with other high bits, another seq or another id is kept; both kinds time
 * out and are rolled back when a send falls short. */
static void generated_and_kept_acks_mixed(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[16];
	struct cn_message m;
	unsigned seen = 0;
	int n;

	make_reqs(16);
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 30), 0);
	assert_int_equal(cn_async_send(s, reqs, NULL, 4, 0), 4);
	for (unsigned i = 0; i < 4; i++) {
		unsigned low = (reqs[i]->ack + 1) & 7;

		assert_int_equal(seen & (1u << low), 0);
		seen |= 1u << low;
	}
	/* Kept acks: request 4 expects exactly request 0's reply ack, request
	 * 5 one naming request 1's entry with other high bits. */
	reqs[4]->ack = reqs[0]->ack;
	reqs[5]->ack = reqs[1]->ack ^ 0x10000u;
	{
		const uint64_t ck[2] = { 4, 5 };

		assert_int_equal(cn_async_send(s, reqs + 4, ck, 2, CN_SEND_KEEP_ACK), 2);
	}
	assert_int_equal(cn_async_inflight(s), 6);

	reply_req(1, (reqs[1]->ack + 1) ^ 0x100u, 0); /* other high bits: kept */
	reply_req(2, reqs[2]->ack + 1, 1);	      /* another seq: kept */
	fake_add_cn(fake_dgram(0), 0x999, 0x456, reqs[3]->seq, reqs[3]->ack + 1, "x", 1); /* id */
	reply_req(4, reqs[4]->ack + 1, 0); /* the kept ack equal to request 0's */
	reply_req(0, reqs[0]->ack + 1, 0);
	reply_req(5, reqs[5]->ack + 1, 0);
	reply_req(1, reqs[1]->ack + 1, 0);
	n = 0;
	while (n < 4) {
		int r = cn_async_complete(s, c + n, 16 - (unsigned)n, 1000);

		assert_true(r > 0);
		n += r;
	}
	assert_int_equal(n, 4);
	assert_int_equal(c[0].cookie, 4);
	assert_int_equal(c[0].reply.msg->seq, reqs[4]->seq);
	assert_int_equal(c[1].cookie, 0);
	assert_int_equal(c[1].reply.msg->seq, reqs[0]->seq);
	assert_int_equal(c[2].cookie, 5);
	assert_int_equal(c[3].cookie, 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(c[i].status, 0);
	assert_int_equal(cn_async_inflight(s), 2);

	/* Requests 2 and 3 (generated acks) time out; so does a kept one. */
	reqs[6]->ack = 0x77777777u;
	{
		const uint64_t ck = 6;

		assert_int_equal(cn_async_send(s, reqs + 6, &ck, 1, CN_SEND_KEEP_ACK), 1);
	}
	n = 0;
	while (n < 3) {
		int r = cn_async_complete(s, c + n, 16 - (unsigned)n, 5000);

		assert_true(r > 0);
		n += r;
	}
	assert_int_equal(n, 3);
	{
		unsigned got = 0;

		for (int i = 0; i < 3; i++) {
			assert_int_equal(c[i].status, -ETIMEDOUT);
			got |= 1u << c[i].cookie;
		}
		assert_int_equal(got, (1u << 2) | (1u << 3) | (1u << 6));
	}
	assert_int_equal(cn_async_inflight(s), 0);

	/* A short send rolls back both kinds: two of four go out. */
	reqs[9]->ack = 0x1234u;
	reqs[11]->ack = 0x5678u;
	fake_sendmmsg_limit(2);
	assert_int_equal(cn_async_send(s, reqs + 8, NULL, 2, 0), 2);
	assert_int_equal(cn_async_send(s, reqs + 10, NULL, 2, CN_SEND_KEEP_ACK), 2);
	fake_sendmmsg_limit(1);
	assert_int_equal(cn_async_send(s, reqs + 12, NULL, 2, 0), 1);
	reqs[15]->ack = 0x9abcu;
	assert_int_equal(cn_async_send(s, reqs + 14, NULL, 2, CN_SEND_KEEP_ACK), 1);
	fake_sendmmsg_limit(0);
	assert_int_equal(cn_async_inflight(s), 6);
	reply_req(15, reqs[15]->ack + 1, 0); /* not sent: kept */
	reply_req(13, reqs[13]->ack + 1, 0); /* not sent: kept */
	for (unsigned i = 8; i <= 14; i++)
		if (i != 13)
			reply_req(i, reqs[i]->ack + 1, 0);
	n = 0;
	while (n < 6) {
		int r = cn_async_complete(s, c + n, 16 - (unsigned)n, 1000);

		assert_true(r > 0);
		n += r;
	}
	assert_int_equal(n, 6);
	assert_int_equal(cn_async_inflight(s), 0);

	/* Everything not matched was kept, in order. */
	{
		static const struct {
			uint32_t idx, seqreq, seq_delta;
		} kept[] = { { 0x123, 1, 0 },
			     { 0x123, 2, 1 },
			     { 0x999, 3, 0 },
			     { 0x123, 15, 0 },
			     { 0x123, 13, 0 } };

		assert_int_equal(cn_pending(s), 5);
		for (unsigned i = 0; i < 5; i++) {
			assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
			assert_int_equal(m.msg->id.idx, kept[i].idx);
			assert_int_equal(m.msg->seq, reqs[kept[i].seqreq]->seq + kept[i].seq_delta);
		}
	}
}

/* cn_async_send: "with as few system calls as possible". Eight requests
 * on a table of capacity eight fit one sendmmsg. */
static void send_fills_capacity_in_one_syscall(void **state)
{
	struct cn_sock *s = fake_sock(state);

	make_reqs(8);
	assert_int_equal(cn_async_init(s, 8, CN_MATCH_STRICT, 5000), 0);
	assert_int_equal(cn_async_send(s, reqs, NULL, 8, 0), 8);
	assert_int_equal(cn_async_inflight(s), 8);
	assert_int_equal(fake_sent_count(), 8);
	assert_int_equal(fake_calls.sendmmsg, 1);
}

static void bad_args(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_completion c[2];

	make_reqs(2);
#define EINVAL_CALL(call)                                                                          \
	do {                                                                                       \
		errno = 0;                                                                         \
		assert_int_equal((call), -EINVAL);                                                 \
		assert_int_equal(errno, EINVAL);                                                   \
	} while (0)
	/* not initialised */
	EINVAL_CALL(cn_async_send(s, reqs, NULL, 1, 0));
	EINVAL_CALL(cn_async_complete(s, c, 2, 0));
	assert_int_equal(cn_async_inflight(s), 0);
	assert_int_equal(cn_async_inflight(NULL), 0);

	EINVAL_CALL(cn_async_init(NULL, 4, CN_MATCH_STRICT, 100));
	EINVAL_CALL(cn_async_init(s, 0, CN_MATCH_STRICT, 100));
	EINVAL_CALL(cn_async_init(s, 65537, CN_MATCH_STRICT, 100));
	EINVAL_CALL(cn_async_init(s, 4, (enum cn_match)5, 100));
	EINVAL_CALL(cn_async_init(s, 4, CN_MATCH_STRICT, 0));
	assert_int_equal(cn_async_init(s, 4, CN_MATCH_STRICT, -1), 0);
	EINVAL_CALL(cn_async_send(NULL, reqs, NULL, 1, 0));
	EINVAL_CALL(cn_async_send(s, NULL, NULL, 1, 0));
	EINVAL_CALL(cn_async_send(s, reqs, NULL, 0, 0));
	EINVAL_CALL(cn_async_send(s, reqs, NULL, 1, 0x4));
	reqs[1] = NULL;
	EINVAL_CALL(cn_async_send(s, reqs, NULL, 2, 0));
	EINVAL_CALL(cn_async_complete(NULL, c, 2, 0));
	EINVAL_CALL(cn_async_complete(s, NULL, 2, 0));
	EINVAL_CALL(cn_async_complete(s, c, 0, 0));
	assert_int_equal(fake_sent_count(), 0);
	assert_int_equal(cn_async_inflight(s), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(send_batch_one_syscall),
		T(send_small_and_large),
		T(complete_out_of_order_keeps_others),
		T(ack_only_policy_and_default_cookies),
		T(timeout_completion),
		T(capacity_and_busy),
		T(partial_and_failed_send),
		T(overrun_while_completing),
		T(many_in_flight_shuffled),
		T(replies_and_expiry_mixed),
		T(generated_and_kept_acks_mixed),
		T(send_fills_capacity_in_one_syscall),
		T(bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
