/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* notify.c - builders and decoders for kmod's notification protocol
 * (control messages to {CN_NOTIFY_IDX, CN_NOTIFY_VAL}, see libcn/proto.h). */
#include <string.h>

#include "internal.h"

static struct cn_msg *build(void *buf, size_t bufsize, const struct cn_range *idx,
			    unsigned int nidx, const struct cn_range *val, unsigned int nval,
			    uint32_t group)
{
	struct cn_ctl_msg ctl;
	struct cn_msg *m;
	size_t len;
	uint8_t *p;

	if (!buf || nidx == 0 || nval == 0 || !idx || !val ||
	    (uint64_t)nidx + nval > CN_NOTIFY_MAX_RANGES) {
		errno = EINVAL;
		return NULL;
	}
	len = sizeof(ctl) + ((size_t)nidx + nval) * sizeof(struct cn_notify_req);
	m = cn_msg_init(buf, bufsize, CN_NOTIFY_IDX, CN_NOTIFY_VAL, NULL, len);
	if (!m)
		return NULL;
	ctl.idx_notify_num = nidx;
	ctl.val_notify_num = nval;
	ctl.group = group;
	ctl.len = (uint32_t)(len - sizeof(ctl));
	p = m->data;
	memcpy(p, &ctl, sizeof(ctl));
	p += sizeof(ctl);
	for (unsigned int i = 0; i < nidx; i++, p += sizeof(struct cn_notify_req)) {
		struct cn_notify_req r = { idx[i].first, idx[i].range };

		memcpy(p, &r, sizeof(r));
	}
	for (unsigned int i = 0; i < nval; i++, p += sizeof(struct cn_notify_req)) {
		struct cn_notify_req r = { val[i].first, val[i].range };

		memcpy(p, &r, sizeof(r));
	}
	return m;
}

struct cn_msg *cn_notify_build(void *buf, size_t bufsize, const struct cn_range *idx,
			       unsigned int nidx, const struct cn_range *val, unsigned int nval,
			       uint32_t group)
{
	if (group == 0) {
		errno = EINVAL;
		return NULL;
	}
	return build(buf, bufsize, idx, nidx, val, nval, group);
}

struct cn_msg *cn_notify_build_remove(void *buf, size_t bufsize, const struct cn_range *idx,
				      unsigned int nidx, const struct cn_range *val,
				      unsigned int nval)
{
	return build(buf, bufsize, idx, nidx, val, nval, 0);
}

int cn_notify_decode(const struct cn_msg *msg, struct cn_notification *n)
{
	if (!msg || !n)
		return cn_fail(EINVAL);
	if (msg->len != 0 || (msg->ack != CN_NOTIFY_ADDED && msg->ack != CN_NOTIFY_REMOVED) ||
	    (msg->id.idx == CN_NOTIFY_IDX && msg->id.val == CN_NOTIFY_VAL))
		return cn_fail(EBADMSG);
	n->idx = msg->id.idx;
	n->val = msg->id.val;
	n->added = msg->ack == CN_NOTIFY_ADDED;
	return 0;
}

int cn_notify_validate(const void *data, size_t len)
{
	/* kmod's check (libcn/proto.h), so both sides agree by construction. */
	if (len > UINT32_MAX || !cn_ctl_msg_valid(data, (uint32_t)len))
		return cn_fail(EBADMSG);
	return 0;
}
