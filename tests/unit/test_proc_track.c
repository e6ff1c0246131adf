/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_track.c - proc connector listening and per-CPU loss tracking
 * (cn_proc_listen, cn_proc_handle, cn_proc_recv, cn_proc_recv_batch,
 * cn_proc_stats) against a
 * fake kernel that answers LISTEN and sends events with chosen per-CPU seqs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/cn_proc.h>

#include "fake_sys.h"

/* The fake kernel's per-CPU event counters. */
static uint32_t kseq[4];
static unsigned listens4, listens8;
static uint32_t ack_err; /* error the fake kernel puts in LISTEN acks */

/* Queue a proc event from `cpu` with that CPU's next seq (after skipping
 * `skip` seqs, i.e. events lost), into datagram d (NULL: a new one). */
static void event(struct fake_dgram *d, uint32_t cpu, uint32_t what, uint32_t skip, uint32_t pid,
		  uint32_t exit_code)
{
	struct proc_event pe;

	memset(&pe, 0, sizeof(pe));
	pe.what = what;
	pe.cpu = cpu;
	pe.timestamp_ns = 1000 + kseq[cpu];
	switch (what) {
	case PROC_EVENT_FORK:
		pe.event_data.fork.parent_pid = 1;
		pe.event_data.fork.parent_tgid = 1;
		pe.event_data.fork.child_pid = (__kernel_pid_t)pid;
		pe.event_data.fork.child_tgid = (__kernel_pid_t)pid;
		break;
	case PROC_EVENT_EXIT:
		pe.event_data.exit.process_pid = (__kernel_pid_t)pid;
		pe.event_data.exit.process_tgid = (__kernel_pid_t)pid;
		pe.event_data.exit.exit_code = exit_code;
		pe.event_data.exit.exit_signal = 17;
		break;
	default:
		pe.event_data.exec.process_pid = (__kernel_pid_t)pid;
		pe.event_data.exec.process_tgid = (__kernel_pid_t)pid;
		break;
	}
	kseq[cpu] += skip;
	fake_add_cn(d ? d : fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq[cpu]++, 0, &pe,
		    sizeof(pe));
}

/* The kernel's answer to LISTEN: an ack from CPU 0 with ack + 1 and that
 * CPU's next seq (not the request's). 8-byte proc_input LISTENs are not
 * answered: an old kernel (so libcn filters in userspace). */
static void kernel(const struct cn_msg *req, uint32_t dst, void *arg)
{
	struct proc_event pe;
	uint32_t op;

	(void)dst;
	(void)arg;
	if (req->id.idx != CN_IDX_PROC || req->len < 4)
		return;
	memcpy(&op, req->data, 4);
	if (req->len == 8) {
		listens8++;
		return;
	}
	listens4++;
	if (op != PROC_CN_MCAST_LISTEN)
		return;
	memset(&pe, 0, sizeof(pe));
	pe.what = PROC_EVENT_NONE;
	pe.cpu = 0;
	pe.event_data.ack.err = ack_err;
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq[0]++, req->ack + 1, &pe,
		    sizeof(pe));
}

static int setup(void **state)
{
	struct cn_sock *s = fake_open(0, 0);

	memset(kseq, 0, sizeof(kseq));
	kseq[0] = 9;
	kseq[1] = 500;
	listens4 = listens8 = 0;
	ack_err = 0;
	fake_on_send(kernel, NULL);
	*state = s;
	return 0;
}

static struct cn_proc_stats pstats(struct cn_sock *s)
{
	struct cn_proc_stats st;

	assert_int_equal(cn_proc_stats(s, &st), 0);
	return st;
}

/* Receive with cn_recv and hand to cn_proc_handle; skip what it skips. */
static void next_event(struct cn_sock *s, struct cn_proc_event *ev)
{
	struct cn_message m;
	int r;

	for (int i = 0; i < 16; i++) {
		assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
		memset(ev, 0xa5, sizeof(*ev));
		r = cn_proc_handle(s, &m, ev);
		assert_true(r == 0 || r == 1);
		if (r == 1)
			return;
	}
	fail_msg("no event");
}

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

static void gap_in_one_cpu_is_loss(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 100, 0); /* seq 10 */
	event(NULL, 0, PROC_EVENT_EXEC, 0, 100, 0); /* seq 11 */
	event(NULL, 0, PROC_EVENT_EXIT, 1, 100, 0); /* seq 13: 12 lost */
	event(NULL, 0, PROC_EVENT_FORK, 3, 101, 0); /* seq 17: 14..16 lost */

	next_event(s, &ev);
	assert_int_equal(ev.what, CN_PROC_FORK);
	assert_int_equal(ev.seq, 10);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.what, CN_PROC_EXEC);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(pstats(s).lost, 0);
	next_event(s, &ev);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.seq, 13);
	assert_int_equal(ev.lost_before, 1);
	assert_int_equal(pstats(s).lost, 1);
	next_event(s, &ev);
	assert_int_equal(ev.lost_before, 3);
	assert_int_equal(pstats(s).lost, 4);
	/* The ack was consumed by cn_proc_listen (nothing left pending). */
	assert_int_equal(pstats(s).events, 4);
}

static void two_cpus_interleaved_no_false_loss(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	struct fake_dgram *d;

	if (sysconf(_SC_NPROCESSORS_CONF) < 2)
		skip();
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	d = fake_dgram(0);
	event(d, 0, PROC_EVENT_FORK, 0, 1, 0);
	event(d, 1, PROC_EVENT_FORK, 0, 2, 0);
	event(d, 1, PROC_EVENT_EXEC, 0, 2, 0);
	event(NULL, 0, PROC_EVENT_EXEC, 0, 1, 0);
	event(NULL, 1, PROC_EVENT_EXIT, 0, 2, 0);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 1, 0);
	event(NULL, 1, PROC_EVENT_FORK, 0, 3, 0);

	for (int i = 0; i < 7; i++) {
		next_event(s, &ev);
		assert_int_equal(ev.lost_before, 0);
	}
	assert_int_equal(pstats(s).lost, 0);
	assert_int_equal(pstats(s).events, 7);

	/* now a gap on CPU 1 only */
	event(NULL, 0, PROC_EVENT_FORK, 0, 4, 0);
	event(NULL, 1, PROC_EVENT_FORK, 2, 5, 0);
	next_event(s, &ev);
	assert_int_equal(ev.cpu, 0);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.lost_before, 2);
	assert_int_equal(pstats(s).lost, 2);
}

static void unknown_cpu_and_backwards_seq(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0); /* seq 10 */
	/* a CPU number beyond what this machine has: decoded, not tracked */
	kseq[3] = 7;
	{
		struct proc_event pe;

		memset(&pe, 0, sizeof(pe));
		pe.what = PROC_EVENT_EXEC;
		pe.cpu = (uint32_t)ncpu + 1000;
		fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, 5, 0, &pe, sizeof(pe));
		fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, 50, 0, &pe, sizeof(pe));
	}
	/* CPU 0's counter going backwards (seq 3 after 10): resynchronise,
	 * count nothing; then 4 follows 3 with no gap */
	kseq[0] = 3;
	event(NULL, 0, PROC_EVENT_EXIT, 0, 1, 0);
	event(NULL, 0, PROC_EVENT_EXIT, 0, 2, 0);

	next_event(s, &ev);
	assert_int_equal(ev.seq, 10);
	next_event(s, &ev);
	assert_int_equal(ev.cpu, (uint32_t)ncpu + 1000);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.seq, 3);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.seq, 4);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(pstats(s).lost, 0);
}

static void seq_wraparound_is_not_loss(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	kseq[0] = 0xfffffffeu;
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0); /* 0xfffffffe */
	event(NULL, 0, PROC_EVENT_FORK, 0, 2, 0); /* 0xffffffff */
	event(NULL, 0, PROC_EVENT_FORK, 0, 3, 0); /* 0 */
	event(NULL, 0, PROC_EVENT_FORK, 1, 4, 0); /* 2: one lost across the wrap */
	for (int i = 0; i < 3; i++) {
		next_event(s, &ev);
		assert_int_equal(ev.lost_before, 0);
	}
	assert_int_equal(ev.seq, 0);
	next_event(s, &ev);
	assert_int_equal(ev.seq, 2);
	/* (the listen ack had seq 9: 0xfffffffe after it reads as a counter
	 * going backwards, so tracking resynchronised there, counting 0) */
	assert_int_equal(ev.lost_before, 1);
	assert_int_equal(pstats(s).lost, 1);
}

/* A CPU's first event may carry any seq, 0 too (a counter fresh from
 * boot): no gap before it, and the next gap after it is counted. */
static void first_event_seq_zero_then_gap(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	if (sysconf(_SC_NPROCESSORS_CONF) < 2)
		skip();
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	kseq[1] = 0;
	event(NULL, 1, PROC_EVENT_FORK, 0, 1, 0); /* seq 0, CPU 1's first */
	event(NULL, 1, PROC_EVENT_FORK, 1, 2, 0); /* seq 2: 1 lost */
	next_event(s, &ev);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.seq, 0);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.seq, 2);
	assert_int_equal(ev.lost_before, 1);
	assert_int_equal(pstats(s).lost, 1);

	/* CPU 1 again, tracked afresh by a new listen: its first event the
	 * last seq before the counter wraps, the next after a gap across it */
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	kseq[1] = 0xffffffffu;
	event(NULL, 1, PROC_EVENT_FORK, 0, 3, 0); /* 0xffffffff */
	event(NULL, 1, PROC_EVENT_FORK, 2, 4, 0); /* 2: 0 and 1 lost */
	next_event(s, &ev);
	assert_int_equal(ev.seq, 0xffffffffu);
	assert_int_equal(ev.lost_before, 0);
	next_event(s, &ev);
	assert_int_equal(ev.seq, 2);
	assert_int_equal(ev.lost_before, 2);
	assert_int_equal(pstats(s).lost, 3);
}

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

/* cn_proc_listen leaves nothing pending where poll cannot see it (its ack
 * is consumed, events from before the subscription dropped), and loss
 * tracking starts at the ack: a gap right after it is counted. */
static void listen_leaves_nothing_pending(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(cn_pending(s), 0);
	assert_int_equal(cn_proc_filter(s), 0);
	event(NULL, 0, PROC_EVENT_FORK, 2, 100, 0); /* ack was seq 9; 10, 11 lost */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.lost_before, 2);
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
	assert_int_equal(cn_proc_filter(s), CN_PROC_FILTER_USER);
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
	struct cn_proc_event ev;
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
	assert_int_equal(cn_proc_kernel_filters(NULL, 10), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_recv(NULL, &ev, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_recv(s, NULL, 0), -EINVAL);
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
	assert_int_equal(ev.comm[16], 0);
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

/* Overruns are counted in cn_proc_stats the same on every receive path:
 * the batch path (cn_recv_batch + cn_proc_handle) as cn_proc_recv, an
 * NLMSG_OVERRUN as an ENOBUFS, and each once. */
static void overruns_counted_on_every_path(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	struct cn_message m[8];
	struct cn_stats st;
	int n, reported = 0, events = 0;

	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 1, 0);
	fake_error(ENOBUFS);
	event(NULL, 0, PROC_EVENT_FORK, 3, 2, 0);
	fake_add_nl(fake_dgram(0), NLMSG_OVERRUN, NULL, 0);
	event(NULL, 0, PROC_EVENT_FORK, 0, 3, 0);
	while ((n = cn_recv_batch(s, m, 8, CN_RECV_DONTWAIT)) != -EAGAIN) {
		if (n == -ENOBUFS) {
			reported++;
			continue;
		}
		assert_true(n > 0);
		for (int i = 0; i < n; i++)
			events += cn_proc_handle(s, &m[i], &ev) == 1;
	}
	assert_int_equal(events, 3);
	assert_int_equal(reported, 2);
	assert_int_equal(pstats(s).overruns, 2);
	assert_int_equal(pstats(s).lost, 3);
	assert_int_equal(cn_stats(s, &st), 0);
	assert_int_equal(st.overruns, 2);

	/* the single path counts into the same counter */
	fake_error(ENOBUFS);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -ENOBUFS);
	fake_add_nl(fake_dgram(0), NLMSG_OVERRUN, NULL, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(pstats(s).overruns, 4);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(pstats(s).overruns, 4);
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

/* The gap before a skipped event goes to the next event returned, once,
 * whether the skipped one comes before the call's first event or after
 * its last. */
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

	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 2);
	assert_int_equal(ev[0].pid, 100);
	assert_int_equal(ev[0].lost_before, 3);
	assert_int_equal(ev[1].pid, 101);
	assert_int_equal(ev[1].lost_before, 0);
	/* the fork with a gap was left for this call, counted once */
	assert_int_equal(pstats(s).lost, 3);
	assert_int_equal(cn_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 102);
	assert_int_equal(ev[0].exit_code, 7);
	assert_int_equal(ev[0].lost_before, 1);
	assert_int_equal(pstats(s).lost, 4);
	assert_int_equal(pstats(s).events, 6);
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

static void batch_bad_args(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev[2];

	errno = 0;
	assert_int_equal(cn_proc_recv_batch(NULL, ev, 2, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_proc_recv_batch(s, NULL, 2, 0), -EINVAL);
	assert_int_equal(cn_proc_recv_batch(s, ev, 0, 0), -EINVAL);
	assert_int_equal(cn_proc_recv_batch(s, ev, 2, 0x80), -EINVAL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(listen_sends_op_and_waits_for_ack),
		T(listen_leaves_nothing_pending),
		T(listen_timeout_zero_does_not_wait),
		T(gap_in_one_cpu_is_loss),
		T(two_cpus_interleaved_no_false_loss),
		T(unknown_cpu_and_backwards_seq),
		T(first_event_seq_zero_then_gap),
		T(seq_wraparound_is_not_loss),
		T(handle_skips_other_ids),
		T(proc_recv_reports_loss_and_overrun),
		T(proc_recv_other_id_does_not_repeat_loss),
		T(proc_recv_one_event_per_datagram),
		T(proc_recv_other_datagrams),
		T(overruns_counted_on_every_path),
		T(userspace_filter),
		T(skipped_gap_survives_eagain),
		T(nonzero_exit_filter),
		T(ack_error_is_returned),
		T(listen_timeout),
		T(bad_args),
		T(ignore_undoes_each_listen),
		T(ignore_without_listen_sends_nothing),
		T(batch_takes_events_with_their_loss),
		T(batch_max_bounds_each_call),
		T(batch_skipped_gaps_go_to_the_next_event),
		T(batch_other_datagrams),
		T(batch_overrun_between_events),
		T(batch_short_proc_message),
		T(batch_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
