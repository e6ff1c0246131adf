/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_ops.c - the proc connector's control messages: a LISTEN or IGNORE
 * operation sent, its ack awaited, and the proc messages kept meanwhile
 * dropped. Used by cn_proc_listen, cn_proc_ignore and the filter probe.
 * Timeouts as everywhere in libcn: < 0 no limit, 0 do not wait, > 0 ms. */
#include "proc_internal.h"

int cn__proc_op(struct cn_sock *s, const void *payload, size_t len, int timeout_ms)
{
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(sizeof(struct cn_proc_input))];
	} u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, payload, len);
	struct cn_proc_state *t = cn__proc_state(s);
	struct cn_message reply;
	struct cn_proc_event ack;
	uint32_t op;
	int r;

	if (!req || !t)
		return -errno;
	/* Kernels before 6.6 count every 4-byte LISTEN (later ones count a
	 * socket once); an 8-byte one counts only where it is understood,
	 * which its ack proves, or the probe did before it was sent unawaited
	 * (cn_proc_listen sends none otherwise). cn_proc_ignore undoes each. */
	memcpy(&op, payload, sizeof(op));
	if (timeout_ms == 0) {
		r = cn_send(s, req, 0);
		if (r == 0 && op == PROC_CN_MCAST_LISTEN)
			t->listens++;
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
			t->listens++;
		return 0;
	}
}

int cn__proc_listen_all(struct cn_sock *s, int proc_input, int timeout_ms)
{
	struct cn_proc_input in = { PROC_CN_MCAST_LISTEN, CN_PROC_ALL };

	return cn__proc_op(s, &in, proc_input ? sizeof(in) : sizeof(in.mcast_op), timeout_ms);
}

/* cn__backlog_filter callback of a fresh cn_proc_listen: proc messages kept
 * while it waited (events from before the subscription, acks) are dropped,
 * each moving its CPU's expected seq past it, so that nothing is left where
 * poll cannot see it and the first live event shows no false gap. */
static int drop_proc(const struct cn_message *m, void *arg)
{
	struct cn_proc_state *t = arg;
	struct cn_proc_event ev;

	if (cn_proc_decode(m->msg, &ev) < 0)
		return 1; /* another id (or malformed): the caller's */
	if (ev.cpu < t->ntrack)
		t->cpu[ev.cpu].next_seq = (uint32_t)(ev.seq + 1);
	return 0;
}

void cn__proc_drop_kept(struct cn_sock *s, struct cn_proc_state *t)
{
	cn__backlog_filter(&s->backlog, drop_proc, t);
}
