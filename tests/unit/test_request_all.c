/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_request_all.c - cn_request_all and the w1 request builders: every
 * answer a kernel user sends is collected under its convention. The w1
 * answers are framed here as drivers/w1/w1_netlink.c frames them (Linux
 * 6.12 and 6.1): data with ack = seq + 1, one status per command with the
 * request's ack, a status without a command for a w1 message refused whole,
 * no status for a successful LIST_MASTERS, records in their own datagrams
 * or bundled (W1_CN_BUNDLE: back to back, unaligned, statuses in a row
 * merged into one record). The real kernel's answers are the vm tier's
 * (tests/vm/run-w1-test.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <libcn/w1.h>

#include "fake_sys.h"

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

static int setup_any_sender(void **state)
{
	*state = fake_open(CN_OPEN_ANY_SENDER, 0);
	return 0;
}

/* ROM ids (struct w1_reg_num as a host __u64): a DS18B20 and a DS2401. */
#define ROM_THERM 0x9a00000a1b2c3d28ull
#define ROM_ID	  0x5c00001234567801ull
#define MASTER	  3u

union req {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(CN_MSG_MAX_LEN)];
};

/* ---- the kernel's side ---------------------------------------------- */

/* One answer record under construction. */
struct rec {
	uint32_t ack;
	uint8_t p[8192];
	size_t len;
};

/* Append a w1 message to r: the request's header (type, id) with status,
 * then, when cmd >= 0, a command header carrying dlen bytes of data; else
 * dlen bytes of data right after the message header (LIST_MASTERS). */
static void add_w1(struct rec *r, uint8_t type, uint64_t id, uint8_t status, int cmd,
		   const void *data, size_t dlen)
{
	struct cn_w1_msg m;
	struct cn_w1_cmd c;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.status = status;
	m.len = (uint16_t)((cmd >= 0 ? sizeof(c) : 0) + dlen);
	if (type == CN_W1_MASTER_CMD)
		m.id.mst.id = (uint32_t)id;
	else if (type != CN_W1_LIST_MASTERS)
		memcpy(m.id.id, &id, 8);
	memcpy(r->p + r->len, &m, sizeof(m));
	r->len += sizeof(m);
	if (cmd >= 0) {
		c.cmd = (uint8_t)cmd;
		c.res = 0;
		c.len = (uint16_t)dlen;
		memcpy(r->p + r->len, &c, sizeof(c));
		r->len += sizeof(c);
	}
	if (dlen)
		memcpy(r->p + r->len, data, dlen);
	r->len += dlen;
}

static struct rec recs[16];
static unsigned nrecs;

static struct rec *data_rec(const struct cn_msg *req)
{
	struct rec *r = &recs[nrecs++];

	memset(r, 0, sizeof(*r));
	r->ack = req->seq + 1;
	return r;
}

static struct rec *status_rec(const struct cn_msg *req)
{
	struct rec *r = &recs[nrecs++];

	memset(r, 0, sizeof(*r));
	r->ack = req->ack;
	return r;
}

/* Queue the records built: each in a datagram of its own, or all back to
 * back in one netlink message (w1_reply_len, cn_netlink_send_mult). */
static void queue_records(const struct cn_msg *req, int bundled)
{
	if (!bundled) {
		for (unsigned i = 0; i < nrecs; i++)
			fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, req->seq, recs[i].ack,
				    recs[i].p, recs[i].len);
	} else {
		struct fake_dgram *d = fake_dgram(0);
		struct nlmsghdr nlh = { .nlmsg_type = NLMSG_DONE, .nlmsg_seq = req->seq };
		size_t off = NLMSG_HDRLEN;

		for (unsigned i = 0; i < nrecs; i++) {
			struct cn_msg m = { .id = { CN_W1_IDX, CN_W1_VAL } };

			m.seq = req->seq;
			m.ack = recs[i].ack;
			m.len = (uint16_t)recs[i].len;
			memcpy(d->data + off, &m, sizeof(m));
			memcpy(d->data + off + sizeof(m), recs[i].p, recs[i].len);
			off += sizeof(m) + recs[i].len;
		}
		nlh.nlmsg_len = (uint32_t)off;
		memcpy(d->data, &nlh, sizeof(nlh));
		d->len = NLMSG_ALIGN(off);
	}
	nrecs = 0;
}

/* Queue the records built so far as datagrams that arrive while
 * cn_request_all waits: answers from a master's thread. */
static void queue_later(const struct cn_msg *req)
{
	for (unsigned i = 0; i < nrecs; i++)
		fake_add_cn(fake_dgram_later(0), CN_W1_IDX, CN_W1_VAL, req->seq, recs[i].ack,
			    recs[i].p, recs[i].len);
	nrecs = 0;
}

/* ---- what the callback saw ------------------------------------------ */

struct seen {
	int kind, status;
	uint32_t part, cmd, port;
	uint8_t data[64];
	size_t len;
};
static struct seen seen[32];
static unsigned nseen;

static void collect(const struct cn_answer *a, void *arg)
{
	struct seen *x = &seen[nseen++];

	assert_ptr_equal(arg, seen);
	assert_true(nseen <= 32);
	x->kind = a->kind;
	x->status = a->status;
	x->part = a->part;
	x->cmd = a->cmd;
	x->port = a->m.port;
	x->len = a->len;
	assert_true(a->len <= sizeof(x->data) || a->kind == CN_ANSWER_DATA);
	if (a->len)
		memcpy(x->data, a->data, a->len < sizeof(x->data) ? a->len : sizeof(x->data));
	assert_non_null(a->m.msg);
	assert_int_equal(a->m.msg->id.idx, CN_W1_IDX);
}

static void expect_seen(unsigned i, int kind, int status, uint32_t part, uint32_t cmd)
{
	assert_true(i < nseen);
	assert_int_equal(seen[i].kind, kind);
	assert_int_equal(seen[i].status, status);
	assert_int_equal(seen[i].part, part);
	assert_int_equal(seen[i].cmd, cmd);
}

static int request(struct cn_sock *s, struct cn_msg *req, fake_send_hook kernel, int timeout)
{
	nseen = 0;
	nrecs = 0;
	fake_on_send(kernel, NULL);
	return cn_request_all(s, req, 0, CN_REPLY_W1, timeout, collect, seen);
}

/* ---- a DS18B20 read: select, write READ SCRATCHPAD, read 9 bytes ------- */

/* A DS18B20's scratchpad: -10.125 degrees, TH, TL, 12 bits; the Dallas
 * CRC-8 of the first 8 bytes last. */
static const uint8_t scratch[9] = { 0x5e, 0xff, 0x4b, 0x46, 0x7f, 0xff, 0x0c, 0x10, 0x6a };
static int bundled;

static struct cn_msg *read_request(union req *u, unsigned int flags, uint64_t rom)
{
	static const uint8_t cmd = 0xbe;
	struct cn_msg *req = cn_w1_init(u, sizeof(*u), flags);

	assert_non_null(req);
	assert_int_equal(cn_w1_add_msg(req, sizeof(*u), CN_W1_SLAVE_CMD, rom), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(*u), CN_W1_CMD_WRITE, &cmd, 1), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(*u), CN_W1_CMD_READ, NULL, 9), 0);
	return req;
}

/* w1_process_cb: WRITE has no data; its status; READ's data; its status. */
static void kernel_read(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, scratch, 9);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, NULL, 0);
	queue_records(req, bundled);
}

static void check_read(struct cn_sock *s, unsigned int flags)
{
	union req u;
	struct cn_msg *req = read_request(&u, flags, ROM_THERM);
	struct cn_message m;

	/* unrelated traffic before the answers is kept for cn_recv */
	fake_add_cn(fake_dgram(0), 5, 6, 1, 2, "other", 5);
	assert_int_equal(request(s, req, kernel_read, 1000), 0);
	assert_int_equal(nseen, 3);
	expect_seen(0, CN_ANSWER_STATUS, 0, 0, 0);
	expect_seen(1, CN_ANSWER_DATA, 0, 0, 1);
	assert_int_equal(seen[1].len, 9);
	assert_memory_equal(seen[1].data, scratch, 9);
	expect_seen(2, CN_ANSWER_STATUS, 0, 0, 1);
	assert_int_not_equal(req->ack, req->seq + 1);
	assert_int_equal(cn_pending(s), 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->id.idx, 5);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

static void w1_read(void **state)
{
	bundled = 0;
	check_read(fake_sock(state), 0);
}

static void w1_read_bundled(void **state)
{
	bundled = 1;
	check_read(fake_sock(state), CN_W1_BUNDLE);
}

/* The request the kernel answers is the request libcn built. */
static void w1_request_bytes(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = read_request(&u, CN_W1_BUNDLE, ROM_THERM);
	const struct cn_msg *sent;
	struct cn_w1_msg m;
	struct cn_w1_cmd c;

	bundled = 1;
	assert_int_equal(request(s, req, kernel_read, 1000), 0);
	sent = fake_sent_cn(0);
	assert_int_equal(sent->id.idx, CN_W1_IDX);
	assert_int_equal(sent->id.val, CN_W1_VAL);
	assert_int_equal(sent->flags, CN_W1_BUNDLE);
	assert_int_equal(sent->len, sizeof(m) + sizeof(c) + 1 + sizeof(c) + 9);
	memcpy(&m, sent->data, sizeof(m));
	assert_int_equal(m.type, CN_W1_SLAVE_CMD);
	assert_int_equal(m.len, sizeof(c) + 1 + sizeof(c) + 9);
	assert_memory_equal(m.id.id, &(uint64_t){ ROM_THERM }, 8);
	memcpy(&c, sent->data + sizeof(m), sizeof(c));
	assert_int_equal(c.cmd, CN_W1_CMD_WRITE);
	assert_int_equal(c.len, 1);
	assert_int_equal(sent->data[sizeof(m) + sizeof(c)], 0xbe);
	memcpy(&c, sent->data + sizeof(m) + sizeof(c) + 1, sizeof(c));
	assert_int_equal(c.cmd, CN_W1_CMD_READ);
	assert_int_equal(c.len, 9);
}

/* ---- an absent slave ------------------------------------------------ */

/* w1_cn_callback: no such slave, -ENODEV, w1_netlink_send_error: the
 * request's header and its w1 message, len 0, no command. */
static void kernel_no_slave(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM ^ 0x100, ENODEV, -1, NULL, 0);
	queue_records(req, 0);
}

static void w1_absent_slave(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = read_request(&u, 0, ROM_THERM ^ 0x100);

	errno = 0;
	assert_int_equal(request(s, req, kernel_no_slave, 1000), -ENODEV);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(nseen, 1);
	expect_seen(0, CN_ANSWER_STATUS, -ENODEV, 0, 0);
	assert_int_equal(seen[0].len, 0);
	assert_int_equal(cn_pending(s), 0);
}

/* w1_process_cb: a slave that does not answer its selection (reset
 * without presence): one status with its first command, -ENODEV. */
static void kernel_select_fails(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, ENODEV, CN_W1_CMD_WRITE, NULL, 0);
	queue_records(req, 0);
}

static void w1_select_fails(void **state)
{
	union req u;

	assert_int_equal(
	    request(fake_sock(state), read_request(&u, 0, ROM_THERM), kernel_select_fails, 1000),
	    -ENODEV);
	assert_int_equal(nseen, 1);
	expect_seen(0, CN_ANSWER_STATUS, -ENODEV, 0, 0);
}

/* ---- the master: list, search ---------------------------------------- */

static void kernel_list_masters(const struct cn_msg *req, uint32_t dst, void *arg)
{
	uint32_t ids[2] = { 1, MASTER };

	(void)dst;
	(void)arg;
	add_w1(data_rec(req), CN_W1_LIST_MASTERS, 0, 0, -1, ids, sizeof(ids));
	queue_records(req, 0);
}

/* LIST_MASTERS ends with its ids: no status follows a success. */
static void w1_list_masters(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), 0);
	uint32_t ids[2];

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	assert_int_equal(request(s, req, kernel_list_masters, 1000), 0);
	assert_int_equal(nseen, 1);
	expect_seen(0, CN_ANSWER_DATA, 0, 0, 0);
	assert_int_equal(seen[0].len, 8);
	memcpy(ids, seen[0].data, 8);
	assert_int_equal(ids[1], MASTER);
	assert_int_equal(fake_calls.poll, 0); /* nothing waited for */
}

/* w1_process_command_root: ids fill a page, then another message: a full
 * one is followed by the rest, and a full one alone ends when nothing
 * more is queued (all of it is sent before the send returns). */
static unsigned list_pages; /* full pages to send */
static size_t list_tail;    /* ids in the last message */

static void kernel_list_pages(const struct cn_msg *req, uint32_t dst, void *arg)
{
	static uint32_t ids[1024];
	size_t per_page =
	    ((size_t)sysconf(_SC_PAGESIZE) - sizeof(struct cn_msg) - sizeof(struct cn_w1_msg)) / 4;

	(void)dst;
	(void)arg;
	for (unsigned p = 0; p < list_pages; p++) {
		struct rec r = { .ack = req->seq + 1 };

		add_w1(&r, CN_W1_LIST_MASTERS, 0, 0, -1, ids, per_page * 4);
		fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, req->seq, r.ack, r.p, r.len);
	}
	if (list_tail || !list_pages) {
		struct rec r = { .ack = req->seq + 1 };

		add_w1(&r, CN_W1_LIST_MASTERS, 0, 0, -1, ids, list_tail * 4);
		fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, req->seq, r.ack, r.p, r.len);
	}
}

static void w1_list_masters_pages(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), 0);

	if (sysconf(_SC_PAGESIZE) > 4096)
		skip(); /* the ids of a larger page do not fit recs */
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	list_pages = 1;
	list_tail = 3;
	assert_int_equal(request(s, req, kernel_list_pages, 1000), 0);
	assert_int_equal(nseen, 2);
	assert_int_equal(seen[1].len, 12);
	list_pages = 1;
	list_tail = 0;
	assert_int_equal(request(s, req, kernel_list_pages, 1000), 0);
	assert_int_equal(nseen, 1);
	assert_int_equal(cn_pending(s), 0);
}

/* A search: the ids found, over two records (w1_send_slave makes room by
 * sending, then puts the command header back), then its status. */
static void kernel_search(const struct cn_msg *req, uint32_t dst, void *arg)
{
	uint64_t a = ROM_THERM, b = ROM_ID;

	(void)dst;
	(void)arg;
	add_w1(data_rec(req), CN_W1_MASTER_CMD, MASTER, 0, CN_W1_CMD_SEARCH, &a, 8);
	add_w1(data_rec(req), CN_W1_MASTER_CMD, MASTER, 0, CN_W1_CMD_SEARCH, &b, 8);
	add_w1(status_rec(req), CN_W1_MASTER_CMD, MASTER, 0, CN_W1_CMD_SEARCH, NULL, 0);
	queue_records(req, bundled);
}

static void w1_search(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), 0);
	uint64_t id;

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_MASTER_CMD, MASTER), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_SEARCH, NULL, 0), 0);
	bundled = 0;
	assert_int_equal(request(s, req, kernel_search, 1000), 0);
	assert_int_equal(nseen, 3);
	expect_seen(0, CN_ANSWER_DATA, 0, 0, 0);
	expect_seen(1, CN_ANSWER_DATA, 0, 0, 0);
	expect_seen(2, CN_ANSWER_STATUS, 0, 0, 0);
	memcpy(&id, seen[1].data, 8);
	assert_true(id == ROM_ID);
	bundled = 1;
	assert_int_equal(request(s, req, kernel_search, 1000), 0);
	assert_int_equal(nseen, 3);
}

/* ---- several w1 messages in one request ------------------------------ */

/* An absent slave, a present one with two writes (bundled: their statuses
 * merged into one record) and a read, and the masters; the present
 * slave's answers come after the others (the master's thread runs it). */
static void kernel_three(const struct cn_msg *req, uint32_t dst, void *arg)
{
	uint32_t ids[1] = { MASTER };
	struct rec *r;

	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_ID ^ 0x100, ENODEV, -1, NULL, 0);
	add_w1(data_rec(req), CN_W1_LIST_MASTERS, 0, 0, -1, ids, 4);
	queue_records(req, 0);
	r = status_rec(req);
	add_w1(r, CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(r, CN_W1_SLAVE_CMD, ROM_THERM, EINVAL, 0x77, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, scratch, 9);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, NULL, 0);
	/* arrives while cn_request_all waits */
	{
		struct fake_dgram *d = fake_dgram_later(0);

		for (unsigned i = 0; i < nrecs; i++)
			fake_add_cn(d, CN_W1_IDX, CN_W1_VAL, req->seq, recs[i].ack, recs[i].p,
				    recs[i].len);
		nrecs = 0;
	}
}

static void w1_three_parts(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), CN_W1_BUNDLE);
	static const uint8_t cmd = 0x44;

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ROM_ID ^ 0x100), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_READ, NULL, 8), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ROM_THERM), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_WRITE, &cmd, 1), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), 0x77, NULL, 0), 0); /* unknown to w1 */
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_READ, NULL, 9), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	/* the first failure is returned once everything came */
	assert_int_equal(request(s, req, kernel_three, 1000), -ENODEV);
	assert_int_equal(nseen, 6);
	expect_seen(0, CN_ANSWER_STATUS, -ENODEV, 0, 0);
	expect_seen(1, CN_ANSWER_DATA, 0, 2, 0);
	expect_seen(2, CN_ANSWER_STATUS, 0, 1, 0);
	expect_seen(3, CN_ANSWER_STATUS, -EINVAL, 1, 1);
	expect_seen(4, CN_ANSWER_DATA, 0, 1, 2);
	expect_seen(5, CN_ANSWER_STATUS, 0, 1, 2);
	assert_true(fake_calls.poll >= 1);
	assert_int_equal(cn_pending(s), 0);
}

/* ---- what is not an answer, and what never comes -------------------- */

static void kernel_others(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	/* another request's status and data (seq), a w1 notification
	 * (ack 0), another id with the right seq and ack */
	fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, req->seq - 1, req->ack, "s", 1);
	fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, req->seq - 1, req->seq, "d", 1);
	fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, req->seq, 0, "n", 1);
	fake_add_cn(fake_dgram(0), 4, 1, req->seq, req->ack, "i", 1);
	/* the READ's data, then no status */
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, scratch, 9);
	queue_records(req, 0);
}

static void w1_others_kept_and_timeout(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_message m;

	errno = 0;
	assert_int_equal(request(s, read_request(&u, 0, ROM_THERM), kernel_others, 10), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(nseen, 2); /* what came was handed over */
	expect_seen(1, CN_ANSWER_DATA, 0, 0, 1);
	assert_int_equal(cn_pending(s), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->id.idx, 4);
}

/* On a socket that takes messages from any sender, a peer process can
 * send what looks like the kernel's answers (w1's id, the request's seq and
 * ack): only the kernel (port 0) answers w1, so those are kept for
 * cn_recv and the kernel's own answers, arriving later, are collected. */
static void kernel_after_peer(const struct cn_msg *req, uint32_t dst, void *arg)
{
	static const uint8_t forged[9];

	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, forged, 9);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, NULL, 0);
	for (unsigned i = 0; i < nrecs; i++)
		fake_add_cn(fake_dgram(4242), CN_W1_IDX, CN_W1_VAL, req->seq, recs[i].ack,
			    recs[i].p, recs[i].len);
	nrecs = 0;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, scratch, 9);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, NULL, 0);
	queue_later(req);
}

static void w1_peer_is_no_answer(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_message m;

	assert_int_equal(request(s, read_request(&u, 0, ROM_THERM), kernel_after_peer, 1000), 0);
	assert_int_equal(nseen, 3);
	for (unsigned i = 0; i < nseen; i++)
		assert_int_equal(seen[i].port, 0);
	assert_memory_equal(seen[1].data, scratch, 9);
	assert_int_equal(cn_pending(s), 3);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.port, 4242);
}

/* Unknown cn_msg.flags: the kernel answers the first w1 message -EINVAL
 * and nothing else (w1_cn_callback 554-555; no memory for the request,
 * -ENOMEM at 611, the same). */
static void kernel_bad_flags(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, EINVAL, -1, NULL, 0);
	queue_records(req, 0);
}

static void w1_kernel_gives_up(void **state)
{
	union req u;
	struct cn_msg *req = read_request(&u, 0, ROM_THERM);

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	req->flags = 0x8; /* a flag this kernel does not know */
	assert_int_equal(request(fake_sock(state), req, kernel_bad_flags, 1000), -EINVAL);
	assert_int_equal(nseen, 1);
}

/* ---- a message refused whole stops the kernel's loop ------------------ */

/* w1_cn_callback: a MASTER_CMD without commands is refused -EPROTO (655),
 * which ends the loop (only -ENODEV is reset, 709-710): the LIST_MASTERS
 * after it is never run. */
static void kernel_no_commands(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_MASTER_CMD, MASTER, EPROTO, -1, NULL, 0);
	queue_records(req, 0);
}

static void w1_no_commands_ends_request(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), 0);

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_MASTER_CMD, MASTER), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	assert_int_equal(request(s, req, kernel_no_commands, 1000), -EPROTO);
	assert_int_equal(nseen, 1);
	expect_seen(0, CN_ANSWER_STATUS, -EPROTO, 0, 0);
	assert_int_equal(fake_calls.poll, 0); /* nothing else was waited for */
}

/* [SLAVE_CMD therm: WRITE, READ; SLAVE_CMD therm without commands;
 * SLAVE_CMD id: READ]: the kernel queues the first to the master's thread,
 * refuses the second -EPROTO in the sender's system call, and stops. The
 * first's answers come after the refusal, with the same slave's header. */
static void kernel_refused_between(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, EPROTO, -1, NULL, 0);
	queue_records(req, 0);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, scratch, 9);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, NULL, 0);
	queue_later(req);
}

static void w1_refused_between(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = read_request(&u, 0, ROM_THERM);

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ROM_THERM), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ROM_ID), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_READ, NULL, 8), 0);
	assert_int_equal(request(s, req, kernel_refused_between, 1000), -EPROTO);
	assert_int_equal(nseen, 4);
	expect_seen(0, CN_ANSWER_STATUS, -EPROTO, 1, 0);
	expect_seen(1, CN_ANSWER_STATUS, 0, 0, 0);
	expect_seen(2, CN_ANSWER_DATA, 0, 0, 1);
	expect_seen(3, CN_ANSWER_STATUS, 0, 0, 1);
	assert_int_equal(cn_pending(s), 0); /* nothing left for cn_recv */
}

/* A LIST_MASTERS that is not first, without memory (647): -ENOMEM for it,
 * nothing for what follows, while the message before it still runs. */
static void kernel_list_nomem(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_LIST_MASTERS, 0, ENOMEM, -1, NULL, 0);
	queue_records(req, 0);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	add_w1(data_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, scratch, 9);
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_READ, NULL, 0);
	queue_later(req);
}

static void w1_list_nomem_waits_for_earlier(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = read_request(&u, 0, ROM_THERM);
	struct cn_message m;

	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ROM_ID), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_READ, NULL, 8), 0);
	assert_int_equal(request(s, req, kernel_list_nomem, 1000), -ENOMEM);
	assert_int_equal(nseen, 4);
	expect_seen(0, CN_ANSWER_STATUS, -ENOMEM, 1, 0);
	expect_seen(3, CN_ANSWER_STATUS, 0, 0, 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
}

/* An overrun while collecting ends it: answers may be lost. */
static void kernel_overrun(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	add_w1(status_rec(req), CN_W1_SLAVE_CMD, ROM_THERM, 0, CN_W1_CMD_WRITE, NULL, 0);
	queue_records(req, 0);
	fake_error(ENOBUFS);
}

static void w1_overrun(void **state)
{
	union req u;

	assert_int_equal(
	    request(fake_sock(state), read_request(&u, 0, ROM_THERM), kernel_overrun, 1000),
	    -ENOBUFS);
	assert_int_equal(nseen, 1);
}

static void kernel_echo(const struct cn_msg *req, uint32_t dst, void *arg);

/* ---- the callback may not use the socket ------------------------------ */

/* The answer fn gets lives in the socket's buffer, which the request is
 * still walking: every call that sends or walks on the socket refuses. */
struct nested {
	struct cn_sock *s;
	int calls, busy;
};

static void use_socket(const struct cn_answer *a, void *arg)
{
	struct nested *n = arg;
	union req u;
	struct cn_msg *m = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "x", 1);
	struct cn_message reply;
	struct cn_completion done;
	int r[10];

	r[0] = cn_send(n->s, m, 0);
	r[1] = cn_sendto(n->s, m, 77, 0);
	r[2] = cn_reply(n->s, &a->m, "r", 1);
	r[3] = cn_reply_as(n->s, &a->m, CN_REPLY_UVESAFB, 0, NULL, 0);
	r[4] = cn_request(n->s, m, 0, CN_MATCH_STRICT, 0, &reply);
	r[5] = cn_request_all(n->s, m, 0, CN_REPLY_GENEALOGY, 0, NULL, NULL);
	r[6] = cn_async_send(n->s, &m, NULL, 1, 0);
	r[7] = cn_async_complete(n->s, &done, 1, 0);
	r[8] = cn_proc_listen(n->s, 0, 0);
	r[9] = cn_proc_ignore(n->s);
	for (int i = 0; i < 10; i++) {
		n->calls++;
		n->busy += r[i] == -EBUSY;
	}
}

static void w1_callback_may_not_use_socket(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = read_request(&u, 0, ROM_THERM);
	struct nested n = { s, 0, 0 };

	assert_int_equal(cn_async_init(s, 4, CN_MATCH_STRICT, 100), 0);
	bundled = 0;
	fake_on_send(kernel_read, NULL);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_W1, 1000, use_socket, &n), 0);
	assert_int_equal(n.calls, 3 * 10); /* three answers */
	assert_int_equal(n.busy, n.calls);
	assert_int_equal(fake_sent_count(), 1); /* the request alone */
	assert_int_equal(cn_pending(s), 0);
	/* and the same under CN_REPLY_GENEALOGY */
	n.calls = n.busy = 0;
	fake_on_send(kernel_echo, NULL);
	req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "ping", 4);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_GENEALOGY, 1000, use_socket, &n), 0);
	assert_int_equal(n.calls, 10);
	assert_int_equal(n.busy, 10);
	assert_int_equal(fake_sent_count(), 2);
	/* once it returned, the socket is the caller's again */
	fake_on_send(NULL, NULL);
	assert_int_equal(cn_send(s, req, 0), 0);
}

/* ---- refusals --------------------------------------------------------- */

static void refusals(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = read_request(&u, 0, ROM_THERM);
	struct cn_w1_msg m;

	/* conventions whose kernel user asks instead of answering */
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_DM_ULOG, 0, NULL, NULL), -EINVAL);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_UVESAFB, 0, NULL, NULL), -EINVAL);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_HV, 0, NULL, NULL), -EINVAL);
	assert_int_equal(cn_request_all(s, req, 0, (enum cn_reply_conv)9, 0, NULL, NULL), -EINVAL);
	assert_int_equal(cn_request_all(NULL, req, 0, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	assert_int_equal(cn_request_all(s, NULL, 0, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	assert_int_equal(cn_request_all(s, req, 0x100, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	/* w1 could not tell data from status */
	req->seq = 41;
	req->ack = 42;
	errno = 0;
	assert_int_equal(
	    cn_request_all(s, req, CN_SEND_KEEP_SEQ | CN_SEND_KEEP_ACK, CN_REPLY_W1, 0, NULL, NULL),
	    -EINVAL);
	assert_int_equal(errno, EINVAL);
	/* not w1 requests: another id, nothing in it, a command past its
	 * message, a message past the payload */
	req->id.idx = 9;
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	req->id.idx = CN_W1_IDX;
	req->len = 0;
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	req = read_request(&u, 0, ROM_THERM);
	memcpy(&m, req->data, sizeof(m));
	m.len--;
	memcpy(req->data, &m, sizeof(m));
	req->len--;
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	req = read_request(&u, 0, ROM_THERM);
	req->len--;
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_W1, 0, NULL, NULL), -EINVAL);
	assert_int_equal(fake_sent_count(), 0);
	/* too long for the kernel's connector */
	req = read_request(&u, 0, ROM_THERM);
	req->len = (uint16_t)(CN_MSG_MAX_LEN + 1);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_W1, 0, NULL, NULL), -EMSGSIZE);
	assert_int_equal(fake_sent_count(), 0);
}

/* ---- the builders ----------------------------------------------------- */

static void builders(void **state)
{
	union req u;
	struct cn_msg *req;
	uint8_t small[CN_MSG_SIZE(sizeof(struct cn_w1_msg) + 4)] __attribute__((aligned(8)));
	struct cn_w1_msg m;

	(void)state;
	assert_null(cn_w1_init(NULL, 64, 0));
	assert_null(cn_w1_init(&u, sizeof(u), 2));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_w1_init(&u, 8, 0));
	assert_int_equal(errno, EMSGSIZE);
	req = cn_w1_init(&u, sizeof(u), 0);
	assert_int_equal(req->len, 0);
	/* nothing to add a command to; a type that is no request */
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_READ, NULL, 1), -EINVAL);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_ADD, 0), -EINVAL);
	assert_int_equal(cn_w1_add_msg(NULL, sizeof(u), CN_W1_SLAVE_CMD, 0), -EINVAL);
	/* a master's id is its mst.id, 32 bits: no more is cut off */
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_MASTER_CMD, (1ull << 32) | MASTER),
			 -EINVAL);
	assert_int_equal(req->len, 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_MASTER_CMD, MASTER), 0);
	memcpy(&m, req->data, sizeof(m));
	assert_int_equal(m.type, CN_W1_MASTER_CMD);
	assert_int_equal(m.id.mst.id, MASTER);
	assert_int_equal(m.id.mst.res, 0);
	assert_int_equal(m.len, 0);
	/* a LIST_MASTERS takes no command */
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_RESET, NULL, 0), -EINVAL);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), 256, NULL, 0), -EINVAL);
	assert_int_equal(req->len, 2 * sizeof(m));

	/* the room of the buffer */
	req = cn_w1_init(small, sizeof(small), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(small), CN_W1_SLAVE_CMD, ROM_ID), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(small), CN_W1_CMD_READ, NULL, 1), -EMSGSIZE);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(small), CN_W1_CMD_RESET, NULL, 0), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(small), CN_W1_SLAVE_CMD, ROM_ID), -EMSGSIZE);
	assert_int_equal(req->len, sizeof(m) + 4);

	/* and the kernel's limit: 16,364 bytes of payload */
	req = cn_w1_init(&u, sizeof(u), 0);
	assert_int_equal(cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ROM_ID), 0);
	assert_int_equal(cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_WRITE, NULL,
				       CN_MSG_MAX_LEN - sizeof(m) - 4 + 1),
			 -EMSGSIZE);
	assert_int_equal(
	    cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_WRITE, NULL, CN_MSG_MAX_LEN - sizeof(m) - 4),
	    0);
	assert_int_equal(req->len, CN_MSG_MAX_LEN);
}

/* ---- CN_REPLY_GENEALOGY: one reply --------------------------------- */

static void kernel_echo(const struct cn_msg *req, uint32_t dst, void *arg)
{
	(void)dst;
	(void)arg;
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq, req->ack + 2, "near", 4);
	fake_add_cn(fake_dgram(0), req->id.idx, req->id.val, req->seq, req->ack + 1, "echo", 4);
}

static void got_reply(const struct cn_answer *a, void *arg)
{
	int *n = arg;

	(*n)++;
	assert_int_equal(a->kind, CN_ANSWER_DATA);
	assert_int_equal(a->status, 0);
	assert_int_equal(a->part, 0);
	assert_int_equal(a->len, 4);
	assert_memory_equal(a->data, "echo", 4);
	assert_int_equal(a->m.msg->ack, fake_sent_cn(0)->ack + 1);
}

static void genealogy_one_reply(void **state)
{
	struct cn_sock *s = fake_sock(state);
	union req u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "ping", 4);
	int n = 0;

	fake_on_send(kernel_echo, NULL);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_GENEALOGY, 1000, got_reply, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cn_pending(s), 1); /* the near miss, kept */
	assert_int_equal(fake_sent_count(), 1);
	/* the proc connector puts its own seq: refused, nothing sent (it
	 * would have waited out its timeout) */
	req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, "ping", 4);
	errno = 0;
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_GENEALOGY, 1000, got_reply, &n),
			 -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_sent_count(), 1);
	req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, "ping", 4);
	/* nothing answers: the time runs out */
	fake_on_send(NULL, NULL);
	assert_int_equal(cn_request_all(s, req, 0, CN_REPLY_GENEALOGY, 0, got_reply, &n),
			 -ETIMEDOUT);
	assert_int_equal(n, 1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(w1_read),
		T(w1_read_bundled),
		T(w1_request_bytes),
		T(w1_absent_slave),
		T(w1_select_fails),
		T(w1_list_masters),
		T(w1_list_masters_pages),
		T(w1_search),
		T(w1_three_parts),
		T(w1_others_kept_and_timeout),
		T(w1_kernel_gives_up),
		T(w1_no_commands_ends_request),
		T(w1_refused_between),
		T(w1_list_nomem_waits_for_earlier),
		T(w1_overrun),
		cmocka_unit_test_setup_teardown(w1_peer_is_no_answer, setup_any_sender,
						fake_teardown),
		T(w1_callback_may_not_use_socket),
		T(refusals),
		cmocka_unit_test(builders),
		T(genealogy_one_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
