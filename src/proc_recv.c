/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_recv.c - receiving proc events: cn_proc_handle for messages already
 * received, cn_proc_recv on top of the receive funnel (recv_inline.h). */
#include "proc_internal.h"
#include "recv_inline.h"

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

/* The id of proc messages, as the 8 bytes of a struct cb_id. */
static const struct cb_id proc_id = { CN_IDX_PROC, CN_VAL_PROC };

/* cn_proc_handle once its pointers are checked: 1 an event for the caller,
 * 0 anything else (another id, an ack, a type not wanted), -errno with
 * errno set. The id is one 8-byte compare. */
static inline __attribute__((always_inline)) int handle(struct cn_sock *s, const struct cn_msg *msg,
							struct cn_proc_event *ev)
{
	if (memcmp(&msg->id, &proc_id, sizeof(proc_id)) != 0)
		return 0;
	if (__builtin_expect(msg->len < sizeof(struct proc_event), 0))
		return handle_fail(EBADMSG);
	if (__builtin_expect(!s->proc, 0))
		return handle_first(s, msg, ev);
	return cn__proc_handle_event(s->proc, msg, ev);
}

int cn_proc_handle(struct cn_sock *s, const struct cn_message *m, struct cn_proc_event *ev)
{
	const struct cn_msg *msg;

	/* The batch path calls this once per message: a test per argument,
	 * the refusals out of line. */
	if (__builtin_expect(!s, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!ev, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!m, 0))
		return handle_fail(EINVAL);
	msg = m->msg;
	if (__builtin_expect(!msg, 0))
		return handle_fail(EINVAL);
	return handle(s, msg, ev);
}

/* cn_proc_recv from its second message on, or when rx_read_one does not
 * apply: every message through the funnel's generic walk. lost: gaps
 * before the messages already skipped; with those an earlier call could
 * not report (unreported), they go to the event returned, or wait in
 * unreported for the next call when there is none. */
static __attribute__((noinline)) int proc_recv_loop(struct cn_sock *s, struct cn_proc_event *ev,
						    unsigned int flags, uint32_t lost)
{
	if (s->proc) {
		lost += s->proc->unreported;
		s->proc->unreported = 0;
	}
	for (;;) {
		struct cn_message m;
		int r = cn__recv(s, &m, flags);

		if (r < 0) {
			if (s->proc)
				s->proc->unreported = lost;
			return cn_ret(r);
		}
		ev->lost_before = 0; /* untouched for messages of other ids */
		r = handle(s, m.msg, ev);
		if (r < 0) {
			if (s->proc)
				s->proc->unreported = lost;
			return r;
		}
		/* Gaps before events the filter skipped still count. */
		lost += ev->lost_before;
		if (r == 1) {
			ev->lost_before = lost;
			return 0;
		}
	}
}

/* What the proc connector sends: one event per datagram, this long. */
#define PROC_DGRAM_LEN (NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(struct proc_event))

/* The first 8 bytes of its netlink header (len, type, flags), and its id. */
static const struct {
	uint32_t len;
	uint16_t type, flags;
} proc_nlh = { PROC_DGRAM_LEN, NLMSG_DONE, 0 };
/* Is the datagram of r bytes that rx_recv_one read one proc event from the
 * kernel, whole? What rx_one_simple and handle would both check, for this
 * one length and id: two 8-byte compares instead of field by field. */
static inline int proc_datagram(const struct cn_rx *rx, ssize_t r)
{
	const struct cn_msg *m = (const struct cn_msg *)(rx->slots + NLMSG_HDRLEN);

	return r == (ssize_t)PROC_DGRAM_LEN && !memcmp(rx->slots, &proc_nlh, sizeof(proc_nlh)) &&
	       !memcmp(&m->id, &proc_id, sizeof(proc_id)) && m->len == sizeof(struct proc_event) &&
	       rx->addrs[0].nl_pid == 0;
}

int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	const struct cn_msg *msg;
	ssize_t n;
	int r;

	/* A test per argument, the refusals out of line (as cn_proc_handle). */
	if (__builtin_expect(!s, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!ev, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect((flags & ~CN_RECV_DONTWAIT) != 0, 0))
		return handle_fail(EINVAL);
	/* A listener's usual call: nothing waiting in the socket's state, no
	 * gap left to report, and the next datagram one event it wants. */
	if (!cn__rx_idle(s) || __builtin_expect(!s->proc || s->proc->unreported, 0))
		return proc_recv_loop(s, ev, flags, 0);
	n = rx_recv_one(s, flags & CN_RECV_DONTWAIT);
	if (n < 0)
		return cn_ret((int)n);
	if (__builtin_expect(!proc_datagram(&s->rx, n), 0)) {
		cn__rx_one_read(&s->rx, n);
		return proc_recv_loop(s, ev, flags, 0);
	}
	s->st.messages++;
	msg = (const struct cn_msg *)(s->rx.slots + NLMSG_HDRLEN);
	r = cn__proc_handle_event(s->proc, msg, ev);
	if (__builtin_expect(r == 1, 1))
		return 0;
	return proc_recv_loop(s, ev, flags, ev->lost_before);
}
