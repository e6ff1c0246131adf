/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * latency.c - cbp-latency: how long cnbus_proc.ko's records take from
 * their tracepoint to a reader (bench/cbus-proc/run --latency). A
 * listener of cnbus_proc.ko through libcn (cn_bus_proc_recv_batch); a
 * child of it forks FORKS grandchildren that exit at once, one every
 * GAP_US microseconds (0: back to back, a fork bomb of one worker). For
 * every fork and exit record of those grandchildren, the latency is the
 * CLOCK_MONOTONIC time the listener got it minus the record's
 * timestamp_ns (ktime_get_ns() in the tracepoint: the same clock).
 *
 *   cbp-latency FORKS GAP_US
 *
 * Prints "latency records=N p50_us=A p90_us=B p99_us=C max_us=D
 * per_wakeup=W": the records' latencies' percentiles and the records
 * one receive call returned on average.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/kmod.h>

#define BATCH 64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The generator: FORKS children that exit at once, GAP_US apart. */
static void generate(long forks, long gap_us)
{
	for (long i = 0; i < forks; i++) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		if (c < 0 || waitpid(c, NULL, 0) != c)
			_exit(1);
		if (gap_us)
			usleep((useconds_t)gap_us);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	struct cn_open_opts oo = { .sz = sizeof(oo), .rcvbuf = 8 << 20 };
	long forks = argc > 2 ? atol(argv[1]) : 0, gap_us = argc > 2 ? atol(argv[2]) : 0;
	struct cn_bus_proc_event ev[BATCH];
	uint64_t *lat, calls = 0, got = 0;
	struct pollfd p;
	struct cn_sock *s;
	int gen_done = 0;
	pid_t gen;

	if (forks < 1 || forks > 1000000 || gap_us < 0) {
		fprintf(stderr, "usage: cbp-latency FORKS GAP_US\n");
		return 2;
	}
	lat = calloc((size_t)forks * 2, sizeof(*lat));
	s = cn_bus_open(&oo);
	if (!lat || !s || cn_bus_proc_listen(s)) {
		perror("cbp-latency: open and listen on cnbus_proc.ko");
		return 1;
	}
	p.fd = cn_fd(s);
	p.events = POLLIN;
	gen = fork();
	if (gen < 0)
		return perror("cbp-latency: fork"), 1;
	if (gen == 0)
		generate(forks, gap_us);
	/* Until the generator is gone and nothing came for 500 ms. */
	for (;;) {
		int n = cn_bus_proc_recv_batch(s, ev, BATCH, CN_RECV_DONTWAIT);
		uint64_t t = now_ns();

		if (n == -EAGAIN) {
			if (!gen_done && waitpid(gen, NULL, WNOHANG) == gen)
				gen_done = 1;
			if (poll(&p, 1, gen_done ? 500 : 100) == 0 && gen_done)
				break;
			continue;
		}
		if (n == -ENOBUFS)
			continue;
		if (n < 0) {
			fprintf(stderr, "cbp-latency: receive: %d\n", n);
			return 1;
		}
		calls++;
		for (int i = 0; i < n; i++) {
			/* The generator's children: forked by it, or exiting with it as parent. */
			if (ev[i].parent_tgid != gen || ev[i].what == CN_PROC_EXEC)
				continue;
			if (got < (uint64_t)forks * 2)
				lat[got++] = t > ev[i].timestamp_ns ? t - ev[i].timestamp_ns : 0;
		}
	}
	if (!got) {
		fprintf(stderr, "cbp-latency: no record of the generator's children\n");
		return 1;
	}
	qsort(lat, got, sizeof(*lat), cmp_u64);
	printf("latency records=%" PRIu64 " p50_us=%.0f p90_us=%.0f p99_us=%.0f max_us=%.0f"
	       " per_wakeup=%.2f\n",
	       got, lat[got / 2] / 1e3, lat[got * 9 / 10] / 1e3, lat[got * 99 / 100] / 1e3,
	       lat[got - 1] / 1e3, (double)got / (double)calls);
	cn_close(s);
	free(lat);
	return 0;
}
