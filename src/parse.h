/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * parse.h - the framing of one datagram: netlink messages, and the cn_msg
 * records inside each (docs/DESIGN.md, "Framing"). One parser for the walk
 * of the receive path (recv.c) and for cn_parse_next.
 *
 * A connector message is a netlink header, then cn_msg records back to
 * back: one for every kernel user but w1, which bundles several
 * (W1_CN_BUNDLE): each next record starts right after the previous one's
 * data, unaligned, and nlmsg_len covers exactly the records. Senders may
 * count up to 3 bytes of alignment padding after the last record in
 * nlmsg_len; more than that must be another whole record.
 */
#ifndef LIBCN_PARSE_H
#define LIBCN_PARSE_H

#include "internal.h"

/* Bytes after a record that are alignment padding, not another record. */
#define CN_RECORD_PAD_MAX (NLMSG_ALIGNTO - 1)

/* The record at `off` of buf, which must end by `end`: 1 and *out, with
 * pos moved past it (to the next record, or to the next netlink message
 * `next` when only padding is left); -EBADMSG when it runs past `end`. */
static inline int parse_record(const uint8_t *buf, size_t off, size_t end, size_t next,
			       struct cn_parse_pos *pos, const struct cn_msg **out)
{
	const struct cn_msg *m = (const struct cn_msg *)(buf + off);
	size_t left = end - off, used;
	uint16_t len;

	if (left < sizeof(*m))
		return -EBADMSG;
	/* A record of a w1 bundle may be unaligned: its len is copied. */
	memcpy(&len, buf + off + offsetof(struct cn_msg, len), sizeof(len));
	used = sizeof(*m) + len;
	if (used > left)
		return -EBADMSG;
	*out = m;
	if (left - used <= CN_RECORD_PAD_MAX) {
		pos->offset = next;
		pos->msg_end = 0;
	} else {
		pos->offset = off + used;
		pos->msg_end = end;
	}
	return 1;
}

/* An NLMSG_ERROR message of nlen bytes at nlh: its error (-ENODATA for an
 * ack, error 0), or -EBADMSG when it is too short or holds no errno. */
static inline int parse_error(const struct nlmsghdr *nlh, size_t nlen)
{
	int32_t error;

	if (nlen < NLMSG_HDRLEN + sizeof(error))
		return -EBADMSG;
	memcpy(&error, NLMSG_DATA(nlh), sizeof(error));
	if (error == 0)
		return -ENODATA;
	/* A positive or absurd value is not an errno: refuse it. */
	if (error > 0 || error < -4095)
		return -EBADMSG;
	return error;
}

/* cn_parse_next without its argument checks and errno. Inline: every
 * record of a datagram that is not simple goes through it. */
static inline int parse_next(const void *buf, size_t len, struct cn_parse_pos *pos,
			     const struct cn_msg **out)
{
	const uint8_t *p = buf;
	const struct nlmsghdr *nlh;
	size_t off = pos->offset, left, nlen, next;
	int r;

	*out = NULL;
	if (pos->msg_end) {
		/* The next record of a bundle. */
		next = NLMSG_ALIGN(pos->msg_end) < len ? NLMSG_ALIGN(pos->msg_end) : len;
		r = parse_record(p, off, pos->msg_end, next, pos, out);
		if (r < 0)
			goto bad;
		return r;
	}
	if (off >= len)
		return 0;
	left = len - off;
	if (left < NLMSG_HDRLEN)
		goto bad;
	nlh = (const struct nlmsghdr *)(p + off);
	nlen = nlh->nlmsg_len;
	if (nlen < NLMSG_HDRLEN || nlen > left)
		goto bad;
	/* The last message of a datagram may omit its alignment padding. */
	next = off + (NLMSG_ALIGN(nlen) < left ? NLMSG_ALIGN(nlen) : left);

	/* The connector's own type first; the control types after it.
	 * Connector messages are NLMSG_DONE, but peers are not required to
	 * use that type: any other type carrying a cn_msg is accepted. */
	if (nlh->nlmsg_type != NLMSG_DONE) {
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			pos->offset = next;
			return -ENODATA;
		case NLMSG_OVERRUN:
			pos->offset = next;
			return -ENOBUFS;
		case NLMSG_ERROR:
			r = parse_error(nlh, nlen);
			if (r == -EBADMSG)
				goto bad;
			pos->offset = next;
			return r;
		default:
			break;
		}
	}
	r = parse_record(p, off + NLMSG_HDRLEN, off + nlen, next, pos, out);
	if (r < 0)
		goto bad;
	return r;
bad:
	/* Nothing after malformed data can be trusted: the datagram ends. */
	pos->offset = len;
	pos->msg_end = 0;
	*out = NULL;
	return -EBADMSG;
}

#endif /* LIBCN_PARSE_H */
