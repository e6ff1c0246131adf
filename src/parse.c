/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parse.c - walking the netlink messages of one received datagram. */
#include <string.h>

#include "internal.h"

int cn_parse_next(const void *buf, size_t len, size_t *offset, const struct cn_msg **out)
{
	const uint8_t *p = buf;
	const struct nlmsghdr *nlh;
	size_t off, left, nlen;

	if (!buf || !offset || !out)
		return cn_fail(EINVAL);
	off = *offset;
	*out = NULL;
	if (off >= len)
		return 0;
	left = len - off;
	if (left < NLMSG_HDRLEN) {
		*offset = len;
		return cn_fail(EBADMSG);
	}
	nlh = (const struct nlmsghdr *)(p + off);
	nlen = nlh->nlmsg_len;
	if (nlen < NLMSG_HDRLEN || nlen > left) {
		*offset = len;
		return cn_fail(EBADMSG);
	}
	/* The last message of a datagram may omit its alignment padding. */
	*offset = off + (NLMSG_ALIGN(nlen) < left ? NLMSG_ALIGN(nlen) : left);

	switch (nlh->nlmsg_type) {
	case NLMSG_NOOP:
		return cn_fail(ENODATA);
	case NLMSG_OVERRUN:
		return cn_fail(ENOBUFS);
	case NLMSG_ERROR: {
		struct nlmsgerr e;

		if (nlen < NLMSG_HDRLEN + sizeof(e.error)) {
			*offset = len;
			return cn_fail(EBADMSG);
		}
		memcpy(&e.error, NLMSG_DATA(nlh), sizeof(e.error));
		if (e.error == 0)
			return cn_fail(ENODATA); /* an ack */
		/* A positive or absurd value is not an errno: refuse it. */
		if (e.error > 0 || e.error < -4095) {
			*offset = len;
			return cn_fail(EBADMSG);
		}
		return cn_fail(-e.error);
	}
	default:
		break;
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
			return cn_fail(EBADMSG);
		}
		*out = m;
		return 1;
	}
}
