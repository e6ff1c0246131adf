/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rx.h - the inline parts of the receive funnel (recv.c; docs/DESIGN.md,
 * "The path of a message"), for recv.c and the proc receive calls
 * (proc_recv.c): the one function that makes a receive system call, the
 * cursor over the datagrams it read, and the one test of a simple
 * datagram. They call nothing of libcn.
 */
#ifndef LIBCN_RX_H
#define LIBCN_RX_H

#include <strings.h>

#include "internal.h"

static inline const uint8_t *cn__rx_slot(const struct cn_rx *rx, uint32_t i)
{
	return rx->slots + (size_t)i * CN_SLOT_SIZE;
}
/* The cursor at the start of datagram i: the one place it moves to a
 * datagram, so that a datagram not started always has pos {0, 0}. */
static inline void cn__rx_seek(struct cn_rx *rx, uint32_t i)
{
	rx->next = i;
	rx->pos.offset = 0;
	rx->pos.msg_end = 0;
}
/*
 * The record of the datagram at the cursor (there is one: cn__rx_pending)
 * when the datagram is not started and is one connector message of one
 * record from the kernel, exactly as long as its headers say: type
 * NLMSG_DONE, no flags, nothing cut. That is what every kernel connector
 * user but w1 sends, and such a record needs no other check. NULL for any
 * other datagram, which the walk takes apart (parse_next). Only bytes the
 * datagram holds are read: its headers once it is long enough for them.
 */
static inline const struct cn_msg *cn__rx_simple(const struct cn_rx *rx)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)cn__rx_slot(rx, rx->next);
	const struct mmsghdr *mm = &rx->mmsg[rx->next];
	const struct cn_msg *m = NLMSG_DATA(nlh);

	if (rx->pos.offset != 0 || mm->msg_hdr.msg_flags != 0 || rx->addrs[rx->next].nl_pid != 0 ||
	    mm->msg_len < NLMSG_HDRLEN + sizeof(*m) || nlh->nlmsg_type != NLMSG_DONE ||
	    nlh->nlmsg_flags != 0 || nlh->nlmsg_len != mm->msg_len ||
	    mm->msg_len != NLMSG_HDRLEN + sizeof(*m) + m->len)
		return NULL;
	return m;
}
/* The datagram cn__rx_simple gave the record of is taken: on to the next. */
static inline void cn__rx_took(struct cn_sock *s)
{
	cn__rx_seek(&s->rx, s->rx.next + 1);
	s->st.messages++;
}

/* The group the datagram described by h came through: its NETLINK_PKTINFO
 * cmsg, or, without one (cut short: MSG_CTRUNC), the group bit in
 * nl_groups (groups 1..32). */
static inline uint32_t cn__rx_pktinfo_group(struct msghdr *h, uint32_t nl_groups)
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
 * The one function of libcn that makes a receive system call
 * (tests/unit/check-recv-calls.sh): up to n datagrams (at least 1; one
 * system call: recvfrom for one without NETLINK_PKTINFO, else recvmmsg)
 * into the slots, replacing what was there, the cursor at the first; waits
 * for the first unless flags has CN_RECV_DONTWAIT. Counts the call and the
 * datagrams; an overrun is counted and returned as -ENOBUFS. Returns the
 * count or -errno. Inline: it is the one call on every event's path
 * (docs/PERFORMANCE.md has what that saves).
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
		}
	} else {
		/* Wait for the first datagram only, then take what is queued.
		 * The kernel writes msg_len, msg_namelen and msg_flags
		 * (MSG_TRUNC for a datagram cut to the slot) of every entry it
		 * fills; only filled entries are walked. */
		got = recvmmsg(s->fd, rx->mmsg, n, fl | MSG_WAITFORONE, NULL);
	}
	if (got < 0) {
		if (errno == ENOBUFS)
			s->st.overruns++;
		return -errno;
	}
	s->st.datagrams += (uint64_t)got;
	if (pktinfo)
		for (int i = 0; i < got; i++)
			rx->groups[i] =
			    cn__rx_pktinfo_group(&rx->mmsg[i].msg_hdr, rx->addrs[i].nl_groups);
	rx->count = (uint32_t)got;
	rx->bounce_used = 0;
	cn__rx_seek(rx, 0);
	return got;
}

#endif /* LIBCN_RX_H */
