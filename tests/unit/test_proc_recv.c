/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_recv.c - receiving proc events (proc_recv.c): cn_proc_handle,
 * cn_proc_recv and cn_proc_recv_batch on the receive funnel: events
 * decoded with their loss, skipped messages' gaps carried to the next
 * event, datagrams that are not one proc event each, errors in order.
 * The fake kernel is proc_fake.h's.
 */
#include "proc_fake.h"

static void handle_skips_other_ids(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message m;
	struct cn_proc_event ev;

	fake_add_cn(fake_dgram(0), 5, 6, 1, 2, "x", 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_proc_handle(s, &m, &ev), 0);
	assert_int_equal(pstats(s).events, 0);

	/* One of idx and val right: cn_proc_handle compares the id as one
	 * 64-bit word, whose halves swap between byte orders (the arch tier
	 * runs this on s390x). The payload is a whole proc_event. */
	{
		struct proc_event pe;

		memset(&pe, 0, sizeof(pe));
		pe.what = PROC_EVENT_FORK;
		fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC + 1, 1, 0, &pe, sizeof(pe));
		fake_add_cn(fake_dgram(0), CN_IDX_PROC + 1, CN_VAL_PROC, 2, 0, &pe, sizeof(pe));
		for (int i = 0; i < 2; i++) {
			assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
			assert_int_equal(cn_proc_handle(s, &m, &ev), 0);
		}
		assert_int_equal(pstats(s).events, 0);
	}

	/* a proc message too short for a proc_event */
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, 1, 2, "short", 5);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	errno = 0;
	assert_int_equal(cn_proc_handle(s, &m, &ev), -EBADMSG);
	assert_int_equal(errno, EBADMSG);

	errno = 0;
	assert_int_equal(cn_proc_handle(NULL, &m, &ev), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_handle(s, NULL, &ev), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_handle(s, &m, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	m.msg = NULL;
	errno = 0;
	assert_int_equal(cn_proc_handle(s, &m, &ev), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void proc_recv_reports_loss_and_overrun(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 100, 0);
	event(NULL, 0, PROC_EVENT_EXIT, 2, 100, 0x100);
	fake_error(ENOBUFS);
	event(NULL, 0, PROC_EVENT_FORK, 0, 101, 0);

	/* nothing of cn_proc_listen's is left before the events */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_FORK);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.exit_code, 0x100);
	assert_int_equal(ev.lost_before, 2);
	errno = 0;
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(pstats(s).overruns, 1);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 101);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(pstats(s).lost, 2);
	errno = 0;
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
}

/* After an event with lost_before > 0, a message of another id and then an
 * event without any gap: that event must report lost_before 0. */
static void proc_recv_other_id_does_not_repeat_loss(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 2, 100, 0); /* 2 lost */
	fake_add_cn(fake_dgram(0), 5, 6, 1, 2, "other", 5);
	event(NULL, 0, PROC_EVENT_EXEC, 0, 100, 0);

	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 2);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXEC);
	assert_int_equal(pstats(s).lost, 2);
	assert_int_equal(ev.lost_before, 0);
}

/* A gap found before skipped events is not dropped when the call that
 * skipped them ends without an event (-EAGAIN): the next event carries it. */
static void skipped_gap_survives_eagain(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 2, 100, 0); /* 2 lost before, filtered out */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(pstats(s).lost, 2);
	event(NULL, 1, PROC_EVENT_EXIT, 0, 200, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 200);
	assert_int_equal(ev.lost_before, 2);
	/* reported once */
	event(NULL, 1, PROC_EVENT_EXIT, 0, 201, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(pstats(s).lost, 2);
}

/* cn_proc_recv on plain datagrams of one event each (its fused fast path):
 * every field decoded, the unused ones 0 whatever *ev held, loss tracked,
 * one receive system call per event. */
static void proc_recv_one_event_per_datagram(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	struct cn_stats st0, st1;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 100, 0);
	event(NULL, 0, PROC_EVENT_EXEC, 2, 100, 0);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 100, 0x100);
	memset(&ev, 0xa5, sizeof(ev));
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_stats(s, &st0), 0);
	assert_int_equal(ev.what, CN_PROC_FORK);
	assert_int_equal(ev.cpu, 0);
	assert_int_equal(ev.seq, 10);
	assert_true(ev.timestamp_ns == 1010);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.tgid, 100);
	assert_int_equal(ev.parent_pid, 1);
	assert_int_equal(ev.parent_tgid, 1);
	assert_int_equal(ev.exit_code, 0);
	assert_int_equal(ev.ack_err, 0);
	assert_int_equal(ev.ack, 0);
	assert_int_equal(ev.comm[0], 0);
	assert_int_equal(ev.lost_before, 0);

	memset(&ev, 0xa5, sizeof(ev));
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXEC);
	assert_int_equal(ev.seq, 13);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.parent_pid, 0);
	assert_int_equal(ev.tracer_pid, 0);
	assert_int_equal(ev.lost_before, 2);

	memset(&ev, 0xa5, sizeof(ev));
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.exit_code, 0x100);
	assert_int_equal(ev.exit_signal, 17);
	assert_int_equal(ev.parent_pid, 0);
	assert_int_equal(ev.ruid, 0);
	assert_int_equal(ev.comm[sizeof(ev.comm) - 1], 0);
	assert_int_equal(ev.lost_before, 0);

	assert_int_equal(cn_stats(s, &st1), 0);
	assert_int_equal(st1.syscalls - st0.syscalls, 2);
	assert_int_equal(st1.datagrams - st0.datagrams, 2);
	assert_int_equal(st1.messages - st0.messages, 2);
	assert_int_equal(pstats(s).lost, 2);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
}

/* What is not one proc event from the kernel in a datagram of its own goes
 * the generic way, in order: several events in one datagram, a datagram
 * from another port (skipped), a longer payload (a newer kernel's union),
 * a truncated datagram, a message of another id. */
static void proc_recv_other_datagrams(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	struct fake_dgram *d;
	uint8_t longer[48];

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN); /* the ack */
	d = fake_dgram(0);
	event(d, 0, PROC_EVENT_FORK, 0, 1, 0);
	event(d, 0, PROC_EVENT_FORK, 0, 2, 0);
	event(fake_dgram(4242), 0, PROC_EVENT_FORK, 0, 3, 0); /* spoofed: not counted */
	kseq[0]--;
	memset(longer, 0, sizeof(longer));
	memcpy(longer, &(uint32_t){ PROC_EVENT_EXEC }, 4);
	memcpy(longer + 16, &(uint32_t){ 4 }, 4);
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq[0]++, 0, longer, sizeof(longer));
	event(NULL, 0, PROC_EVENT_FORK, 0, 5, 0);
	fake_dgram(0)->msg_flags = MSG_TRUNC;
	fake_add_cn(fake_dgram(0), 7, 8, 1, 0, "other id", 8);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 6, 0);

	for (int pid = 1; pid <= 6; pid++) {
		if (pid == 3)
			continue;
		memset(&ev, 0xa5, sizeof(ev));
		assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
		assert_int_equal(ev.pid, pid);
		assert_int_equal(ev.lost_before, 0);
		if (pid == 5)
			assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EMSGSIZE);
	}
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(pstats(s).lost, 0);
	{
		struct cn_stats st;

		assert_int_equal(cn_stats(s, &st), 0);
		assert_int_equal(st.foreign, 1);
		assert_int_equal(st.malformed, 1);
	}
}

/* ---- cn_proc_recv_batch ---- */

static void batch_takes_events_with_their_loss(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[8];
	unsigned before;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 100, 0);
	event(NULL, 1, PROC_EVENT_FORK, 0, 200, 0);
	event(NULL, 0, PROC_EVENT_EXIT, 2, 100, 0x100); /* 2 lost on CPU 0 */
	event(NULL, 1, PROC_EVENT_EXIT, 0, 200, 0);
	before = fake_calls.recvmmsg;
	memset(ev, 0xa5, sizeof(ev));
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 4);
	/* one receive call for the four datagrams */
	assert_int_equal(fake_calls.recvmmsg - before, 1);
	assert_int_equal(ev[0].what, CN_PROC_FORK);
	assert_int_equal(ev[0].pid, 100);
	assert_int_equal(ev[0].lost_before, 0);
	assert_int_equal(ev[1].pid, 200);
	assert_int_equal(ev[1].cpu, 1);
	assert_int_equal(ev[2].what, CN_PROC_EXIT);
	assert_int_equal(ev[2].exit_code, 0x100);
	assert_int_equal(ev[2].lost_before, 2);
	assert_int_equal(ev[3].lost_before, 0);
	assert_int_equal(ev[3].tracer_pid, 0); /* unused fields cleared */
	assert_int_equal(pstats(s).lost, 2);
	assert_int_equal(pstats(s).events, 4);
	errno = 0;
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
}

static void batch_max_bounds_each_call(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[2];

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	for (uint32_t pid = 1; pid <= 5; pid++)
		event(NULL, 0, PROC_EVENT_FORK, 0, pid, 0);
	assert_int_equal(cn_proc_recv_batch(s, ev, 2, CN_RECV_DONTWAIT), 2);
	assert_int_equal(ev[0].pid, 1);
	assert_int_equal(ev[1].pid, 2);
	assert_int_equal(cn_proc_recv_batch(s, ev, 2, CN_RECV_DONTWAIT), 2);
	assert_int_equal(ev[0].pid, 3);
	assert_int_equal(ev[1].pid, 4);
	assert_int_equal(cn_proc_recv_batch(s, ev, 1, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 5);
	assert_int_equal(cn_proc_recv_batch(s, ev, 2, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(pstats(s).events, 5);
	assert_int_equal(pstats(s).lost, 0);
}

/* A reader woken for each event: once a read found the queue empty, the
 * batch call reads one datagram (recvfrom, no empty second read inside a
 * recvmmsg); when reads of one keep finding more, it reads many again. */
static void batch_reads_one_datagram_while_the_queue_is_empty(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[8];
	unsigned mmsg0, from0;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	mmsg0 = fake_calls.recvmmsg;
	from0 = fake_calls.recvfrom;
	for (uint32_t pid = 2; pid <= 5; pid++) {
		assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -EAGAIN);
		event(NULL, 0, PROC_EVENT_FORK, 0, pid, 0);
		assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
		assert_int_equal(ev[0].pid, pid);
	}
	assert_int_equal(fake_calls.recvmmsg - mmsg0, 0);
	assert_int_equal(fake_calls.recvfrom - from0, 8);
	from0 = fake_calls.recvfrom;
	/* Drained, then the queue fills: two reads of one find more each
	 * time, the third takes many at once. */
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -EAGAIN);
	for (uint32_t pid = 10; pid < 20; pid++)
		event(NULL, 0, PROC_EVENT_FORK, 0, pid, 0);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 8);
	assert_int_equal(ev[7].pid, 19);
	assert_int_equal(fake_calls.recvfrom - from0, 3);
	assert_int_equal(fake_calls.recvmmsg - mmsg0, 1);
	assert_int_equal(pstats(s).lost, 0);
}

/* The gap before a skipped event goes to the next event returned, once:
 * whether the skipped one comes before the call's first event, between two
 * of its events, or after its last (then the next call's first event
 * carries it, past an -EAGAIN). Every message is tracked when it is read. */
static void batch_skipped_gaps_go_to_the_next_event(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[8];

	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 3, 99, 0); /* 3 lost before, filtered out */
	event(NULL, 0, PROC_EVENT_EXIT, 0, 100, 0);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 101, 0);
	event(NULL, 0, PROC_EVENT_FORK, 1, 102, 0); /* 1 lost before, filtered out */
	event(NULL, 0, PROC_EVENT_EXEC, 0, 102, 0); /* filtered out */
	event(NULL, 0, PROC_EVENT_EXIT, 0, 102, 7);
	event(NULL, 0, PROC_EVENT_FORK, 2, 103, 0); /* 2 lost before, filtered out */

	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 3);
	assert_int_equal(ev[0].pid, 100);
	assert_int_equal(ev[0].lost_before, 3);
	assert_int_equal(ev[1].pid, 101);
	assert_int_equal(ev[1].lost_before, 0);
	assert_int_equal(ev[2].pid, 102);
	assert_int_equal(ev[2].exit_code, 7);
	assert_int_equal(ev[2].lost_before, 1);
	assert_int_equal(pstats(s).lost, 6);
	assert_int_equal(pstats(s).events, 7);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -EAGAIN);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 103, 0);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 103);
	assert_int_equal(ev[0].lost_before, 2);
	assert_int_equal(pstats(s).lost, 6);
	assert_int_equal(pstats(s).events, 8);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -EAGAIN);
}

/* Datagrams that are not one proc event each (a bundle, a spoofed one, one
 * cut short, another id) go through the generic walk, in order; an error
 * met after events waits for the next call. */
static void batch_other_datagrams(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[8];
	struct fake_dgram *d;
	uint32_t got[8];
	unsigned n = 0;
	int r;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0);
	d = fake_dgram(0);
	event(d, 0, PROC_EVENT_FORK, 0, 2, 0);
	event(d, 0, PROC_EVENT_FORK, 0, 3, 0);
	event(fake_dgram(4242), 0, PROC_EVENT_FORK, 0, 99, 0); /* spoofed: not taken */
	kseq[0]--;
	fake_add_cn(fake_dgram(0), 7, 8, 1, 0, "other id", 8);
	event(NULL, 0, PROC_EVENT_FORK, 0, 4, 0);
	fake_dgram(0)->msg_flags = MSG_TRUNC;
	event(NULL, 0, PROC_EVENT_EXIT, 0, 5, 0);

	while ((r = cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT)) != -EAGAIN) {
		if (r == -EMSGSIZE) {
			assert_int_equal(n, 4); /* after pid 4, before pid 5 */
			continue;
		}
		assert_true(r >= 1 && n + (unsigned)r <= 8);
		for (int i = 0; i < r; i++) {
			assert_int_equal(ev[i].lost_before, 0);
			got[n++] = (uint32_t)ev[i].pid;
		}
	}
	assert_int_equal(n, 5);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(got[i], i + 1);
	assert_int_equal(pstats(s).lost, 0);
}

static void batch_overrun_between_events(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[8];

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 2, 0);
	fake_error(ENOBUFS);
	event(NULL, 0, PROC_EVENT_FORK, 5, 3, 0);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 2);
	errno = 0;
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(pstats(s).overruns, 1);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 3);
	assert_int_equal(ev[0].lost_before, 5);
}

/* A proc message too short for a proc_event after an event: the event is
 * returned, the error by the next call, then the events after it. */
static void batch_short_proc_message(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[8];
	uint8_t shortpe[16];

	memset(shortpe, 0, sizeof(shortpe));
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0);
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq[0]++, 0, shortpe,
		    sizeof(shortpe));
	event(NULL, 0, PROC_EVENT_FORK, 0, 2, 0);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 1);
	errno = 0;
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 2);
	/* the short message's seq is no gap: it was received */
	assert_int_equal(ev[0].lost_before, 1);
}

static void recv_bad_args(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[2];

	errno = 0;
	assert_int_equal(cn_proc_recv(NULL, ev, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_recv(s, NULL, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_recv(s, ev, 0x80), -EINVAL);
	assert_int_equal(errno, EINVAL);

	errno = 0;
	assert_int_equal(cn_proc_recv_batch(NULL, ev, 2, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_proc_recv_batch(s, NULL, 2, 0), -EINVAL);
	assert_int_equal(cn_proc_recv_batch(s, ev, 0, 0), -EINVAL);
	assert_int_equal(cn_proc_recv_batch(s, ev, 2, 0x80), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(handle_skips_other_ids),
		T(proc_recv_reports_loss_and_overrun),
		T(proc_recv_other_id_does_not_repeat_loss),
		T(skipped_gap_survives_eagain),
		T(proc_recv_one_event_per_datagram),
		T(proc_recv_other_datagrams),
		T(batch_takes_events_with_their_loss),
		T(batch_max_bounds_each_call),
		T(batch_reads_one_datagram_while_the_queue_is_empty),
		T(batch_skipped_gaps_go_to_the_next_event),
		T(batch_other_datagrams),
		T(batch_overrun_between_events),
		T(batch_short_proc_message),
		T(recv_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
