/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * recv.c - the receive path: datagrams into the socket's slots, walked one
 * message at a time (the netlink framing of each: cn_parse_next), with
 * overruns and malformed data reported.
 *
 * The hot path reads the fd directly (recvmsg / recvmmsg) instead of going
 * through libnl's nl_recvmsgs: measured here under callgrind, the libnl reader
 * costs about 1,600 user-space instructions per proc event against about 58
 * for a raw loop, and it allocates per receive (DESIGN.md section 2).
 */
#include <string.h>
#include <strings.h>

#include "internal.h"

/* The group the datagram described by h came through: its NETLINK_PKTINFO
 * cmsg, or, without one, the group bit in nl_groups (groups 1..32). */
static uint32_t pktinfo_group(struct msghdr *h, uint32_t nl_groups)
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

/* cn__recv_one on a socket with NETLINK_PKTINFO on: recvmsg with slot 0's
 * control buffer; the group goes to s->groups[0]. */
static ssize_t recv_one_pktinfo(struct cn_sock *s, int fl, struct sockaddr_nl *from)
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
	s->groups[0] = pktinfo_group(&h, from->nl_groups);
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
				? recv_one_pktinfo(s, fl, &s->addrs[0].nl)
				: cn__recv_one(s, fl, &s->addrs[0].nl);

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
			s->groups[i] = pktinfo_group(&s->mmsg[i].msg_hdr, s->addrs[i].nl.nl_groups);
	s->rx.next = 0;
	s->rx.count = (uint32_t)got;
	s->rx.offset = 0;
	s->st.datagrams += (uint64_t)got;
	return got;
}

/* cn_parse_next without argument checks and errno (the public calls that
 * use it set errno once). Inline: every received message goes through it
 * in walk, which cost 110 user-space instructions per message with it
 * as a call and 84 with it inline. */
static inline int parse_next(const void *buf, size_t len, size_t *offset, const struct cn_msg **out)
{
	const uint8_t *p = buf;
	const struct nlmsghdr *nlh;
	size_t off, left, nlen;

	off = *offset;
	*out = NULL;
	if (off >= len)
		return 0;
	left = len - off;
	if (left < NLMSG_HDRLEN) {
		*offset = len;
		return -EBADMSG;
	}
	nlh = (const struct nlmsghdr *)(p + off);
	nlen = nlh->nlmsg_len;
	if (nlen < NLMSG_HDRLEN || nlen > left) {
		*offset = len;
		return -EBADMSG;
	}
	/* The last message of a datagram may omit its alignment padding. */
	*offset = off + (NLMSG_ALIGN(nlen) < left ? NLMSG_ALIGN(nlen) : left);

	/* The connector's own type first; the control types after it. */
	if (nlh->nlmsg_type != NLMSG_DONE) {
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			return -ENODATA;
		case NLMSG_OVERRUN:
			return -ENOBUFS;
		case NLMSG_ERROR: {
			struct nlmsgerr e;

			if (nlen < NLMSG_HDRLEN + sizeof(e.error)) {
				*offset = len;
				return -EBADMSG;
			}
			memcpy(&e.error, NLMSG_DATA(nlh), sizeof(e.error));
			if (e.error == 0)
				return -ENODATA; /* an ack */
			/* A positive or absurd value is not an errno: refuse it. */
			if (e.error > 0 || e.error < -4095) {
				*offset = len;
				return -EBADMSG;
			}
			return e.error;
		}
		default:
			break;
		}
	}

	/* Connector messages are NLMSG_DONE, but peers are not required to
	 * use that type: any other type carrying a cn_msg is accepted. */
	{
		const struct cn_msg *m = NLMSG_DATA(nlh);
		size_t body = nlen - NLMSG_HDRLEN;

		/* cn_msg.len must agree with the netlink length, allowing only
		 * the netlink alignment padding a sender may count in it. */
		if (body < sizeof(struct cn_msg) || sizeof(struct cn_msg) + m->len > body ||
		    NLMSG_ALIGN(sizeof(struct cn_msg) + m->len) < body) {
			*offset = len;
			return -EBADMSG;
		}
		*out = m;
		return 1;
	}
}

/*
 * Is the datagram in slot p (mm its mmsghdr, from its sender) one connector
 * message from the kernel, exactly as long as its headers say? That is
 * what every kernel connector user sends: type NLMSG_DONE, no flags. The
 * length cn_msg.len implies must be the netlink header's and the
 * datagram's, and nothing may be cut off. Then its message is at
 * p + NLMSG_HDRLEN and needs no other check: the receive paths take it with
 * this one test (about 12 instructions) instead of the walk's field by
 * field checks (about 60). Reads stay inside the slot whatever it holds.
 * Written so that take_simple's loop needs no more registers than a
 * call leaves free.
 */
static inline int simple_datagram(const uint8_t *p, const struct mmsghdr *mm,
				  const struct sockaddr_nl *from)
{
	const struct cn_msg *m = (const struct cn_msg *)(p + NLMSG_HDRLEN);
	uint32_t len = NLMSG_HDRLEN + sizeof(*m) + m->len;
	/* Any receive flag (MSG_TRUNC: cut off; MSG_CTRUNC) leaves the
	 * datagram to the walk, which reports MSG_TRUNC: no mask needed. */
	uint32_t rest = (len ^ mm->msg_len) | (uint32_t)mm->msg_hdr.msg_flags | from->nl_pid;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t head; /* nlmsg_len, then nlmsg_type and nlmsg_flags */

	memcpy(&head, p, sizeof(head));
	/* head ^ len holds nlmsg_len ^ len and the type and flags; rotated,
	 * the type and flags are the low half, compared with an immediate
	 * (no 64-bit constant to keep in a register). */
	head ^= len;
	head = (head << 32 | head >> 32) ^ NLMSG_DONE;
	return (head | rest) == 0;
#else
	struct nlmsghdr nlh;

	memcpy(&nlh, p, sizeof(nlh));
	return ((nlh.nlmsg_len ^ len) | (uint32_t)(nlh.nlmsg_type ^ NLMSG_DONE) | nlh.nlmsg_flags |
		rest) == 0;
#endif
}

/* The group of groups 1..32, one bit of nl_groups (0: unicast); the proc
 * connector's group 1 without ffs. */
static inline uint32_t group_of_bit(uint32_t g)
{
	return g == 1 ? 1 : g ? (uint32_t)__builtin_ctz(g) + 1 : 0;
}

/*
 * Is the NLMSG_ERROR at `off` of buf the answer to the acked send the socket
 * waits for (CN_SEND_ACK, message.c)? It must come from the kernel and echo
 * the request's header: its nlmsg_seq and our port. Then it is taken: its
 * error (0 for success) goes to s->ack and it is not returned. 1: taken.
 */
static inline int take_ack(struct cn_sock *s, const uint8_t *buf, size_t off, uint32_t port)
{
	struct nlmsghdr nlh;
	struct nlmsgerr e;

	memcpy(&nlh, buf + off, sizeof(nlh));
	if (port != 0 || nlh.nlmsg_type != NLMSG_ERROR || nlh.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
		return 0;
	memcpy(&e, buf + off + NLMSG_HDRLEN, sizeof(e));
	if (nlh.nlmsg_seq != s->ack.seq || e.msg.nlmsg_seq != s->ack.seq ||
	    e.msg.nlmsg_pid != s->port)
		return 0;
	s->ack.armed = 0;
	s->ack.done = 1;
	s->ack.err = e.error;
	return 1;
}

/*
 * Take whole datagrams from datagram `first` on while each is a simple one
 * (simple_datagram): its message to out[], port 0, its group from
 * nl_groups (a caller with NETLINK_PKTINFO on puts the cmsg's group in
 * its place, as the walk does, or does not call it). end is how many
 * datagrams may be taken times sizeof(*out), at least one. Returns the
 * offset in out[] after the last taken (end when all were); the first
 * other datagram and the rest after it are left to the walk, which checks
 * them one field at a time. The cursor and the counters are the caller's.
 * The walk cost about 80 user-space instructions per message (the cursor
 * kept in the socket, the framing of multi-message datagrams); this loop
 * about 22. Inline: as a function of its own it cost more than the call it
 * saves.
 */
static inline __attribute__((always_inline)) size_t
take_simple(const struct cn_sock *s, uint32_t first, struct cn_message *out, size_t end)
{
	const uint8_t *p = s->slots + (size_t)first * CN_SLOT_SIZE;
	size_t i = 0, k = 0; /* k: bytes of out[] filled, i * sizeof(*out) */

	do {
		const struct mmsghdr *mm = &s->mmsg[first + i];
		const struct sockaddr_nl *from = &s->addrs[first + i].nl;
		struct cn_message *o = &out[i];

		if (!simple_datagram(p, mm, from))
			break;
		o->msg = (const struct cn_msg *)(p + NLMSG_HDRLEN);
		o->port = 0;
		o->group = group_of_bit(from->nl_groups);
		i++;
		k += sizeof(*out);
		p += CN_SLOT_SIZE;
	} while (k < end);
	return k;
}

/* The k datagrams from rx.next on are walked: on to the next. After the
 * last one the cursor is cleared to (0, 0), the state cn__rx_fresh tests
 * as one word. */
static inline void rx_skip_datagrams(struct cn_sock *s, uint32_t k)
{
	s->rx.offset = 0;
	s->rx.next += k;
	if (s->rx.next == s->rx.count)
		s->rx.next = s->rx.count = 0;
}

/* Walk the datagrams read so far. 1: *out filled; 0: none left; < 0: error. */
static inline __attribute__((always_inline)) int walk(struct cn_sock *s, struct cn_message *out)
{
	while (s->rx.next < s->rx.count) {
		uint32_t i = s->rx.next;
		const struct msghdr *h = &s->mmsg[i].msg_hdr;
		const struct sockaddr_nl *from = &s->addrs[i].nl;
		const struct cn_msg *m;
		size_t off;
		int r;

		if (s->rx.offset == 0) {
			/* The common datagram with one test (see simple_datagram). */
			if (take_simple(s, i, out, sizeof(*out))) {
				if (s->pktinfo)
					out->group = s->groups[i];
				s->st.messages++;
				rx_skip_datagrams(s, 1);
				return 1;
			}
			if (from->nl_pid != 0 && !(s->flags & CN_OPEN_ANY_SENDER)) {
				/* Not from the kernel: a local process may be spoofing. */
				s->st.foreign++;
				rx_skip_datagrams(s, 1);
				continue;
			}
			if (h->msg_flags & MSG_TRUNC) {
				s->st.malformed++;
				rx_skip_datagrams(s, 1);
				return -EMSGSIZE;
			}
		}
		off = s->rx.offset;
		r = parse_next(h->msg_iov->iov_base, s->mmsg[i].msg_len, &s->rx.offset, &m);
		if (r == 0) {
			rx_skip_datagrams(s, 1);
			continue;
		}
		/* An ack (-ENODATA) or an error: the awaited one is taken. */
		if (__builtin_expect(s->ack.armed, 0) && r < 0 && r != -EBADMSG && r != -ENOBUFS &&
		    take_ack(s, h->msg_iov->iov_base, off, from->nl_pid))
			continue;
		if (r == -ENODATA)
			continue;
		if (r == -EBADMSG) {
			s->st.malformed++;
			rx_skip_datagrams(s, 1);
			return r;
		}
		if (r == -ENOBUFS)
			cn__count_overrun(s);
		if (r < 0) {
			out->msg = NULL;
			out->port = from->nl_pid;
			out->group = 0;
			return r;
		}
		out->msg = m;
		out->port = from->nl_pid;
		/* nl_groups carries the group as a bit for groups 1..32 only
		 * (0 for a unicast and for any group above 32): with a group
		 * above 32 joined, the NETLINK_PKTINFO cmsg tells. */
		out->group = s->pktinfo ? s->groups[i] : (uint32_t)ffs((int)from->nl_groups);
		s->st.messages++;
		if (s->rx.offset >= s->mmsg[i].msg_len) {
			/* The datagram's last message: move on now rather than
			 * in a second walk, so that nothing looks pending (a
			 * cn_request would otherwise make an extra recvmsg that
			 * returns EAGAIN, every time). */
			rx_skip_datagrams(s, 1);
		}
		return 1;
	}
	return 0;
}

int cn_parse_next(const void *buf, size_t len, size_t *offset, const struct cn_msg **out)
{
	if (!buf || !offset || !out)
		return cn_fail(EINVAL);
	return cn_ret(parse_next(buf, len, offset, out));
}

int cn__walk(struct cn_sock *s, struct cn_message *out)
{
	return walk(s, out);
}

int cn__walk_n(struct cn_sock *s, struct cn_message *out, unsigned int max, int *err)
{
	unsigned int n = 0;

	*err = 0;
	while (n < max) {
		int r;

		/* Whole datagrams from the start of one: the simple ones
		 * (most, or all) with one test each. */
		if (s->rx.offset == 0 && s->rx.next < s->rx.count && !s->pktinfo) {
			uint32_t left = s->rx.count - s->rx.next;
			uint32_t want = max - n < left ? max - n : left;
			uint32_t k = (uint32_t)(take_simple(s, s->rx.next, &out[n],
							    (size_t)want * sizeof(*out)) /
						sizeof(*out));

			if (k) {
				n += k;
				s->st.messages += k;
				rx_skip_datagrams(s, k);
				continue;
			}
		}
		r = walk(s, &out[n]);

		if (r <= 0) {
			*err = r;
			break;
		}
		n++;
	}
	return (int)n;
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

int cn_recv(struct cn_sock *s, struct cn_message *out, unsigned int flags)
{
	int r;

	if (!s || !out || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	r = cn__backlog_take(&s->backlog, out);
	if (r != 0)
		return cn_ret(r < 0 ? r : 0);
	return cn_ret(cn__next_message(s, out, (flags & CN_RECV_DONTWAIT) ? 0 : -1));
}

/* cn_recv_batch's general case: kept messages first, then the walk of what
 * was read, reading when nothing is left. n: messages already in out[]. */
static int recv_batch_walk(struct cn_sock *s, struct cn_message *out, unsigned int n,
			   unsigned int max, unsigned int flags)
{
	int r;

	while (n < max && (r = cn__backlog_take(&s->backlog, &out[n])) != 0) {
		if (r < 0) {
			if (n == 0)
				return cn_fail(-r);
			/* Put it back where it came from: the next call reports it. */
			cn__backlog_put_back(&s->backlog, r);
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

/* cn_recv_batch's fresh read failed: errno is recvmmsg's. Out of line, so
 * that the fast path keeps no register for it. */
static __attribute__((noinline, cold)) int recv_batch_failed(struct cn_sock *s)
{
	int e = errno;

	if (e == ENOBUFS)
		cn__count_overrun(s);
	return cn_fail(e);
}

/* cn_recv_batch's fresh read met a datagram take_simple does not take at
 * out[i]: the walk goes on from there (max and flags as the call stored
 * them, so that the fast path keeps no register for them across recvmmsg). */
static __attribute__((noinline)) int recv_batch_rest(struct cn_sock *s, struct cn_message *out,
						     uint32_t i, uint32_t got)
{
	s->st.messages += i;
	s->rx.next = i;
	s->rx.count = got;
	s->rx.offset = 0;
	return recv_batch_walk(s, out, i, s->rx.max, s->rx.flags);
}

/* cn_recv_batch when the fresh read does not apply (see there). */
static __attribute__((noinline)) int recv_batch_general(struct cn_sock *s, struct cn_message *out,
							unsigned int max, unsigned int flags)
{
	if (!max || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	return recv_batch_walk(s, out, 0, max, flags);
}

int cn_recv_batch(struct cn_sock *s, struct cn_message *out, unsigned int max, unsigned int flags)
{
	unsigned int n;
	size_t k, end;
	int got;

	if (__builtin_expect(!s, 0) || __builtin_expect(!out, 0))
		return cn_fail(EINVAL);
	n = max < s->nslots ? max : s->nslots;
	/* One test for max 0 and unknown flags (EINVAL there), one slot
	 * (cn__read_datagrams' recvfrom is cheaper than recvmmsg) and whatever
	 * the walk handles: something kept, put off or left to walk, PKTINFO. */
	if (__builtin_expect(n <= 1 || (flags & ~CN_RECV_DONTWAIT) || !cn__rx_fresh(s), 0))
		return recv_batch_general(s, out, max, flags);
	s->rx.max = max;
	s->rx.flags = flags;
	/* A CN_OPEN_NONBLOCK socket's fd is O_NONBLOCK already (cn_open,
	 * cn_set_nonblocking): only the per-call flag needs MSG_DONTWAIT. */
	s->st.syscalls++;
	got = recvmmsg(s->fd, s->mmsg, n,
		       ((flags & CN_RECV_DONTWAIT) ? MSG_DONTWAIT : 0) | MSG_WAITFORONE, NULL);
	/* MSG_WAITFORONE: at least one datagram, or an error. */
	if (__builtin_expect(got <= 0, 0))
		return got < 0 ? recv_batch_failed(s) : 0;
	end = (size_t)got * sizeof(*out);
	k = take_simple(s, 0, out, end);
	if (__builtin_expect(k == end, 1)) {
		s->simple += (uint64_t)got;
		return got; /* the cursor is (0, 0) still: nothing to walk */
	}
	s->st.datagrams += (uint64_t)got;
	return recv_batch_rest(s, out, (uint32_t)(k / sizeof(*out)), (uint32_t)got);
}
