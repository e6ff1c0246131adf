/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* internal.h - the socket handle and helpers shared by libcn's source files. */
#ifndef LIBCN_INTERNAL_H
#define LIBCN_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "libcn.h"

struct nl_sock;
struct cn_async;

/* One datagram slot: a netlink header, a cn_msg and the largest payload. */
#define CN_SLOT_SIZE NLMSG_ALIGN(NLMSG_HDRLEN + sizeof(struct cn_msg) + CONNECTOR_MAX_MSG_SIZE + 64)

/* Messages up to this size (netlink header included) are copied whole into
 * one buffer to be sent with a single iovec (send_parts, cn_async_send);
 * larger ones are gathered from their parts. */
#define CN_SEND_COPY_MAX 256

/* Control data per datagram with NETLINK_PKTINFO on: its struct nl_pktinfo,
 * and room for one more int-sized cmsg (NETLINK_LISTEN_ALL_NSID's, should the
 * caller turn it on through cn_fd). */
#define CN_CTRL_SIZE (CMSG_SPACE(sizeof(struct nl_pktinfo)) + CMSG_SPACE(sizeof(int)))

#define CN_DEFAULT_BATCH   32u
#define CN_DEFAULT_BACKLOG (256u * 1024u)

/* The sender of the datagram in a slot. */
struct cn_addr {
	struct sockaddr_nl nl;
	uint32_t pad;
};

/* Datagrams read by the last receive system call and not yet fully walked.
 * Once the last one is walked, next and count are both 0 (recv.c), the
 * state cn__rx_fresh tests as one word. */
struct cn_rx_cursor {
	uint32_t next;	/* index of the datagram being walked */
	uint32_t count; /* datagrams read */
	size_t offset;	/* offset of the next netlink message in datagram `next` */
	/* cn_recv_batch's max and flags, for the walk after its fresh read */
	unsigned int max, flags;
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

/* One CPU's proc event sequence: the seq its next event should carry, a
 * 32-bit value, or CN_PROC_UNSEEN (which no seq equals) until the CPU's
 * first event. A tracked event in sequence costs one compare (the gap and
 * the first event go the other way: proc_internal.h). */
struct cn_proc_cpu {
	uint64_t next_seq;
};
#define CN_PROC_UNSEEN ((uint64_t)1 << 32)

/* Per-CPU sequence tracking for the proc connector (see proc_seq.c, proc_internal.h). */
struct cn_proc_track {
	uint32_t ncpu;	 /* entries in cpu[], 0 until cn_proc_listen */
	uint32_t ntrack; /* CPUs tracked: ncpu, or 0 when the kernel filters */
	struct cn_proc_cpu *cpu;
	uint32_t user_want; /* CN_PROC_* types wanted (all ones: every type, from cn_open on) */
	int kernel_filter;  /* 1: the kernel filters this socket, gaps are not loss */
	uint32_t listens;   /* LISTENs a kernel may have counted; undone by IGNOREs */
	int joined;	    /* in group CN_IDX_PROC (cn_join, cn_leave) */
	int subscribed;	    /* cn_proc_listen succeeded, no cn_proc_ignore since */
	struct cn_proc_stats st;
};

struct cn_sock {
	struct nl_sock *nl; /* libnl socket: setup, membership, buffer sizes */
	int fd;
	int unit;
	uint32_t port;
	uint32_t flags; /* CN_OPEN_* */
	int connected;	/* connect()ed to the kernel's port 0 (see cn_open) */

	uint32_t next_seq;
	uint64_t rng; /* xorshift64* state for acks */

	/* receive: nslots datagram slots of CN_SLOT_SIZE bytes */
	uint8_t *slots;
	uint32_t nslots;
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct cn_addr *addrs;
	/* With pktinfo only (NULL until then): a control buffer per slot
	 * (CN_CTRL_SIZE bytes) and the group each slot's datagram came
	 * through, taken from its NETLINK_PKTINFO cmsg when it was read. */
	uint8_t *ctrl;
	uint32_t *groups;
	struct cn_rx_cursor rx;
	int deferred_err; /* error seen after messages were returned; reported next */
	/* NETLINK_PKTINFO on: groups from the cmsg (pktinfo_on, socket.c). Next to
	 * deferred_err: cn_proc_recv tests both for its fast path, and the
	 * compiler tests the two adjacent ints with one compare. */
	int pktinfo;

	/* The acked send waiting for its NLMSG_ERROR (CN_SEND_ACK): armed
	 * while it waits; the walk (recv.c) takes the answer echoing seq and
	 * our port, sets done and err (0 or -errno) and disarms it. */
	struct {
		uint32_t seq;
		int armed;
		int done;
		int err;
	} ack;

	struct cn_backlog backlog;
	cn_handler_fn handler;
	void *handler_arg;

	struct cn_stats st;
	/* Datagrams cn_recv_batch's fresh read took whole, one message each:
	 * counted once here instead of in st.datagrams and st.messages both
	 * (one add per call fewer); cn_stats adds them to both. */
	uint64_t simple;
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

/* A socket overrun (ENOBUFS, NLMSG_OVERRUN) met on any receive path. It is
 * counted where it is met, so that every path (cn_recv, cn_recv_batch,
 * cn_proc_recv, cn_request, cn_async_complete) accounts it the same way. */
static inline void cn__count_overrun(struct cn_sock *s)
{
	s->st.overruns++;
	s->proc.st.overruns++;
}

/*
 * Read one datagram into slot 0, its sender's address into *from; it does
 * not touch the walk cursor (see cn__slot0_filled). Returns the datagram's
 * length (which may exceed CN_SLOT_SIZE: truncated), or -errno.
 *
 * recvfrom, not recvmsg: both return the sender's address, but recvmsg also
 * copies in a msghdr and imports an iovec (bench/sysforms.c measured send +
 * recvfrom at 0.98x of send + recv against 0.90x for recvmsg once; noisy
 * since, never slower), and it needs no msghdr set up. MSG_TRUNC makes it
 * return the datagram's real length, so truncation is still seen.
 * A socket with NETLINK_PKTINFO on (a group above 32 joined) needs the
 * control data recvfrom cannot return: recv.c reads it with recvmsg (the
 * callers test s->pktinfo; cn_proc_recv's fast path is not taken then).
 */
static inline ssize_t cn__recv_one(struct cn_sock *s, int fl, struct sockaddr_nl *from)
{
	socklen_t alen = sizeof(*from);
	ssize_t r;

	s->st.syscalls++;
	r = recvfrom(s->fd, s->slots, CN_SLOT_SIZE, fl | MSG_TRUNC, (struct sockaddr *)from, &alen);
	if (r < 0) {
		if (errno == ENOBUFS)
			cn__count_overrun(s);
		return -errno;
	}
	s->st.datagrams++;
	return r;
}

/* Make the datagram of length n that cn__recv_one read (its sender in
 * s->addrs[0]) the one cn__walk walks. */
static inline void cn__slot0_filled(struct cn_sock *s, ssize_t n)
{
	if ((size_t)n > CN_SLOT_SIZE) {
		s->mmsg[0].msg_hdr.msg_flags = MSG_TRUNC;
		s->mmsg[0].msg_len = CN_SLOT_SIZE;
	} else {
		s->mmsg[0].msg_hdr.msg_flags = 0;
		s->mmsg[0].msg_len = (unsigned int)n;
	}
	s->rx.next = 0;
	s->rx.count = 1;
	s->rx.offset = 0;
}

/* recv.c */
/* Read up to n datagrams into the slots (replacing what was there).
 * Returns the count or -errno. */
int cn__read_datagrams(struct cn_sock *s, uint32_t n, int dontwait);
/* Walk the datagrams read so far. 1: *out filled; 0: none left; < 0: error. */
int cn__walk(struct cn_sock *s, struct cn_message *out);
/* Up to max messages of the datagrams read so far into out[] (one call for
 * many: cn_async_complete matches every reply, and a call per message cost
 * about 15 user-space instructions). Returns how many; *err is 0 when the
 * walk ran out or stopped at max, else the error it stopped at (taken: the
 * caller reports it after the messages). */
int cn__walk_n(struct cn_sock *s, struct cn_message *out, unsigned int max, int *err);
int cn__next_message(struct cn_sock *s, struct cn_message *out, int wait_ms);
/* Datagrams read and not yet fully walked? */
static inline int cn__rx_pending(const struct cn_sock *s)
{
	return s->rx.next < s->rx.count;
}

#define CN_ADJACENT_INTS(type, a, b)                                                               \
	(offsetof(type, b) == offsetof(type, a) + sizeof(int) && sizeof(((type *)0)->a) == 4 &&    \
	 sizeof(((type *)0)->b) == 4)
_Static_assert(CN_ADJACENT_INTS(struct cn_backlog, lost, err) &&
		   CN_ADJACENT_INTS(struct cn_sock, deferred_err, pktinfo) &&
		   CN_ADJACENT_INTS(struct cn_rx_cursor, next, count),
	       "cn__rx_fresh reads these pairs as one 8-byte word each");

/*
 * The receive state a fresh read needs: nothing kept by cn_request (nor a
 * loss or an error to report after it), no error put off, no datagram left
 * to walk, no NETLINK_PKTINFO. Each pair of adjacent 32-bit fields is read
 * as one word, and the walk clears its cursor to (0, 0) after the last
 * datagram (recv.c), so that the cursor is one more word: 5 instructions
 * where the field-by-field test took 18, on every cn_recv_batch call. A
 * cursor at the end but not cleared only sends the caller the general way.
 */
static inline int cn__rx_fresh(const struct cn_sock *s)
{
	uint64_t kept, put_off, rx;

	memcpy(&kept, &s->backlog.lost, sizeof(kept));	     /* lost, err */
	memcpy(&put_off, &s->deferred_err, sizeof(put_off)); /* deferred_err, pktinfo */
	memcpy(&rx, &s->rx.next, sizeof(rx));		     /* next, count */
	return ((uint64_t)s->backlog.count | kept | put_off | rx) == 0;
}
/* The error put off by a call that had already returned messages (0: none);
 * clears it. */
int cn__take_deferred(struct cn_sock *s);

/* backlog.c */
int cn__backlog_init(struct cn_backlog *b, size_t size);
void cn__backlog_free(struct cn_backlog *b);
/* Keep a copy of m. Returns 0; -ENOBUFS when it is lost (full) and the loss
 * is a new one to report; 1 when it is lost and a loss is already waiting
 * to be reported (the same -ENOBUFS covers it). */
int cn__backlog_push(struct cn_backlog *b, const struct cn_message *m);
/* Pop the oldest entry into *out (pointing into the backlog). 1: got one, 0: empty. */
int cn__backlog_pop(struct cn_backlog *b, struct cn_message *out);
/* Messages were lost while keeping (a socket overrun): -ENOBUFS after the
 * kept entries. */
void cn__backlog_note_lost(struct cn_backlog *b);
/* A kernel error met while keeping, reported after the kept entries (the
 * first one only). */
void cn__backlog_note_err(struct cn_backlog *b, int err);
/* What cn_recv returns first: 1 with the oldest entry in *out, then the loss
 * (-ENOBUFS), then the error, each once; 0 when nothing is left. */
int cn__backlog_take(struct cn_backlog *b, struct cn_message *out);
/* Undo the report of a negative cn__backlog_take that could not be returned
 * yet: the next take returns it again. */
void cn__backlog_put_back(struct cn_backlog *b, int r);
/* Keep only the entries for which keep(m, arg) returns nonzero, in order;
 * keep sees each entry once, oldest first. */
void cn__backlog_filter(struct cn_backlog *b, int (*keep)(const struct cn_message *m, void *arg),
			void *arg);
/* Nothing kept and nothing to report? */
static inline int cn__backlog_idle(const struct cn_backlog *b)
{
	return !b->count && !b->lost && !b->err;
}

/* async.c */
void cn__async_free(struct cn_sock *s);

/* A fresh ack: xorshift64*. Acks only need to be unpredictable enough not to
 * collide with other senders' acks, not to be secret. Inline: one per
 * request sent. */
static inline uint32_t cn__random_u32(struct cn_sock *s)
{
	uint64_t x = s->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* message.c */
/* A message that is not an awaited reply: to the handler, or kept. */
void cn__keep(struct cn_sock *s, const struct cn_message *m);

#endif /* LIBCN_INTERNAL_H */
