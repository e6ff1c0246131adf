/* SPDX-License-Identifier: LGPL-2.1-or-later WITH Linux-syscall-note */
/*
 * libcn/kmod_genl.h - generic netlink protocol of the cnbus kernel module.
 *
 * kmod (cnbus.ko) registers a generic netlink family named CNBUS_GENL_NAME.
 * Userspace resolves it (e.g. genl_ctrl_resolve() in libnl-genl-3) and sends
 * CNBUS_CMD_DUMP with NLM_F_DUMP (no attributes). The answer is a dump, as
 * the kernel's own families list their objects: messages flagged
 * NLM_F_MULTI, as many datagrams as it takes, ended by NLMSG_DONE:
 *
 *   1. the bus: CNBUS_A_UNIT ... CNBUS_A_POSSIBLE_CPUS and CNBUS_A_REFUSED
 *      (a nest of CNBUS_REFUSED_A_*, u64 each);
 *   2. one message per registered callback: CNBUS_A_CALLBACK (a nest of
 *      CNBUS_CB_A_*);
 *   3. one message per possible CPU: CNBUS_A_CPU (a nest of CNBUS_CPU_A_*);
 *      there are CNBUS_A_POSSIBLE_CPUS of them.
 *
 * So any number of callbacks and CPUs is listed, and no nest holds more than
 * one object (an attribute, nests included, is at most 64 KiB). A message
 * flagged NLM_F_DUMP_INTR says the callbacks changed during the dump, which
 * may then have missed or repeated one: ask again. Integers are in host byte
 * order. Every u64 attribute is 64-bit aligned with the family's PAD
 * attribute (nla_put_u64_64bit).
 *
 * ABI change in version 2 (CNBUS_GENL_VERSION): version 1 answered
 * CNBUS_CMD_GET with one message holding every callback and CPU in two
 * nests, which could not hold many of them; kmod no longer implements it
 * (-EOPNOTSUPP), and the per-CPU attribute SENT_DIRECT, always 0, is gone
 * (the CNBUS_CPU_A_* numbers after it moved).
 *
 * The header is shared by the kernel module and libcn and only uses
 * <linux/types.h> style types.
 */
#ifndef LIBCN_KMOD_GENL_H
#define LIBCN_KMOD_GENL_H

#define CNBUS_GENL_NAME	   "cnbus"
#define CNBUS_GENL_VERSION 2

/* Bytes of a callback's name (CNBUS_CB_A_NAME), the terminating NUL included. */
#define CNBUS_NAME_MAX	  32
/* Bytes of the version string (CNBUS_A_VERSION), the NUL included. */
#define CNBUS_VERSION_MAX 32

enum cnbus_genl_cmd {
	CNBUS_CMD_UNSPEC,
	CNBUS_CMD_GET_V1, /* version 1 only; -EOPNOTSUPP since version 2 */
	CNBUS_CMD_DUMP,	  /* NLM_F_DUMP, no attributes: the dump above */
	__CNBUS_CMD_MAX,
};
#define CNBUS_CMD_MAX (__CNBUS_CMD_MAX - 1)

/* Top level attributes of the messages of the CNBUS_CMD_DUMP dump. */
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
	CNBUS_A_UNUSED_10,     /* version 1's list of callbacks */
	CNBUS_A_CALLBACK,      /* nest: CNBUS_CB_A_* (a callback's message) */
	CNBUS_A_UNUSED_12,     /* version 1's list of CPUs */
	CNBUS_A_CPU,	       /* nest: CNBUS_CPU_A_* (a CPU's message) */
	CNBUS_A_REFUSED,       /* nest: CNBUS_REFUSED_A_* */
	CNBUS_A_REPLY_DROPPED, /* u64: callback replies dropped, receiver full */
	CNBUS_A_CBUS_BUDGET,   /* u32: per-CPU CBUS overflow bytes beyond the ring */
	CNBUS_A_POSSIBLE_CPUS, /* u32: possible CPUs: the CPU messages that follow */
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
	CNBUS_CPU_A_ID,		/* u32: cpu number */
	CNBUS_CPU_A_INSERTED,	/* u64: messages accepted by cnbus_insert() */
	CNBUS_CPU_A_SENT,	/* u64: taken off the queue by the worker, before broadcast */
	CNBUS_CPU_A_DROPPED,	/* u64: accepted but not sent */
	CNBUS_CPU_A_QUEUED,	/* u32: in the queue right now */
	CNBUS_CPU_A_REFUSED,	/* u64: inserts refused (-ENOBUFS: queue full) */
	CNBUS_CPU_A_OVERFLOWED, /* u64: accepted into the budget beyond the ring */
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
 *   inserted == sent + dropped.
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
