/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * recv.c - the receive path: datagrams into the socket's slots, walked one
 * message at a time, with overruns and malformed data reported.
 *
 * The hot path reads the fd directly (recvmsg / recvmmsg) instead of going
 * through libnl's nl_recvmsgs: measured here under callgrind, the libnl reader
 * costs about 1,600 user-space instructions per proc event against about 58
 * for a raw loop, and it allocates per receive (DESIGN.md section 2).
 */
#include <string.h>
#include <strings.h>

#include "internal.h"

uint32_t cn__pktinfo_group(struct msghdr *h, uint32_t nl_groups)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_NETLINK && c->cmsg_type == NETLINK_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct nl_pktinfo))) {
			struct nl_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			return pi.group;
		}
	}
	/* No cmsg (cut short: MSG_CTRUNC): what nl_groups tells. */
	return (uint32_t)ffs((int)nl_groups);
}

ssize_t cn__recv_one_pktinfo(struct cn_sock *s, int fl, struct sockaddr_nl *from)
{
	struct iovec iov = { .iov_base = s->slots, .iov_len = CN_SLOT_SIZE };
	struct msghdr h = {
		.msg_name = from,
		.msg_namelen = sizeof(*from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = s->ctrl,
		.msg_controllen = CN_CTRL_SIZE,
	};
	ssize_t r;

	s->st.syscalls++;
	r = recvmsg(s->fd, &h, fl | MSG_TRUNC);
	if (r < 0) {
		if (errno == ENOBUFS)
			cn__count_overrun(s);
		return -errno;
	}
	s->st.datagrams++;
	s->groups[0] = cn__pktinfo_group(&h, from->nl_groups);
	return r;
}

int cn__read_datagrams(struct cn_sock *s, uint32_t n, int dontwait)
{
	int fl = dontwait ? MSG_DONTWAIT : 0;
	int got;

	if (n > s->nslots)
		n = s->nslots;
	/* Nothing is reset per call: the kernel writes msg_len, msg_namelen
	 * (sizeof(struct sockaddr_nl) for netlink, as initialised) and
	 * msg_flags of every entry it fills, and only filled entries are
	 * walked. */
	if (n == 1) {
		ssize_t r = __builtin_expect(s->pktinfo, 0)
				? cn__recv_one_pktinfo(s, fl, &s->addrs[0])
				: cn__recv_one(s, fl, &s->addrs[0]);

		if (r < 0)
			return (int)r;
		cn__slot0_filled(s, r);
		return 1;
	}
	/* The kernel writes back how much control data it stored. */
	if (s->pktinfo)
		for (uint32_t i = 0; i < n; i++)
			s->mmsg[i].msg_hdr.msg_controllen = CN_CTRL_SIZE;
	/* Wait for the first datagram only, then take what is queued. */
	s->st.syscalls++;
	got = recvmmsg(s->fd, s->mmsg, n, fl | MSG_WAITFORONE, NULL);
	if (got < 0) {
		if (errno == ENOBUFS)
			cn__count_overrun(s);
		return -errno;
	}
	if (s->pktinfo)
		for (int i = 0; i < got; i++)
			s->groups[i] =
			    cn__pktinfo_group(&s->mmsg[i].msg_hdr, s->addrs[i].nl_groups);
	s->rx.next = 0;
	s->rx.count = (uint32_t)got;
	s->rx.offset = 0;
	s->st.datagrams += (uint64_t)got;
	return got;
}

int cn__walk(struct cn_sock *s, struct cn_message *out)
{
	return cn__walk_inline(s, out);
}

int cn__take_deferred(struct cn_sock *s)
{
	int r = s->deferred_err;

	s->deferred_err = 0;
	return r;
}

/* The next message not yet returned: walked, or freshly read. wait_ms is
 * ignored when the socket is non-blocking; 0 never waits. */
int cn__next_message(struct cn_sock *s, struct cn_message *out, int wait_ms)
{
	for (;;) {
		int r = cn__take_deferred(s);

		if (r < 0)
			return r;
		if (cn__rx_pending(s)) {
			r = cn__walk(s, out);
			if (r != 0)
				return r < 0 ? r : 0;
		}
		r = cn__read_datagrams(s, 1, wait_ms == 0 || (s->flags & CN_OPEN_NONBLOCK));
		if (r < 0)
			return r;
	}
}

/* Messages kept by cn_request come first, then the overrun or error they met. */
static int pop_kept(struct cn_sock *s, struct cn_message *out)
{
	if (cn__backlog_pop(&s->backlog, out))
		return 1;
	if (s->backlog.lost) {
		s->backlog.lost = 0;
		return -ENOBUFS;
	}
	if (s->backlog.err) {
		int r = s->backlog.err;

		s->backlog.err = 0;
		return r;
	}
	return 0;
}

int cn_recv(struct cn_sock *s, struct cn_message *out, unsigned int flags)
{
	int r;

	if (!s || !out || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	r = pop_kept(s, out);
	if (r != 0)
		return cn_ret(r < 0 ? r : 0);
	return cn_ret(cn__next_message(s, out, (flags & CN_RECV_DONTWAIT) ? 0 : -1));
}

int cn_recv_batch(struct cn_sock *s, struct cn_message *out, unsigned int max, unsigned int flags)
{
	unsigned int n = 0;
	int r;

	if (!s || !out || max == 0 || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);

	while (n < max && (r = pop_kept(s, &out[n])) != 0) {
		if (r < 0) {
			if (n == 0)
				return cn_fail(-r);
			/* Put it back where it came from: the next call reports it. */
			if (r == -ENOBUFS)
				s->backlog.lost = 1;
			else
				s->backlog.err = r;
			return (int)n;
		}
		n++;
	}

	for (;;) {
		/* An error found after earlier messages comes before later ones. */
		if (n == 0 && (r = cn__take_deferred(s)) < 0)
			return cn_fail(-r);
		while (n < max && (r = cn__walk(s, &out[n])) != 0) {
			if (r < 0) {
				if (n == 0)
					return cn_fail(-r);
				s->deferred_err = r;
				return (int)n;
			}
			n++;
		}
		/* Returned messages point into the slots: read no more now. */
		if (n > 0)
			return (int)n;
		r = cn__read_datagrams(s, max,
				       (flags & CN_RECV_DONTWAIT) || (s->flags & CN_OPEN_NONBLOCK));
		if (r < 0)
			return cn_fail(-r);
	}
}
