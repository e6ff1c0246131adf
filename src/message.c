/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* message.c - building and sending messages, and seq/ack genealogy. */
#include <poll.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "rx.h"

struct cn_msg *cn_msg_init(void *buf, size_t bufsize, uint32_t idx, uint32_t val, const void *data,
			   size_t len)
{
	struct cn_msg *m = buf;

	if (!buf) {
		errno = EINVAL;
		return NULL;
	}
	if (len > CONNECTOR_MAX_MSG_SIZE || bufsize < CN_MSG_SIZE(len)) {
		errno = EMSGSIZE;
		return NULL;
	}
	memset(m, 0, sizeof(*m));
	m->id.idx = idx;
	m->id.val = val;
	m->len = (__u16)len;
	if (data && len)
		memcpy(m->data, data, len);
	return m;
}

/* Send header `m` followed by `len` bytes of `data` (which may be m->data)
 * as one datagram to `port`, with netlink header flags `nlflags`. */
static int send_parts(struct cn_sock *s, const struct cn_msg *m, const void *data, size_t len,
		      uint32_t port, uint16_t nlflags)
{
	struct nlmsghdr nlh = {
		.nlmsg_len = (__u32)(NLMSG_HDRLEN + sizeof(*m) + len),
		.nlmsg_type = NLMSG_DONE,
		.nlmsg_flags = nlflags,
		.nlmsg_seq = m->seq,
		.nlmsg_pid = s->port,
	};
	ssize_t r;

	if (port == 0 && s->connected && nlh.nlmsg_len <= CN_SEND_COPY_MAX) {
		/* The common request: small, to the kernel, on a socket
		 * connected to it. Copying it into one buffer for send() is
		 * cheaper than the kernel's work for sendmsg with an address
		 * and three iovecs (bench/sysforms.c compares the two forms;
		 * docs/PERFORMANCE.md). */
		union {
			struct nlmsghdr h;
			uint8_t b[CN_SEND_COPY_MAX];
		} one;

		one.h = nlh;
		if (data == m->data) {
			memcpy(one.b + NLMSG_HDRLEN, m, sizeof(*m) + len);
		} else {
			memcpy(one.b + NLMSG_HDRLEN, m, sizeof(*m));
			if (len)
				memcpy(one.b + NLMSG_HDRLEN + sizeof(*m), data, len);
		}
		do
			r = send(s->fd, one.b, nlh.nlmsg_len, 0);
		while (r < 0 && errno == EINTR);
	} else {
		/* Gathered without copying the payload. */
		struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port };
		struct iovec iov[3] = {
			{ .iov_base = &nlh, .iov_len = NLMSG_HDRLEN },
			{ .iov_base = (void *)m, .iov_len = sizeof(*m) },
			{ .iov_base = (void *)data, .iov_len = len },
		};
		struct msghdr mh = {
			.msg_name = &to,
			.msg_namelen = sizeof(to),
			.msg_iov = iov,
			.msg_iovlen = len ? 3 : 2,
		};

		do
			r = sendmsg(s->fd, &mh, 0);
		while (r < 0 && errno == EINTR);
	}
	if (r < 0)
		return cn_fail(errno);
	return 0;
}

#define SEND_FLAGS    (CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK | CN_SEND_ACK)
#define REQUEST_FLAGS (SEND_FLAGS | CN_REQUEST_OVERRUN_WAIT)

/* cn_sendto once the arguments are checked: genealogy, then the datagram.
 * cn_request calls this directly: the exported cn_sendto is reached
 * through the PLT and checks again. With CN_SEND_ACK the datagram asks for
 * the kernel's NLMSG_ERROR answer (NLM_F_ACK), which the caller's wait
 * looks for (struct cn__rx_wait); nlmsg_seq is msg->seq, as always. */
static int send_msg(struct cn_sock *s, struct cn_msg *msg, uint32_t port, unsigned int flags)
{
	if (msg->len > cn__max_len(s, port))
		return cn_fail(EMSGSIZE);
	if (cn__to_proc_connector(s, &msg->id))
		s->proc_spoken = 1;
	if (!(flags & CN_SEND_KEEP_SEQ))
		msg->seq = s->next_seq++;
	if (!(flags & CN_SEND_KEEP_ACK))
		msg->ack = cn__random_u32(s);
	return send_parts(s, msg, msg->data, msg->len, port,
			  (flags & CN_SEND_ACK) ? NLM_F_REQUEST | NLM_F_ACK : 0);
}

enum cn__found cn__wait_next(struct cn_sock *s, struct cn_message *m, uint32_t want, int held,
			     struct cn__rx_wait *w, int *err)
{
	int r = cn__rx_next(s, m, want, CN_RECV_DONTWAIT, held, w);

	*err = r < 0 ? r : 0;
	if (r == 1)
		return CN__FOUND_MESSAGE;
	if (r == CN__RX_ANSWER)
		return CN__FOUND_ANSWER;
	if (r == 0)
		return CN__FOUND_NONE;
	if (r == -EAGAIN)
		return CN__FOUND_EMPTY;
	if (r == -EBADMSG || r == -EMSGSIZE)
		return CN__FOUND_MALFORMED;
	if (r == -ENOBUFS)
		return CN__FOUND_LOSS;
	return CN__FOUND_ERROR;
}

/* What a wait found that is not what it waits for, put aside for the
 * receive calls: a message kept (or to the handler), unless it came
 * through drop_group (not 0: a membership cn_request took for itself); a
 * loss or an error reported after the kept messages. Malformed data was
 * counted and is dropped; nothing else is left to put aside. */
static void put_aside(struct cn_sock *s, enum cn__found f, const struct cn_message *m, int err,
		      uint32_t drop_group)
{
	if (f == CN__FOUND_MESSAGE && (!drop_group || m->group != drop_group))
		cn__keep(s, m);
	else if (f == CN__FOUND_LOSS)
		cn__backlog_note_lost(&s->backlog);
	else if (f == CN__FOUND_ERROR)
		cn__backlog_note_err(&s->backlog, err);
}

/* Messages already read but not returned must survive: the slots are about
 * to be reused by a call that reads until its answer. What is left of the
 * datagrams read is put aside (put_aside, with drop_group). */
static void keep_left(struct cn_sock *s, uint32_t drop_group)
{
	struct cn__rx_wait none = { 0 };
	struct cn_message m;

	while (s->rx.left) {
		int err;
		enum cn__found f = cn__wait_next(s, &m, 1, 0, &none, &err);

		if (f == CN__FOUND_EMPTY)
			break;
		put_aside(s, f, &m, err, drop_group);
	}
}

/*
 * After an acked send: read what is queued, without waiting, until w's
 * answer is found. Kernel netlink input runs in the sender's system call,
 * so the answer, if the receiver sends one, is queued before send returns:
 * an empty queue without it means the receiver does not answer NLM_F_ACK
 * (the built-in connector). Messages read meanwhile are put aside as
 * during cn_request. Returns the answer's error (0: success), 1 when no
 * answer came, or -ENOBUFS when the socket overran before it was read (it
 * may have been lost).
 */
static int await_ack(struct cn_sock *s, struct cn__rx_wait *w)
{
	struct cn_message m;

	for (;;) {
		int err;
		enum cn__found f = cn__wait_next(s, &m, 1, 0, w, &err);

		if (f == CN__FOUND_ANSWER)
			return w->answer_err;
		if (f == CN__FOUND_LOSS)
			return -ENOBUFS;
		if (f == CN__FOUND_EMPTY)
			return 1;
		put_aside(s, f, &m, err, 0);
	}
}

/* cn_send/cn_sendto with CN_SEND_ACK. */
static int send_acked(struct cn_sock *s, struct cn_msg *msg, unsigned int flags)
{
	struct cn__rx_wait w = { 0 };
	int r;

	keep_left(s, 0);
	r = send_msg(s, msg, 0, flags);
	if (r < 0)
		return r;
	w.seq = msg->seq;
	w.armed = 1;
	return cn_ret(await_ack(s, &w));
}

int cn_sendto(struct cn_sock *s, struct cn_msg *msg, uint32_t port, unsigned int flags)
{
	if (!s || !msg || (flags & ~SEND_FLAGS) || (port != 0 && (flags & CN_SEND_ACK)))
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	if (flags & CN_SEND_ACK)
		return send_acked(s, msg, flags);
	return send_msg(s, msg, port, flags);
}

int cn_send(struct cn_sock *s, struct cn_msg *msg, unsigned int flags)
{
	if (!s || !msg || (flags & ~SEND_FLAGS))
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	if (flags & CN_SEND_ACK)
		return send_acked(s, msg, flags);
	return send_msg(s, msg, 0, flags);
}

/* cn_is_reply without the NULL checks. */
static inline int is_reply(const struct cn_msg *req, const struct cn_msg *msg, enum cn_match policy)
{
	if (msg->id.idx != req->id.idx || msg->id.val != req->id.val)
		return 0;
	if (msg->ack != req->ack + 1)
		return 0;
	return policy == CN_MATCH_ACK_ONLY || msg->seq == req->seq;
}

int cn_is_reply(const struct cn_msg *req, const struct cn_msg *msg, enum cn_match policy)
{
	if (!req || !msg)
		return 0;
	return is_reply(req, msg, policy);
}

void cn_set_handler(struct cn_sock *s, cn_handler_fn fn, void *arg)
{
	if (!s)
		return;
	s->handler = fn;
	s->handler_arg = arg;
}

/* cn_request's wait: its reply, matched under its policy. */
struct one_reply {
	const struct cn_msg *req;
	enum cn_match policy;
	struct cn_message *reply;
};

static int answer_one_reply(void *arg, const struct cn_message *m)
{
	struct one_reply *o = arg;

	if (!is_reply(o->req, m->msg, o->policy))
		return CN__NOT_ANSWER;
	*o->reply = *m;
	return CN__LAST_ANSWER;
}

int cn__request_wait(struct cn_sock *s, struct cn_msg *req, unsigned int flags, int timeout_ms,
		     const struct cn__waiter *w, uint32_t temp_group)
{
	struct cn__rx_wait aw = { 0 };
	struct cn_message m;
	int64_t deadline = -1; /* set at the first wait: the kernel's own
				  connector users usually answer before send
				  returns, and reading the clock is not free */
	int r;

	keep_left(s, 0);
	r = send_msg(s, req, 0, flags & SEND_FLAGS);
	/* The kernel's connector users answer inside the send system call
	 * (docs/DESIGN.md, "The proc connector"): the answer is queued now, so
	 * the group joined for it is left before reading, and only events of
	 * the moment of the send can have come through it. */
	if (temp_group)
		(void)cn_leave(s, temp_group);
	if (r < 0)
		return r;
	aw.seq = req->seq;
	aw.armed = (flags & CN_SEND_ACK) != 0;

	for (;;) {
		int wait = 0, err;
		enum cn__found f = cn__wait_next(s, &m, 1, 0, &aw, &err);

		if (f == CN__FOUND_ANSWER) {
			/* A refusal of the request (CN_SEND_ACK) ends the wait;
			 * a success answer does not: the reply is still to
			 * come, and a second answer is no longer looked for. */
			if (aw.answer_err < 0)
				return cn_ret(aw.answer_err);
			aw.armed = 0;
			continue;
		}
		if (f == CN__FOUND_MESSAGE) {
			int t = w->answer(w->arg, &m);

			if (t == CN__LAST_ANSWER)
				return 0; /* its success answer, if still to
					     come, is skipped like any other */
			if (t == CN__NOT_ANSWER)
				put_aside(s, f, &m, 0, temp_group);
			continue;
		}
		if (f == CN__FOUND_MALFORMED)
			continue; /* counted in the stats; not our reply */
		if (f == CN__FOUND_LOSS && (flags & CN_REQUEST_OVERRUN_WAIT)) {
			/* Counted in cn_stats.overruns (and cn_proc_stats);
			 * what was lost is reported by cn_recv after the kept
			 * messages. The reply itself may be lost: the timeout
			 * ends the wait then. */
			put_aside(s, f, &m, err, 0);
			continue;
		}
		if (f != CN__FOUND_EMPTY)
			return cn_ret(err);
		if (w->drained && w->drained(w->arg))
			return 0;

		if (timeout_ms >= 0) {
			int64_t left;

			if (deadline < 0)
				deadline = cn__now_ms() + timeout_ms;
			left = deadline - cn__now_ms();

			if (left <= 0)
				return cn_fail(ETIMEDOUT);
			wait = left > 0x7fffffff ? 0x7fffffff : (int)left;
		} else {
			wait = -1;
		}
		struct pollfd p = { .fd = s->fd, .events = POLLIN };

		r = poll(&p, 1, wait);
		if (r < 0 || r == 0)
			return r < 0 ? cn_fail(errno) : cn_fail(ETIMEDOUT);
	}
}

int cn_request(struct cn_sock *s, struct cn_msg *req, unsigned int flags, enum cn_match policy,
	       int timeout_ms, struct cn_message *reply)
{
	uint32_t temp_group = 0;
	int r;

	if (!s || !req || !reply || (flags & ~REQUEST_FLAGS) ||
	    (policy != CN_MATCH_STRICT && policy != CN_MATCH_ACK_ONLY))
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	/* The proc connector answers through its group only (docs/DESIGN.md,
	 * "The proc connector"): without it the request would just time out.
	 * A membership joined here is left again right after the send: staying
	 * would pile up every proc event of the machine on a socket that never
	 * asked for them, until an overrun that a later, unrelated request
	 * would report. (cn_close joins back, so that the kernel frees its
	 * per-socket proc state: connector.c, cn_release.) */
	if (cn__to_proc_connector(s, &req->id) && !(s->joined & (1u << (CN_IDX_PROC - 1)))) {
		r = cn_join(s, CN_IDX_PROC);
		if (r < 0)
			return r;
		temp_group = CN_IDX_PROC;
	}
	struct one_reply o = { req, policy, reply };
	struct cn__waiter w = { answer_one_reply, NULL, &o };

	r = cn__request_wait(s, req, flags, timeout_ms, &w, temp_group);
	if (temp_group) {
		int saved = errno;

		/* What was read with the reply: the caller's messages kept,
		 * the group's dropped (the reply stays where it was read). */
		keep_left(s, temp_group);
		errno = saved;
	}
	return r;
}
