/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcn/kmod.h - libcn's API for its kernel module, the connector bus
 * cnbus.ko (kmod/ in the source tree): find the netlink unit it serves and
 * read what it reports about itself over its generic netlink family
 * "cnbus" (libcn/kmod_genl.h).
 *
 * Names say "bus" (cn_bus_*), after the module: kmod(8) and libkmod, the
 * system's module tools, are unrelated.
 *
 * Include <libcn.h> first, or only this header (it includes <libcn.h>).
 */
#ifndef LIBCN_KMOD_H
#define LIBCN_KMOD_H

#include <libcn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CN_BUS_NAME_MAX 32

/* A callback registered with cnbus.ko. */
struct cn_bus_callback {
	uint32_t idx, val;
	char name[CN_BUS_NAME_MAX];
};

/* CBUS counters of one CPU. Once its queue is drained,
 * inserted == sent + dropped; refused inserts are not inserted.
 * (ABI change: sent_direct, always 0, is gone, with kmod's genl version 2.) */
struct cn_bus_cpu {
	uint32_t cpu;
	uint32_t queued;     /* in the queue now */
	uint64_t inserted;   /* accepted by cnbus_insert */
	uint64_t sent;	     /* taken off the queue by the CPU's worker (before the broadcast) */
	uint64_t dropped;    /* accepted but never sent */
	uint64_t refused;    /* refused by cnbus_insert (-ENOBUFS: queue full) */
	uint64_t overflowed; /* accepted into the overflow budget beyond the ring */
};

/* Why cnbus.ko refused incoming messages (index into cn_bus_info.refused). */
enum cn_bus_refusal {
	CN_BUS_REFUSED_SHORT,	      /* shorter than nlmsghdr + cn_msg */
	CN_BUS_REFUSED_TRUNCATED,     /* nlmsg_len beyond the datagram */
	CN_BUS_REFUSED_BAD_LEN,	      /* nlmsg_len disagrees with cn_msg.len */
	CN_BUS_REFUSED_OVERSIZE,      /* cn_msg.len > CONNECTOR_MAX_MSG_SIZE */
	CN_BUS_REFUSED_NO_CALLBACK,   /* no callback for the id */
	CN_BUS_REFUSED_NOTIFY_INVAL,  /* malformed notification request */
	CN_BUS_REFUSED_NOTIFY_PERM,   /* notification request without CAP_NET_ADMIN */
	CN_BUS_REFUSED_NOTIFY_FULL,   /* the bound on notification requests was reached */
	CN_BUS_REFUSED_CBUS_SHUTDOWN, /* CBUS insert while unloading */
	CN_BUS_REFUSED_NOTIFY_EXISTS, /* the same notification request is held already */
	CN_BUS_REFUSED_NOTIFY_NOENT,  /* a notification removal matched no request */
	CN_BUS_REFUSED_NOMEM,	      /* kmod had no memory to handle the message */
	CN_BUS_REFUSED_COUNT
};

/*
 * What cnbus.ko reports about itself. Allocated by cn_bus_query or
 * cn_bus_parse_reply as one block holding every callback and CPU reported
 * (no fixed bound); free it with cn_bus_info_free.
 */
struct cn_bus_info {
	uint32_t unit; /* netlink unit to pass to cn_open */
	char version[32];
	uint32_t groups;	/* multicast groups of the unit */
	uint32_t max_notify;	/* bound on notification requests */
	uint32_t notify_count;	/* notification requests held now */
	uint32_t cbus_qlen;	/* per-CPU CBUS ring, in small messages */
	uint32_t cbus_budget;	/* per-CPU CBUS overflow bytes beyond the ring */
	uint32_t possible_cpus; /* possible CPUs: what ncpus is once all are listed */
	uint64_t received;	/* messages received from userspace */
	uint64_t dispatched;	/* messages that reached a callback or took effect */
	/* received == dispatched + the refused[] except CBUS_SHUTDOWN */
	uint64_t refused[CN_BUS_REFUSED_COUNT];
	uint64_t reply_dropped; /* callback replies lost: the receiver's buffer was full */
	uint32_t ncallbacks;	/* entries in callbacks */
	uint32_t ncpus;		/* entries in cpus */
	struct cn_bus_callback *callbacks; /* in the same block */
	struct cn_bus_cpu *cpus;	   /* in the same block */
};

/*
 * Ask cnbus.ko for its unit, version, callbacks and counters (generic
 * netlink family "cnbus", resolved with libnl-genl-3): one dump, any number
 * of callbacks and CPUs. On success *info is a new struct cn_bus_info for
 * the caller to free with cn_bus_info_free. Returns 0, -EINVAL (info NULL),
 * -ENOENT when cnbus.ko is not loaded, -EOPNOTSUPP for a cnbus.ko older
 * than the dump (genl version 1), -EAGAIN when the callbacks kept changing
 * during 5 dumps in a row, -EPERM, -EIO, -ENOMEM, or -EBADMSG for a dump
 * that does not parse; on failure *info is NULL.
 */
CN_EXPORT int cn_bus_query(struct cn_bus_info **info);

/* Free what cn_bus_query or cn_bus_parse_reply returned (NULL is fine). */
CN_EXPORT void cn_bus_info_free(struct cn_bus_info *info);

/* Open a socket on the unit cnbus.ko reports (cn_bus_query + cn_open).
 * Returns NULL with errno set (ENOENT: cnbus.ko not loaded). */
CN_EXPORT struct cn_sock *cn_bus_open(const struct cn_open_opts *opts);

/*
 * Parse the messages of a CNBUS_CMD_DUMP dump, laid one after the other in
 * buf (what cn_bus_query collects; exposed for tests and fuzzing), up to
 * len or an NLMSG_DONE, into a new *info (free it with cn_bus_info_free).
 * Returns 0, -EINVAL, -EBADMSG (a message that does not parse, or not
 * exactly one bus message), -EAGAIN (a message flagged NLM_F_DUMP_INTR),
 * -ENOMEM, or the -errno of an NLMSG_ERROR; on failure *info is NULL.
 */
CN_EXPORT int cn_bus_parse_reply(const void *buf, size_t len, struct cn_bus_info **info);

#ifdef __cplusplus
}
#endif

#endif /* LIBCN_KMOD_H */
