/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loss.c - cnb-loss: loss accounting with a tiny receive buffer.
 *
 * A reader thread runs cn_proc_recv on a socket with a tiny receive buffer
 * while the main thread forks a storm of children (each gives a fork and an
 * exit event with this process as parent). A gap is only visible between two
 * events of the same CPU, so every CPU's sequence is opened before the storm
 * and closed after it by a marker child pinned to that CPU, each awaited
 * until the reader has seen its exit. Then:
 *
 *   generated = 2 * children (storm + markers)
 *   received  = fork/exit events of our children the reader got
 *   reported  = events missing from per-CPU sequences (cn_proc_stats.lost);
 *               includes other processes' events lost in the same overruns
 *   silent    = max(0, generated - received - reported)
 *
 *   cnb-loss [-n children] [-b rcvbuf]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "libcn.h"

#include "bench.h"

static struct cn_sock *s;
static pid_t self;
static volatile int stop;
static volatile pid_t want;	     /* marker whose exit the main thread awaits */
static volatile int want_seen;	     /* set by the reader */
static volatile unsigned long idles; /* receive timeouts seen by the reader */
static unsigned long received, overruns, errors, parent0;
static uint8_t mine[1u << 22]; /* pids our fork events named */

static void *reader(void *arg)
{
	(void)arg;
	while (!stop) {
		struct cn_proc_event ev;
		int r = cn_proc_recv(s, &ev, 0);

		if (r == -ENOBUFS) {
			overruns++;
			continue;
		}
		if (r == -EAGAIN || r == -EINTR) {
			__atomic_add_fetch(&idles, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		if (r < 0) {
			errors++;
			continue;
		}
		/* An exit is sent after exit_notify: a child already reaped may
		 * carry parent 0, so children are also known by their fork. */
		if (ev.what == CN_PROC_FORK && (uint32_t)ev.tgid < (1u << 22))
			mine[ev.tgid] = ev.parent_tgid == self;
		if (ev.what == CN_PROC_FORK && ev.parent_tgid == self) {
			received++;
		} else if (ev.what == CN_PROC_EXIT && ev.pid == ev.tgid) {
			int ours = ev.parent_tgid == self;

			if ((uint32_t)ev.tgid < (1u << 22)) {
				if (mine[ev.tgid] && ev.parent_tgid != self)
					parent0++;
				ours |= mine[ev.tgid];
				mine[ev.tgid] = 0;
			}
			received += ours;
		}
		if (ev.what == CN_PROC_EXIT && ev.tgid == want)
			__atomic_store_n(&want_seen, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static pid_t spawn_pinned(long cpu)
{
	pid_t p = fork();

	if (p < 0)
		cnb_die("fork");
	if (p == 0) {
		if (cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET((int)cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set) < 0)
				_exit(1);
			sched_yield();
		}
		_exit(0);
	}
	return p;
}

static void reap(pid_t p)
{
	int st;

	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			cnb_die("waitpid");
}

/* One marker per CPU, each awaited (bounded: 5 tries of up to 1 s). */
static long mark_every_cpu(long ncpu, long *missed)
{
	long spawned = 0;

	for (long cpu = 0; cpu < ncpu; cpu++) {
		int seen = 0;

		for (int attempt = 0; attempt < 5 && !seen; attempt++) {
			pid_t p;

			__atomic_store_n(&want_seen, 0, __ATOMIC_SEQ_CST);
			want = -1;
			p = spawn_pinned(cpu);
			want = p;
			spawned++;
			reap(p);
			for (int i = 0;
			     i < 1000 && !(seen = __atomic_load_n(&want_seen, __ATOMIC_SEQ_CST));
			     i++)
				usleep(1000);
		}
		if (!seen)
			(*missed)++;
	}
	return spawned;
}

int main(int argc, char **argv)
{
	long children = 20000, ncpu = sysconf(_SC_NPROCESSORS_CONF), missed = 0, spawned = 0;
	long inflight = 2 * sysconf(_SC_NPROCESSORS_ONLN), alive = 0;
	int rcvbuf = 4096, opt;
	struct cn_proc_stats st0, st;
	struct timeval tv = { .tv_usec = 200000 };
	pthread_t th;

	while ((opt = getopt(argc, argv, "n:b:")) != -1) {
		switch (opt) {
		case 'n':
			children = atol(optarg);
			break;
		case 'b':
			rcvbuf = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: cnb-loss [-n children] [-b rcvbuf]\n");
			return 2;
		}
	}
	self = getpid();
	struct cn_open_opts o = { .sz = sizeof(o), .rcvbuf = rcvbuf };

	s = cn_open(NETLINK_CONNECTOR, &o);
	if (!s)
		cnb_die("cn_open");
	if (cn_proc_listen(s, 0, 2000) < 0)
		cnb_die("cn_proc_listen");
	if (setsockopt(cn_fd(s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		cnb_die("SO_RCVTIMEO");
	if (pthread_create(&th, NULL, reader, NULL))
		cnb_die("pthread_create");

	spawned += mark_every_cpu(ncpu, &missed);
	/* Our children's events before the storm are all seen (each marker was
	 * awaited); count from a clean slate. */
	received = 0;
	cn_proc_stats(s, &st0);

	for (long i = 0; i < children; i++) {
		int wst;

		while (alive >= inflight) {
			if (wait(&wst) < 0)
				cnb_die("wait");
			alive--;
		}
		spawn_pinned(-1);
		alive++;
	}
	while (alive > 0) {
		int wst;

		if (wait(&wst) < 0)
			cnb_die("wait");
		alive--;
	}
	/* Let the reader drain what is queued before closing the sequences. */
	unsigned long i0 = __atomic_load_n(&idles, __ATOMIC_SEQ_CST);

	for (int i = 0; i < 100 && __atomic_load_n(&idles, __ATOMIC_SEQ_CST) == i0; i++)
		usleep(10000);
	long close_spawned = mark_every_cpu(ncpu, &missed);

	stop = 1;
	pthread_join(th, NULL);
	cn_proc_stats(s, &st);

	unsigned long generated = 2 * (unsigned long)(children + close_spawned);
	unsigned long reported = (unsigned long)(st.lost - st0.lost);
	long silent = (long)generated - (long)received - (long)reported;

	if (silent < 0)
		silent = 0;
	printf("loss children=%ld markers=%ld missed_markers=%ld rcvbuf=%d generated=%lu "
	       "received=%lu reported_lost=%lu overruns=%lu errors=%lu exits_with_parent0=%lu "
	       "silent=%ld\n",
	       children, spawned + close_spawned, missed, rcvbuf, generated, received, reported,
	       (unsigned long)(st.overruns - st0.overruns), errors, parent0, silent);
	cn_close(s);
	return 0;
}
