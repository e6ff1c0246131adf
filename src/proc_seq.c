/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_seq.c - per-CPU sequence tracking state of a proc listener: reset on
 * each cn_proc_listen, counters for cn_proc_stats (the per-event step is
 * inline in proc_internal.h). */
#include <stdlib.h>
#include <unistd.h>

#include "proc_internal.h"

/* Start tracking afresh; `mask` as cn_proc_listen's (0: every type). */
int cn__proc_track_reset(struct cn_sock *s, uint32_t mask, int kernel_filter)
{
	struct cn_proc_track *t = &s->proc;
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	if (!t->cpu || t->ncpu < (uint32_t)n) {
		struct cn_proc_cpu *c = realloc(t->cpu, (size_t)n * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cpu = c;
		t->ncpu = (uint32_t)n;
	}
	for (uint32_t i = 0; i < t->ncpu; i++)
		t->cpu[i].next_seq = CN_PROC_UNSEEN;
	t->user_want = mask == 0 || (mask & PROC_TYPES) == PROC_TYPES ? UINT32_MAX : mask;
	t->kernel_filter = kernel_filter;
	/* With the kernel filtering, skipped events advance the per-CPU
	 * counters too: gaps are not loss, and no CPU is tracked. */
	t->ntrack = kernel_filter ? 0 : t->ncpu;
	return 0;
}

int cn_proc_stats(const struct cn_sock *s, struct cn_proc_stats *st)
{
	if (!s || !st)
		return cn_fail(EINVAL);
	*st = s->proc.st;
	return 0;
}

int cn_proc_filter(const struct cn_sock *s)
{
	if (!s)
		return cn_fail(EINVAL);
	return (s->proc.user_want != UINT32_MAX ? CN_PROC_FILTER_USER : 0) |
	       (s->proc.kernel_filter ? CN_PROC_FILTER_KERNEL : 0);
}
