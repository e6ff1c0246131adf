/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_recv.c - receiving proc events: cn_proc_handle for messages already
 * received, cn_proc_recv on top of the receive funnel (cn__recv). */
#include "proc_internal.h"

/* cn_proc_handle's refusals, out of line: with no call left on its own path,
 * the common one needs no stack frame. */
static __attribute__((noinline, cold)) int handle_fail(int err)
{
	return cn_fail(err);
}

/* The socket's first proc message: its proc state allocated, then handled. */
static __attribute__((noinline, cold)) int handle_first(struct cn_sock *s, const struct cn_msg *msg,
							struct cn_proc_event *ev)
{
	if (!cn__proc_alloc(s))
		return handle_fail(ENOMEM);
	return cn__proc_handle_event(s->proc, msg, ev);
}

/* cn_proc_handle once its pointers are checked: 1 an event for the caller,
 * 0 anything else (another id, an ack, a type not wanted), -errno with
 * errno set. */
static inline __attribute__((always_inline)) int handle(struct cn_sock *s, const struct cn_msg *msg,
							struct cn_proc_event *ev)
{
	if (msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC)
		return 0;
	if (__builtin_expect(msg->len < sizeof(struct proc_event), 0))
		return handle_fail(EBADMSG);
	if (__builtin_expect(!s->proc, 0))
		return handle_first(s, msg, ev);
	return cn__proc_handle_event(s->proc, msg, ev);
}

int cn_proc_handle(struct cn_sock *s, const struct cn_message *m, struct cn_proc_event *ev)
{
	/* The batch path calls this once per message: a test per argument,
	 * the refusals out of line. */
	if (__builtin_expect(!s || !ev || !m || !m->msg, 0))
		return handle_fail(EINVAL);
	return handle(s, m->msg, ev);
}

int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	uint32_t lost = 0;

	if (!s || !ev || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	for (;;) {
		struct cn_message m;
		int r = cn__recv(s, &m, flags);

		if (r < 0)
			return cn_ret(r);
		ev->lost_before = 0; /* untouched for messages of other ids */
		r = handle(s, m.msg, ev);
		if (r < 0)
			return r;
		/* Gaps before events the filter skipped still count. */
		lost += ev->lost_before;
		if (r == 1) {
			ev->lost_before = lost;
			return 0;
		}
	}
}
