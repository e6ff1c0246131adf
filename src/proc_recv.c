/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_recv.c - receiving proc events: cn_proc_handle for messages already
 * received, cn_proc_recv and cn_proc_recv_batch on top of the receive
 * funnel (recv_inline.h). */
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
/* Is the datagram at p, of r bytes, from `from`, one proc event from the
 * kernel, whole? What simple_datagram and handle would both check, for this
 * one length and id: two 8-byte compares instead of field by field. */
static inline int proc_datagram(const uint8_t *p, ssize_t r, const struct sockaddr_nl *from)
{
	const struct cn_msg *m = (const struct cn_msg *)(p + NLMSG_HDRLEN);

	return r == (ssize_t)PROC_DGRAM_LEN && !memcmp(p, &proc_nlh, sizeof(proc_nlh)) &&
	       !memcmp(&m->id, &proc_id, sizeof(proc_id)) && m->len == sizeof(struct proc_event) &&
	       from->nl_pid == 0;
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
	if (__builtin_expect(!proc_datagram(s->rx.slots, n, &s->rx.addrs[0]), 0)) {
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

/*
 * cn_proc_recv_batch's take: the got datagrams just read into the slots,
 * each one proc event from the kernel while they are simple
 * (rx_cursor_record), decoded and tracked into ev[] where they were read;
 * messages of other ids are skipped. A message skipped with a gap before it
 * (an ack, a type not wanted) adds its gap to the proc state's unreported
 * while no event is stored; after one, it is left for the next call, its
 * tracking undone, so that its gap goes with the event after it, as in
 * cn_proc_recv. A proc message too short is taken and leaves -EBADMSG to
 * report next. What is not taken is left to the walk. Returns how many
 * events.
 */
static inline __attribute__((always_inline)) uint32_t
proc_take(struct cn_sock *s, struct cn_proc_event *restrict ev, uint32_t got)
{
	struct cn_proc_track *t = s->proc;
	struct rx_cursor c = rx_cursor_at(&s->rx, 0);
	struct cn_proc_event *e = ev;
	uint32_t i;

	for (i = 0; i < got; i++, rx_cursor_next(&c)) {
		const struct cn_msg *m = rx_cursor_record(&c);

		if (!m)
			break;
		if (memcmp(&m->id, &proc_id, sizeof(proc_id)) != 0)
			continue;
		if (__builtin_expect(m->len < sizeof(struct proc_event), 0)) {
			s->rx.deferred_err = -EBADMSG;
			i++;
			break;
		}
		if (cn__proc_handle_event(t, m, e)) {
			e++;
			continue;
		}
		if (e->lost_before == 0)
			continue;
		if (e > ev) {
			cn__proc_untrack(t, e);
			break;
		}
		t->unreported += e->lost_before;
	}
	s->st.messages += i;
	/* All taken: the cursor stays where it was, at its end (idle). */
	if (__builtin_expect(i < got, 0))
		cn__rx_walk_from(&s->rx, i, got);
	return (uint32_t)(e - ev);
}

/* cn_proc_recv_batch through the generic walk, as cn_proc_recv: one
 * event (an error to report, datagrams left to the walk, a socket without
 * proc state yet). */
static __attribute__((noinline)) int proc_batch_walk(struct cn_sock *s, struct cn_proc_event *ev,
						     unsigned int flags)
{
	int r = proc_recv_loop(s, ev, flags, 0);

	return r < 0 ? r : 1;
}

/* cn_proc_recv_batch on an idle socket: one recvmmsg, its datagrams taken
 * by proc_take; read again when they held no event, and leave to the walk
 * what proc_take did not take. */
static __attribute__((noinline)) int proc_batch_idle(struct cn_sock *s, struct cn_proc_event *ev,
						     unsigned int max, unsigned int flags)
{
	struct cn_rx *rx = &s->rx;
	/* A socket opened non-blocking has an O_NONBLOCK fd (cn_open). */
	int fl = (flags & CN_RECV_DONTWAIT) ? MSG_DONTWAIT : 0;

	do {
		uint32_t k, n = max < rx->nslots ? max : rx->nslots;
		int got;

		s->st.syscalls++;
		/* Wait for the first datagram only, then take what is queued. */
		got = recvmmsg(s->fd, rx->mmsg, n, fl | MSG_WAITFORONE, NULL);
		if (got < 0)
			return rx_read_failed(s);
		s->st.datagrams += (uint64_t)got;
		k = proc_take(s, ev, (uint32_t)got);
		if (k > 0) {
			if (__builtin_expect(s->proc->unreported != 0, 0)) {
				ev[0].lost_before += s->proc->unreported;
				s->proc->unreported = 0;
			}
			return (int)k;
		}
	} while (cn__rx_idle(s));
	return proc_batch_walk(s, ev, flags);
}

int cn_proc_recv_batch(struct cn_sock *s, struct cn_proc_event *ev, unsigned int max,
		       unsigned int flags)
{
	/* A test per argument, the refusals out of line (as cn_proc_handle). */
	if (__builtin_expect(!s, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!ev, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect(!max, 0))
		return handle_fail(EINVAL);
	if (__builtin_expect((flags & ~CN_RECV_DONTWAIT) != 0, 0))
		return handle_fail(EINVAL);
	/* The walk allocates the proc state with the first proc message. */
	if (cn__rx_idle(s) && __builtin_expect(s->proc != NULL, 1))
		return proc_batch_idle(s, ev, max, flags);
	return proc_batch_walk(s, ev, flags);
}
