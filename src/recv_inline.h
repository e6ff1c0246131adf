/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * recv_inline.h - the hot half of the receive funnel (recv.c;
 * docs/DESIGN.md, "The path of a message"): reading datagrams and taking
 * the simple ones, compiled into each receive call (cn_recv,
 * cn_recv_batch, cn_proc_recv) so that a message costs no call inside the
 * library. Everything else of the walk (bundles, acks, errors, foreign
 * senders) stays out of line in recv.c (cn__rx_walk_step).
 */
#ifndef LIBCN_RECV_INLINE_H
#define LIBCN_RECV_INLINE_H

#include <strings.h>

#include "internal.h"

#define CN_INLINE static inline __attribute__((always_inline))

/* recv.c: the group of each datagram just read, from its NETLINK_PKTINFO
 * cmsg (a socket that joined a group above 32). */
void cn__rx_read_groups(struct cn_rx *rx, int got);
/* recv.c: one step of the walk where take_simple does not apply: 1 with
 * *out filled, 0 when it moved on without a message, or -errno. */
int cn__rx_walk_step(struct cn_sock *s, struct cn_message *out);
/* recv.c: datagrams [next, count) of the last read left to the walk, from
 * the start of datagram `next`. */
void cn__rx_walk_from(struct cn_rx *rx, uint32_t next, uint32_t count);
/* recv.c: a datagram of r bytes read into slot 0 by rx_recv_one, left to
 * the walk: the receive state as rx_read leaves it. */
void cn__rx_one_read(struct cn_rx *rx, ssize_t r);

/* A failed read: an overrun counted, -errno. */
static inline int rx_read_failed(struct cn_sock *s)
{
	if (errno == ENOBUFS)
		s->st.overruns++;
	return -errno;
}

/* cn__rx_read (internal.h): reads up to n datagrams into the slots. */
CN_INLINE int rx_read(struct cn_sock *s, uint32_t n, int dontwait)
{
	struct cn_rx *rx = &s->rx;
	int fl = dontwait ? MSG_DONTWAIT : 0;
	int got;

	if (n > rx->nslots)
		n = rx->nslots;
	s->st.syscalls++;
	if (n <= 1 && !rx->pktinfo) {
		/* One datagram: recvfrom, whose kernel side copies no msghdr in
		 * (bench/sysforms.c); MSG_TRUNC returns the datagram's real
		 * length, so a cut is still seen. */
		socklen_t alen = sizeof(rx->addrs[0]);
		ssize_t r = recvfrom(s->fd, rx->slots, CN_SLOT_SIZE, fl | MSG_TRUNC,
				     (struct sockaddr *)&rx->addrs[0], &alen);

		got = r < 0 ? -1 : 1;
		if (r >= 0) {
			int cut = r > (ssize_t)CN_SLOT_SIZE;

			rx->mmsg[0].msg_hdr.msg_flags = cut ? MSG_TRUNC : 0;
			rx->mmsg[0].msg_len = cut ? CN_SLOT_SIZE : (unsigned int)r;
		}
	} else {
		/* The kernel writes back how much control data it stored. */
		if (rx->pktinfo)
			for (uint32_t i = 0; i < n; i++)
				rx->mmsg[i].msg_hdr.msg_controllen = CN_CTRL_SIZE;
		/* Wait for the first datagram only, then take what is queued.
		 * The kernel writes msg_len, msg_namelen and msg_flags of
		 * every entry it fills; only filled entries are walked. */
		got = recvmmsg(s->fd, rx->mmsg, n, fl | MSG_WAITFORONE, NULL);
	}
	if (got < 0)
		return rx_read_failed(s);
	if (rx->pktinfo)
		cn__rx_read_groups(rx, got);
	rx->next = 0;
	rx->bounce_used = 0;
	rx->count = (uint32_t)got;
	rx->pos.offset = 0;
	rx->pos.msg_end = 0;
	s->st.datagrams += (uint64_t)got;
	return got;
}

static inline const uint8_t *cn__rx_slot(const struct cn_rx *rx, uint32_t i)
{
	return rx->slots + (size_t)i * CN_SLOT_SIZE;
}

/* The group datagram i came through (0: unicast). nl_groups carries it as a
 * bit for groups 1..32 only: with a group above 32 joined, the
 * NETLINK_PKTINFO cmsg tells (pktinfo_group). */
static inline uint32_t datagram_group(const struct cn_rx *rx, uint32_t i)
{
	return rx->pktinfo ? rx->groups[i] : (uint32_t)ffs((int)rx->addrs[i].nl_groups);
}

/*
 * Is the datagram at p (mm its mmsghdr, from its sender) one connector
 * message of one record, from the kernel, exactly as long as its headers
 * say? That is what every kernel connector user but w1 sends: type
 * NLMSG_DONE, no flags, nothing cut off. Then its record is at NLMSG_HDRLEN
 * and needs no other check: one test instead of the walk's field by field
 * checks. Reads stay inside the slot whatever it holds.
 */
static inline int simple_datagram(const uint8_t *p, const struct mmsghdr *mm,
				  const struct sockaddr_nl *from)
{
	/* nlmsg_type NLMSG_DONE and nlmsg_flags 0, as one 32-bit word in the
	 * machine's byte order: one load and one compare for both. */
	static const struct {
		uint16_t type, flags;
	} done = { NLMSG_DONE, 0 };
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)p;
	const struct cn_msg *m = NLMSG_DATA(nlh);
	uint32_t len = (uint32_t)(NLMSG_HDRLEN + sizeof(*m) + m->len);
	uint32_t type_flags, want;

	memcpy(&type_flags, &nlh->nlmsg_type, sizeof(type_flags));
	memcpy(&want, &done, sizeof(want));
	return ((nlh->nlmsg_len ^ len) | (mm->msg_len ^ len) | (type_flags ^ want) |
		(uint32_t)mm->msg_hdr.msg_flags | from->nl_pid) == 0;
}

/* A cursor over the datagrams of the last read, slot by slot, held in
 * locals: for the loops that take simple datagrams (take_simple, and
 * cn_proc_recv_batch, which decodes their records where they are). */
struct rx_cursor {
	const uint8_t *p;		/* the datagram */
	const struct mmsghdr *mm;	/* its length and flags */
	const struct sockaddr_nl *from; /* its sender */
};

static inline struct rx_cursor rx_cursor_at(const struct cn_rx *rx, uint32_t i)
{
	struct rx_cursor c = { cn__rx_slot(rx, i), rx->mmsg + i, rx->addrs + i };

	return c;
}

static inline void rx_cursor_next(struct rx_cursor *c)
{
	c->p += CN_SLOT_SIZE;
	c->mm++;
	c->from++;
}

/* The record of the cursor's datagram when it is a simple one
 * (simple_datagram), else NULL. */
static inline const struct cn_msg *rx_cursor_record(const struct rx_cursor *c)
{
	if (!simple_datagram(c->p, c->mm, c->from))
		return NULL;
	return (const struct cn_msg *)(c->p + NLMSG_HDRLEN);
}

/*
 * Take whole datagrams from `first` on, before `last`, while each is a
 * simple one: its record into out[], from port 0, its group from the
 * NETLINK_PKTINFO cmsg when pktinfo is set. Returns how many; the cursor
 * is the caller's. Everything is read through locals: out[] might
 * alias the socket for the compiler, which would reload each field after
 * every store.
 */
CN_INLINE uint32_t take_simple(const struct cn_rx *rx, uint32_t first, uint32_t last,
			       struct cn_message *out, int pktinfo)
{
	struct rx_cursor c = rx_cursor_at(rx, first);
	struct cn_message *o = out, *end = out + (last - first);
	uint32_t k;

	for (; o < end; o++, rx_cursor_next(&c)) {
		const struct cn_msg *m = rx_cursor_record(&c);

		if (!m)
			break;
		o->msg = m;
		o->port = 0;
		o->group = (uint32_t)ffs((int)c.from->nl_groups);
	}
	k = (uint32_t)(o - out);
	if (pktinfo)
		for (uint32_t j = 0; j < k; j++)
			out[j].group = rx->groups[first + j];
	return k;
}

/* cn__rx_take (internal.h): takes up to max messages of the datagrams read. */
CN_INLINE unsigned int rx_take(struct cn_sock *s, struct cn_message *out, unsigned int max,
			       int *err)
{
	struct cn_rx *rx = &s->rx;
	unsigned int n = 0;
	int r = 0;

	while (n < max && rx->next < rx->count) {
		/* Whole datagrams from the start of one: the simple ones (most,
		 * or all) with one test each. */
		if (rx->pos.offset == 0) {
			uint32_t left = rx->count - rx->next;
			uint32_t want = max - n < left ? max - n : left;
			uint32_t k =
			    take_simple(rx, rx->next, rx->next + want, &out[n], rx->pktinfo);

			if (k) {
				n += k;
				rx->next += k;
				continue;
			}
		}
		r = cn__rx_walk_step(s, &out[n]);
		if (r < 0)
			break;
		n += (unsigned int)r;
	}
	s->st.messages += n;
	*err = r < 0 ? r : 0;
	return n;
}

/*
 * The read when nothing is pending and no NETLINK_PKTINFO is wanted
 * (cn__rx_idle): one datagram into slot 0 with recvfrom, whose kernel side
 * copies no msghdr in (bench/sysforms.c). Returns its length (MSG_TRUNC
 * makes it the datagram's real one: longer than CN_SLOT_SIZE when cut), or
 * -errno. The caller takes it (rx_one_simple, rx_one_take) or leaves it to
 * the walk (cn__rx_one_read).
 */
CN_INLINE ssize_t rx_recv_one(struct cn_sock *s, int dontwait)
{
	struct cn_rx *rx = &s->rx;
	socklen_t alen = sizeof(rx->addrs[0]);
	ssize_t r;

	s->st.syscalls++;
	r = recvfrom(s->fd, rx->slots, CN_SLOT_SIZE, (dontwait ? MSG_DONTWAIT : 0) | MSG_TRUNC,
		     (struct sockaddr *)&rx->addrs[0], &alen);
	if (r < 0)
		return rx_read_failed(s);
	s->st.datagrams++;
	return r;
}

/* simple_datagram for the r bytes rx_recv_one read. */
static inline int rx_one_simple(const struct cn_rx *rx, ssize_t r)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)rx->slots;
	const struct cn_msg *m = NLMSG_DATA(nlh);
	uint32_t len = (uint32_t)(NLMSG_HDRLEN + sizeof(*m) + m->len);

	return r <= (ssize_t)CN_SLOT_SIZE && ((nlh->nlmsg_len ^ len) | ((uint32_t)r ^ len) |
					      (uint32_t)(nlh->nlmsg_type ^ NLMSG_DONE) |
					      nlh->nlmsg_flags | rx->addrs[0].nl_pid) == 0;
}

/* The record of the datagram rx_recv_one read, taken: *out. */
static inline void rx_one_take(struct cn_sock *s, struct cn_message *out)
{
	out->msg = (const struct cn_msg *)(s->rx.slots + NLMSG_HDRLEN);
	out->port = 0;
	out->group = (uint32_t)ffs((int)s->rx.addrs[0].nl_groups);
	s->st.messages++;
}

/* Nothing but the fd to read from: no message kept by cn_request, no
 * error put off, no datagram partly walked, no NETLINK_PKTINFO (which
 * rx_recv_one does not read). Then rx_recv_one reads the next message. */
static inline int cn__rx_idle(const struct cn_sock *s)
{
	/* pktinfo and deferred_err side by side: one 8-byte test for both. */
	return cn__backlog_idle(&s->backlog) && !s->rx.pktinfo && !s->rx.deferred_err &&
	       !cn__rx_pending(s);
}

/* cn__next_message (internal.h). */
CN_INLINE int next_message(struct cn_sock *s, struct cn_message *out, int wait_ms)
{
	int r;

	if (__builtin_expect(s->rx.deferred_err != 0, 0))
		return cn__take_deferred(s);
	for (;;) {
		if (!cn__rx_pending(s)) {
			int dontwait = wait_ms == 0 || (s->flags & CN_OPEN_NONBLOCK);

			if (!s->rx.pktinfo) {
				ssize_t n = rx_recv_one(s, dontwait);

				if (n < 0)
					return (int)n;
				if (rx_one_simple(&s->rx, n)) {
					rx_one_take(s, out);
					return 0;
				}
				cn__rx_one_read(&s->rx, n);
			} else {
				r = rx_read(s, 1, dontwait);
				if (r < 0)
					return r;
			}
		}
		if (rx_take(s, out, 1, &r))
			return 0;
		if (r < 0)
			return r;
	}
}

/* cn__recv (internal.h): the next message, kept ones first. */
CN_INLINE int recv_message(struct cn_sock *s, struct cn_message *out, unsigned int flags)
{
	if (!cn__backlog_idle(&s->backlog)) {
		int r = cn__backlog_take(&s->backlog, out);

		if (r != 0)
			return r < 0 ? r : 0;
	}
	return next_message(s, out, (flags & CN_RECV_DONTWAIT) ? 0 : -1);
}

#endif /* LIBCN_RECV_INLINE_H */
