/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rx.h - the fast half of the receive path (docs/DESIGN.md, "The path of a
 * message"): cn__rx_next, the one function that yields the next message to
 * every receive call and every wait, with what it needs inline: the one
 * function that makes a receive system call (cn__rx_read), the cursor over
 * the datagrams it read (struct cn_rx) and the one test of a simple
 * datagram. Anything else goes to the slow half, cn__rx_walk (recv.c). On
 * a simple datagram nothing here calls out of this file but
 * cn__backlog_empty (internal.h).
 */
#ifndef LIBCN_RX_H
#define LIBCN_RX_H

#include <strings.h>

#include "internal.h"

/* Past the datagram at the cursor, to the start of the next: the one place
 * the cursor leaves a datagram, so that a datagram not started always has
 * pos {0, 0} (a read starts at the first with the pos the last left). */
static inline void cn__rx_advance(struct cn_rx *rx)
{
	rx->left--;
	rx->pos.offset = 0;
	rx->pos.msg_end = 0;
}
/* An error met while the caller holds messages that point into the slots:
 * put off, the next call returns it first (cn__rx_walk). */
static inline void cn__rx_put_off(struct cn_rx *rx, int err)
{
	rx->put_off = err;
}
/* Is datagram i from the kernel (port 0)? The one test of a sender. */
static inline int cn__rx_from_kernel(const struct cn_rx *rx, uint32_t i)
{
	return rx->addrs[i].nl_pid == 0;
}
/* The group the datagram described by h came through, NETLINK_PKTINFO on:
 * its cmsg, or, without one (cut short: MSG_CTRUNC), the group's bit in
 * nl_groups (groups 1..32). */
static inline uint32_t cn__rx_dgram_group(struct msghdr *h, uint32_t nl_groups)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_NETLINK && c->cmsg_type == NETLINK_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct nl_pktinfo))) {
			struct nl_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			return pi.group;
		}
	}
	return (uint32_t)ffs((int)nl_groups);
}

/*
 * The one function of libcn that makes a receive system call on the
 * connector socket (tests/unit/check-recv-calls.sh): up to n datagrams (at
 * least 1; one system call: recvfrom for one without NETLINK_PKTINFO, else
 * recvmmsg) into the slots, replacing what was there, the cursor at the
 * first, each one's group set; waits for the first unless flags has
 * CN_RECV_DONTWAIT. Counts the call and the datagrams; an overrun is
 * counted and returned as -ENOBUFS. Returns the count (rx->count and
 * rx->left too) or -errno (both 0). Inline: it is on every event's path
 * (docs/PERFORMANCE.md).
 */
CN_INLINE int cn__rx_read(struct cn_sock *s, uint32_t n, unsigned int flags)
{
	struct cn_rx *rx = &s->rx;
	int fl = (flags & CN_RECV_DONTWAIT) ? MSG_DONTWAIT : 0;
	int pktinfo = rx->pktinfo;
	int got;

	if (n > rx->nslots)
		n = rx->nslots;
	/* The kernel writes back how much control data it stored. */
	if (pktinfo)
		for (uint32_t i = 0; i < n; i++)
			rx->mmsg[i].msg_hdr.msg_controllen = CN_CTRL_SIZE;
	s->st.syscalls++;
	if (n == 1 && !pktinfo) {
		/* One datagram: recvfrom, whose kernel side copies no msghdr in
		 * (docs/PERFORMANCE.md). With MSG_TRUNC it returns the
		 * datagram's real length: a cut is still seen. */
		socklen_t alen = sizeof(rx->addrs[0]);
		ssize_t r = recvfrom(s->fd, rx->slots, CN_SLOT_SIZE, fl | MSG_TRUNC,
				     (struct sockaddr *)&rx->addrs[0], &alen);

		got = r < 0 ? -1 : 1;
		if (r >= 0) {
			int cut = r > (ssize_t)CN_SLOT_SIZE;

			rx->mmsg[0].msg_hdr.msg_flags = cut ? MSG_TRUNC : 0;
			rx->mmsg[0].msg_len = cut ? CN_SLOT_SIZE : (unsigned int)r;
			/* Without NETLINK_PKTINFO: the group's bit, 1..32. */
			rx->groups[0] = (uint32_t)ffs((int)rx->addrs[0].nl_groups);
		}
	} else {
		/* Wait for the first datagram only, then read what is queued.
		 * The kernel writes msg_len, msg_namelen and msg_flags
		 * (MSG_TRUNC for a datagram cut to the slot) of every entry it
		 * fills; only filled entries are walked. */
		got = recvmmsg(s->fd, rx->mmsg, n, fl | MSG_WAITFORONE, NULL);
		for (int i = 0; i < got; i++)
			rx->groups[i] = pktinfo ? cn__rx_dgram_group(&rx->mmsg[i].msg_hdr,
								     rx->addrs[i].nl_groups)
						: (uint32_t)ffs((int)rx->addrs[i].nl_groups);
	}
	rx->bounce_used = 0;
	if (got < 0) {
		if (errno == ENOBUFS)
			s->st.overruns++;
		rx->count = rx->left = 0;
		return -errno;
	}
	s->st.datagrams += (uint64_t)got;
	rx->count = rx->left = (uint32_t)got;
	return got;
}

/* The slow half of cn__rx_next (recv.c), its arguments the same: what the
 * backlog holds (receive calls only), an error put off, and every datagram
 * that is not simple, through parse_next. */
int cn__rx_walk(struct cn_sock *s, struct cn_message *out, uint32_t want, unsigned int flags,
		int held, struct cn__rx_wait *w);

/*
 * The next message, for every receive call (w NULL) and every wait (w: what
 * the wait looks for; message.c, async.c). Returns 1 with *out filled, or
 * -errno (-EAGAIN: nothing to read without waiting), or, for a wait,
 * CN__RX_ANSWER: the kernel's answer to the acked send w waits for, its
 * error in w->answer_err. A receive call gets first what the backlog holds
 * (kept messages, then the loss and the error to report after them); a wait
 * never reads the backlog back. Then an error put off, then the records of
 * the datagrams read, reading up to `want` more (cn__rx_read, with flags)
 * when all are walked. With held nonzero (the caller holds messages that
 * point into the slots) it neither reads nor returns an error: 0 when
 * nothing is left without a read, and an error met is put off to the next
 * call.
 *
 * The fast half, inline: nothing held back, and the datagram at the cursor
 * is simple: one connector message of one record from the kernel, exactly
 * as long as its headers say (type NLMSG_DONE, no flags, nothing cut), not
 * started. That is what every kernel connector user but w1 sends, and such
 * a record needs no other check. Only bytes the datagram holds are read:
 * its headers once it is long enough for them. Anything else is the walk's.
 */
CN_INLINE int cn__rx_next(struct cn_sock *s, struct cn_message *out, uint32_t want,
			  unsigned int flags, int held, struct cn__rx_wait *w)
{
	struct cn_rx *rx = &s->rx;
	const struct nlmsghdr *nlh;
	const struct mmsghdr *mm;
	const struct cn_msg *m;
	uint32_t i;

	if (unlikely(rx->put_off != 0) || (!w && unlikely(!cn__backlog_empty(&s->backlog))))
		goto walk;
	if (!rx->left) {
		int r;

		if (held)
			return 0;
		r = cn__rx_read(s, want, flags);
		if (r < 0)
			return r;
	}
	i = rx->count - rx->left;
	nlh = rx->iov[i].iov_base;
	mm = &rx->mmsg[i];
	m = NLMSG_DATA(nlh);
	if (unlikely(rx->pos.offset != 0 || mm->msg_hdr.msg_flags != 0 ||
		     !cn__rx_from_kernel(rx, i) || mm->msg_len < NLMSG_HDRLEN + sizeof(*m) ||
		     nlh->nlmsg_type != NLMSG_DONE || nlh->nlmsg_flags != 0 ||
		     nlh->nlmsg_len != mm->msg_len ||
		     mm->msg_len != NLMSG_HDRLEN + sizeof(*m) + m->len))
		goto walk;
	out->msg = m;
	out->port = 0;
	out->group = rx->groups[i];
	cn__rx_advance(rx);
	s->st.messages++;
	return 1;
walk:
	/* Through a copy: the caller's *out does not escape, so what it does
	 * not read of the fast half's (the proc calls: port, group) need not
	 * be written. */
	{
		struct cn_message o;
		int r = cn__rx_walk(s, &o, want, flags, held, w);

		*out = o;
		return r;
	}
}

#endif /* LIBCN_RX_H */
