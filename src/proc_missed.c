/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_missed.c - how many proc events a listener missed since it
 * subscribed: the per-CPU gaps where the sequences show loss, the socket's
 * own drop counter (drops.c) and the request backlog's losses where they
 * do not (docs/DESIGN.md, "Loss"). */
#include "proc_internal.h"

void cn__proc_missed_start(struct cn_sock *s, struct cn_proc_state *t)
{
	uint64_t drops = 0;

	t->drops_known = cn_drops(s, &drops) == 0;
	t->drops0 = drops;
	t->kept_lost0 = s->st.kept_lost;
	t->lost0 = t->lost;
	t->listened = 1;
}

int cn_proc_missed(const struct cn_sock *s, uint64_t *missed)
{
	const struct cn_proc_state *t;
	uint64_t drops = 0, socket, gaps;
	int known;

	if (!s || !missed || !s->proc || !s->proc->listened)
		return cn_fail(EINVAL);
	t = s->proc;
	known = t->drops_known && cn_drops(s, &drops) == 0;
	/* What the socket lost itself: datagrams the kernel dropped at its
	 * full buffer, messages a request's wait could not keep. Counted at
	 * once, with or without a kernel filter. */
	socket = (known ? drops - t->drops0 : 0) + (s->st.kept_lost - t->kept_lost0);
	/* Under a kernel filter the sequences skip every filtered event:
	 * gaps say nothing, and an event the kernel sent to nobody (no
	 * memory) shows nowhere. */
	if (t->kernel_filter) {
		*missed = socket;
		return CN_PROC_MISSED_AT_LEAST;
	}
	/* Gaps count the socket's losses too, and the kernel's own, but
	 * only once each CPU has sent its next event: fewer gaps than the
	 * socket lost means some have not shown yet. */
	gaps = t->lost - t->lost0;
	*missed = gaps > socket ? gaps : socket;
	return known && gaps >= socket ? 0 : CN_PROC_MISSED_AT_LEAST;
}
