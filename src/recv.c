/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * recv.c - the receive funnel (docs/DESIGN.md, "The path of a message").
 *
 * One function reads: cn__rx_read makes every receive system call, counts
 * it and reports an overrun. One walk takes messages: cn__rx_take splits
 * each datagram into its netlink messages and each of those into its cn_msg
 * records (parse.h), skips what the caller must not see, and reports
 * malformed data. cn_recv, cn_recv_batch, cn_request, the async API and the
 * proc layer all take their messages from these two.
 *
 * The fd is read directly (recvfrom / recvmmsg) instead of through libnl's
 * nl_recvmsgs, which treats connector messages (NLMSG_DONE) as the end of a
 * dump and allocates per receive (docs/DESIGN.md, "libnl").
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "parse.h"
#include "recv_inline.h"

int cn__rx_init(struct cn_sock *s, uint32_t nslots)
{
	struct cn_rx *rx = &s->rx;

	rx->nslots = nslots;
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	rx->slots = aligned_alloc(64, ((size_t)nslots * CN_SLOT_SIZE + 63) & ~(size_t)63);
	rx->mmsg = calloc(nslots, sizeof(*rx->mmsg));
	rx->iov = calloc(nslots, sizeof(*rx->iov));
	rx->addrs = calloc(nslots, sizeof(*rx->addrs));
	if (!rx->slots || !rx->mmsg || !rx->iov || !rx->addrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < nslots; i++) {
		rx->iov[i].iov_base = rx->slots + (size_t)i * CN_SLOT_SIZE;
		rx->iov[i].iov_len = CN_SLOT_SIZE;
		rx->mmsg[i].msg_hdr.msg_iov = &rx->iov[i];
		rx->mmsg[i].msg_hdr.msg_iovlen = 1;
		rx->mmsg[i].msg_hdr.msg_name = &rx->addrs[i];
		rx->mmsg[i].msg_hdr.msg_namelen = sizeof(rx->addrs[i]);
	}
	return 0;
}

void cn__rx_free(struct cn_sock *s)
{
	struct cn_rx *rx = &s->rx;

	free(rx->slots);
	free(rx->mmsg);
	free(rx->iov);
	free(rx->addrs);
	free(rx->ctrl);
	free(rx->groups);
	free(rx->bounce);
}

int cn__rx_pktinfo(struct cn_sock *s, int on)
{
	struct cn_rx *rx = &s->rx;
	int v = on;

	if (on && !rx->ctrl) {
		/* Both or neither: the walk uses them together. */
		uint8_t *ctrl = calloc(rx->nslots, CN_CTRL_SIZE);
		uint32_t *groups = calloc(rx->nslots, sizeof(*groups));

		if (!ctrl || !groups) {
			free(ctrl);
			free(groups);
			return -ENOMEM;
		}
		rx->ctrl = ctrl;
		rx->groups = groups;
		for (uint32_t i = 0; i < rx->nslots; i++)
			rx->mmsg[i].msg_hdr.msg_control = rx->ctrl + (size_t)i * CN_CTRL_SIZE;
	}
	if (setsockopt(s->fd, SOL_NETLINK, NETLINK_PKTINFO, &v, sizeof(v)) < 0)
		return -errno;
	/* Datagrams read before, not yet walked, came without the cmsg: their
	 * groups as nl_groups gave them (groups 1..32, or unicast). */
	if (on)
		for (uint32_t i = rx->next; i < rx->count; i++)
			rx->groups[i] = (uint32_t)ffs((int)rx->addrs[i].nl_groups);
	rx->pktinfo = on;
	return 0;
}

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

void cn__rx_read_groups(struct cn_rx *rx, int got)
{
	for (int i = 0; i < got; i++)
		rx->groups[i] = pktinfo_group(&rx->mmsg[i].msg_hdr, rx->addrs[i].nl_groups);
}

__attribute__((noinline)) void cn__rx_walk_from(struct cn_rx *rx, uint32_t next, uint32_t count)
{
	rx->next = next;
	rx->count = count;
	rx->bounce_used = 0;
	rx->pos.offset = 0;
	rx->pos.msg_end = 0;
}

__attribute__((noinline)) void cn__rx_one_read(struct cn_rx *rx, ssize_t r)
{
	int cut = r > (ssize_t)CN_SLOT_SIZE;

	rx->mmsg[0].msg_hdr.msg_flags = cut ? MSG_TRUNC : 0;
	rx->mmsg[0].msg_len = cut ? CN_SLOT_SIZE : (unsigned int)r;
	cn__rx_walk_from(rx, 0, 1);
}

/* Is datagram i from a sender the socket does not take messages from? Not
 * the kernel (port 0), unless opened with CN_OPEN_ANY_SENDER: a local
 * process may be spoofing. */
static int foreign_datagram(const struct cn_sock *s, uint32_t i)
{
	return s->rx.addrs[i].nl_pid != 0 && !(s->flags & CN_OPEN_ANY_SENDER);
}

/* On to the datagram after the one being walked. */
static inline void next_datagram(struct cn_rx *rx)
{
	rx->next++;
	rx->pos.offset = 0;
	rx->pos.msg_end = 0;
}

/*
 * Is the NLMSG_ERROR at `off` of datagram i the answer to the acked send the
 * socket waits for (CN_SEND_ACK, message.c)? It must come from the kernel
 * and echo the request's header: its nlmsg_seq and our port. Then it is
 * taken: its error (0 for success) goes to s->ack and it is not returned.
 */
static int take_ack(struct cn_sock *s, uint32_t i, size_t off)
{
	const uint8_t *p = cn__rx_slot(&s->rx, i) + off;
	struct nlmsghdr nlh;
	struct nlmsgerr e;

	memcpy(&nlh, p, sizeof(nlh));
	if (s->rx.addrs[i].nl_pid != 0 || nlh.nlmsg_type != NLMSG_ERROR ||
	    nlh.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
		return 0;
	memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
	if (nlh.nlmsg_seq != s->ack.seq || e.msg.nlmsg_seq != s->ack.seq ||
	    e.msg.nlmsg_pid != s->port)
		return 0;
	s->ack.armed = 0;
	s->ack.done = 1;
	s->ack.err = e.error;
	return 1;
}

/* Room for the aligned copies of every record one receive call can read:
 * a record takes at least 20 bytes of its datagram and at most 3 more as a
 * copy, so twice the slots' bytes always suffice. */
#define BOUNCE_SIZE(nslots) ((size_t)(nslots)*2 * CN_SLOT_SIZE)

/*
 * The records after the first of a w1 bundle are not 4-byte aligned, and C
 * does not let a caller read a struct cn_msg there: such a record is copied
 * to an aligned place (valid, like the slots, until the next read).
 * 0, or -ENOMEM when the copies' buffer (allocated at the first bundle)
 * cannot be had.
 */
static int align_record(struct cn_rx *rx, const struct cn_msg **m)
{
	struct cn_msg h;
	size_t need;

	if (((uintptr_t)*m & (NLMSG_ALIGNTO - 1)) == 0)
		return 0;
	if (!rx->bounce) {
		rx->bounce = aligned_alloc(NLMSG_ALIGNTO, BOUNCE_SIZE(rx->nslots));
		if (!rx->bounce)
			return -ENOMEM;
	}
	memcpy(&h, *m, sizeof(h));
	need = NLMSG_ALIGN(sizeof(h) + h.len);
	if (rx->bounce_used + need > BOUNCE_SIZE(rx->nslots))
		return -ENOMEM; /* cannot happen: see BOUNCE_SIZE */
	memcpy(rx->bounce + rx->bounce_used, *m, sizeof(h) + h.len);
	*m = (const struct cn_msg *)(rx->bounce + rx->bounce_used);
	rx->bounce_used += need;
	return 0;
}

/*
 * One step of the walk of datagram `next` where simple_datagram does not
 * apply: 1 with *out filled, 0 when it moved on without a message (a
 * skipped datagram, an ack, the end of a datagram), or an error: -EBADMSG
 * or -EMSGSIZE (counted as malformed, the datagram dropped), -ENOBUFS (an
 * NLMSG_OVERRUN, counted as an overrun), a kernel's NLMSG_ERROR.
 */
__attribute__((noinline)) int cn__rx_walk_step(struct cn_sock *s, struct cn_message *out)
{
	struct cn_rx *rx = &s->rx;
	uint32_t i = rx->next;
	const struct sockaddr_nl *from = &rx->addrs[i];
	size_t len = rx->mmsg[i].msg_len, off = rx->pos.offset;
	const struct cn_msg *m;
	int r;

	if (off == 0 && rx->pos.msg_end == 0) {
		if (foreign_datagram(s, i)) {
			s->st.foreign++;
			next_datagram(rx);
			return 0;
		}
		if (rx->mmsg[i].msg_hdr.msg_flags & MSG_TRUNC) {
			s->st.malformed++;
			next_datagram(rx);
			return -EMSGSIZE;
		}
	}
	r = parse_next(cn__rx_slot(rx, i), len, &rx->pos, &m);
	if (rx->pos.offset >= len && rx->pos.msg_end == 0)
		next_datagram(rx); /* its last message: nothing looks pending */
	if (r == 1 && align_record(rx, &m) < 0)
		r = -ENOMEM;
	out->msg = r == 1 ? m : NULL; /* NULL but for a record */
	out->port = from->nl_pid;
	out->group = r == 1 ? datagram_group(rx, i) : 0;
	if (r >= 0)
		return r;
	if (r == -EBADMSG) {
		s->st.malformed++;
		return r;
	}
	if (r == -ENOBUFS) {
		s->st.overruns++;
		return r;
	}
	/* An ack (-ENODATA) or a kernel error: the awaited one is taken. */
	if (s->ack.armed && take_ack(s, i, off))
		return 0;
	return r == -ENODATA ? 0 : r;
}

size_t cn__rx_unread(const struct cn_sock *s)
{
	const struct cn_rx *rx = &s->rx;
	size_t n = s->rx.deferred_err != 0;

	for (uint32_t i = rx->next; i < rx->count; i++) {
		struct cn_parse_pos pos = { 0, 0 };
		const struct cn_msg *m;
		int r;

		if (i == rx->next)
			pos = rx->pos;
		/* What cn__rx_walk_step checks at the start of a datagram. */
		if (pos.offset == 0 && pos.msg_end == 0) {
			if (foreign_datagram(s, i))
				continue;
			if (rx->mmsg[i].msg_hdr.msg_flags & MSG_TRUNC) {
				n++;
				continue;
			}
		}
		/* Records and errors are returned; acks and no-ops are not. */
		while ((r = parse_next(cn__rx_slot(rx, i), rx->mmsg[i].msg_len, &pos, &m)) != 0)
			n += r != -ENODATA;
	}
	return n;
}

int cn__rx_read(struct cn_sock *s, uint32_t n, int dontwait)
{
	return rx_read(s, n, dontwait);
}

unsigned int cn__rx_take(struct cn_sock *s, struct cn_message *out, unsigned int max, int *err)
{
	return rx_take(s, out, max, err);
}

int cn_parse_next(const void *buf, size_t len, struct cn_parse_pos *pos, const struct cn_msg **out)
{
	if (!buf || !pos || !out)
		return cn_fail(EINVAL);
	return cn_ret(parse_next(buf, len, pos, out));
}

int cn__next_message(struct cn_sock *s, struct cn_message *out, int wait_ms)
{
	return next_message(s, out, wait_ms);
}

int cn__recv(struct cn_sock *s, struct cn_message *out, unsigned int flags)
{
	return recv_message(s, out, flags);
}

int cn_recv(struct cn_sock *s, struct cn_message *out, unsigned int flags)
{
	if (!s || !out || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	return cn_ret(cn__recv(s, out, flags));
}

/* cn_recv_batch's messages kept by cn_request, and what is to be reported
 * after them, into out[]. Returns how many, or -errno when the first thing
 * to report is an error. */
static int recv_batch_kept(struct cn_sock *s, struct cn_message *out, unsigned int max)
{
	unsigned int n = 0;
	int r;

	while (n < max && (r = cn__backlog_take(&s->backlog, &out[n])) != 0) {
		if (r < 0) {
			if (n == 0)
				return r;
			/* Put it back where it came from: the next call reports it. */
			cn__backlog_put_back(&s->backlog, r);
			break;
		}
		n++;
	}
	return (int)n;
}

/* cn_recv_batch after its argument checks, anything but recv_batch_idle. */
static __attribute__((noinline)) int recv_batch(struct cn_sock *s, struct cn_message *out,
						unsigned int max, unsigned int flags)
{
	int r;

	if (!cn__backlog_idle(&s->backlog)) {
		r = recv_batch_kept(s, out, max);
		if (r != 0)
			return r < 0 ? cn_fail(-r) : r;
	}
	/* An error found after earlier messages comes before later ones. */
	r = cn__take_deferred(s);
	if (r < 0)
		return cn_fail(-r);
	for (;;) {
		unsigned int n;

		if (!cn__rx_pending(s)) {
			r = rx_read(s, max,
				    (flags & CN_RECV_DONTWAIT) || (s->flags & CN_OPEN_NONBLOCK));
			if (r < 0)
				return cn_fail(-r);
		}
		n = rx_take(s, out, max, &r);
		if (r < 0) {
			if (n == 0)
				return cn_fail(-r);
			s->rx.deferred_err = r;
		}
		/* Returned messages point into the slots: read no more now. */
		if (n > 0)
			return (int)n;
	}
}

/* recv_batch_idle took n of the got datagrams it read (the first not
 * simple, and those after it, left): the walk takes them into out[n..max),
 * or reads again when it took nothing. */
static __attribute__((noinline)) int recv_batch_rest(struct cn_sock *s, struct cn_message *out,
						     unsigned int n, uint32_t got, unsigned int max,
						     unsigned int flags)
{
	int r;

	cn__rx_walk_from(&s->rx, n, got);
	n += rx_take(s, out + n, max - n, &r);
	if (r < 0) {
		if (n == 0)
			return cn_fail(-r);
		s->rx.deferred_err = r;
	}
	return n > 0 ? (int)n : recv_batch(s, out, max, flags);
}

/*
 * cn_recv_batch's usual call, on an idle socket (cn__rx_idle) with room for
 * two datagrams or more: one recvmmsg, and its datagrams taken with one test
 * each while they are simple. The first that is not, and those after it,
 * are left to recv_batch_rest. How many were taken, or -errno.
 */
static __attribute__((noinline)) int recv_batch_idle(struct cn_sock *s, struct cn_message *out,
						     unsigned int max, unsigned int flags)
{
	struct cn_rx *rx = &s->rx;
	uint32_t k, n = max < rx->nslots ? max : rx->nslots;
	int got;

	s->st.syscalls++;
	/* Wait for the first datagram only, then take what is queued. */
	got = recvmmsg(s->fd, rx->mmsg, n,
		       ((flags & CN_RECV_DONTWAIT) ? MSG_DONTWAIT : 0) | MSG_WAITFORONE, NULL);
	if (got < 0)
		return rx_read_failed(s);
	s->st.datagrams += (uint64_t)got;
	k = take_simple(rx, 0, (uint32_t)got, out, 0);
	s->st.messages += k;
	/* All taken: the cursor stays where it was, at its end (idle). */
	if (__builtin_expect(k < (uint32_t)got, 0))
		return recv_batch_rest(s, out, k, (uint32_t)got, max, flags);
	return (int)k;
}

int cn_recv_batch(struct cn_sock *s, struct cn_message *out, unsigned int max, unsigned int flags)
{
	if (__builtin_expect(!s || !out || !max || (flags & ~CN_RECV_DONTWAIT), 0))
		return cn_fail(EINVAL);
	if (!cn__rx_idle(s) || max < 2 || s->rx.nslots < 2)
		return recv_batch(s, out, max, flags);
	/* errno is set with every error it returns. */
	return recv_batch_idle(s, out, max, flags);
}

void cn__keep(struct cn_sock *s, const struct cn_message *m)
{
	int r;

	if (s->handler) {
		s->handler(m, s->handler_arg);
		return;
	}
	r = cn__backlog_push(&s->backlog, m);
	if (r == 0) {
		s->st.kept++;
		return;
	}
	s->st.kept_lost++;
	/* Reported as one -ENOBUFS, as an overrun of the socket would be. */
	if (r < 0)
		s->kept_overflows++;
}
