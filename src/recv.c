/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * recv.c - the receive path (docs/DESIGN.md, "The path of a message"):
 * cn_recv and cn_recv_batch, and the slow half of cn__rx_next (rx.h, the
 * fast half): cn__rx_walk, which returns what the backlog holds, an error
 * put off, and the records of any datagram that is not simple, through
 * parse_next, one at a time.
 *
 * The fd is read directly instead of through libnl's nl_recvmsgs, which
 * treats connector messages (NLMSG_DONE) as the end of a dump and allocates
 * per receive (docs/DESIGN.md, "Decisions").
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "parse.h"
#include "rx.h"

int cn__rx_init(struct cn_sock *s, uint32_t nslots)
{
	struct cn_rx *rx = &s->rx;

	rx->nslots = nslots;
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	rx->slots = aligned_alloc(64, ((size_t)nslots * CN_SLOT_SIZE + 63) & ~(size_t)63);
	rx->mmsg = calloc(nslots, sizeof(*rx->mmsg));
	rx->iov = calloc(nslots, sizeof(*rx->iov));
	rx->addrs = calloc(nslots, sizeof(*rx->addrs));
	rx->groups = calloc(nslots, sizeof(*rx->groups));
	if (!rx->slots || !rx->mmsg || !rx->iov || !rx->addrs || !rx->groups)
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
		rx->ctrl = calloc(rx->nslots, CN_CTRL_SIZE);
		if (!rx->ctrl)
			return -ENOMEM;
		for (uint32_t i = 0; i < rx->nslots; i++)
			rx->mmsg[i].msg_hdr.msg_control = rx->ctrl + (size_t)i * CN_CTRL_SIZE;
	}
	if (setsockopt(s->fd, SOL_NETLINK, NETLINK_PKTINFO, &v, sizeof(v)) < 0)
		return -errno;
	rx->pktinfo = on;
	return 0;
}

/*
 * What the walk does with datagram i before its first record, the one
 * answer for the walk and cn__rx_count_left: 0 walk it; 1 skip it, from a
 * sender the socket accepts no messages from (not the kernel, unless
 * opened with CN_OPEN_ANY_SENDER: a local process may be spoofing);
 * -EMSGSIZE cut to the slot (MSG_TRUNC), dropped as malformed.
 */
static int datagram_start(const struct cn_sock *s, uint32_t i)
{
	if (!cn__rx_from_kernel(&s->rx, i) && !(s->flags & CN_OPEN_ANY_SENDER))
		return 1;
	if (s->rx.mmsg[i].msg_hdr.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	return 0;
}

/*
 * Is the NLMSG_ERROR at p of datagram i the answer to the acked send w
 * waits for (CN_SEND_ACK, message.c)? It must come from the kernel and
 * echo the request's header: its nlmsg_seq and our port. Then its error
 * (0 for success) goes to w->answer_err.
 */
static int is_answer(const struct cn_sock *s, uint32_t i, const uint8_t *p, struct cn__rx_wait *w)
{
	struct nlmsghdr nlh;
	struct nlmsgerr e;

	memcpy(&nlh, p, sizeof(nlh));
	if (!cn__rx_from_kernel(&s->rx, i) || nlh.nlmsg_type != NLMSG_ERROR ||
	    nlh.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
		return 0;
	memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
	if (nlh.nlmsg_seq != w->seq || e.msg.nlmsg_seq != w->seq || e.msg.nlmsg_pid != s->port)
		return 0;
	w->answer_err = e.error;
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
 * One step of the walk of the datagram at the cursor, through parse_next:
 * 1 with *out filled, 0 when it moved on without a message (a datagram
 * skipped, an ack, the end of a datagram), CN__RX_ANSWER (w's answer), or
 * an error: -EBADMSG or -EMSGSIZE (counted as malformed, the datagram
 * dropped), -ENOBUFS (an NLMSG_OVERRUN, counted as an overrun), a kernel's
 * NLMSG_ERROR.
 */
static int walk_step(struct cn_sock *s, struct cn_message *out, struct cn__rx_wait *w)
{
	struct cn_rx *rx = &s->rx;
	uint32_t i = rx->count - rx->left;
	const uint8_t *dgram = rx->iov[i].iov_base;
	size_t len = rx->mmsg[i].msg_len, off = rx->pos.offset;
	const struct cn_msg *m;
	int r;

	if (off == 0 && rx->pos.msg_end == 0) {
		r = datagram_start(s, i);
		if (r == 1)
			s->st.foreign++;
		if (r == -EMSGSIZE)
			s->st.malformed++;
		if (r != 0) {
			cn__rx_advance(rx);
			return r == 1 ? 0 : r;
		}
	}
	r = parse_next(dgram, len, &rx->pos, &m);
	if (rx->pos.offset >= len && rx->pos.msg_end == 0)
		cn__rx_advance(rx); /* its last message: nothing is left of it */
	if (r == 1 && align_record(rx, &m) < 0)
		r = -ENOMEM;
	out->msg = r == 1 ? m : NULL; /* NULL but for a record */
	out->port = rx->addrs[i].nl_pid;
	out->group = r == 1 ? rx->groups[i] : 0;
	if (r == 1)
		s->st.messages++;
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
	/* An ack (-ENODATA) or a kernel error: the answer a wait waits for
	 * is returned as such. */
	if (w && w->armed && is_answer(s, i, dgram + off, w))
		return CN__RX_ANSWER;
	return r == -ENODATA ? 0 : r;
}

int cn__rx_walk(struct cn_sock *s, struct cn_message *out, uint32_t want, unsigned int flags,
		int held, struct cn__rx_wait *w)
{
	struct cn_rx *rx = &s->rx;
	int r;

	if (!w && !cn__backlog_empty(&s->backlog)) {
		r = cn__backlog_next(&s->backlog, out);
		if (r > 0 || (r < 0 && !held))
			return r;
		if (r < 0) {
			cn__backlog_put_off(&s->backlog, r);
			return 0;
		}
	}
	if (rx->put_off != 0) {
		if (held)
			return 0;
		r = rx->put_off;
		rx->put_off = 0;
		return r;
	}
	for (;;) {
		if (!rx->left) {
			if (held)
				return 0;
			r = cn__rx_read(s, want, flags);
			if (r < 0)
				return r;
		}
		r = walk_step(s, out, w);
		if (r > 0)
			return r;
		if (r < 0) {
			if (!held)
				return r;
			cn__rx_put_off(rx, r);
			return 0;
		}
	}
}

size_t cn__rx_count_left(const struct cn_sock *s)
{
	const struct cn_rx *rx = &s->rx;
	size_t n = rx->put_off != 0;
	uint32_t first = rx->count - rx->left;

	for (uint32_t i = first; i < rx->count; i++) {
		struct cn_parse_pos pos = { 0, 0 };
		const struct cn_msg *m;
		int r;

		if (i == first)
			pos = rx->pos;
		if (pos.offset == 0 && pos.msg_end == 0 && (r = datagram_start(s, i)) != 0) {
			n += r < 0; /* a cut datagram is an error returned */
			continue;
		}
		/* Records and errors are returned; acks and no-ops are not. */
		while ((r = parse_next(rx->iov[i].iov_base, rx->mmsg[i].msg_len, &pos, &m)) != 0)
			n += r != -ENODATA;
	}
	return n;
}

int cn_parse_next(const void *buf, size_t len, struct cn_parse_pos *pos, const struct cn_msg **out)
{
	if (!buf || !pos || !out)
		return cn_fail(EINVAL);
	return cn_ret(parse_next(buf, len, pos, out));
}

int cn_recv(struct cn_sock *s, struct cn_message *out, unsigned int flags)
{
	int r;

	if (!s || !out || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	r = cn__rx_next(s, out, 1, flags, 0, NULL);
	return r < 0 ? cn_ret(r) : 0;
}

int cn_recv_batch(struct cn_sock *s, struct cn_message *out, unsigned int max, unsigned int flags)
{
	unsigned int n;
	int r;

	if (!s || !out || !max || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	r = cn__rx_next(s, &out[0], max, flags, 0, NULL);
	if (r < 0)
		return cn_ret(r);
	/* The messages point into the slots: after the first, the socket is
	 * not read again (held) until the next call. */
	for (n = 1; n < max; n++)
		if (cn__rx_next(s, &out[n], max, flags, 1, NULL) <= 0)
			break;
	return (int)n;
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
