/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect.c - cn_request_all: a request and every answer its kernel user
 * sends, told apart under the user's reply convention (docs/DESIGN.md,
 * "Reply conventions"): libcn's genealogy (one reply) and w1's (w1.c).
 * The wait itself is cn_request's (message.c, cn__request_wait): the same
 * receive path, keeping of other messages, overrun and timeout rules.
 */
#include "internal.h"

#define REQUEST_FLAGS (CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK | CN_SEND_ACK | CN_REQUEST_OVERRUN_WAIT)

/* CN_REPLY_GENEALOGY: the one reply, same id and seq, ack + 1. */
struct genealogy {
	struct cn_sock *s;
	const struct cn_msg *req;
	cn_answer_fn fn;
	void *arg;
};

static int answer_genealogy(void *arg, const struct cn_message *m)
{
	struct genealogy *g = arg;
	struct cn_answer a;

	if (!cn_is_reply(g->req, m->msg, CN_MATCH_STRICT))
		return CN__NOT_ANSWER;
	memset(&a, 0, sizeof(a));
	a.m = *m;
	a.kind = CN_ANSWER_DATA;
	a.data = m->msg->data;
	a.len = m->msg->len;
	if (g->fn)
		cn__answer(g->s, g->fn, &a, g->arg);
	return CN__LAST_ANSWER;
}

/* w1 tells data (ack = seq + 1) from statuses (the request's ack) by ack
 * alone: the two must differ. */
static int w1_genealogy(struct cn_sock *s, struct cn_msg *req, unsigned int *flags)
{
	if (!(*flags & CN_SEND_KEEP_SEQ))
		req->seq = s->next_seq++;
	if (!(*flags & CN_SEND_KEEP_ACK)) {
		do
			req->ack = cn__random_u32(s);
		while (req->ack == req->seq + 1);
	} else if (req->ack == req->seq + 1) {
		return -EINVAL;
	}
	*flags |= CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK;
	return 0;
}

int cn_request_all(struct cn_sock *s, struct cn_msg *req, unsigned int flags,
		   enum cn_reply_conv conv, int timeout_ms, cn_answer_fn fn, void *arg)
{
	struct cn__w1_req w1;
	struct genealogy g = { s, req, fn, arg };
	struct cn__waiter w = { answer_genealogy, NULL, &g };
	int r;

	if (!s || !req || (flags & ~REQUEST_FLAGS))
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	if (conv == CN_REPLY_GENEALOGY) {
		/* The proc connector puts its own seq in its answer and sends
		 * it through its group (docs/DESIGN.md, "The proc
		 * connector"): cn_request's CN_MATCH_ACK_ONLY and its
		 * membership for the answer are what it takes. */
		if (cn__to_proc_connector(s, &req->id))
			return cn_fail(EINVAL);
		return cn__request_wait(s, req, flags, timeout_ms, &w, 0);
	}
	if (conv != CN_REPLY_W1)
		return cn_fail(EINVAL); /* those kernel users ask, they do not answer */
	if (req->len > cn__max_len(s, 0))
		return cn_fail(EMSGSIZE);
	r = cn__w1_prepare(&w1, req);
	if (r < 0)
		return cn_fail(-r);
	r = w1_genealogy(s, req, &flags);
	if (r < 0) {
		cn__w1_free(&w1);
		return cn_fail(-r);
	}
	w1.s = s;
	w1.fn = fn;
	w1.arg = arg;
	w = (struct cn__waiter){ cn__w1_answer, cn__w1_drained, &w1 };
	r = cn__request_wait(s, req, flags, timeout_ms, &w, 0);
	if (r == 0)
		r = w1.err;
	cn__w1_free(&w1);
	return cn_ret(r);
}
