/* SPDX-License-Identifier: LGPL-2.1-or-later WITH Linux-syscall-note */
/*
 * libcn/proto.h - wire structures shared by libcn (userspace) and kmod (kernel).
 *
 * Everything here travels inside a struct cn_msg payload. The header compiles
 * both in the kernel (kmod/) and in userspace (libcn), so it only uses __u32
 * style types from <linux/types.h>.
 */
#ifndef LIBCN_PROTO_H
#define LIBCN_PROTO_H

#include <linux/types.h>

/*
 * Notification control messages (the 2005 connector design).
 *
 * A control message is sent to id {CN_NOTIFY_IDX, CN_NOTIFY_VAL}. Its payload
 * is a struct cn_ctl_msg followed by idx_notify_num ranges over callback idx
 * and then val_notify_num ranges over callback val. len is the size in bytes
 * of those ranges: (idx_notify_num + val_notify_num) * sizeof(cn_notify_req).
 *
 * A callback {idx, val} matches a request when idx falls in one of its idx
 * ranges and val in one of its val ranges ([first, first + range)). When a
 * matching callback is registered or removed, a message with id {idx, val},
 * seq 0, len 0 and ack CN_NOTIFY_ADDED / CN_NOTIFY_REMOVED is sent to the
 * request's group. A control message with group 0 removes the requests whose
 * ranges equal its ranges.
 *
 * Well-formed (what libcn builds and kmod accepts): idx_notify_num >= 1,
 * val_notify_num >= 1, their sum <= CN_NOTIFY_MAX_RANGES,
 * len == sum * sizeof(struct cn_notify_req), and the cn_msg payload length
 * == sizeof(struct cn_ctl_msg) + len.
 */
#define CN_NOTIFY_IDX 0xffffffffU
#define CN_NOTIFY_VAL 0xffffffffU

#define CN_NOTIFY_ADDED	  0U
#define CN_NOTIFY_REMOVED 1U

/* Upper bound on idx_notify_num + val_notify_num in one control message. */
#define CN_NOTIFY_MAX_RANGES 64U

struct cn_notify_req {
	__u32 first; /* first idx (or val) of the range */
	__u32 range; /* number of values in the range; 0 matches nothing */
};

struct cn_ctl_msg {
	__u32 idx_notify_num; /* number of idx ranges that follow */
	__u32 val_notify_num; /* number of val ranges after the idx ranges */
	__u32 group;	      /* group to notify; 0 removes matching requests */
	__u32 len;	      /* bytes of cn_notify_req data that follow */
	__u8 data[];
};

/*
 * cn_ctl_msg_valid() - is a control message payload well-formed?
 * @payload: the cn_msg payload (any alignment); @len: cn_msg.len.
 *
 * The one check of the rules above, used by kmod before it acts on a
 * request and by libcn (cn_notify_validate). The group is not checked:
 * its bound is kmod's groups parameter. Returns 1 if well-formed, else 0.
 */
static inline int cn_ctl_msg_valid(const void *payload, __u32 len)
{
	struct cn_ctl_msg ctl;
	__u64 n;

	if (!payload || len < sizeof(ctl))
		return 0;
	__builtin_memcpy(&ctl, payload, sizeof(ctl));
	n = (__u64)ctl.idx_notify_num + ctl.val_notify_num;
	return ctl.idx_notify_num != 0 && ctl.val_notify_num != 0 && n <= CN_NOTIFY_MAX_RANGES &&
	       ctl.len == n * sizeof(struct cn_notify_req) && len == sizeof(ctl) + ctl.len;
}

#endif /* LIBCN_PROTO_H */
