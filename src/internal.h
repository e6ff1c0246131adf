/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* internal.h - the socket handle and helpers shared by libcn's source files. */
#ifndef LIBCN_INTERNAL_H
#define LIBCN_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "libcn.h"

struct nl_sock;
struct cn_async;

/* One datagram slot: a netlink header, a cn_msg and the largest payload. */
#define CN_SLOT_SIZE NLMSG_ALIGN(NLMSG_HDRLEN + sizeof(struct cn_msg) + CONNECTOR_MAX_MSG_SIZE + 64)

#define CN_DEFAULT_BATCH   32u
#define CN_DEFAULT_BACKLOG (256u * 1024u)

/* Datagrams read by the last receive system call and not yet fully walked. */
struct cn_rx_cursor {
	uint32_t next;	/* index of the datagram being walked */
	uint32_t count; /* datagrams read */
	size_t offset;	/* offset of the next netlink message in datagram `next` */
};

/* Messages kept during cn_request: a linear buffer of entries (see backlog.c). */
struct cn_backlog {
	uint8_t *buf;
	size_t size; /* capacity in bytes */
	size_t rd;   /* offset of the next entry to return */
	size_t wr;   /* end of the last entry */
	size_t count;
	int lost; /* entries were dropped: report -ENOBUFS once drained */
	int err;  /* a kernel error met while keeping: reported once drained */
};

/* Per-CPU sequence tracking for the proc connector (see proc.c). */
struct cn_proc_track {
	uint32_t ncpu;
	uint32_t *next_seq; /* expected next seq per CPU */
	uint8_t *seen;	    /* 1 once a CPU has delivered an event */
	uint32_t user_mask; /* 0: no userspace filter */
	int kernel_filter;  /* 1: the kernel filters this socket, gaps are not loss */
	uint32_t listens;   /* LISTENs a kernel may have counted; undone by IGNOREs */
	struct cn_proc_stats st;
};

struct cn_sock {
	struct nl_sock *nl; /* libnl socket: setup, membership, buffer sizes */
	int fd;
	int unit;
	uint32_t port;
	uint32_t flags; /* CN_OPEN_* */

	uint32_t next_seq;
	uint64_t rng; /* xorshift64* state for acks */

	/* receive: nslots datagram slots of CN_SLOT_SIZE bytes */
	uint8_t *slots;
	uint32_t nslots;
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct sockaddr_nl *addrs;
	struct cn_rx_cursor rx;
	int deferred_err; /* error seen after messages were returned; reported next */

	struct cn_backlog backlog;
	cn_handler_fn handler;
	void *handler_arg;

	struct cn_stats st;
	struct cn_proc_track proc;
	struct cn_async *async; /* requests in flight (async.c), NULL until cn_async_init */
};

/* Return -err and set errno to err (err > 0). */
static inline int cn_fail(int err)
{
	errno = err;
	return -err;
}

/* Sets errno from a negative return and passes it through. */
static inline int cn_ret(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* recv.c */
/* Read up to n datagrams into the slots (replacing what was there).
 * Returns the count or -errno. */
int cn__read_datagrams(struct cn_sock *s, uint32_t n, int dontwait);
/* Walk the datagrams read so far. 1: *out filled; 0: none left; < 0: error. */
int cn__walk(struct cn_sock *s, struct cn_message *out);
int cn__next_message(struct cn_sock *s, struct cn_message *out, int wait_ms);
int cn__rx_pending(const struct cn_sock *s);
/* The error put off by a call that had already returned messages (0: none);
 * clears it. */
int cn__take_deferred(struct cn_sock *s);

/* backlog.c */
int cn__backlog_init(struct cn_backlog *b, size_t size);
void cn__backlog_free(struct cn_backlog *b);
/* Keep a copy of m; returns 0 or -ENOBUFS (full: counted, reported later). */
int cn__backlog_push(struct cn_backlog *b, const struct cn_message *m);
/* Pop the oldest entry into *out (pointing into the backlog). 1: got one, 0: empty. */
int cn__backlog_pop(struct cn_backlog *b, struct cn_message *out);

/* async.c */
void cn__async_free(struct cn_sock *s);

/* message.c */
uint32_t cn__random_u32(struct cn_sock *s);
/* A message that is not an awaited reply: to the handler, or kept. */
void cn__keep(struct cn_sock *s, const struct cn_message *m);

#endif /* LIBCN_INTERNAL_H */
