/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * async.c - many requests in flight on one socket.
 *
 * cn_async_send records each request's expected reply (id, seq, ack + 1) in
 * a table sized once by cn_async_init, and sends a batch with one sendmmsg.
 * cn_async_complete reads replies in batches and matches each by its
 * genealogy through an open-addressed index keyed on the expected ack, so
 * matching costs the same however many requests are in flight.
 *
 * An ack that cn_async_send generates names its entry: its reply's ack
 * (ack + 1) carries the entry's index in its low bits (the bits of
 * capacity - 1 rounded up to a power of two), random bits above. Such a
 * reply is matched by one look at that entry, and nothing has to be
 * inserted or deleted anywhere, which the index's probing and deletion
 * would cost (docs/PERFORMANCE.md, "Limits"). Acks the caller keeps
 * (CN_SEND_KEEP_ACK) go through the index (libcn's hash table,
 * hash_table.h), which holds each ack next to its entry: probing and
 * deleting compare and rehash without reading the entries.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "hash_table.h"
#include "internal.h"

#define SEND_CHUNK 64u

enum {
	ENTRY_FREE = 0,
	ENTRY_DIRECT, /* reply_ack & emask is the entry's index */
	ENTRY_HASHED, /* in the index (the caller's ack) */
};

struct cn_async_entry {
	struct cb_id id;
	uint32_t seq;
	uint32_t reply_ack; /* request ack + 1 */
	uint64_t cookie;
	int64_t deadline_ms;
	uint32_t next_free;
	uint32_t state; /* ENTRY_* */
};

/* An index slot: the reply ack expected (ack_key) and its entry. */
struct cn_async_slot {
	uint64_t key;
	uint32_t entry;
	uint32_t unused;
};

/* Send state kept across calls: cn_async_init sets every request's header
 * once (the address, one iovec on its buffer in out); a send then writes
 * only the lengths, and the iovecs of a request too large to copy. */
struct cn_async_tx {
	struct mmsghdr mm[SEND_CHUNK];
	struct iovec iov[SEND_CHUNK][2];
	struct sockaddr_nl to;
};

struct cn_async {
	struct cn_async_entry *e;
	uint32_t cap;
	uint32_t inflight;
	uint32_t free_head;    /* index + 1 of the first free entry; 0: none */
	struct cn__htab index; /* of struct cn_async_slot, up to cap */
	uint32_t nhashed;      /* entries in the index */
	uint32_t emask;	       /* entry bits of a generated reply ack */
	enum cn_match policy;
	int timeout_ms;
	int64_t next_expiry; /* earliest deadline in the table, or -1 */
	uint8_t *out;	     /* SEND_CHUNK buffers of CN_SEND_COPY_MAX bytes */
	struct cn_async_tx *tx;
};

/* The index's key for a reply ack: any ack, 0 included, is a key other
 * than the table's free mark; hashed as the ack itself. */
static uint64_t ack_key(uint32_t ack)
{
	return (uint64_t)ack | 1ull << 32;
}

void cn__async_free(struct cn_sock *s)
{
	if (!s->async)
		return;
	free(s->async->e);
	cn__htab_free(&s->async->index);
	free(s->async->out);
	free(s->async->tx);
	free(s->async);
	s->async = NULL;
}

int cn_async_init(struct cn_sock *s, unsigned int capacity, enum cn_match policy, int timeout_ms)
{
	struct cn_async *a;

	if (!s || capacity == 0 || capacity > 65536 ||
	    (policy != CN_MATCH_STRICT && policy != CN_MATCH_ACK_ONLY) || timeout_ms == 0)
		return cn_fail(EINVAL);
	if (s->async && s->async->inflight)
		return cn_fail(EBUSY);
	cn__async_free(s);
	a = calloc(1, sizeof(*a));
	if (!a)
		return cn_fail(ENOMEM);
	a->e = calloc(capacity, sizeof(*a->e));
	a->out = malloc((size_t)SEND_CHUNK * CN_SEND_COPY_MAX);
	a->tx = calloc(1, sizeof(*a->tx));
	if (!a->e || !a->out || !a->tx ||
	    cn__htab_init(&a->index, capacity, sizeof(struct cn_async_slot)) < 0) {
		free(a->e);
		cn__htab_free(&a->index);
		free(a->out);
		free(a->tx);
		free(a);
		return cn_fail(ENOMEM);
	}
	/* A socket connected to the kernel needs no address, and the kernel
	 * then copies and checks none per message. */
	a->tx->to.nl_family = AF_NETLINK;
	for (uint32_t k = 0; k < SEND_CHUNK; k++) {
		struct msghdr *h = &a->tx->mm[k].msg_hdr;

		if (!s->connected) {
			h->msg_name = &a->tx->to;
			h->msg_namelen = sizeof(a->tx->to);
		}
		h->msg_iov = a->tx->iov[k];
		a->tx->iov[k][0].iov_base = a->out + (size_t)k * CN_SEND_COPY_MAX;
	}
	a->cap = capacity;
	/* capacity - 1 rounded up to 2^n - 1: the index has 2^(n+1) slots */
	a->emask = a->index.mask >> 1;
	a->policy = policy;
	a->timeout_ms = timeout_ms;
	a->next_expiry = -1;
	for (uint32_t i = 0; i < capacity; i++)
		a->e[i].next_free = i + 2 <= capacity ? i + 2 : 0;
	a->free_head = 1;
	s->async = a;
	return 0;
}

unsigned int cn_async_inflight(const struct cn_sock *s)
{
	return s && s->async ? s->async->inflight : 0;
}

static void index_insert(struct cn_async *a, uint32_t entry, uint32_t ack)
{
	/* Never full: it holds at most the cap entries it was sized for. */
	struct cn_async_slot *sl = cn__htab_add(&a->index, ack_key(ack));

	sl->entry = entry;
}

static inline void free_entry(struct cn_async *a, uint32_t entry)
{
	a->e[entry].state = ENTRY_FREE;
	a->e[entry].next_free = a->free_head;
	a->free_head = entry + 1;
	a->inflight--;
}

/* Release the hashed entry in index slot `slot` (its index). */
static inline void release_slot(struct cn_async *a, uint32_t slot)
{
	struct cn_async_slot *sl = cn__htab_at(&a->index, slot);
	uint32_t entry = sl->entry;

	cn__htab_del(&a->index, sl);
	a->nhashed--;
	free_entry(a, entry);
}

/* Release an entry in flight, wherever it is found. */
static void release(struct cn_async *a, uint32_t entry)
{
	struct cn_async_slot *sl;

	if (a->e[entry].state != ENTRY_HASHED) {
		free_entry(a, entry);
		return;
	}
	/* Other entries may expect the same ack (the callers' acks). */
	sl = cn__htab_find(&a->index, ack_key(a->e[entry].reply_ack));
	while (sl->entry != entry)
		sl = cn__htab_find_next(&a->index, sl);
	release_slot(a, cn__htab_index(&a->index, sl));
}

/* Copy a message of len bytes (sizeof(struct cn_msg) <= len <= 240): two
 * overlapping 16-byte moves up to 32 bytes (payloads up to 12 bytes, every
 * proc connector request) instead of a call to memcpy. */
static inline void copy_msg(uint8_t *d, const void *src, size_t len)
{
	const uint8_t *p = src;

	if (len <= 32) {
		uint8_t head[16], tail[16];

		memcpy(head, p, 16);
		memcpy(tail, p + len - 16, 16);
		memcpy(d, head, 16);
		memcpy(d + len - 16, tail, 16);
	} else {
		memcpy(d, p, len);
	}
}

int cn_async_send(struct cn_sock *s, struct cn_msg *const *reqs, const uint64_t *cookies,
		  unsigned int n, unsigned int flags)
{
	struct nlmsghdr nlh[SEND_CHUNK]; /* headers of requests too large to copy */
	struct cn_async *a;
	struct cn_async_tx *tx;
	uint32_t entries[SEND_CHUNK];
	unsigned int sent = 0;

	if (!s || !reqs || n == 0 || (flags & ~(CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK)))
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	a = s->async;
	if (!a)
		return cn_fail(EINVAL);
	for (unsigned int i = 0; i < n; i++)
		if (!reqs[i] || reqs[i]->len > cn__max_len(s, 0))
			return cn_fail(reqs[i] ? EMSGSIZE : EINVAL);
	if (a->inflight == a->cap)
		return cn_fail(EBUSY);
	tx = a->tx;

	while (sent < n && a->inflight < a->cap) {
		unsigned int k, chunk = n - sent;
		int64_t deadline = a->timeout_ms > 0 ? cn__now_ms() + a->timeout_ms : -1;
		int r;

		if (chunk > SEND_CHUNK)
			chunk = SEND_CHUNK;
		if (chunk > a->cap - a->inflight)
			chunk = a->cap - a->inflight;
		for (k = 0; k < chunk; k++) {
			struct cn_msg *m = reqs[sent + k];
			uint32_t entry = a->free_head - 1;
			struct cn_async_entry *e = &a->e[entry];
			struct nlmsghdr h;
			size_t body = sizeof(*m) + m->len;

			if (!(flags & CN_SEND_KEEP_SEQ))
				m->seq = s->next_seq++;
			if (!(flags & CN_SEND_KEEP_ACK)) {
				/* The reply's ack names the entry (see top). */
				m->ack = ((cn__random_u32(s) & ~a->emask) | entry) - 1;
				e->state = ENTRY_DIRECT;
			} else {
				index_insert(a, entry, m->ack + 1);
				a->nhashed++;
				e->state = ENTRY_HASHED;
			}
			a->free_head = e->next_free;
			e->id = m->id;
			e->seq = m->seq;
			e->reply_ack = m->ack + 1;
			e->cookie = cookies ? cookies[sent + k] : sent + k;
			e->deadline_ms = deadline;
			entries[k] = entry;

			h.nlmsg_len = (__u32)(NLMSG_HDRLEN + body);
			h.nlmsg_type = NLMSG_DONE;
			h.nlmsg_flags = 0;
			h.nlmsg_seq = m->seq;
			h.nlmsg_pid = s->port;
			if (h.nlmsg_len <= CN_SEND_COPY_MAX) {
				/* Whole in one buffer: the kernel imports one
				 * iovec per message instead of an array. */
				uint8_t *b = a->out + (size_t)k * CN_SEND_COPY_MAX;

				memcpy(b, &h, NLMSG_HDRLEN);
				copy_msg(b + NLMSG_HDRLEN, m, body);
				tx->iov[k][0].iov_base = b;
				tx->iov[k][0].iov_len = h.nlmsg_len;
				tx->mm[k].msg_hdr.msg_iovlen = 1;
			} else {
				nlh[k] = h;
				tx->iov[k][0] = (struct iovec){ &nlh[k], NLMSG_HDRLEN };
				tx->iov[k][1] = (struct iovec){ m, body };
				tx->mm[k].msg_hdr.msg_iovlen = 2;
			}
		}
		a->inflight += k;
		if (deadline >= 0 && (a->next_expiry < 0 || deadline < a->next_expiry))
			a->next_expiry = deadline;
		do
			r = sendmmsg(s->fd, tx->mm, k, 0);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			r = 0;
		/* Requests that did not go out are not in flight. */
		for (unsigned int i = (unsigned int)r; i < k; i++)
			release(a, entries[i]);
		sent += (unsigned int)r;
		if ((unsigned int)r < k)
			return sent ? (int)sent : cn_fail(errno ? errno : EAGAIN);
	}
	return (int)sent;
}

static inline int same_request(const struct cn_async *a, const struct cn_async_entry *e,
			       const struct cn_msg *msg)
{
	return e->reply_ack == msg->ack && e->id.idx == msg->id.idx && e->id.val == msg->id.val &&
	       (a->policy == CN_MATCH_ACK_ONLY || e->seq == msg->seq);
}

/* The entry of the request msg answers, or -1; *slot: its index slot, or
 * UINT32_MAX for an entry named by its ack. */
static int64_t match(const struct cn_async *a, const struct cn_msg *msg, uint32_t *slot)
{
	uint32_t d = msg->ack & a->emask;
	struct cn_async_slot *sl;

	if (d < a->cap && a->e[d].state == ENTRY_DIRECT && same_request(a, &a->e[d], msg)) {
		*slot = UINT32_MAX;
		return d;
	}
	if (!a->nhashed)
		return -1;
	for (sl = cn__htab_find(&a->index, ack_key(msg->ack)); sl;
	     sl = cn__htab_find_next(&a->index, sl)) {
		if (same_request(a, &a->e[sl->entry], msg)) {
			*slot = cn__htab_index(&a->index, sl);
			return sl->entry;
		}
	}
	return -1;
}

/* Report requests past their deadline as -ETIMEDOUT completions. */
static unsigned int expire(struct cn_async *a, struct cn_completion *out, unsigned int max)
{
	int64_t now = cn__now_ms(), next = -1;
	unsigned int n = 0;

	if (a->next_expiry < 0 || now < a->next_expiry)
		return 0;
	for (uint32_t i = 0; i < a->cap; i++) {
		const struct cn_async_entry *e = &a->e[i];

		if (e->state == ENTRY_FREE)
			continue;
		if (e->deadline_ms >= 0 && e->deadline_ms <= now && n < max) {
			out[n].cookie = e->cookie;
			out[n].status = -ETIMEDOUT;
			memset(&out[n].reply, 0, sizeof(out[n].reply));
			n++;
			release(a, i);
			continue;
		}
		if (e->deadline_ms >= 0 && (next < 0 || e->deadline_ms < next))
			next = e->deadline_ms;
	}
	a->next_expiry = next;
	return n;
}

int cn_async_complete(struct cn_sock *s, struct cn_completion *out, unsigned int max,
		      int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? cn__now_ms() + timeout_ms : -1;
	struct cn_async *a;
	unsigned int n = 0;

	if (!s || !out || max == 0 || !s->async)
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	a = s->async;
	while (n < max) {
		struct cn__rx_wait none = { 0 };
		struct cn_message m;
		uint32_t slot;
		int64_t entry;
		int err;
		/* Replies handed out point into the slots: once one is, the
		 * socket is not read again (held) until the next call. */
		enum cn__found f = cn__wait_next(s, &m, s->rx.nslots, n > 0, &none, &err);

		if (f == CN__FOUND_MALFORMED)
			continue; /* malformed data: counted in cn_stats, skipped */
		if (f == CN__FOUND_NONE)
			break; /* nothing left without a read */
		if (f == CN__FOUND_EMPTY) {
			/* Nothing queued (n is 0): what expired, or wait for the
			 * socket, a deadline or the caller's timeout, whichever
			 * comes first. */
			int64_t now = cn__now_ms(), until = deadline;
			struct pollfd p = { .fd = s->fd, .events = POLLIN };

			n = expire(a, out, max);
			if (n || a->inflight == 0)
				return (int)n;
			if (timeout_ms == 0 || (deadline >= 0 && now >= deadline))
				return 0;
			if (a->next_expiry >= 0 && (until < 0 || a->next_expiry < until))
				until = a->next_expiry;
			if (poll(&p, 1, until < 0 ? -1 : (int)(until > now ? until - now : 0)) < 0)
				return cn_fail(errno);
			continue;
		}
		if (f != CN__FOUND_MESSAGE)
			return cn_ret(err);
		entry = match(a, m.msg, &slot);
		if (entry < 0) {
			cn__keep(s, &m);
			continue;
		}
		out[n].cookie = a->e[entry].cookie;
		out[n].status = 0;
		out[n].reply = m;
		if (slot != UINT32_MAX)
			release_slot(a, slot);
		else
			free_entry(a, (uint32_t)entry);
		n++;
	}
	if (n < max)
		n += expire(a, out + n, max - n);
	return (int)n;
}
