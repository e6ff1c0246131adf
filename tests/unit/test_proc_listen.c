/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_listen.c - subscribing to proc events (proc_listen.c, proc_ops.c):
 * cn_proc_listen's LISTEN and its ack, cn_proc_ignore's IGNOREs, the event
 * mask applied in userspace when the kernel does not filter, bad arguments.
 * The fake kernel is proc_fake.h's.
 */
#include "proc_fake.h"

static void listen_sends_op_and_waits_for_ack(void **state)
{
	struct cn_sock *s = fake_sock(state);
	const struct cn_msg *sent;
	uint32_t op;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(fake_calls.join, 1);
	assert_int_equal(fake_sent_count(), 1);
	sent = fake_sent_cn(0);
	assert_int_equal(sent->id.idx, CN_IDX_PROC);
	assert_int_equal(sent->id.val, CN_VAL_PROC);
	assert_int_equal(sent->len, 4);
	memcpy(&op, sent->data, 4);
	assert_int_equal(op, PROC_CN_MCAST_LISTEN);
	assert_int_equal(fake_sent(0)->dst_port, 0);
}

/* cn_proc_listen leaves nothing pending where poll cannot see it (its ack
 * is consumed, events from before the subscription dropped), and loss
 * tracking starts at the ack: a gap right after it is counted. */
static void listen_leaves_nothing_pending(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	uint64_t missed = 0;

	assert_int_equal(cn_proc_missed(s, &missed), -EINVAL); /* not listening */
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(cn_pending(s), 0);
	assert_int_equal(cn_proc_filter_mode(s), 0);
	event(NULL, 0, PROC_EVENT_FORK, 2, 100, 0); /* ack was seq 9; 10, 11 lost */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.lost_before, 2);
	assert_true(cn_proc_missed(s, &missed) >= 0);
	assert_int_equal(missed, 2);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);

	/* A second listen on the subscribed socket (a new mask) keeps what
	 * arrived meanwhile for the caller, as before. */
	event(NULL, 0, PROC_EVENT_EXEC, 0, 100, 0);
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXEC);
}

/* Timeout 0 means "do not wait", as everywhere: the LISTEN is sent, no ack
 * awaited (the fake kernel's ack stays on the socket, as a live message). */
static void listen_timeout_zero_does_not_wait(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, 0, 0), 0);
	assert_int_equal(fake_sent_count(), 1);
	assert_int_equal(cn_pending(s), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 100, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 100);
	/* A partial mask without a known probe result: libcn filters alone. */
	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT, 0), 0);
	assert_int_equal(cn_proc_filter_mode(s), CN_PROC_FILTER_USER);
}

static void userspace_filter(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	int r;

	/* A partial mask on a kernel that does not answer 8-byte LISTENs:
	 * libcn filters in userspace. */
	r = cn_proc_listen(s, CN_PROC_EXIT, 1000);
	assert_int_equal(r, 0);
	assert_true(listens4 >= 1);

	event(NULL, 0, PROC_EVENT_FORK, 0, 100, 0); /* filtered out */
	event(NULL, 0, PROC_EVENT_EXIT, 0, 100, 0);
	event(NULL, 0, PROC_EVENT_FORK, 1, 101, 0); /* 1 lost before, filtered out */
	event(NULL, 0, PROC_EVENT_EXEC, 0, 101, 0); /* filtered out */
	event(NULL, 0, PROC_EVENT_EXIT, 0, 101, 9);

	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.lost_before, 0);
	/* the gap before a skipped event still counts */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 101);
	assert_int_equal(ev.exit_code, 9);
	assert_int_equal(ev.lost_before, 1);
	assert_int_equal(pstats(s).lost, 1);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
}

static void nonzero_exit_filter(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_true(cn_proc_listen(s, CN_PROC_NONZERO_EXIT, 1000) == 0);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 100, 0); /* status 0: filtered out */
	event(NULL, 0, PROC_EVENT_FORK, 0, 101, 0); /* filtered out */
	event(NULL, 0, PROC_EVENT_EXIT, 0, 101, 1 << 8);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 101);
	assert_int_equal(ev.exit_code, 0x100);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
}

static void ack_error_is_returned(void **state)
{
	struct cn_sock *s = fake_sock(state);

	ack_err = EPERM;
	errno = 0;
	assert_int_equal(cn_proc_listen(s, 0, 1000), -EPERM);
	assert_int_equal(errno, EPERM);
}

static void listen_timeout(void **state)
{
	struct cn_sock *s = fake_sock(state);

	fake_on_send(NULL, NULL); /* no proc connector answers */
	errno = 0;
	assert_int_equal(cn_proc_listen(s, 0, 50), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(fake_sent_count(), 1);
}

static void bad_args(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_stats st;

	errno = 0;
	assert_int_equal(cn_proc_listen(NULL, 0, 10), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_listen(s, 0x8, 10), -EINVAL); /* not an event type */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_ignore(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_probe_filter(NULL, 10), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_stats(NULL, &st), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_stats(s, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_sent_count(), 0);
}

/* The IGNOREs sent from message `from` on: their count; each is 4 bytes. */
static unsigned ignores_sent(unsigned from)
{
	unsigned n = 0;
	uint32_t op;

	for (unsigned i = from; i < fake_sent_count(); i++) {
		assert_int_equal(fake_sent_cn(i)->len, 4);
		memcpy(&op, fake_sent_cn(i)->data, 4);
		assert_int_equal(op, PROC_CN_MCAST_IGNORE);
		n++;
	}
	return n;
}

/* One IGNORE per LISTEN the kernel counted (kernels before 6.6 count each),
 * sent without waiting for an ack; the group is left. */
static void ignore_undoes_each_listen(void **state)
{
	struct cn_sock *s = fake_sock(state);
	unsigned n, polls;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0); /* again, on the subscribed socket */
	assert_int_equal(listens4, 2);
	n = fake_sent_count();
	polls = fake_calls.poll;
	assert_int_equal(cn_proc_ignore(s), 0);
	assert_int_equal(ignores_sent(n), 2);
	assert_int_equal(fake_calls.leave, 1);
	assert_int_equal(fake_calls.poll, polls); /* does not wait for an ack */
	/* Undone: a second IGNORE would take another listener's count. */
	n = fake_sent_count();
	assert_int_equal(cn_proc_ignore(s), 0);
	assert_int_equal(fake_sent_count(), n);

	/* A LISTEN sent without waiting (timeout 0) counts too. */
	assert_int_equal(cn_proc_listen(s, 0, 0), 0);
	n = fake_sent_count();
	assert_int_equal(cn_proc_ignore(s), 0);
	assert_int_equal(ignores_sent(n), 1);
}

/* On a socket that never listened, cn_proc_ignore sends nothing (before
 * 6.6 an IGNORE decrements the kernel's global listener count, and at 0
 * proc events stop for every listener on the machine); it leaves the group. */
static void ignore_without_listen_sends_nothing(void **state)
{
	struct cn_sock *s = fake_sock(state);

	assert_int_equal(cn_proc_ignore(s), 0);
	assert_int_equal(fake_sent_count(), 0);
	assert_int_equal(fake_calls.leave, 1);

	/* Joined by hand, never listened. */
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_proc_ignore(s), 0);
	assert_int_equal(fake_sent_count(), 0);

	/* A LISTEN the kernel refused (its ack says EPERM) was not counted. */
	ack_err = EPERM;
	assert_int_equal(cn_proc_listen(s, 0, 1000), -EPERM);
	assert_int_equal(fake_sent_count(), 1);
	assert_int_equal(cn_proc_ignore(s), 0);
	assert_int_equal(fake_sent_count(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(listen_sends_op_and_waits_for_ack),
		T(listen_leaves_nothing_pending),
		T(listen_timeout_zero_does_not_wait),
		T(userspace_filter),
		T(nonzero_exit_filter),
		T(ack_error_is_returned),
		T(listen_timeout),
		T(bad_args),
		T(ignore_undoes_each_listen),
		T(ignore_without_listen_sends_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
