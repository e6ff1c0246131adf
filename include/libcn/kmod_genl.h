/* SPDX-License-Identifier: LGPL-2.1-or-later WITH Linux-syscall-note */
/*
 * libcn/kmod_genl.h - generic netlink protocol of the cnbus kernel module.
 *
 * kmod (cnbus.ko) registers a generic netlink family named CNBUS_GENL_NAME.
 * Userspace resolves it (e.g. genl_ctrl_resolve() in libnl-genl-3) and sends
 * CNBUS_CMD_GET (no attributes, no NLM_F_DUMP). The reply carries one message
 * with the attributes below. Integers are in host byte order. Every u64
 * attribute is 64-bit aligned with CNBUS_A_PAD (nla_put_u64_64bit).
 *
 * Nesting:
 *   CNBUS_A_CALLBACKS   nest of CNBUS_A_CALLBACK     (nest of CNBUS_CB_A_*)
 *   CNBUS_A_CPUS        nest of CNBUS_A_CPU          (nest of CNBUS_CPU_A_*)
 *   CNBUS_A_REFUSED     nest of CNBUS_REFUSED_A_*    (u64 each)
 *
 * The header is shared by the kernel module and libcn and only uses
 * <linux/types.h> style types.
 */
#ifndef LIBCN_KMOD_GENL_H
#define LIBCN_KMOD_GENL_H

#define CNBUS_GENL_NAME	   "cnbus"
#define CNBUS_GENL_VERSION 1

/* Bytes of a callback's name (CNBUS_CB_A_NAME), the terminating NUL included. */
#define CNBUS_NAME_MAX	  32
/* Bytes of the version string (CNBUS_A_VERSION), the NUL included. */
#define CNBUS_VERSION_MAX 32

enum cnbus_genl_cmd {
	CNBUS_CMD_UNSPEC,
	CNBUS_CMD_GET, /* request: no attributes; reply: CNBUS_A_* */
	__CNBUS_CMD_MAX,
};
#define CNBUS_CMD_MAX (__CNBUS_CMD_MAX - 1)

/* Top level attributes of the CNBUS_CMD_GET reply. */
enum cnbus_genl_attr {
	CNBUS_A_UNSPEC,
	CNBUS_A_PAD,	       /* padding for u64 attributes */
	CNBUS_A_UNIT,	       /* u32: netlink unit (protocol) of the bus */
	CNBUS_A_VERSION,       /* string: module version */
	CNBUS_A_GROUPS,	       /* u32: number of multicast groups of the unit */
	CNBUS_A_MAX_NOTIFY,    /* u32: bound on notification requests */
	CNBUS_A_NOTIFY_COUNT,  /* u32: notification requests registered now */
	CNBUS_A_CBUS_QLEN,     /* u32: bound on each per-CPU CBUS queue */
	CNBUS_A_RECEIVED,      /* u64: messages received from userspace */
	CNBUS_A_DISPATCHED,    /* u64: messages that reached a callback */
	CNBUS_A_CALLBACKS,     /* nest: CNBUS_A_CALLBACK entries */
	CNBUS_A_CALLBACK,      /* nest: CNBUS_CB_A_* */
	CNBUS_A_CPUS,	       /* nest: CNBUS_A_CPU entries */
	CNBUS_A_CPU,	       /* nest: CNBUS_CPU_A_* */
	CNBUS_A_REFUSED,       /* nest: CNBUS_REFUSED_A_* */
	CNBUS_A_REPLY_DROPPED, /* u64: callback replies dropped, receiver full */
	__CNBUS_A_MAX,
};
#define CNBUS_A_MAX (__CNBUS_A_MAX - 1)

/* One registered callback. */
enum cnbus_genl_cb_attr {
	CNBUS_CB_A_UNSPEC,
	CNBUS_CB_A_IDX,	 /* u32 */
	CNBUS_CB_A_VAL,	 /* u32 */
	CNBUS_CB_A_NAME, /* string */
	__CNBUS_CB_A_MAX,
};
#define CNBUS_CB_A_MAX (__CNBUS_CB_A_MAX - 1)

/* CBUS counters of one possible CPU. */
enum cnbus_genl_cpu_attr {
	CNBUS_CPU_A_UNSPEC,
	CNBUS_CPU_A_PAD,
	CNBUS_CPU_A_ID,		 /* u32: cpu number */
	CNBUS_CPU_A_INSERTED,	 /* u64: messages accepted by cnbus_insert() */
	CNBUS_CPU_A_SENT,	 /* u64: sent by the per-CPU worker */
	CNBUS_CPU_A_SENT_DIRECT, /* u64: sent directly, queue was full */
	CNBUS_CPU_A_DROPPED,	 /* u64: accepted but not sent */
	CNBUS_CPU_A_QUEUED,	 /* u32: in the queue right now */
	__CNBUS_CPU_A_MAX,
};
#define CNBUS_CPU_A_MAX (__CNBUS_CPU_A_MAX - 1)

/*
 * Refused incoming messages and requests, by reason (u64 each). Every
 * message received is either dispatched (to a callback, or a notification
 * request that took effect) or refused for exactly one reason:
 *   received == dispatched + sum of CNBUS_REFUSED_A_* except CBUS_SHUTDOWN
 * (a refused cnbus_insert() from kernel code, not a received message).
 * Bytes after a datagram's last message that are too short for a header
 * count as one received message, refused as SHORT.
 * Once every queue is drained, for each CPU:
 *   inserted == sent + sent_direct + dropped.
 */
enum cnbus_genl_refused_attr {
	CNBUS_REFUSED_A_UNSPEC,
	CNBUS_REFUSED_A_PAD,
	CNBUS_REFUSED_A_SHORT,	       /* shorter than nlmsghdr + cn_msg */
	CNBUS_REFUSED_A_TRUNCATED,     /* nlmsg_len beyond the datagram */
	CNBUS_REFUSED_A_BAD_LEN,       /* nlmsg_len disagrees with cn_msg.len */
	CNBUS_REFUSED_A_OVERSIZE,      /* cn_msg.len > CONNECTOR_MAX_MSG_SIZE */
	CNBUS_REFUSED_A_NO_CALLBACK,   /* no callback registered for the id */
	CNBUS_REFUSED_A_NOTIFY_INVAL,  /* malformed notification request */
	CNBUS_REFUSED_A_NOTIFY_PERM,   /* sender lacks CAP_NET_ADMIN */
	CNBUS_REFUSED_A_NOTIFY_FULL,   /* max_notify requests already held */
	CNBUS_REFUSED_A_CBUS_SHUTDOWN, /* cnbus_insert() during unload */
	CNBUS_REFUSED_A_NOTIFY_EXISTS, /* the same request is already held */
	CNBUS_REFUSED_A_NOTIFY_NOENT,  /* removal matched no request */
	CNBUS_REFUSED_A_NOMEM,	       /* no memory to handle the message */
	__CNBUS_REFUSED_A_MAX,
};
#define CNBUS_REFUSED_A_MAX   (__CNBUS_REFUSED_A_MAX - 1)
/* Refusal reasons are CNBUS_REFUSED_A_FIRST..CNBUS_REFUSED_A_MAX, in order:
 * kmod and libcn index their counters by (attribute - FIRST). */
#define CNBUS_REFUSED_A_FIRST CNBUS_REFUSED_A_SHORT
#define CNBUS_REFUSED_NR      (CNBUS_REFUSED_A_MAX - CNBUS_REFUSED_A_FIRST + 1)

#endif /* LIBCN_KMOD_GENL_H */
