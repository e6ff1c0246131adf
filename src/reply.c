/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reply.c - answering the kernel's own connector users that wait for an
 * answer from userspace, in the form each one matches (cn_reply_as(3)): the
 * header conventions of dm-log-userspace, uvesafb and hv_utils beside
 * libcn's own genealogy, and the dm-log-userspace request and reply
 * (docs/DESIGN.md, "Reply conventions"). w1, which answers instead, is
 * collect.c's.
 */
#include <linux/dm-log-userspace.h>
#include <sys/uio.h>

#include "internal.h"

/* A status no errno can be: what the kernel's -msg->ack must stay within. */
#define CN_MAX_ERRNO 4095

int cn_reply_header(struct cn_msg *out, const struct cn_msg *req, enum cn_reply_conv conv,
		    int error, size_t len)
{
	if (!out || !req)
		return cn_fail(EINVAL);
	if (len > CONNECTOR_MAX_MSG_SIZE)
		return cn_fail(EMSGSIZE);
	/* Only dm-log-userspace has room for a status in the header. */
	if (error > 0 || error < -CN_MAX_ERRNO || (error && conv != CN_REPLY_DM_ULOG))
		return cn_fail(EINVAL);
	memset(out, 0, sizeof(*out));
	out->id = req->id;
	out->len = (__u16)len;
	switch (conv) {
	case CN_REPLY_GENEALOGY: /* message.c, cn_is_reply */
		out->seq = req->seq;
		out->ack = req->ack + 1;
		break;
	case CN_REPLY_DM_ULOG: /* dm-log-userspace-transfer.c, fill_pkg: -msg->ack */
		out->seq = req->seq;
		out->ack = (__u32)-error;
		break;
	case CN_REPLY_UVESAFB: /* uvesafb.c, uvesafb_cn_callback */
		out->seq = req->seq;
		out->ack = req->ack;
		break;
	case CN_REPLY_HV: /* hv_utils_transport.c: matched by id only */
		break;
	default:
		/* CN_REPLY_W1 among them: w1 answers, it is never answered
		 * (w1_netlink.c, w1_cn_callback takes every message as a
		 * request); its answers are collected by cn_request_all. */
		return cn_fail(EINVAL);
	}
	return 0;
}

/* Send header `hdr`, then `head` and `data`, as one datagram to `port`:
 * gathered, so that a reply built around a received request (the echoed
 * struct dm_ulog_request) is not copied. */
static int send_reply(struct cn_sock *s, uint32_t port, const struct cn_msg *hdr, const void *head,
		      size_t headlen, const void *data, size_t len)
{
	struct nlmsghdr nlh = {
		.nlmsg_len = (__u32)(NLMSG_HDRLEN + sizeof(*hdr) + headlen + len),
		.nlmsg_type = NLMSG_DONE,
		.nlmsg_seq = hdr->seq,
		.nlmsg_pid = s->port,
	};
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port };
	struct iovec iov[4] = {
		{ .iov_base = &nlh, .iov_len = NLMSG_HDRLEN },
		{ .iov_base = (void *)hdr, .iov_len = sizeof(*hdr) },
	};
	struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = iov };
	ssize_t r;

	if (cn__busy(s))
		return -EBUSY;
	mh.msg_iovlen = 2;
	if (headlen)
		iov[mh.msg_iovlen++] =
		    (struct iovec){ .iov_base = (void *)head, .iov_len = headlen };
	if (len)
		iov[mh.msg_iovlen++] = (struct iovec){ .iov_base = (void *)data, .iov_len = len };
	do
		r = sendmsg(s->fd, &mh, 0);
	while (r < 0 && errno == EINTR);
	return r < 0 ? cn_fail(errno) : 0;
}

int cn_reply_as(struct cn_sock *s, const struct cn_message *to, enum cn_reply_conv conv, int error,
		const void *data, size_t len)
{
	struct cn_msg hdr;
	int r;

	if (!s || !to || !to->msg || (len && !data))
		return cn_fail(EINVAL);
	r = cn_reply_header(&hdr, to->msg, conv, error, len);
	if (r < 0)
		return r;
	if (len > cn__max_len(s, to->port))
		return cn_fail(EMSGSIZE);
	return send_reply(s, to->port, &hdr, NULL, 0, data, len);
}

const void *cn_dm_ulog_decode(const struct cn_msg *msg, struct dm_ulog_request *req)
{
	if (!msg || !req) {
		errno = EINVAL;
		return NULL;
	}
	if (msg->id.idx != CN_IDX_DM || msg->id.val != CN_VAL_DM_USERSPACE_LOG) {
		errno = ENOMSG;
		return NULL;
	}
	/* Copied out: the payload starts 20 bytes into the cn_msg, 4-byte
	 * aligned at best, and the struct has a __u64. The kernel builds
	 * len = sizeof(struct dm_ulog_request) + data_size
	 * (dm-log-userspace-transfer.c, dm_ulog_sendto_server). */
	if (msg->len < sizeof(*req)) {
		errno = EBADMSG;
		return NULL;
	}
	memcpy(req, msg->data, sizeof(*req));
	if (req->data_size != msg->len - sizeof(*req)) {
		errno = EBADMSG;
		return NULL;
	}
	return msg->data + sizeof(*req);
}

int cn_dm_ulog_reply(struct cn_sock *s, const struct cn_message *to, int error, const void *data,
		     size_t len)
{
	struct dm_ulog_request tfr;
	struct cn_msg hdr;
	int r;

	if (!s || !to || !to->msg || (len && !data))
		return cn_fail(EINVAL);
	if (!cn_dm_ulog_decode(to->msg, &tfr))
		return cn_fail(errno);
	/* A failure without data goes out bare: only then does the kernel
	 * keep its room for the data of the resend that -EAGAIN asks for
	 * (fill_pkg sets it to the echoed data_size, 0, otherwise, and the
	 * resent request's answer would fail with -ENOSPC). */
	if (error && !len)
		return cn_reply_as(s, to, CN_REPLY_DM_ULOG, error, NULL, 0);
	if (error == -EAGAIN)
		return cn_fail(EINVAL);
	if (len > cn__max_len(s, to->port) - sizeof(tfr))
		return cn_fail(EMSGSIZE);
	r = cn_reply_header(&hdr, to->msg, CN_REPLY_DM_ULOG, error, sizeof(tfr) + len);
	if (r < 0)
		return r;
	/* The kernel matches a reply with data on the echoed tfr->seq and
	 * takes tfr->error as its result, data_size bytes as its data
	 * (dm-log-userspace-transfer.c, fill_pkg); the header's seq and ack
	 * are not looked at. */
	tfr.error = error;
	tfr.data_size = (__u32)len;
	return send_reply(s, to->port, &hdr, &tfr, sizeof(tfr), data, len);
}

/* libcn's own convention is one of the conventions: one header builder and
 * one send for every answer. */
int cn_reply(struct cn_sock *s, const struct cn_message *to, const void *data, size_t len)
{
	return cn_reply_as(s, to, CN_REPLY_GENEALOGY, 0, data, len);
}

int cn_dm_ulog_ack(struct cn_sock *s, const struct cn_message *to, int error)
{
	return cn_reply_as(s, to, CN_REPLY_DM_ULOG, error, NULL, 0);
}
