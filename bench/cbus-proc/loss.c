/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loss.c - cbp-loss: bench/cbus-proc/run's forced overrun. A listener of
 * cnbus_proc.ko through libcn (cn_bus_proc_recv) whose receive buffer is
 * made tiny (4 KiB) while CHILDREN children fork, exec PROGRAM and exit,
 * so its socket overruns. A child pinned to each CPU exits before the
 * storm and another after it: the module numbers every record it makes
 * per CPU (cn_msg.seq, taken whether or not CBUS or the socket keeps the
 * record), so between the two on a CPU, records received + loss libcn
 * reported before them must equal the records numbered, exactly (the
 * count: tests/vm/guest/kproc_window.c, as the guest test
 * kproc_overrun_exact counts).
 *
 *   cbp-loss CHILDREN PROGRAM
 *
 * Prints "loss numbered=N received=R lost=L silent=S overruns=O", where
 * silent = |numbered - received - lost| summed over the CPUs (goal: 0;
 * lost > 0 shows the overrun happened).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/kmod.h>

#include "kproc_window.h"

#define BIG_BUF (8 << 20)

static int ncpus;
static struct kwin win;

/* Read records: with pids, until each CPU's sentinel came (kwin_count);
 * without, until nothing comes for 200 ms. */
static int drain(struct cn_sock *s, const pid_t *pid, int is_first)
{
	struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
	int left = pid ? ncpus : 1;

	while (left > 0) {
		struct cn_bus_proc_event ev;
		int r = cn_bus_proc_recv(s, &ev, CN_RECV_DONTWAIT);

		if (r == -EAGAIN) {
			if (poll(&p, 1, pid ? 60000 : 200) == 0) {
				if (!pid)
					return 0;
				fprintf(stderr, "cbp-loss: no sentinel after 60 s\n");
				return -ETIMEDOUT;
			}
			continue;
		}
		if (r == -ENOBUFS) /* counted by libcn; the gaps say how many */
			continue;
		if (r)
			return r;
		r = kwin_count(&win, &ev, pid, ncpus, is_first);
		if (r < 0)
			return r;
		left -= r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cn_open_opts oo = { .sz = sizeof(oo), .rcvbuf = BIG_BUF };
	int children = argc > 2 ? atoi(argv[1]) : 0;
	struct kwin_sum sum;
	struct cn_stats st;
	pid_t pid[KWIN_CPUS];
	struct cn_sock *s;

	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (children < 1 || ncpus > KWIN_CPUS) {
		fprintf(stderr, "usage: cbp-loss CHILDREN PROGRAM (at most %d CPUs)\n", KWIN_CPUS);
		return 2;
	}
	kwin_init(&win);
	s = cn_bus_open(&oo);
	if (!s || cn_bus_proc_listen(s)) {
		perror("cbp-loss: open and listen on cnbus_proc.ko");
		return 1;
	}
	for (int c = 0; c < ncpus; c++)
		pid[c] = kwin_sentinel(c, 0);
	if (drain(s, pid, 1))
		return 1;
	if (cn_set_rcvbuf(s, 4096) < 0)
		return perror("cbp-loss: rcvbuf"), 1;
	for (int i = 0; i < children; i++) {
		pid_t p = fork();

		if (p == 0) {
			execl(argv[2], argv[2], "cnb-loss", (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	if (cn_set_rcvbuf(s, BIG_BUF) < 0)
		return perror("cbp-loss: rcvbuf"), 1;
	/* An overrun socket takes nothing until it was read empty (netlink's
	 * congestion flag): drain it before the last sentinels. */
	if (drain(s, NULL, 0))
		return 1;
	for (int c = 0; c < ncpus; c++)
		pid[c] = kwin_sentinel(c, 0);
	if (drain(s, pid, 0))
		return 1;
	kwin_sum(&win, ncpus, &sum);
	if (cn_stats(s, &st))
		st.overruns = 0;
	printf("loss numbered=%" PRIu64 " received=%" PRIu64 " lost=%" PRIu64 " silent=%" PRIu64
	       " overruns=%" PRIu64 "\n",
	       sum.numbered, sum.received, sum.lost, sum.silent, (uint64_t)st.overruns);
	cn_close(s);
	return 0;
}
