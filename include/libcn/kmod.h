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

/* ------------------------------------------------------------------------ */
/* Process events from cnbus_proc.ko (kmod's producer; cn_bus_proc_recv(3)) */
/* ------------------------------------------------------------------------ */

/* Flags of a cn_bus_proc_event (the module's CNBUS_PROC_* flags). */
#define CN_BUS_PROC_ARGV_CUT	 0x1u /* argv longer than the module's argv_max: cut */
#define CN_BUS_PROC_ARGV_FAULT	 0x2u /* argv, or its rest, could not be read */
#define CN_BUS_PROC_FILENAME_CUT 0x4u /* filename longer than 4096 bytes: cut */

/*
 * A fork, exec or exit as cnbus_proc.ko recorded it, in the tracepoint of
 * the event. Pids are those of the initial pid namespace, ids those of
 * the initial user namespace. filename and argv point into the receive
 * buffer: valid until the next receive call on the socket.
 */
struct cn_bus_proc_event {
	uint32_t what;	       /* CN_PROC_FORK, CN_PROC_EXEC or CN_PROC_EXIT */
	uint32_t cpu;	       /* CPU of the event and of its sequence number */
	uint32_t seq;	       /* that CPU's record number (cn_msg.seq) */
	uint32_t flags;	       /* CN_BUS_PROC_* */
	uint64_t timestamp_ns; /* CLOCK_MONOTONIC nanoseconds */
	pid_t pid;	       /* the task (fork: the child) */
	pid_t tgid;	       /* its process */
	pid_t parent_pid;      /* its real parent, as the proc connector reports */
	pid_t parent_tgid;
	uint32_t ruid, euid;  /* real and effective uid */
	uint32_t rgid, egid;  /* real and effective gid */
	uint32_t exit_code;   /* exit: wait(2) status */
	int32_t exit_signal;  /* exit: signal the parent gets (-1: none, a thread) */
	const char *filename; /* exec: the path execve() was given, not NUL-terminated */
	size_t filename_len;
	const char *argv; /* exec: the arguments, each ending with a NUL, as in
			     /proc/PID/cmdline; argv_len bytes */
	size_t argv_len;
	size_t argv_total;    /* exec: argv's whole length (> argv_len: cut) */
	uint32_t lost_before; /* records lost just before it (per-CPU gaps) */
	char comm[16];	      /* the task's name (exec: the new one), NUL-terminated;
				 empty from a module whose records have none */
	/* Room for fields a later version adds: not written, do not read. */
	uint64_t reserved[2];
};

/*
 * Decode one record of cnbus_proc.ko (id {CNBUS_PROC_IDX, CNBUS_PROC_VAL},
 * <libcn/cnbus_proc.h>) into *ev, without loss tracking (lost_before 0).
 * ev->filename and ev->argv point into msg. Returns 0, -EINVAL (a NULL
 * argument), -EPROTO (another id), -EBADMSG (shorter than its lengths
 * say), -ENOMSG (a record type this libcn does not know: a newer module).
 */
CN_EXPORT int cn_bus_proc_decode(const struct cn_msg *msg, struct cn_bus_proc_event *ev);

/*
 * Join the records' group on socket s (opened on kmod's unit, e.g. with
 * cn_bus_open) and start loss tracking afresh. cnbus.ko lets only a
 * process with CAP_NET_ADMIN in the initial user namespace join it:
 * -EPERM otherwise. Does not load cnbus_proc.ko: without it the group
 * stays silent. Returns 0 or -errno.
 */
CN_EXPORT int cn_bus_proc_listen(struct cn_sock *s);

/*
 * Receive up to max records with one receive call (cn_recv_batch) and
 * decode them into ev[0..n); messages of other ids are skipped. Waits for
 * the first record unless CN_RECV_DONTWAIT or a non-blocking socket.
 * Loss is reported as cn_proc_recv reports it: ev[i].lost_before counts
 * the records missing from a CPU's sequence just before it, and
 * cn_proc_stats(s) counts events, lost and overruns (-ENOBUFS from this
 * call: the socket overran; call again). Returns n >= 1 or -errno
 * (-EAGAIN, -ENOBUFS, -EINVAL for a NULL argument, a max of 0 or unknown
 * flags). The pointers of every event are valid until the next receive
 * call on s.
 */
CN_EXPORT int cn_bus_proc_recv_batch(struct cn_sock *s, struct cn_bus_proc_event *ev,
				     unsigned int max, unsigned int flags);

/* One record: cn_bus_proc_recv_batch with max 1; returns 0 or -errno. */
CN_EXPORT int cn_bus_proc_recv(struct cn_sock *s, struct cn_bus_proc_event *ev, unsigned int flags);

/* The producer's own counters since it was loaded (summed over CPUs). */
struct cn_bus_proc_totals {
	uint64_t records;  /* records made: sequence numbers taken */
	uint64_t inserted; /* accepted by CBUS */
	uint64_t refused;  /* refused by CBUS (a CPU's ring was full): lost */
	uint32_t argv_max; /* the module's argv_max parameter */
	uint32_t reserved0;
	uint64_t reserved[4];
};

/*
 * Ask cnbus_proc.ko for its totals (a request to id {CNBUS_PROC_IDX,
 * CNBUS_PROC_VAL_STATS}), waiting up to timeout_ms. Together with
 * cn_bus_query's CBUS counters (dropped) they say how many records were
 * made and lost before any socket: records = received + lost on a socket
 * that listened for all of them. Returns 0, -ENODEV (cnbus_proc.ko not
 * loaded), -ETIMEDOUT, or -errno.
 */
CN_EXPORT int cn_bus_proc_totals(struct cn_sock *s, struct cn_bus_proc_totals *out, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* LIBCN_KMOD_H */
