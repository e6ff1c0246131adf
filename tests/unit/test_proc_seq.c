/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_seq.c - per-CPU loss tracking and cn_proc_stats (proc_seq.c,
 * proc_internal.h): gaps in one CPU's sequence are loss, interleaved CPUs
 * and wraparound are not, overruns counted once on every receive path.
 * The fake kernel is proc_fake.h's.
 */
#include "proc_fake.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(gap_in_one_cpu_is_loss),	  T(two_cpus_interleaved_no_false_loss),
		T(unknown_cpu_and_backwards_seq), T(seq_wraparound_is_not_loss),
		T(first_event_seq_zero_then_gap), T(overruns_counted_on_every_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
