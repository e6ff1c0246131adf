/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_listen.c - subscribing to proc events and unsubscribing: LISTEN and
 * IGNORE operations, their acks, the kernel filter when the probe found one.
 * Timeouts as everywhere in libcn: < 0 no limit, 0 do not wait, > 0 ms. */
#include "proc_internal.h"

/* Send a mcast op (4 bytes) or a proc_input (8 bytes); wait for the ack
 * when timeout_ms != 0. Returns 0, the ack's error as -errno, or -errno. */
static int proc_op(struct cn_sock *s, const void *payload, size_t len, int timeout_ms)
{
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(sizeof(struct cn_proc_input))];
	} u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, payload, len);
	struct cn_message reply;
	struct cn_proc_event ack;
	uint32_t op;
	int r;

	if (!req)
		return -errno;
	/* Kernels before 6.6 count every 4-byte LISTEN (later ones count a
	 * socket once); an 8-byte one counts only where it is understood,
	 * which its ack proves, or the probe did before it was sent unawaited
	 * (cn_proc_listen sends none otherwise). cn_proc_ignore undoes each. */
	memcpy(&op, payload, sizeof(op));
	if (timeout_ms == 0) {
		r = cn_send(s, req, 0);
		if (r == 0 && op == PROC_CN_MCAST_LISTEN)
			s->proc.listens++;
		return r;
	}
	for (;;) {
		r = cn_request(s, req, 0, CN_MATCH_ACK_ONLY, timeout_ms, &reply);
		if (r < 0)
			return r;
		if (cn_proc_decode(reply.msg, &ack) < 0)
			return cn_fail(EBADMSG);
		/* The ack consumed a seq on its CPU: put it back in the
		 * stream, in order, so per-CPU tracking sees no false gap. */
		cn__keep(s, &reply);
		if (ack.what != CN_PROC_NONE)
			continue; /* an event that matched by chance: ask again */
		if (ack.ack_err)
			return cn_fail((int)ack.ack_err);
		if (op == PROC_CN_MCAST_LISTEN)
			s->proc.listens++;
		return 0;
	}
}

int cn__proc_listen_all(struct cn_sock *s, int proc_input, int timeout_ms)
{
	struct cn_proc_input in = { PROC_CN_MCAST_LISTEN, CN_PROC_ALL };

	return proc_op(s, &in, proc_input ? sizeof(in) : sizeof(in.mcast_op), timeout_ms);
}

/* cn__backlog_filter callback of a fresh cn_proc_listen: proc messages kept
 * while it waited (events from before the subscription, acks) are dropped,
 * each moving its CPU's expected seq past it, so that nothing is left where
 * poll cannot see it and the first live event shows no false gap. */
static int drop_proc(const struct cn_message *m, void *arg)
{
	struct cn_proc_track *t = arg;
	struct cn_proc_event ev;

	if (cn_proc_decode(m->msg, &ev) < 0)
		return 1; /* another id (or malformed): the caller's */
	if (ev.cpu < t->ntrack)
		t->cpu[ev.cpu].next_seq = (uint32_t)(ev.seq + 1);
	return 0;
}

void cn__proc_drop_kept(struct cn_sock *s)
{
	cn__backlog_filter(&s->backlog, drop_proc, &s->proc);
}

int cn_proc_listen(struct cn_sock *s, uint32_t mask, int timeout_ms)
{
	int partial, kf = 0, fresh, r;

	if (!s || (mask & ~(uint32_t)CN_PROC_ALL))
		return cn_fail(EINVAL);
	partial = mask != 0 && (mask & PROC_TYPES) != PROC_TYPES;
	fresh = !s->proc.subscribed;
	r = cn__proc_track_reset(s, 0, 0);
	if (r < 0)
		return cn_fail(-r);
	r = cn_join(s, CN_IDX_PROC);
	if (r < 0)
		return r;
	if (partial) {
		/* With timeout 0 nothing is awaited: a filter only when an
		 * earlier probe found one (else libcn filters alone). */
		kf = cn_proc_kernel_filters(s, timeout_ms);
		if (kf == -EAGAIN && timeout_ms == 0)
			kf = 0;
		if (kf < 0)
			return kf;
	}
	if (kf) {
		/* The probe (or this LISTEN ALL) proved the connector answers
		 * this socket; the filtered LISTEN that follows gets no ack. */
		r = cn__proc_listen_all(s, 1, timeout_ms);
		if (r < 0)
			return r;
		struct cn_proc_input in = { PROC_CN_MCAST_LISTEN, mask };

		r = proc_op(s, &in, sizeof(in), 0);
	} else {
		r = cn__proc_listen_all(s, 0, timeout_ms);
	}
	if (r < 0)
		return r;
	/* The mask is applied in userspace even when the kernel filters:
	 * events of every type may have been queued between the unfiltered
	 * LISTEN and the filtered one. */
	r = cn__proc_track_reset(s, mask, kf);
	if (r < 0)
		return cn_fail(-r);
	/* A socket that was listening already keeps what arrived meanwhile
	 * (its events, and the acks in order for its tracking): the caller
	 * drains them (cn_pending). */
	if (fresh)
		cn__proc_drop_kept(s);
	s->proc.subscribed = 1;
	return 0;
}

int cn_proc_ignore(struct cn_sock *s)
{
	uint32_t op = PROC_CN_MCAST_IGNORE;
	int r;

	if (!s)
		return cn_fail(EINVAL);
	/* One IGNORE per counted LISTEN (extra ones are harmless on kernels
	 * that count a socket once), none without one: before 6.6 every
	 * IGNORE decrements one count for the whole machine, and at 0 no
	 * listener anywhere gets events. */
	while (s->proc.listens > 0) {
		r = proc_op(s, &op, sizeof(op), 0);
		if (r < 0)
			return r;
		s->proc.listens--;
	}
	s->proc.subscribed = 0;
	return cn_leave(s, CN_IDX_PROC);
}
