/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_seq.c - a socket's proc connector state: allocated on first use,
 * per-CPU sequence tracking reset on each cn_proc_listen, counters for
 * cn_proc_stats (the per-event step is inline in proc_internal.h). */
#include <stdlib.h>
#include <unistd.h>

#include "proc_internal.h"

struct cn_proc_state *cn__proc_state(struct cn_sock *s)
{
	struct cn_proc_state *t;

	if (s->proc)
		return s->proc;
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->user_want = UINT32_MAX; /* every type until cn_proc_listen */
	s->proc = t;
	return t;
}

void cn__proc_free(struct cn_sock *s)
{
	if (!s->proc)
		return;
	free(s->proc->cpu);
	free(s->proc);
	s->proc = NULL;
}

int cn__proc_track_reset(struct cn_proc_state *t, uint32_t mask, int kernel_filter)
{
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
	t->unreported = 0;
	/* With the kernel filtering, skipped events advance the per-CPU
	 * counters too: gaps are not loss, and no CPU is tracked. */
	t->ntrack = kernel_filter ? 0 : t->ncpu;
	return 0;
}

int cn_proc_stats(const struct cn_sock *s, struct cn_proc_stats *st)
{
	if (!s || !st)
		return cn_fail(EINVAL);
	memset(st, 0, sizeof(*st));
	if (s->proc) {
		st->events = s->proc->events;
		st->lost = s->proc->lost;
	}
	/* Losses without a per-CPU trace: the socket's overruns, and the
	 * backlog's overflows reported as -ENOBUFS (libcn.h). */
	st->overruns = s->st.overruns + s->kept_overflows;
	return 0;
}

int cn_proc_filter_mode(const struct cn_sock *s)
{
	if (!s)
		return cn_fail(EINVAL);
	if (!s->proc)
		return 0;
	return (s->proc->user_want != UINT32_MAX ? CN_PROC_FILTER_USER : 0) |
	       (s->proc->kernel_filter ? CN_PROC_FILTER_KERNEL : 0);
}
