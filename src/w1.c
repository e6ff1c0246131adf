/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * w1.c - the w1 convention (CN_REPLY_W1): building w1 requests
 * (libcn/w1.h) and telling their answers apart for cn_request_all
 * (collect.c), as drivers/w1/w1_netlink.c sends them (docs/DESIGN.md,
 * "Reply conventions"; line numbers from Linux 6.12.118, the same code in
 * 6.1):
 *
 * - data: the request's header with ack = seq + 1 (w1_netlink_queue_cmd,
 *   146; LIST_MASTERS, w1_process_command_root, 414); the request's w1
 *   message header with one command and its data (a search's ids may take
 *   several records: w1_send_slave 236-255, w1_reply_make_space 83-94);
 * - a status after each command: ack = the request's ack (168), the w1
 *   message and command headers copied, status = -error (w1_process_cb,
 *   472); a slave that does not answer its selection gets one status for
 *   its whole message, with its first command (456-457, 481);
 * - a whole w1 message refused gets a status without a command
 *   (w1_netlink_send_error 194-206, sent at 701, in the sender's system
 *   call): no such slave or master -ENODEV (675); no commands -EPROTO
 *   (655); an unknown type -EPROTO (670); LIST_MASTERS without memory
 *   -ENOMEM (647; w1_process_command_root 407-408). Only -ENODEV is forgiven
 *   (709-710): any other error ends w1_cn_callback's loop, so the later
 *   messages are never run nor answered, while the earlier ones, queued to
 *   their masters' threads, still are. When the kernel gives up on the
 *   whole request before its loop (unknown cn_msg.flags -EINVAL 554-555,
 *   no memory -ENOMEM 611), the status names the first message and
 *   nothing else comes;
 * - LIST_MASTERS has no status when it succeeds (646-648: out_cont sends
 *   one only for an error): its ids end it, in messages of at most a page
 *   (425-430), all sent before the request's send returns (w1_cn_callback
 *   runs in the sender's system call).
 *
 * With W1_CN_BUNDLE the same records come back to back in fewer netlink
 * messages (the receive path splits them), and records in a row with the
 * same ack are merged: one record may then hold several w1 messages.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libcn/w1.h>

#include "internal.h"

/* The w1 messages of a request: where each is, and how far its answers came. */
struct cn__w1_part {
	uint32_t off;	   /* of its struct cn_w1_msg in the request's payload */
	uint16_t cmds;	   /* commands it carries: statuses to come */
	uint16_t answered; /* statuses that came */
	uint8_t type;
	uint8_t refused;   /* no commands or an unknown type: refused whole, -EPROTO */
	uint8_t list_full; /* LIST_MASTERS: a full page of ids came; more may follow */
	uint8_t done;
};

/* The status byte: the kernel stores (u8)-error. W1_CMD_RESET's error is
 * w1_reset_bus's 1, "no device present" (w1_io.c): 255 on the wire. */
static int status_errno(uint8_t status)
{
	if (status == 255)
		return -ENODEV;
	return -(int)status;
}

/* The w1 message at off of a payload of len bytes, copied to *m (it may be
 * unaligned in an answer). 0, or -EINVAL when it does not fit. */
static int msg_at(const uint8_t *p, size_t len, size_t off, struct cn_w1_msg *m)
{
	if (len - off < sizeof(*m))
		return -EINVAL;
	memcpy(m, p + off, sizeof(*m));
	return m->len <= len - off - sizeof(*m) ? 0 : -EINVAL;
}

/* Commands of a w1 message's data of len bytes: -EINVAL unless they fill
 * it exactly: the kernel answers nothing at all to a message that runs past
 * the payload (w1_cn_callback 563-566: counting stops with -E2BIG, and the
 * loop that answers is skipped) and -E2BIG to a command that runs past its
 * message (w1_process_cb 461-463). */
static int count_cmds(const uint8_t *p, size_t len)
{
	size_t off = 0;
	int n = 0;

	while (off < len) {
		struct cn_w1_cmd c;

		if (len - off < sizeof(c))
			return -EINVAL;
		memcpy(&c, p + off, sizeof(c));
		if (c.len > len - off - sizeof(c))
			return -EINVAL;
		off += sizeof(c) + c.len;
		n++;
	}
	return n;
}

int cn__w1_prepare(struct cn__w1_req *w, const struct cn_msg *req)
{
	const uint8_t *p = req->data;
	size_t off = 0;
	uint32_t n = 0;

	memset(w, 0, sizeof(*w));
	if (req->id.idx != CN_W1_IDX || req->id.val != CN_W1_VAL || req->len == 0)
		return -EINVAL;
	/* Count first: the parts are allocated once. */
	while (off < req->len) {
		struct cn_w1_msg m;

		if (msg_at(p, req->len, off, &m) < 0)
			return -EINVAL;
		off += sizeof(m) + m.len;
		n++;
	}
	w->parts = calloc(n, sizeof(*w->parts));
	if (!w->parts)
		return -ENOMEM;
	w->nparts = w->open = n;
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	off = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct cn__w1_part *part = &w->parts[i];
		struct cn_w1_msg m;
		int cmds = 0;

		(void)msg_at(p, req->len, off, &m);
		part->off = (uint32_t)off;
		part->type = m.type;
		if ((m.type == CN_W1_MASTER_CMD || m.type == CN_W1_SLAVE_CMD) && m.len) {
			cmds = count_cmds(p + off + sizeof(m), m.len);
			if (cmds < 0) {
				cn__w1_free(w);
				return -EINVAL;
			}
		} else if (m.type != CN_W1_LIST_MASTERS) {
			cmds = 1; /* refused whole: one status (-EPROTO) */
			part->refused = 1;
		}
		part->cmds = (uint16_t)cmds;
		off += sizeof(m) + m.len;
	}
	w->req = req;
	return 0;
}

void cn__w1_free(struct cn__w1_req *w)
{
	free(w->parts);
	w->parts = NULL;
}

/* Whether part can get an answer: whole, a status without a command
 * (status: its -errno); else data or a command's status. A message refused whole gets only its
 * -EPROTO, or the whole request's refusal (-EINVAL, -ENOMEM); a message
 * with commands gets its commands' answers, or -ENODEV when its device is
 * unknown. The refusals come in the sender's system call, before answers
 * to earlier messages for the same device, which run on its master's
 * thread: this tells [SLAVE_CMD x with commands, SLAVE_CMD x without]
 * apart whatever the order. */
static int may_answer(const struct cn__w1_part *part, int whole, int status)
{
	if (!whole)
		return !part->refused;
	if (status == -EPROTO)
		return part->refused;
	if (status == -ENODEV)
		return !part->refused && part->type != CN_W1_LIST_MASTERS;
	return 1;
}

/* The first unfinished part that an answer's w1 message m is for: the
 * kernel copies the request's w1 message header into its answers, and
 * runs the messages for one device in order. nparts if none. */
static uint32_t part_of(const struct cn__w1_req *w, const struct cn_w1_msg *m, int whole)
{
	int status = status_errno(m->status);

	for (uint32_t i = 0; i < w->nparts; i++) {
		const struct cn__w1_part *part = &w->parts[i];
		struct cn_w1_msg r;

		if (part->done || part->type != m->type || !may_answer(part, whole, status))
			continue;
		if (m->type == CN_W1_LIST_MASTERS)
			return i;
		memcpy(&r, w->req->data + part->off, sizeof(r));
		if (memcmp(r.id.id, m->id.id, sizeof(r.id.id)) == 0)
			return i;
	}
	return w->nparts;
}

static void finish(struct cn__w1_req *w, uint32_t i)
{
	if (!w->parts[i].done) {
		w->parts[i].done = 1;
		w->open--;
	}
}

/* Hand w1 message m of an answer's record (a: its kind and record; data:
 * what follows m; record_len: the record's cn_msg.len) to the callback,
 * and count it for the part of the request it answers. */
static void count_msg(struct cn__w1_req *w, struct cn_answer *a, const struct cn_w1_msg *m,
		      const uint8_t *data, size_t record_len)
{
	int whole = a->kind == CN_ANSWER_STATUS && m->len < sizeof(struct cn_w1_cmd);
	uint32_t i = part_of(w, m, whole);
	struct cn__w1_part *part = i < w->nparts ? &w->parts[i] : NULL;

	a->part = part ? i : CN_ANSWER_NO_PART;
	a->cmd = part ? part->answered : 0;
	a->status = 0;
	a->data = NULL;
	a->len = 0;
	if (a->kind == CN_ANSWER_STATUS) {
		a->status = status_errno(m->status);
		if (a->status && part && !w->err)
			w->err = a->status;
	} else if (m->type == CN_W1_LIST_MASTERS) {
		a->data = data;
		a->len = m->len;
	} else if (m->len >= sizeof(struct cn_w1_cmd)) {
		struct cn_w1_cmd c;

		memcpy(&c, data, sizeof(c));
		a->data = data + sizeof(c);
		a->len = c.len <= m->len - sizeof(c) ? c.len : m->len - sizeof(c);
	}
	if (w->fn)
		cn__answer(w->s, w->fn, a, w->arg);
	if (!part)
		return;
	if (a->kind == CN_ANSWER_DATA) {
		/* A page-full of master ids may be followed by another
		 * (w1_process_command_root); a shorter one is the last. */
		if (m->type == CN_W1_LIST_MASTERS) {
			part->list_full =
			    record_len + sizeof(uint32_t) > w->page - sizeof(struct cn_msg);
			if (!part->list_full)
				finish(w, i);
		}
		return;
	}
	if (whole) {
		/* Refused whole. With anything but -ENODEV the kernel stopped
		 * there: nothing will answer the later messages (for the
		 * first message, -EINVAL or -ENOMEM: the whole request). */
		finish(w, i);
		for (uint32_t j = i + 1; a->status != -ENODEV && j < w->nparts; j++)
			finish(w, j);
		return;
	}
	/* A slave that does not answer its selection: one status, with
	 * its first command (w1_process_cb). */
	if (part->type == CN_W1_SLAVE_CMD && part->answered == 0 && a->status == -ENODEV)
		part->answered = part->cmds;
	else
		part->answered++;
	if (part->answered >= part->cmds || a->status == -E2BIG)
		finish(w, i);
}

int cn__w1_answer(void *arg, const struct cn_message *msg)
{
	struct cn__w1_req *w = arg;
	const struct cn_msg *r = msg->msg, *q = w->req;
	struct cn_answer a;
	size_t off = 0;

	if (r->id.idx != q->id.idx || r->id.val != q->id.val || r->seq != q->seq || msg->port != 0)
		return CN__NOT_ANSWER;
	if (r->ack == q->seq + 1)
		a.kind = CN_ANSWER_DATA;
	else if (r->ack == q->ack)
		a.kind = CN_ANSWER_STATUS;
	else
		return CN__NOT_ANSWER;
	a.m = *msg;
	/* One record holds one w1 message, or several in a row of the
	 * same kind when bundled; what does not parse is the end. */
	while (off < r->len) {
		struct cn_w1_msg m;

		if (msg_at(r->data, r->len, off, &m) < 0)
			break;
		count_msg(w, &a, &m, r->data + off + sizeof(m), r->len);
		off += sizeof(m) + m.len;
	}
	return w->open == 0 ? CN__LAST_ANSWER : CN__ANSWER;
}

int cn__w1_drained(void *arg)
{
	struct cn__w1_req *w = arg;

	/* A full page of master ids and nothing after it: that was all,
	 * since LIST_MASTERS is answered before the send returns. */
	for (uint32_t i = 0; i < w->nparts; i++)
		if (w->parts[i].list_full)
			finish(w, i);
	return w->open == 0;
}

struct cn_msg *cn_w1_init(void *buf, size_t bufsize, unsigned int flags)
{
	struct cn_msg *m;

	if (!buf || (flags & ~CN_W1_BUNDLE)) {
		errno = EINVAL;
		return NULL;
	}
	m = cn_msg_init(buf, bufsize, CN_W1_IDX, CN_W1_VAL, NULL, 0);
	if (m)
		m->flags = (__u16)flags;
	return m;
}

/* Room for `more` bytes after req's payload, in bufsize and in what the
 * kernel's connector takes. */
static int room(const struct cn_msg *req, size_t bufsize, size_t more)
{
	size_t end = sizeof(*req) + req->len + more;

	return end <= bufsize && end - sizeof(*req) <= CN_MSG_MAX_LEN ? 0 : -EMSGSIZE;
}

int cn_w1_add_msg(struct cn_msg *req, size_t bufsize, unsigned int type, uint64_t id)
{
	struct cn_w1_msg m;

	if (!req || req->id.idx != CN_W1_IDX || req->id.val != CN_W1_VAL ||
	    (type != CN_W1_SLAVE_CMD && type != CN_W1_MASTER_CMD && type != CN_W1_LIST_MASTERS) ||
	    (type == CN_W1_MASTER_CMD && id > UINT32_MAX)) /* mst.id has 32 bits */
		return cn_fail(EINVAL);
	if (room(req, bufsize, sizeof(m)) < 0)
		return cn_fail(EMSGSIZE);
	memset(&m, 0, sizeof(m));
	m.type = (__u8)type;
	if (type == CN_W1_MASTER_CMD)
		m.id.mst.id = (__u32)id;
	else if (type == CN_W1_SLAVE_CMD)
		memcpy(m.id.id, &id, sizeof(m.id.id)); /* struct w1_reg_num: a host __u64 */
	memcpy(req->data + req->len, &m, sizeof(m));
	req->len += sizeof(m);
	return 0;
}

int cn_w1_add_cmd(struct cn_msg *req, size_t bufsize, unsigned int cmd, const void *data,
		  size_t len)
{
	size_t off = 0, last = SIZE_MAX;
	struct cn_w1_msg m;
	struct cn_w1_cmd c;

	if (!req || cmd > 255 || req->id.idx != CN_W1_IDX || req->id.val != CN_W1_VAL)
		return cn_fail(EINVAL);
	while (off < req->len && msg_at(req->data, req->len, off, &m) == 0) {
		last = off;
		off += sizeof(m) + m.len;
	}
	if (last == SIZE_MAX || off != req->len)
		return cn_fail(EINVAL);
	memcpy(&m, req->data + last, sizeof(m));
	if (m.type != CN_W1_SLAVE_CMD && m.type != CN_W1_MASTER_CMD)
		return cn_fail(EINVAL);
	if (len > CN_MSG_MAX_LEN || room(req, bufsize, sizeof(c) + len) < 0)
		return cn_fail(EMSGSIZE);
	c.cmd = (__u8)cmd;
	c.res = 0;
	c.len = (__u16)len;
	memcpy(req->data + req->len, &c, sizeof(c));
	if (data && len)
		memcpy(req->data + req->len + sizeof(c), data, len);
	else if (len)
		memset(req->data + req->len + sizeof(c), 0, len);
	m.len = (__u16)(m.len + sizeof(c) + len);
	memcpy(req->data + last, &m, sizeof(m));
	req->len = (__u16)(req->len + sizeof(c) + len);
	return 0;
}
