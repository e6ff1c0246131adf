/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_request.c - cn_request: the reply is matched while unrelated
 * messages that arrive first are kept (or handed to a handler) in order;
 * timeouts, overruns while waiting, backlog overflow.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_sys.h"

/* Smallest backlog cn_open accepts: one largest datagram slot (the slot
 * size of internal.h, NLMSG_ALIGN(16 + 20 + 16384 + 64)). */
#define SMALL_BACKLOG 16484u

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

static int setup_small(void **state)
{
	*state = fake_open(0, SMALL_BACKLOG);
	return 0;
}

static struct cn_stats stats(struct cn_sock *s)
{
	struct cn_stats st;

	assert_int_equal(cn_stats(s, &st), 0);
	return st;
}

union buf {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(64)];
};

/* Unrelated traffic is id 5.6, seq 100 + n, carrying the text "unrelated n". */
static void add_unrelated(struct fake_dgram *d, unsigned n)
{
	char t[32];
	int len = snprintf(t, sizeof(t), "unrelated %u", n);

	fake_add_cn(d, 5, 6, 100 + n, 0, t, (size_t)len);
}

static void expect_unrelated(const struct cn_message *m, unsigned n)
{
	char t[32];
	int len = snprintf(t, sizeof(t), "unrelated %u", n);

	assert_non_null(m->msg);
	assert_int_equal(m->msg->id.idx, 5);
	assert_int_equal(m->msg->id.val, 6);
	assert_int_equal(m->msg->seq, 100 + n);
	assert_int_equal(m->msg->len, len);
	assert_memory_equal(m->msg->data, t, (size_t)len);
}

static void recv_unrelated(struct cn_sock *s, unsigned n)
{
	struct cn_message m;

	memset(&m, 0, sizeof(m));
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	expect_unrelated(&m, n);
}

/* The "kernel": on each request, queue unrelated messages 1..3 (one
 * datagram holding 1 and 2, one holding 3), a near miss (same id and seq,
 * wrong ack: 4), then a datagram with the reply followed by unrelated 5. */
static void respond_busy(const struct cn_msg *req, uint32_t dst, void *arg)
{
	struct fake_dgram *d = fake_dgram(0);

	(void)dst;
	(void)arg;
	add_unrelated(d, 1);
	add_unrelated(d, 2);
	add_unrelated(fake_dgram(0), 3);
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq, req->ack + 2, "near", 4);
	d = fake_dgram_later(0); /* arrives while cn_request polls */
	fake_add_cn(d, req->id.idx, req->id.val, req->seq, req->ack + 1, "reply", 5);
	add_unrelated(d, 5);
}

static void request_keeps_others_in_order(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "ping", 4);
	struct cn_message reply, m;
	struct fake_dgram *d;

	/* Already read before the request: message 0a returned, 0b still in
	 * the socket's buffer, which the request is about to reuse. */
	d = fake_dgram(0);
	fake_add_cn(d, 5, 6, 90, 0, "0a", 2);
	fake_add_cn(d, 5, 6, 91, 0, "0b", 2);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 90);

	fake_on_send(respond_busy, NULL);
	memset(&reply, 0, sizeof(reply));
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(fake_sent_count(), 1);
	assert_non_null(reply.msg);
	assert_int_equal(reply.port, 0);
	assert_int_equal(reply.msg->seq, req->seq);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	assert_int_equal(reply.msg->len, 5);
	assert_memory_equal(reply.msg->data, "reply", 5);
	assert_true(fake_calls.poll >= 1);

	/* 0b, 1, 2, 3 and the near miss were kept, in arrival order; 5
	 * follows the reply in its datagram: six that poll cannot see */
	assert_int_equal(cn_pending(s), 6);
	assert_int_equal(stats(s).kept, 5);
	assert_int_equal(stats(s).kept_lost, 0);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 91);
	assert_memory_equal(m.msg->data, "0b", 2);
	recv_unrelated(s, 1);
	recv_unrelated(s, 2);
	recv_unrelated(s, 3);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->id.idx, 0x123);
	assert_int_equal(m.msg->ack, req->ack + 2);
	assert_memory_equal(m.msg->data, "near", 4);
	assert_int_equal(cn_pending(s), 1);
	/* then what followed the reply in its datagram */
	recv_unrelated(s, 5);
	assert_int_equal(cn_pending(s), 0);
	errno = 0;
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
}

static void request_kept_messages_via_batch(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "ping", 4);
	struct cn_message reply, out[16];
	int n;

	fake_on_send(respond_busy, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(cn_pending(s), 5); /* 4 kept, 1 after the reply */
	n = cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT);
	assert_true(n >= 4);
	expect_unrelated(&out[0], 1);
	expect_unrelated(&out[1], 2);
	expect_unrelated(&out[2], 3);
	assert_memory_equal(out[3].msg->data, "near", 4);
	if (n == 4) {
		n = cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT);
		assert_int_equal(n, 1);
		expect_unrelated(&out[0], 5);
	} else {
		assert_int_equal(n, 5);
		expect_unrelated(&out[4], 5);
	}
}

struct seen {
	unsigned n;
	uint32_t seq[16];
	uint32_t port[16];
};

static void handler(const struct cn_message *m, void *arg)
{
	struct seen *sn = arg;

	if (sn->n < 16) {
		sn->seq[sn->n] = m->msg->seq;
		sn->port[sn->n] = m->port;
	}
	sn->n++;
}

static void request_with_handler(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "ping", 4);
	struct cn_message reply, m;
	struct seen sn = { 0 };

	cn_set_handler(s, handler, &sn);
	fake_on_send(respond_busy, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	assert_int_equal(sn.n, 4);
	assert_int_equal(sn.seq[0], 101);
	assert_int_equal(sn.seq[1], 102);
	assert_int_equal(sn.seq[2], 103);
	assert_int_equal(sn.seq[3], req->seq); /* the near miss */
	assert_int_equal(cn_pending(s), 1);    /* only what follows the reply */
	assert_int_equal(stats(s).kept, 0);
	recv_unrelated(s, 5);

	/* NULL restores keeping */
	cn_set_handler(s, NULL, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(sn.n, 4);
	assert_int_equal(cn_pending(s), 5);
	(void)m;
}

/* The proc connector's way: the ack keeps ack + 1 but has another seq. */
static void respond_ack_only(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq + 77, req->ack + 1, "ack", 3);
}

static void request_policies(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	fake_on_send(respond_ack_only, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 1000, &reply), 0);
	assert_int_equal(reply.msg->seq, req->seq + 77);
	assert_int_equal(cn_pending(s), 0);

	/* strict: the same answer is not a reply; kept, and the wait times out */
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 50, &reply), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(cn_pending(s), 1);
}

/* A request to the proc connector joins its group for the wait (its
 * replies are multicast only; without the group it would time out) and
 * leaves it again, whatever the outcome: a socket that did not join the
 * group must not collect the machine's proc events afterwards. */
static void request_to_proc_joins_group(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	uint32_t op = 1; /* PROC_CN_MCAST_LISTEN */
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, &op, 4);
	struct cn_message reply;

	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 0, &reply), -ETIMEDOUT);
	assert_int_equal(fake_calls.join, 1);
	assert_int_equal(fake_calls.last_join, CN_IDX_PROC);
	assert_int_equal(fake_calls.leave, 1);
	/* left: the next one joins again */
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 0, &reply), -ETIMEDOUT);
	assert_int_equal(fake_calls.join, 2);
	assert_int_equal(fake_calls.leave, 2);
	/* other ids: no join */
	req = cn_msg_init(&u, sizeof(u), 7, 7, NULL, 0);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 0, &reply), -ETIMEDOUT);
	assert_int_equal(fake_calls.join, 2);
	/* a socket in the group already (the caller's cn_join) stays in it */
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, &op, 4);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 0, &reply), -ETIMEDOUT);
	assert_int_equal(fake_calls.join, 3);
	assert_int_equal(fake_calls.leave, 2);
	/* a refused join is the error, not a timeout */
	assert_int_equal(cn_leave(s, CN_IDX_PROC), 0);
	fake_join_fail(EPERM);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 0, &reply), -EPERM);
}

/* The proc connector's answer, after an event of the group that the
 * temporary membership let in and a message of another id for the caller. */
static void respond_events_and_ack(const struct cn_msg *req, uint32_t dst, void *arg)
{
	struct fake_dgram *d;

	(void)dst;
	(void)arg;
	d = fake_dgram(0);
	d->group = CN_IDX_PROC;
	fake_add_cn(d, CN_IDX_PROC, CN_VAL_PROC, 5, 0, "event-1", 7);
	d = fake_dgram(0);
	fake_add_cn(d, 7, 7, 1, 0, "mine", 4);
	d = fake_dgram(0);
	d->group = CN_IDX_PROC;
	fake_add_cn(d, CN_IDX_PROC, CN_VAL_PROC, 6, req->ack + 1, "ack", 3);
}

/* What the temporary membership let in is not kept for the caller, who
 * never joined the group; the caller's own messages are, and the socket is
 * out of the group afterwards; cn_close joins back (the kernel frees its
 * per-socket proc state only for a member). */
static void request_to_proc_keeps_no_events(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	uint32_t op = 2; /* PROC_CN_MCAST_IGNORE */
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, &op, 4);
	struct cn_message reply, m;

	fake_on_send(respond_events_and_ack, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 1000, &reply), 0);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	assert_int_equal(fake_calls.leave, 1);
	/* ... before reading: the kernel queues its answer during the send */
	assert_int_equal(fake_calls.recv_at_leave, 0);
	fake_on_send(NULL, NULL);
	assert_int_equal(cn_pending(s), 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->id.idx, 7);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(fake_calls.join, 1);
	cn_close(s);
	*state = NULL;
	assert_int_equal(fake_calls.join, 2);
	assert_int_equal(fake_calls.last_join, CN_IDX_PROC);
}

static void request_timeout(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 20, &reply), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(fake_sent_count(), 1);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 0, &reply), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(fake_sent_count(), 2);
}

static void respond_overrun(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)req;
	(void)dst;
	(void)arg;
	add_unrelated(fake_dgram(0), 1);
	fake_error(ENOBUFS);
}

static void request_overrun(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	fake_on_send(respond_overrun, NULL);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(stats(s).overruns, 1);
	/* what arrived before the overrun is still there */
	assert_int_equal(cn_pending(s), 1);
	recv_unrelated(s, 1);
}

static void respond_error(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)req;
	(void)dst;
	(void)arg;
	fake_add_nlerr(fake_dgram(0), -EPERM);
}

static void request_kernel_error(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	fake_on_send(respond_error, NULL);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), -EPERM);
	assert_int_equal(errno, EPERM);
}

static void request_send_fails(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	fake_send_fail(ECONNREFUSED, 1);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), -ECONNREFUSED);
	assert_int_equal(errno, ECONNREFUSED);
	assert_int_equal(fake_calls.poll, 0);
}

static void request_keep_seq_ack(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	req->seq = 10;
	req->ack = 20;
	fake_on_send(respond_ack_only, NULL);
	assert_int_equal(cn_request(s, req, CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK, CN_MATCH_ACK_ONLY,
				    1000, &reply),
			 0);
	assert_int_equal(fake_sent_cn(0)->seq, 10);
	assert_int_equal(fake_sent_cn(0)->ack, 20);
	assert_int_equal(reply.msg->ack, 21);
}

/* Six unrelated messages of 4000 bytes (4040 bytes each in the backlog),
 * each in its own datagram, then the reply: only four fit. */
static void respond_flood(const struct cn_msg *req, uint32_t dst, void *arg)
{
	static char big[4000];

	(void)dst;
	(void)arg;
	for (unsigned i = 1; i <= 6; i++) {
		memset(big, '0' + (int)i, sizeof(big));
		fake_add_cn(fake_dgram(0), 5, 6, 100 + i, 0, big, sizeof(big));
	}
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq, req->ack + 1, NULL, 0);
}

static void backlog_overflow(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply, m;
	struct cn_stats st;
	struct cn_proc_stats pst;

	fake_on_send(respond_flood, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	st = stats(s);
	assert_int_equal(st.kept, 4);
	assert_int_equal(st.kept_lost, 2);
	assert_int_equal(st.overruns, 0); /* the socket did not overrun */
	assert_int_equal(cn_proc_stats(s, &pst), 0);
	assert_int_equal(pst.overruns, 1);  /* one loss, reported once below */
	assert_int_equal(cn_pending(s), 5); /* 4 kept, then the loss report */
	for (unsigned i = 1; i <= 4; i++) {
		assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
		assert_int_equal(m.msg->seq, 100 + i);
		assert_int_equal(m.msg->len, 4000);
		assert_int_equal(m.msg->data[0], '0' + (int)i);
		assert_int_equal(m.msg->data[3999], '0' + (int)i);
	}
	/* then the loss is reported, once */
	errno = 0;
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	errno = 0;
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);

	/* the backlog is usable again */
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(stats(s).kept, 8);
	assert_int_equal(stats(s).kept_lost, 4);
	assert_int_equal(cn_proc_stats(s, &pst), 0);
	assert_int_equal(pst.overruns, 2);
}

static void backlog_overflow_batch(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply, out[8];

	fake_on_send(respond_flood, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(out[i].msg->seq, 101 + i);
	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -EAGAIN);
}

/* cn_pending counts every report libcn holds, not only messages: after a
 * backlog overflow it counts down through the kept messages to the loss
 * report, which a receive call returns without reading the socket. A
 * program that polls once cn_pending is 0 must not sleep on it. */
static void pending_counts_loss_report(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply, m;

	fake_on_send(respond_flood, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	for (unsigned i = 1; i <= 4; i++) {
		assert_int_equal(cn_pending(s), 6 - i);
		assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
		assert_int_equal(m.msg->seq, 100 + i);
	}
	assert_int_equal(cn_pending(s), 1); /* the loss, not yet reported */
	assert_int_equal(fake_queued(), 0);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(cn_pending(s), 0);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* Answers every request at once. */
static void respond_simple(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq, req->ack + 1, NULL, 0);
}

/* An overrun met while saving messages already read (an NLMSG_OVERRUN after
 * them in the same datagram) does not fail the request: cn_recv reports it
 * after the kept messages. */
static void request_overrun_while_saving(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply, m;
	struct fake_dgram *d = fake_dgram(0);

	add_unrelated(d, 1);
	add_unrelated(d, 2);
	fake_add_nl(d, NLMSG_OVERRUN, NULL, 0);
	recv_unrelated(s, 1);
	fake_on_send(respond_simple, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	assert_int_equal(stats(s).overruns, 1);
	recv_unrelated(s, 2);
	errno = 0;
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(stats(s).overruns, 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* Once the last message of a datagram is returned, nothing is pending:
 * cn_request reads only its reply (no extra receive that finds nothing). */
static void request_after_whole_datagram_reads_once(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;
	struct fake_dgram *d = fake_dgram(0);

	add_unrelated(d, 1);
	add_unrelated(d, 2);
	recv_unrelated(s, 1);
	recv_unrelated(s, 2);
	assert_int_equal(fake_calls.recvfrom + fake_calls.recvmsg + fake_calls.recvmmsg, 1);
	fake_on_send(respond_simple, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	assert_int_equal(fake_calls.recvfrom + fake_calls.recvmsg + fake_calls.recvmmsg, 2);
	assert_int_equal(cn_pending(s), 0);
	assert_int_equal(stats(s).syscalls, 2);
}

static void request_bad_args(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply;

	errno = 0;
	assert_int_equal(cn_request(NULL, req, 0, CN_MATCH_STRICT, 10, &reply), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_request(s, NULL, 0, CN_MATCH_STRICT, 10, &reply), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 10, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0, (enum cn_match)7, 10, &reply), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_request(s, req, 0x10, CN_MATCH_STRICT, 10, &reply), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_sent_count(), 0);
	cn_set_handler(NULL, handler, NULL); /* no crash */
	assert_int_equal(cn_pending(NULL), 0);
}

/* A kernel error kept by cn_request behind a message (NLMSG_ERROR after it
 * in a datagram already read) comes out of cn_recv_batch as that error,
 * after the message: not as an overrun. */
static void kept_error_via_batch_is_not_an_overrun(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply, out[4];
	struct fake_dgram *d = fake_dgram(0);

	add_unrelated(d, 0);
	add_unrelated(d, 1);
	fake_add_nlerr(d, -EPERM);
	assert_int_equal(cn_recv_batch(s, out, 1, CN_RECV_DONTWAIT), 1);
	expect_unrelated(&out[0], 0);
	fake_on_send(respond_simple, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 1);
	expect_unrelated(&out[0], 1);
	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), -EPERM);
	assert_int_equal(errno, EPERM);
	assert_int_equal(stats(s).overruns, 0);
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), -EAGAIN);
}

/* A kernel error met while keeping (put off until the kept messages are
 * returned) is pending too, counted once, and so is the loss of a socket
 * overrun met while keeping. */
static void pending_counts_error_put_off(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union buf u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 1, 1, NULL, 0);
	struct cn_message reply, m;
	struct fake_dgram *d = fake_dgram(0);

	add_unrelated(d, 0);
	add_unrelated(d, 1);
	fake_add_nlerr(d, -EPERM);
	fake_add_nl(d, NLMSG_OVERRUN, NULL, 0);
	recv_unrelated(s, 0);
	fake_on_send(respond_simple, NULL);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(cn_pending(s), 3); /* message 1, the loss, the error */
	recv_unrelated(s, 1);
	assert_int_equal(cn_pending(s), 2);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(cn_pending(s), 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EPERM);
	assert_int_equal(cn_pending(s), 0);
	assert_int_equal(fake_queued(), 0);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(request_keeps_others_in_order),
		T(request_kept_messages_via_batch),
		T(request_with_handler),
		T(request_policies),
		T(request_timeout),
		T(request_to_proc_joins_group),
		T(request_to_proc_keeps_no_events),
		T(request_overrun),
		T(request_kernel_error),
		T(request_send_fails),
		T(request_keep_seq_ack),
		cmocka_unit_test_setup_teardown(backlog_overflow, setup_small, fake_teardown),
		cmocka_unit_test_setup_teardown(backlog_overflow_batch, setup_small, fake_teardown),
		cmocka_unit_test_setup_teardown(pending_counts_loss_report, setup_small,
						fake_teardown),
		T(pending_counts_error_put_off),
		T(request_overrun_while_saving),
		T(kept_error_via_batch_is_not_an_overrun),
		T(request_after_whole_datagram_reads_once),
		T(request_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
