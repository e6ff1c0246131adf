/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_ack.c - acked sends (CN_SEND_ACK): the kernel's NLMSG_ERROR answer
 * to the request reaches cn_send/cn_request as -errno, matched by its echoed
 * seq and port while other messages and answers are kept; no answer (the
 * built-in connector) and overruns are told apart. And cn_request with
 * CN_REQUEST_OVERRUN_WAIT, which waits through an overrun.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_sys.h"

union buf {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(16)];
};

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

/* What the "kernel" does with each request (set per test). */
struct kernel {
	int answer;	  /* error to answer with */
	int no_answer;	  /* the built-in connector: nothing */
	int before;	  /* unrelated messages queued before the answer */
	int other_answer; /* an answer to another request first (this error) */
	int overrun;	  /* an overrun before the answer */
	int reply;	  /* a reply (ack + 1) after the answer */
	int reply_first;  /* the reply before the answer */
	uint16_t nlflags; /* flags the request carried */
};

static void add_unrelated(struct fake_dgram *d, unsigned n)
{
	fake_add_cn(d, 5, 6, 100 + n, 0, "u", 1);
}

static void kernel(const struct cn_msg *sent, uint32_t port, void *arg)
{
	struct kernel *k = arg;
	const struct fake_sent *f = fake_sent(fake_sent_count() - 1);
	struct nlmsghdr req, other;

	(void)port;
	memcpy(&req, f->data, sizeof(req));
	k->nlflags = req.nlmsg_flags;
	for (int i = 0; i < k->before; i++)
		add_unrelated(fake_dgram(0), (unsigned)i);
	if (k->other_answer) {
		other = req;
		other.nlmsg_seq = req.nlmsg_seq + 7;
		fake_add_answer(fake_dgram(0), k->other_answer, &other);
	}
	if (k->overrun)
		fake_error(ENOBUFS);
	if (k->reply_first)
		fake_add_cn(fake_dgram(0), sent->id.idx, sent->id.val, sent->seq, sent->ack + 1,
			    "r", 1);
	/* kmod answers only requests that ask (NLM_F_ACK). */
	if (!k->no_answer && (req.nlmsg_flags & NLM_F_ACK))
		fake_add_answer(fake_dgram(0), k->answer, &req);
	if (k->reply)
		fake_add_cn(fake_dgram(0), sent->id.idx, sent->id.val, sent->seq, sent->ack + 1,
			    "r", 1);
}

static struct cn_msg *req(union buf *b)
{
	return cn_msg_init(b, sizeof(*b), 0x123, 0x456, "q", 1);
}

static void send_ack_success(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { 0 };
	struct cn_message m;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_send(s, req(&b), CN_SEND_ACK), 0);
	assert_int_equal(k.nlflags & NLM_F_ACK, NLM_F_ACK);
	/* The answer was taken: nothing is left for cn_recv. */
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
	/* Without the flag: no NLM_F_ACK, nothing read. */
	assert_int_equal(cn_send(s, req(&b), 0), 0);
	assert_int_equal(k.nlflags & NLM_F_ACK, 0);
}

static void send_ack_refusal_keeps_messages(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .answer = -EPERM, .before = 2 };
	struct cn_message m;
	union buf b;

	fake_on_send(kernel, &k);
	errno = 0;
	assert_int_equal(cn_send(s, req(&b), CN_SEND_ACK), -EPERM);
	assert_int_equal(errno, EPERM);
	assert_int_equal(cn_pending(s), 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
		assert_int_equal(m.msg->seq, 100 + i);
	}
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* An answer to another request (other seq) is not ours: kept for cn_recv
 * as the error it is, after the messages before it. */
static void send_ack_matches_seq(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .answer = -ENOSPC, .before = 1, .other_answer = -EEXIST };
	struct cn_message m;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_send(s, req(&b), CN_SEND_ACK), -ENOSPC);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 100);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EEXIST);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* The built-in connector sends no answer: 1, sent. */
static void send_ack_no_answer(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .no_answer = 1, .before = 1 };
	struct cn_message m;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_send(s, req(&b), CN_SEND_ACK), 1);
	assert_int_equal(fake_sent_count(), 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 100);
}

/* An overrun before the answer: it may be lost, -ENOBUFS, counted. */
static void send_ack_overrun(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .overrun = 1 };
	struct cn_stats st;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_send(s, req(&b), CN_SEND_ACK), -ENOBUFS);
	assert_int_equal(cn_stats(s, &st), 0);
	assert_int_equal(st.overruns, 1);
}

/* cn_request: a refusal ends the wait with the error (not -ETIMEDOUT). */
static void request_ack_refusal(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .answer = -ENODEV, .before = 1 };
	struct cn_message reply, m;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_request(s, req(&b), CN_SEND_ACK, CN_MATCH_STRICT, 1000, &reply),
			 -ENODEV);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 100);
	/* Without the flag kmod does not answer: the request times out (the
	 * fake poll at once). */
	assert_int_equal(cn_request(s, req(&b), 0, CN_MATCH_STRICT, 1000, &reply), -ETIMEDOUT);
}

/* A success answer does not end the wait: the reply does, before or after it. */
static void request_ack_then_reply(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .reply = 1 };
	struct cn_message reply, m;
	union buf b;
	struct cn_msg *q = req(&b);

	fake_on_send(kernel, &k);
	assert_int_equal(cn_request(s, q, CN_SEND_ACK, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(reply.msg->seq, q->seq);
	assert_int_equal(reply.msg->ack, q->ack + 1);
	k.reply = 0;
	k.reply_first = 1;
	assert_int_equal(cn_request(s, q, CN_SEND_ACK, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(reply.msg->seq, q->seq);
	/* The answer after it is skipped, as any success answer. */
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* An earlier acked send's refusal does not end a later request. */
static void request_after_refused_send(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .answer = -EPERM };
	struct cn_message reply;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_send(s, req(&b), CN_SEND_ACK), -EPERM);
	k.no_answer = 1;
	k.reply = 1;
	assert_int_equal(cn_request(s, req(&b), 0, CN_MATCH_STRICT, 1000, &reply), 0);
}

/* CN_REQUEST_OVERRUN_WAIT: the overrun is counted and reported by cn_recv
 * after the kept messages; the reply still ends the wait. Without it the
 * overrun ends the wait. */
static void request_overrun_wait(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .no_answer = 1, .before = 1, .overrun = 1, .reply = 1 };
	struct cn_message reply, m;
	struct cn_stats st;
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(cn_request(s, req(&b), 0, CN_MATCH_STRICT, 1000, &reply), -ENOBUFS);
	fake_reset();
	fake_on_send(kernel, &k);
	/* Drain what the first request left. */
	while (cn_recv(s, &m, CN_RECV_DONTWAIT) != -EAGAIN)
		;
	assert_int_equal(cn_stats(s, &st), 0);
	assert_int_equal(st.overruns, 1);

	assert_int_equal(
	    cn_request(s, req(&b), CN_REQUEST_OVERRUN_WAIT, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(cn_stats(s, &st), 0);
	assert_int_equal(st.overruns, 2);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 100);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* The same overrun with nothing kept before it: cn_recv_batch must not take
 * the fast read (which looks at nothing kept) but report -ENOBUFS first,
 * then read what came after. It tests the kept loss alone (count 0). */
static void request_overrun_wait_then_batch(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct kernel k = { .no_answer = 1, .overrun = 1, .reply = 1 };
	struct cn_message reply, out[8];
	union buf b;

	fake_on_send(kernel, &k);
	assert_int_equal(
	    cn_request(s, req(&b), CN_REQUEST_OVERRUN_WAIT, CN_MATCH_STRICT, 1000, &reply), 0);
	assert_int_equal(cn_pending(s), 1); /* the loss, to be reported */
	/* 4 bytes: a datagram exactly as long as its message, which the
	 * fast read would take. */
	fake_add_cn(fake_dgram(0), 5, 6, 107, 0, "uuuu", 4);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 107);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -EAGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(send_ack_success, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(send_ack_refusal_keeps_messages, setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(send_ack_matches_seq, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(send_ack_no_answer, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(send_ack_overrun, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(request_ack_refusal, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(request_ack_then_reply, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(request_after_refused_send, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(request_overrun_wait, setup, fake_teardown),
		cmocka_unit_test_setup_teardown(request_overrun_wait_then_batch, setup,
						fake_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
