/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_probe.c - does the running kernel filter proc events per socket?
 * Found once per process by a LISTEN only such a kernel answers. */
#include "proc_internal.h"

/* Process-wide result of the filter probe: -1 unknown, 0 no, 1 yes.
 * Sockets used from different threads may probe at once: the value is
 * read and written atomically (relaxed: every probe finds the same). */
static int kernel_filters = -1;

int cn_proc_probe_filter(struct cn_sock *s, int timeout_ms)
{
	int filters, r;

	if (!s)
		return cn_fail(EINVAL);
	r = __atomic_load_n(&kernel_filters, __ATOMIC_RELAXED);
	if (r >= 0)
		return r;
	if (cn__busy(s))
		return -EBUSY;
	/* 0: do not wait, so no probe. No limit is no choice either: a
	 * kernel without filters never answers the probe. */
	if (timeout_ms == 0)
		return cn_fail(EAGAIN);
	if (timeout_ms < 0)
		timeout_ms = PROC_MSG_TIMEOUT_DEFAULT;
	r = cn_join(s, CN_IDX_PROC);
	if (r < 0)
		return r;
	/* Only a kernel that reads struct proc_input answers an 8-byte
	 * LISTEN; with event_type ALL its filter lets the ack through. */
	filters = 1;
	r = cn__proc_listen_all(s, 1, timeout_ms);
	if (r == -ETIMEDOUT) {
		/* Confirm the connector answers at all before concluding. */
		filters = 0;
		r = cn__proc_listen_all(s, 0, timeout_ms);
	}
	/* Acks and events kept while waiting: not for a caller that has not
	 * subscribed (cn_proc_listen drops its own the same way). */
	if (s->proc && !s->proc->subscribed)
		cn__proc_drop_kept(s, s->proc);
	if (r < 0)
		return r;
	__atomic_store_n(&kernel_filters, filters, __ATOMIC_RELAXED);
	return filters;
}
