// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kproc_window.c - see kproc_window.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kproc_window.h"

void kwin_init(struct kwin *w)
{
	for (int c = 0; c < KWIN_CPUS; c++)
		w->first[c] = w->last[c] = -1, w->received[c] = w->lost[c] = 0;
}

pid_t kwin_sentinel(int cpu, unsigned int wait_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = { wait_ms / 1000, (long)(wait_ms % 1000) * 1000000 };
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		if (wait_ms)
			nanosleep(&ts, NULL);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

int kwin_count(struct kwin *w, const struct cn_bus_proc_event *ev, const pid_t *sentinel, int ncpus,
	       int first)
{
	unsigned int c = ev->cpu;
	int64_t *mark = first ? w->first : w->last;

	if (c >= KWIN_CPUS)
		return -ERANGE;
	if (w->first[c] >= 0 && w->last[c] < 0) {
		w->received[c]++;
		w->lost[c] += ev->lost_before;
	}
	if (!sentinel || ev->what != CN_PROC_EXIT || (int)c >= ncpus || mark[c] >= 0 ||
	    ev->pid != sentinel[c])
		return 0;
	mark[c] = ev->seq;
	if (first) {
		w->received[c] = 1; /* the window starts with it */
		w->lost[c] = 0;
	}
	return 1;
}

void kwin_sum(const struct kwin *w, int ncpus, struct kwin_sum *sum)
{
	sum->numbered = sum->received = sum->lost = sum->silent = 0;
	sum->bad_cpu = -1;
	for (int c = 0; c < ncpus; c++) {
		uint64_t window = (uint64_t)(w->last[c] - w->first[c] + 1);
		uint64_t seen = w->received[c] + w->lost[c];

		sum->numbered += window;
		sum->received += w->received[c];
		sum->lost += w->lost[c];
		sum->silent += seen > window ? seen - window : window - seen;
		if (seen != window && sum->bad_cpu < 0)
			sum->bad_cpu = c;
	}
}
