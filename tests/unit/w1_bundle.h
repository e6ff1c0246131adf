/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * w1_bundle.h - a datagram framed exactly as drivers/w1/w1_netlink.c frames
 * a bundle of replies (W1_CN_BUNDLE), for the parse and receive tests.
 *
 * w1_netlink_setup_msg puts each next struct cn_msg right after the previous
 * one's data (no alignment); w1_reply_len gives the bytes up to the last
 * record's data less one header, and cn_netlink_send_mult adds that header
 * back: nlmsg_len = 16 + the sum of (20 + len) over the records. nlmsg_put
 * pads the datagram to 4 bytes, nlmsg_seq is the first record's seq, type
 * NLMSG_DONE, flags 0.
 */
#ifndef W1_BUNDLE_H
#define W1_BUNDLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/connector.h>
#include <linux/netlink.h>

struct w1_record {
	uint32_t seq, ack;
	const char *data;
};

/* Frame the n records into buf (zeroed first; at least 4096 bytes).
 * Returns the datagram's length, padded to 4. */
static inline size_t w1_bundle(uint8_t *buf, const struct w1_record *r, int n)
{
	struct nlmsghdr nlh = { .nlmsg_type = NLMSG_DONE };
	size_t off = NLMSG_HDRLEN;

	memset(buf, 0, 4096);
	for (int i = 0; i < n; i++) {
		struct cn_msg m = { .id = { CN_W1_IDX, CN_W1_VAL } };
		size_t len = strlen(r[i].data);

		m.seq = r[i].seq;
		m.ack = r[i].ack;
		m.len = (uint16_t)len;
		memcpy(buf + off, &m, sizeof(m));
		memcpy(buf + off + sizeof(m), r[i].data, len);
		off += sizeof(m) + len;
	}
	nlh.nlmsg_len = (uint32_t)off;
	nlh.nlmsg_seq = n ? r[0].seq : 0;
	memcpy(buf, &nlh, sizeof(nlh));
	return NLMSG_ALIGN(off);
}

#endif
