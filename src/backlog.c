/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * backlog.c - messages that arrive while cn_request waits for its reply.
 *
 * A linear buffer of entries, allocated once when the socket opens. Entries
 * are appended during cn_request and popped by cn_recv; when the last entry
 * is popped the buffer is empty and starts over, so there is no per-message
 * allocation. A popped entry stays in place (and valid) until the next
 * cn_request appends again.
 *
 * Besides the entries, the backlog holds what must be reported after them:
 * a loss (the backlog was full, or the socket overran while messages were
 * being kept) and a kernel error met while keeping. Every change of this
 * state goes through the functions below.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct entry {
	uint32_t port;
	uint32_t group;
	uint32_t size; /* bytes of cn_msg that follow */
	uint32_t pad;
};

#define ENTRY_ALIGN(n) (((n) + 7u) & ~(size_t)7u)

int cn__backlog_init(struct cn_backlog *b, size_t size)
{
	memset(b, 0, sizeof(*b));
	b->buf = aligned_alloc(8, ENTRY_ALIGN(size));
	if (!b->buf)
		return -ENOMEM;
	b->size = ENTRY_ALIGN(size);
	return 0;
}

void cn__backlog_free(struct cn_backlog *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

int cn__backlog_push(struct cn_backlog *b, const struct cn_message *m)
{
	int was_lost = b->lost;
	size_t msize = sizeof(struct cn_msg) + m->msg->len;
	size_t need = ENTRY_ALIGN(sizeof(struct entry) + msize);
	struct entry e = { .port = m->port, .group = m->group, .size = (uint32_t)msize };

	if (b->wr + need > b->size && b->rd > 0) {
		/* Reclaim what cn_recv already returned. */
		memmove(b->buf, b->buf + b->rd, b->wr - b->rd);
		b->wr -= b->rd;
		b->rd = 0;
	}
	if (b->wr + need > b->size) {
		b->lost = 1;
		return was_lost ? 1 : -ENOBUFS;
	}
	memcpy(b->buf + b->wr, &e, sizeof(e));
	memcpy(b->buf + b->wr + sizeof(e), m->msg, msize);
	b->wr += need;
	b->count++;
	return 0;
}

int cn__backlog_pop(struct cn_backlog *b, struct cn_message *out)
{
	struct entry e;

	if (b->count == 0)
		return 0;
	memcpy(&e, b->buf + b->rd, sizeof(e));
	out->msg = (const struct cn_msg *)(b->buf + b->rd + sizeof(e));
	out->port = e.port;
	out->group = e.group;
	b->rd += ENTRY_ALIGN(sizeof(e) + e.size);
	if (--b->count == 0)
		b->rd = b->wr = 0;
	return 1;
}

void cn__backlog_note_lost(struct cn_backlog *b)
{
	b->lost = 1;
}

void cn__backlog_note_err(struct cn_backlog *b, int err)
{
	if (!b->err)
		b->err = err;
}

int cn__backlog_next(struct cn_backlog *b, struct cn_message *out)
{
	int r;

	if (cn__backlog_pop(b, out))
		return 1;
	if (b->lost) {
		b->lost = 0;
		return -ENOBUFS;
	}
	r = b->err;
	b->err = 0;
	return r;
}

void cn__backlog_put_off(struct cn_backlog *b, int r)
{
	if (r == -ENOBUFS)
		b->lost = 1;
	else
		b->err = r;
}

void cn__backlog_filter(struct cn_backlog *b, int (*keep)(const struct cn_message *m, void *arg),
			void *arg)
{
	size_t rd = b->rd, wr = b->rd, n = b->count;

	/* Entries move only towards the front, so one pass in place. */
	for (size_t i = 0; i < n; i++) {
		struct cn_message m;
		struct entry e;
		size_t size;

		memcpy(&e, b->buf + rd, sizeof(e));
		size = ENTRY_ALIGN(sizeof(e) + e.size);
		m.msg = (const struct cn_msg *)(b->buf + rd + sizeof(e));
		m.port = e.port;
		m.group = e.group;
		if (keep(&m, arg)) {
			if (wr != rd)
				memmove(b->buf + wr, b->buf + rd, size);
			wr += size;
		} else {
			b->count--;
		}
		rd += size;
	}
	b->wr = wr;
	if (b->count == 0)
		b->rd = b->wr = 0;
}
