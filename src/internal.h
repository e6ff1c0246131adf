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
#include <time.h>
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

/* The receive path (rx.h, recv.c): datagrams read by the last receive
 * system call into slots of CN_SLOT_SIZE bytes (slot i: iov[i]), walked
 * from the cursor on. */
struct cn_rx {
	uint8_t *slots;
	uint32_t nslots;
	struct mmsghdr *mmsg;
	struct iovec *iov;
	struct sockaddr_nl *addrs; /* the sender of each slot's datagram */
	/* The group each slot's datagram came through, set when it was read
	 * (cn__rx_read; 0: unicast). */
	uint32_t *groups;
	/* With NETLINK_PKTINFO on only (NULL until then): a control buffer
	 * per slot (CN_CTRL_SIZE bytes), where the kernel puts the group. */
	uint8_t *ctrl;
	int pktinfo; /* NETLINK_PKTINFO is on */
	/* An error met while the caller held messages (see cn__rx_next): put
	 * off, returned by the next call, which clears it. */
	int put_off;
	/* Aligned copies of the unaligned records of w1 bundles read by the
	 * last receive call (recv.c, align_record); NULL until the first. */
	uint8_t *bounce;
	size_t bounce_used;
	/* The cursor: `left` of the `count` datagrams read are not all walked,
	 * the first of them (datagram count - left) at pos, which is {0, 0}
	 * until that datagram is started. */
	uint32_t count;
	uint32_t left;
	struct cn_parse_pos pos;
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

struct cn_proc_state;

struct cn_sock {
	struct nl_sock *nl; /* libnl socket: setup, membership, buffer sizes */
	int fd;
	int unit;
	uint32_t port;
	uint32_t flags;	 /* CN_OPEN_* */
	int connected;	 /* connect()ed to the kernel's port 0 (see cn_open) */
	uint32_t joined; /* groups 1..32 joined: bit g - 1 for group g */
	/* A message went to the proc connector (cn__to_proc_connector): on
	 * kernels that filter per socket (6.6 on) the kernel may keep proc
	 * state for this socket, which it frees at close only if the socket
	 * is in group 1 then (connector.c, cn_release): cn_close joins it
	 * back first. */
	int proc_spoken;

	uint32_t next_seq;
	uint64_t rng; /* xorshift64* state for acks */

	struct cn_rx rx;

	struct cn_backlog backlog;
	cn_handler_fn handler;
	void *handler_arg;

	struct cn_stats st;
	/* Backlog overflows reported as -ENOBUFS (cn__keep): losses without
	 * a socket overrun, which cn_proc_stats counts beside the overruns. */
	uint64_t kept_overflows;

	/* Inside a cn_request_all callback (cn__answer): its answer lives in
	 * the buffer the request is still walking, so the calls that send or
	 * walk refuse (-EBUSY) until it returns. The receive calls do not
	 * check it (their hot path is one test shorter): the rule is
	 * documented for them. */
	int in_answer;

	/* Layers above the socket, NULL until first used; cn_close frees them. */
	struct cn_proc_state *proc; /* proc connector tracking (proc_seq.c) */
	struct cn_async *async;	    /* requests in flight (async.c) */
};

/* The most payload bytes a message to `port` may carry (CN_MSG_MAX_LEN,
 * libcn.h): the kernel's connector drops a longer one without a word;
 * kmod and userspace peers take CONNECTOR_MAX_MSG_SIZE. */
static inline size_t cn__max_len(const struct cn_sock *s, uint32_t port)
{
	return port == 0 && s->unit == NETLINK_CONNECTOR ? CN_MSG_MAX_LEN : CONNECTOR_MAX_MSG_SIZE;
}

/* Branch hints, for the tests made on every message or call. */
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/* A function of a header compiled into each caller's own code. */
#define CN_INLINE   static inline __attribute__((always_inline))

/* Return -err and set errno to err (err > 0). */
/* A message to @id on @s goes to the kernel's proc connector: the id is
 * the proc connector's and the unit the connector's (another unit's
 * {1,1} is somebody else's). */
static inline int cn__to_proc_connector(const struct cn_sock *s, const struct cb_id *id)
{
	return id->idx == CN_IDX_PROC && id->val == CN_VAL_PROC && s->unit == NETLINK_CONNECTOR;
}

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

/* socket.c */
/* Free what cn_open allocated: the libnl socket, the slots, the backlog. */
void cn__socket_free(struct cn_sock *s);

/* recv.c: the receive path's slots: allocated for nslots datagrams (0 or
 * -ENOMEM; cn__rx_free frees what was allocated), NETLINK_PKTINFO turned on
 * (its control buffers allocated once) or off (0 or -errno). */
int cn__rx_init(struct cn_sock *s, uint32_t nslots);
void cn__rx_free(struct cn_sock *s);
int cn__rx_pktinfo(struct cn_sock *s, int on);
/*
 * The receive path (docs/DESIGN.md, "The path of a message"): every
 * receive call and every wait gets its messages from cn__rx_next (rx.h).
 * A message points into the slots (or, for a receive call, into the
 * backlog): valid until the next read.
 */
/* What a wait (message.c, async.c) gives cn__rx_next: the acked send it
 * waits for, if any (armed: its nlmsg_seq is seq), and where the walk
 * puts that send's answer when it finds it (CN__RX_ANSWER). */
struct cn__rx_wait {
	uint32_t seq;
	int armed;
	int answer_err; /* the answer's error: 0 or -errno */
};
/* cn__rx_next's return for the answer to the acked send a wait waits for. */
#define CN__RX_ANSWER 2
/* recv.c: how many messages (and errors to report) a receive call would
 * return from the datagrams already read and an error put off, without
 * reading the socket: what poll cannot see (cn_pending). */
size_t cn__rx_count_left(const struct cn_sock *s);
/* A message that is not an awaited reply: to the handler, or kept. */
void cn__keep(struct cn_sock *s, const struct cn_message *m);

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
/* What a receive call returns first: 1 with the oldest entry in *out, then
 * the loss (-ENOBUFS), then the error, each once; 0 when nothing is left. */
int cn__backlog_next(struct cn_backlog *b, struct cn_message *out);
/* Put off a report cn__backlog_next returned that could not be returned
 * yet (the caller holds messages): the next cn__backlog_next returns it. */
void cn__backlog_put_off(struct cn_backlog *b, int r);
/* Keep only the entries for which keep(m, arg) returns nonzero, in order;
 * keep sees each entry once, oldest first. */
void cn__backlog_filter(struct cn_backlog *b, int (*keep)(const struct cn_message *m, void *arg),
			void *arg);
/* Nothing kept and nothing to report? */
static inline int cn__backlog_empty(const struct cn_backlog *b)
{
	return !b->count && !b->lost && !b->err;
}

/* What cn__backlog_next still has to return: each kept entry, then the
 * loss and the error, one report each (cn_pending). */
static inline size_t cn__backlog_count(const struct cn_backlog *b)
{
	return b->count + (b->lost != 0) + (b->err != 0);
}

/* message.c: what a request waits for (cn_request's reply, the answers
 * cn_request_all collects). answer says what a message is to it: not an
 * answer (kept for cn_recv), an answer (wait on), the last answer (the
 * wait ends); drained, when not NULL, is asked whenever nothing more is
 * queued and ends the wait by returning nonzero. */
enum { CN__NOT_ANSWER = 0, CN__ANSWER = 1, CN__LAST_ANSWER = 2 };
struct cn__waiter {
	int (*answer)(void *arg, const struct cn_message *m);
	int (*drained)(void *arg);
	void *arg;
};
/* Send req (cn_send's flags, CN_REQUEST_OVERRUN_WAIT) and wait for what w
 * answers, keeping the rest; messages of temp_group (not 0: a group joined
 * for this request only) are not kept. 0 when w ended the wait, or -errno
 * (-ETIMEDOUT; a refusal answered to CN_SEND_ACK; the send's). */
int cn__request_wait(struct cn_sock *s, struct cn_msg *req, unsigned int flags, int timeout_ms,
		     const struct cn__waiter *w, uint32_t temp_group);
/* What one step of a wait found: the one triage of cn__rx_next's returns
 * for the waits (message.c, cn_async_complete). */
enum cn__found {
	CN__FOUND_MESSAGE,   /* a message, in *m */
	CN__FOUND_ANSWER,    /* the answer to w's acked send: w->answer_err */
	CN__FOUND_NONE,	     /* nothing left without a read (held) */
	CN__FOUND_EMPTY,     /* nothing queued (-EAGAIN) */
	CN__FOUND_MALFORMED, /* -EBADMSG, -EMSGSIZE: counted in cn_stats, dropped */
	CN__FOUND_LOSS,	     /* -ENOBUFS: an overrun, counted */
	CN__FOUND_ERROR,     /* any other error, in *err */
};
/* message.c: the next step of a wait, without waiting: cn__rx_next for w
 * (want and held as its), triaged; *err the error found (0: none). */
enum cn__found cn__wait_next(struct cn_sock *s, struct cn_message *m, uint32_t want, int held,
			     struct cn__rx_wait *w, int *err);

/* w1.c: a w1 request's answers (CN_REPLY_W1), for cn_request_all. */
struct cn__w1_part;
struct cn__w1_req {
	struct cn_sock *s;
	const struct cn_msg *req;
	struct cn__w1_part *parts; /* one per w1 message of the request */
	uint32_t nparts;
	uint32_t open; /* parts not answered in full yet */
	int err;       /* the first failed status (-errno), 0: none */
	size_t page;   /* the page size: LIST_MASTERS answers at most a page */
	cn_answer_fn fn;
	void *arg;
};
/* Hand answer a to fn (not NULL) with s->in_answer set (collect.c, w1.c). */
static inline void cn__answer(struct cn_sock *s, cn_answer_fn fn, const struct cn_answer *a,
			      void *arg)
{
	s->in_answer = 1;
	fn(a, arg);
	s->in_answer = 0;
}

/* -EBUSY (errno set) inside a cn_request_all callback, else 0: the first
 * test of the calls that send or walk on s. */
static inline int cn__busy(const struct cn_sock *s)
{
	return unlikely(s->in_answer) ? cn_fail(EBUSY) : 0;
}

/* Check req as a w1 request and set *w up to follow its answers: 0,
 * -EINVAL (not a w1 request), -ENOMEM. cn__w1_free frees what it took. */
int cn__w1_prepare(struct cn__w1_req *w, const struct cn_msg *req);
void cn__w1_free(struct cn__w1_req *w);
/* struct cn__waiter's answer and drained for a w1 request (arg: its
 * cn__w1_req). */
int cn__w1_answer(void *arg, const struct cn_message *m);
int cn__w1_drained(void *arg);

/* async.c */
void cn__async_free(struct cn_sock *s);

/* proc_seq.c */
void cn__proc_free(struct cn_sock *s);

/* CLOCK_MONOTONIC in milliseconds: the deadlines of requests. */
static inline int64_t cn__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

#endif /* LIBCN_INTERNAL_H */
