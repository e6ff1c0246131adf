/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_recv.c - receiving proc events: cn_proc_handle for messages already
 * received, cn_proc_recv with its fused fast path for the common datagram. */
#include "proc_internal.h"

/* cn_proc_handle's refusals, out of line: with no call left on its own path,
 * cn_proc_handle needs no stack frame. */
static __attribute__((noinline, cold)) int handle_fail(int err)
{
	return cn_fail(err);
}

int cn_proc_handle(struct cn_sock *s, const struct cn_message *m, struct cn_proc_event *ev)
{
	const struct cn_msg *msg;
	uint64_t id;

	/* The batch path calls this once per message: a test per argument,
	 * one 8-byte compare for the id, the refusals out of line. */
	if (__builtin_expect(!s, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!ev, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!m, 0))
		return handle_fail(EINVAL);
	msg = m->msg;
	if (__builtin_expect(!msg, 0))
		return handle_fail(EINVAL);
	memcpy(&id, &msg->id, sizeof(id));
	if (id != ((uint64_t)CN_VAL_PROC << 32 | CN_IDX_PROC))
		return 0;
	if (__builtin_expect(msg->len < sizeof(struct proc_event), 0))
		return handle_fail(EBADMSG);
	return cn__proc_handle_event(s, msg, ev);
}

/* proc_recv_fast: the datagram is not a lone proc event; take the generic path. */
#define FALLBACK 2

/* What the proc connector sends: one event per datagram, this long. */
#define PROC_DGRAM_LEN (NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(struct proc_event))

/* The first 8 bytes of its netlink header (len, type, flags), and its id. */
static const struct {
	uint32_t len;
	uint16_t type, flags;
} proc_nlh = { PROC_DGRAM_LEN, NLMSG_DONE, 0 };
static const struct cb_id proc_id = { CN_IDX_PROC, CN_VAL_PROC };

/*
 * cn_proc_recv's common case, fused: nothing kept by cn_request, no error
 * put off, no datagram partly walked, no NETLINK_PKTINFO (its recvfrom
 * cannot read the group of what it leaves to the generic path; the caller
 * checked all of these), and the next
 * datagram is one proc event from the kernel. It is read into slot 0 and
 * decoded and tracked in place, without the generic layers (cn_recv's
 * backlog and argument checks, cn__walk, cn_parse_next, cn_proc_handle):
 * together they cost more than the raw loop's whole receive
 * (docs/PERFORMANCE.md). The datagram is checked as strictly as cn__walk
 * would: sender, exact lengths (a truncated datagram has another length),
 * type and id; anything else is left to the generic path.
 * Returns 1 or 0 as cn__proc_handle_event, -errno, or FALLBACK with the datagram left
 * in slot 0 for cn__walk.
 */
static inline __attribute__((always_inline)) int
proc_recv_fast(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	const struct nlmsghdr *nlh;
	const struct cn_msg *m;
	struct sockaddr_nl from;
	/* A CN_OPEN_NONBLOCK socket's fd is O_NONBLOCK already (cn_open,
	 * cn_set_nonblocking): only the per-call flag needs MSG_DONTWAIT. */
	ssize_t n = cn__recv_one(s, (flags & CN_RECV_DONTWAIT) ? MSG_DONTWAIT : 0, &from);

	if (n < 0)
		return (int)n;
	nlh = (const struct nlmsghdr *)s->slots;
	m = NLMSG_DATA(nlh);
	if (n != PROC_DGRAM_LEN || memcmp(nlh, &proc_nlh, sizeof(proc_nlh)) ||
	    m->len != sizeof(struct proc_event) || memcmp(&m->id, &proc_id, sizeof(proc_id)) ||
	    from.nl_pid != 0) {
		s->addrs[0].nl = from;
		cn__slot0_filled(s, n);
		return FALLBACK;
	}
	s->st.messages++;
	return cn__proc_handle_event(s, m, ev);
}

/* Until an event for the caller: the generic path, and the fast one when
 * it applies. lost: gaps before messages already skipped. */
static int proc_recv_loop(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags,
			  uint32_t lost)
{
	for (;;) {
		struct cn_message m;
		int r = FALLBACK;

		if (cn__rx_fresh(s))
			r = proc_recv_fast(s, ev, flags);
		if (r == FALLBACK) {
			r = cn_recv(s, &m, flags);
			if (r < 0)
				return r;
			ev->lost_before = 0; /* untouched for messages of other ids */
			r = cn_proc_handle(s, &m, ev);
		}
		if (r < 0)
			return cn_ret(r);
		lost += ev->lost_before;
		if (r == 1) {
			/* Gaps before events the filter skipped still count. */
			ev->lost_before = lost;
			return 0;
		}
	}
}

int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	int r;

	if (!s || !ev)
		return cn_fail(EINVAL);
	if (flags & ~CN_RECV_DONTWAIT)
		return cn_fail(EINVAL);
	/* The first try inline, the rest (acks, filtered events, anything
	 * the fast path leaves) in the loop: a proc listener's usual call
	 * is one datagram holding one event it wants. */
	if (!cn__rx_fresh(s))
		return proc_recv_loop(s, ev, flags, 0);
	r = proc_recv_fast(s, ev, flags);
	if (r == 1)
		return 0;
	if (r < 0)
		return cn_ret(r);
	return proc_recv_loop(s, ev, flags, r == 0 ? ev->lost_before : 0);
}
