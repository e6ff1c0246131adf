/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_loss.c - nothing lost silently, counted twice. Round after
 * round, a fork storm overruns a proc listener with a tiny buffer (4 KiB;
 * 4 MiB while markers are awaited, below); every
 * event of the storm must be read or counted lost, and libcn's count of
 * events lost (per-CPU sequence gaps, cn_proc_stats.lost) must be the
 * kernel's own count of datagrams it dropped for the socket (cn_drops):
 * received + lost = produced = received + dropped.
 *
 * Usage: test_proc_loss [ROUNDS [HOGS]]: ROUNDS storms (default 3), with
 * HOGS busy-looping processes running through all of them (default: one
 * per online CPU), so that the reader competes for the CPUs.
 *
 * Why each step is there:
 *  - a gap shows only at a CPU's next event, so each window is opened and
 *    closed by an event made on every CPU (a marker: a child pinned there
 *    that exits) and read;
 *  - a drop after the last event read from a CPU is in cn_drops but in no
 *    gap yet: drops are read before and after each round of markers, and
 *    the gaps of the window lie between what the two readings allow; with
 *    no drop during either round of markers (retried a few times) the two
 *    agree and the count is exact;
 *  - our children's events are known by pid, never by the parent an exit
 *    names: the kernel sends the exit event after exit_notify(), and a
 *    child the parent already reaped names parent 0 (cn_proc.c,
 *    proc_exit_connector: pid_alive). Counting by parent missed such an
 *    exit, read but neither ours nor lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "host_util.h"

#define WAIT_MS	   5000
#define CHILDREN   200 /* per storm: a hundred times what 4 KiB holds */
#define MARK_TRIES 5   /* rounds of markers until one sees no drop */
#define MAX_HOGS   64

static long rounds = 3, nhogs = -1;

static int exit_zero(void *arg)
{
	(void)arg;
	return 0;
}

static int pinned_exit(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(intptr_t)arg, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return 1;
	sched_yield();
	return 0;
}

static int hog(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test, even when it fails */
	for (volatile unsigned long n = 0;; n++)
		;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* One storm's reading: the children's pids (sorted) and what was read. */
struct storm {
	pid_t kids[CHILDREN];
	long ours;     /* the children's forks and exits read */
	long overruns; /* -ENOBUFS returned */
};

static int is_kid(const struct storm *st, pid_t pid)
{
	return bsearch(&pid, st->kids, CHILDREN, sizeof(pid), cmp_pid) != NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Read until the exit of `marker` arrives (marker 0: until the socket is
 * empty), counting our children's events; 1 when the marker was seen. A
 * marker may itself be lost: its wait is bounded (5 s), and is woken at
 * once by other events, so that the tiny buffer is kept empty meanwhile. */
static int read_until(struct cn_sock *s, pid_t marker, struct storm *st)
{
	struct cn_proc_event ev;
	double end = now() + 5;

	for (;;) {
		int r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT);

		if (r == -ENOBUFS) {
			st->overruns++;
			continue;
		}
		if (r == -EAGAIN) {
			struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };

			if (marker == 0 || now() > end)
				return 0;
			poll(&p, 1, 100);
			continue;
		}
		assert_int_equal(r, 0);
		if (ev.what == CN_PROC_EXIT && ev.tgid == marker)
			return 1;
		if (ev.what == CN_PROC_FORK && ev.parent_tgid == getpid() && is_kid(st, ev.tgid))
			st->ours++;
		if (ev.what == CN_PROC_EXIT && ev.pid == ev.tgid && is_kid(st, ev.tgid))
			st->ours++;
	}
}

/* Make an event on every CPU and read until each has arrived. */
static void mark_every_cpu(struct cn_sock *s, long ncpu, struct storm *st)
{
	for (long cpu = 0; cpu < ncpu; cpu++) {
		int seen = 0;

		for (int attempt = 0; attempt < 10 && !seen; attempt++) {
			pid_t marker = host_spawn(pinned_exit, (void *)(intptr_t)cpu);

			host_reap(marker);
			seen = read_until(s, marker, st);
		}
		assert_true(seen);
	}
}

static uint64_t drops(struct cn_sock *s)
{
	uint64_t d = 0;

	assert_int_equal(cn_drops(s, &d), 0);
	return d;
}

/* A window's edge: rounds of markers until one sees no drop (or
 * MARK_TRIES); the drops read before and after the last round, and
 * cn_proc_stats then. */
static void edge(struct cn_sock *s, long ncpu, struct storm *st, uint64_t d[2],
		 struct cn_proc_stats *ps)
{
	/* Room for the markers, whatever else the machine forks meanwhile
	 * (other listeners' storms): only the storm needs the tiny buffer. */
	assert_true(cn_set_rcvbuf(s, 4 << 20) > 0);
	for (int i = 0; i < MARK_TRIES; i++) {
		d[0] = drops(s);
		mark_every_cpu(s, ncpu, st);
		d[1] = drops(s);
		if (d[0] == d[1])
			break;
	}
	assert_int_equal(cn_proc_stats(s, ps), 0);
}

static void test_overruns_counted_exactly(void **state)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), exact = 0;
	static struct storm st;
	pid_t hogs[MAX_HOGS];

	(void)state;
	if (nhogs < 0)
		nhogs = ncpu;
	assert_true(nhogs <= MAX_HOGS);
	for (long h = 0; h < nhogs; h++)
		hogs[h] = host_spawn(hog, NULL);
	for (long round = 1; round <= rounds; round++) {
		struct cn_sock *s = host_open(0);
		struct cn_proc_stats p0, p1;
		uint64_t open[2], close[2];

		st.ours = st.overruns = 0;
		assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
		edge(s, ncpu, &st, open, &p0);
		assert_true(cn_set_rcvbuf(s, 4096) > 0);
		for (int i = 0; i < CHILDREN; i++) {
			st.kids[i] = host_spawn(exit_zero, NULL);
			host_reap(st.kids[i]);
		}
		qsort(st.kids, CHILDREN, sizeof(st.kids[0]), cmp_pid);
		st.ours = st.overruns = 0;
		read_until(s, 0, &st);
		edge(s, ncpu, &st, close, &p1);

		uint64_t got = p1.events - p0.events, lost = p1.lost - p0.lost;
		/* Drops certainly inside the window, and possibly inside it. */
		uint64_t dmin = close[0] - open[1], dmax = close[1] - open[0];

		exact += dmin == dmax;
		fprintf(stderr,
			"# round %ld: %d children, %ld of their %d events read; window: %lu "
			"received, %lu lost by gaps, %lu..%lu dropped (cn_drops), %ld overruns%s\n",
			round, CHILDREN, st.ours, 2 * CHILDREN, (unsigned long)got,
			(unsigned long)lost, (unsigned long)dmin, (unsigned long)dmax, st.overruns,
			dmin == dmax ? ", exact" : "");
		/* The storm overran the tiny buffer, and it was said... */
		assert_true(st.ours < 2 * CHILDREN);
		assert_true(st.overruns > 0);
		assert_true(p1.overruns - p0.overruns >= (uint64_t)st.overruns);
		/* ...every child's event missing is counted lost... */
		assert_true((uint64_t)st.ours + lost >= 2 * CHILDREN);
		/* ...and lost is what the kernel dropped: received + lost =
		 * produced = received + dropped. */
		assert_true(lost >= dmin);
		assert_true(lost <= dmax);
		cn_close(s);
	}
	for (long h = 0; h < nhogs; h++) {
		kill(hogs[h], SIGKILL);
		host_reap(hogs[h]);
	}
	fprintf(stderr, "# %ld rounds, %ld hogs, %ld rounds exact (no drop while marking)\n",
		rounds, nhogs, exact);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overruns_counted_exactly),
	};

	if (argc > 1)
		rounds = strtol(argv[1], NULL, 10);
	if (argc > 2)
		nhogs = strtol(argv[2], NULL, 10);
	if (rounds < 1 || nhogs > MAX_HOGS) {
		fprintf(stderr, "usage: %s [ROUNDS [HOGS]] (HOGS at most %d)\n", argv[0], MAX_HOGS);
		return 2;
	}
	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
