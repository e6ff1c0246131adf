/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_recv.c - receiving proc events: cn_proc_handle for a message already
 * received; cn_proc_recv and cn_proc_recv_batch get each message from the
 * receive path (cn__rx_next, rx.h) and decode it where it was read. */
#include "proc_internal.h"
#include "rx.h"

/*
 * cn_proc_handle once its pointers are checked, and every proc receive
 * call's decoding: 1 an event for the caller, 0 anything else (another id,
 * an ack, ours or other listeners', a type not wanted), -errno: a proc
 * event decoded (cn__proc_decode), its CPU's sequence tracked, then
 * filtered. Every message is tracked, wanted or not: its seq is the
 * kernel's. Inline: the receive calls decode where the message was read,
 * with no call of their own.
 *
 * The filter is the kernel's cn_filter, applied in userspace whether or not
 * the kernel filters too: a filtering kernel still delivers what a socket
 * queued before its filtered LISTEN took effect (cn_proc_listen's
 * unfiltered LISTEN comes first). user_want is the mask of types wanted
 * (all ones when every type is, as from cn_open on). Event types are single
 * bits, acks (CN_PROC_NONE) 0: a type wanted is told by its bit alone, and
 * an ack never passes.
 */
CN_INLINE int handle(struct cn_sock *s, const struct cn_msg *msg, struct cn_proc_event *ev)
{
	struct cn_proc_state *t;
	int r = cn__proc_decode(msg, ev);

	if (unlikely(r <= 0)) {
		ev->lost_before = 0; /* not a proc event: no gap */
		return r;
	}
	t = s->proc;
	if (unlikely(!t) && !(t = cn__proc_state(s)))
		return -ENOMEM;
	cn__proc_track(t, ev->cpu, ev->seq, &ev->lost_before);
	if (likely((ev->what & t->user_want) != 0))
		return 1;
	/* CN_PROC_NONZERO_EXIT without CN_PROC_EXIT: exits with a status. */
	return ev->what == CN_PROC_EXIT && (t->user_want & CN_PROC_NONZERO_EXIT) &&
	       ev->exit_code != 0;
}

int cn_proc_handle(struct cn_sock *s, const struct cn_message *m, struct cn_proc_event *ev)
{
	if (!s || !ev || !m || !m->msg)
		return cn_fail(EINVAL);
	return cn_ret(handle(s, m->msg, ev));
}

/*
 * Both proc receive calls: up to max events into ev[], each message from
 * cn__rx_next (reading up to max datagrams when none is left) decoded
 * where it was read (handle). Messages of other ids, acks and types not
 * wanted are skipped; the gap found before a skipped one goes to the next
 * event returned (lost_before), or waits in the proc state's unreported
 * when this call returns none. Once an event is stored nothing more is
 * read, an error met waits for the next call, and messages kept by
 * cn_request (the backlog) are not returned: an error kept among them is
 * reported in its place. Returns how many events, or -errno (errno set)
 * when there is none. Inline: cn_proc_recv's copy is the loop for max = 1
 * (docs/PERFORMANCE.md, "Whole-process CPU per proc event").
 *
 * A read of many datagrams (recvmmsg) that finds fewer queued makes one
 * more, empty, receive inside the kernel: a reader woken for each event
 * would pay it every time. So once a read found the queue empty (fewer
 * than asked, or -EAGAIN), the next reads of cn_proc_recv_batch ask for one
 * datagram (recvfrom, as cn_proc_recv), and only after QUIET_READS of them
 * came back full in a row, the queue filling again, for many.
 */
#define QUIET_READS 2

CN_INLINE uint32_t read_size(const struct cn_proc_state *t, unsigned int max)
{
	return t && t->quiet ? 1 : max;
}

/* After a read of `asked` datagrams that got `got` (0: it failed with r):
 * the next reads' size (see above). */
CN_INLINE void read_done(struct cn_proc_state *t, uint32_t asked, uint32_t got, int r)
{
	if (got == 0 ? r == -EAGAIN : got < asked)
		t->quiet = QUIET_READS;
	else if (got > 0 && asked == 1 && t->quiet)
		t->quiet--;
}
CN_INLINE int proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int max,
			unsigned int flags)
{
	uint32_t lost = 0;
	unsigned int n = 0;
	int r = 0;

	if (s->proc) {
		lost = s->proc->unreported;
		s->proc->unreported = 0;
	}
	while (n < max && (n == 0 || cn__backlog_empty(&s->backlog))) {
		struct cn_message m;

		if (max == 1 || n > 0) {
			/* One datagram at most, or held: no read size. */
			r = cn__rx_next(s, &m, max, flags, n > 0, NULL);
		} else {
			uint32_t asked = read_size(s->proc, max);
			uint64_t reads = s->st.syscalls;

			r = cn__rx_next(s, &m, asked, flags, 0, NULL);
			if (s->proc && s->st.syscalls != reads)
				read_done(s->proc, asked, s->rx.count, r);
		}
		if (r <= 0)
			break;
		r = handle(s, m.msg, &ev[n]);
		if (unlikely(r < 0)) {
			if (n > 0)
				cn__rx_put_off(&s->rx, r);
			break;
		}
		lost += ev[n].lost_before;
		if (r == 1) {
			ev[n++].lost_before = lost;
			lost = 0;
		}
	}
	/* lost is 0 without proc state: only handle finds gaps. */
	if (lost)
		s->proc->unreported = lost;
	return n > 0 ? (int)n : cn_ret(r);
}

int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	int r;

	if (!s || !ev || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	r = proc_recv(s, ev, 1, flags);
	return r < 0 ? r : 0;
}

int cn_proc_recv_batch(struct cn_sock *s, struct cn_proc_event *ev, unsigned int max,
		       unsigned int flags)
{
	if (!s || !ev || !max || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	return proc_recv(s, ev, max, flags);
}
