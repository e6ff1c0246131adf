/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_reply.c - the reply conventions (cn_reply_as, cn_dm_ulog_*): a
 * request built as each kernel user builds it, answered through the API;
 * the bytes handed to sendmsg are checked byte for byte, then fed to a copy
 * of that kernel user's matching code (Linux 6.12, the same in 6.1).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/dm-log-userspace.h>

#include "fake_sys.h"

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

/* Sent datagram i: one nlmsghdr (NLMSG_DONE, its length, our port), then
 * the cn_msg; returns the cn_msg after checking the header and total size. */
static const struct cn_msg *sent_msg(struct cn_sock *s, unsigned i, size_t payload)
{
	const struct fake_sent *f = fake_sent(i);
	struct nlmsghdr nlh;
	const struct cn_msg *m;

	assert_non_null(f);
	assert_int_equal(f->len, NLMSG_HDRLEN + sizeof(struct cn_msg) + payload);
	memcpy(&nlh, f->data, sizeof(nlh));
	assert_int_equal(nlh.nlmsg_len, f->len);
	assert_int_equal(nlh.nlmsg_type, NLMSG_DONE);
	assert_int_equal(nlh.nlmsg_pid, cn_port(s));
	assert_int_equal(f->dst_port, 0);
	m = (const struct cn_msg *)(f->data + NLMSG_HDRLEN);
	assert_int_equal(m->len, payload);
	assert_int_equal(m->flags, 0);
	return m;
}

static void assert_header(const struct cn_msg *m, uint32_t idx, uint32_t val, uint32_t seq,
			  uint32_t ack)
{
	assert_int_equal(m->id.idx, idx);
	assert_int_equal(m->id.val, val);
	assert_int_equal(m->seq, seq);
	assert_int_equal(m->ack, ack);
}

/* ---- dm-log-userspace ------------------------------------------------- */

/* A request as dm_consult_userspace and dm_ulog_sendto_server build it
 * (dm-log-userspace-transfer.c 57-73, 200-215): tfr zeroed, uuid, version,
 * luid, seq, type, data; cn_msg.seq = tfr->seq, ack 0, multicast to group
 * CN_IDX_DM from the kernel (port 0). Received through cn_recv. */
static void dm_request(struct cn_sock *s, struct cn_message *in, uint32_t seq, uint32_t type,
		       const void *data, uint32_t size)
{
	static union {
		struct dm_ulog_request tfr;
		uint8_t b[512];
	} u;
	struct fake_dgram *d = fake_dgram(0);

	memset(&u, 0, sizeof(u));
	strcpy(u.tfr.uuid, "LVM-mirror-uuid-0123456789");
	u.tfr.version = DM_ULOG_REQUEST_VERSION;
	u.tfr.luid = 0xffff888012345678ull;
	u.tfr.seq = seq;
	u.tfr.request_type = type;
	u.tfr.data_size = size;
	if (size)
		memcpy(u.tfr.data, data, size);
	fake_add_cn(d, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, seq, 0, &u, sizeof(u.tfr) + size);
	d->group = CN_IDX_DM;
	assert_int_equal(cn_recv(s, in, CN_RECV_DONTWAIT), 0);
}

/* The kernel's side: one waiting request (struct receiving_pkg) and
 * cn_ulog_callback + fill_pkg (transfer.c 83-149), taking sent message m. */
struct dm_pkg {
	uint32_t seq;
	int error;
	size_t data_size; /* in: room; out: bytes received */
	char data[64];
	int completed;
};

static void dm_kernel_take(const struct cn_msg *msg, struct dm_pkg *pkg)
{
	/* The kernel reads the payload in place; here it is copied out, as
	 * it is 4-byte aligned only (UBSan). */
	struct dm_ulog_request t, *tfr = &t;
	const uint8_t *tfr_data = msg->data + sizeof(t);
	uint32_t rtn_seq;

	memcpy(&t, msg->data, msg->len < sizeof(t) ? msg->len : sizeof(t));

	if (msg->len == 0)
		rtn_seq = msg->seq;
	else if (msg->len < sizeof(*tfr))
		return; /* "Incomplete message received" */
	else
		rtn_seq = tfr->seq;
	if (rtn_seq != pkg->seq)
		return;
	if (msg->len == 0) {
		pkg->error = -(int)msg->ack;
		if (pkg->error != -EAGAIN)
			pkg->data_size = 0;
	} else if (tfr->data_size > pkg->data_size) {
		pkg->data_size = 0;
		pkg->error = -ENOSPC;
	} else {
		pkg->error = tfr->error;
		memcpy(pkg->data, tfr_data, tfr->data_size);
		pkg->data_size = tfr->data_size;
	}
	pkg->completed = 1;
}

static void dm_data_reply(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	struct dm_ulog_request req, echo;
	const void *req_data;
	const struct cn_msg *m;
	uint64_t region = 5;
	int64_t in_sync = 1;
	struct dm_pkg pkg = { .seq = 4242, .data_size = sizeof(int64_t) };

	dm_request(s, &in, 4242, DM_ULOG_IN_SYNC, &region, sizeof(region));
	req_data = cn_dm_ulog_decode(in.msg, &req);
	assert_non_null(req_data);
	assert_ptr_equal(req_data, in.msg->data + sizeof(req));
	assert_memory_equal(req_data, &region, 8);
	assert_int_equal(req.seq, 4242);
	assert_int_equal(req.data_size, 8);
	assert_int_equal(req.version, DM_ULOG_REQUEST_VERSION);
	assert_string_equal(req.uuid, "LVM-mirror-uuid-0123456789");

	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, &in_sync, sizeof(in_sync)), 0);
	m = sent_msg(s, 0, sizeof(struct dm_ulog_request) + 8);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 4242, 0);
	/* the request echoed, but for error and data_size; then the data */
	memcpy(&echo, m->data, sizeof(echo));
	assert_memory_equal(&echo, &req, offsetof(struct dm_ulog_request, error));
	assert_int_equal(echo.error, 0);
	assert_int_equal(echo.seq, 4242);
	assert_int_equal(echo.request_type, DM_ULOG_IN_SYNC);
	assert_int_equal(echo.data_size, 8);
	assert_memory_equal(m->data + sizeof(echo), &in_sync, 8);

	dm_kernel_take(m, &pkg);
	assert_true(pkg.completed);
	assert_int_equal(pkg.error, 0);
	assert_int_equal(pkg.data_size, 8);
	assert_memory_equal(pkg.data, &in_sync, 8);

	/* A failure with data: tfr->error is the kernel's result. */
	pkg = (struct dm_pkg){ .seq = 4242, .data_size = 8 };
	assert_int_equal(cn_dm_ulog_reply(s, &in, -EINVAL, "why", 4), 0);
	m = sent_msg(s, 1, sizeof(struct dm_ulog_request) + 4);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 4242, EINVAL);
	memcpy(&echo, m->data, sizeof(echo));
	assert_int_equal(echo.error, -EINVAL);
	dm_kernel_take(m, &pkg);
	assert_true(pkg.completed);
	assert_int_equal(pkg.error, -EINVAL);
	assert_int_equal(pkg.data_size, 4);

	/* Without data it goes out bare, so that after -EAGAIN the kernel
	 * still has its 8 bytes of room for the resent request's answer. */
	pkg = (struct dm_pkg){ .seq = 4242, .data_size = 8 };
	assert_int_equal(cn_dm_ulog_reply(s, &in, -EAGAIN, NULL, 0), 0);
	m = sent_msg(s, 2, 0);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 4242, EAGAIN);
	dm_kernel_take(m, &pkg);
	assert_int_equal(pkg.error, -EAGAIN);
	assert_int_equal(pkg.data_size, 8);
	errno = 0;
	assert_int_equal(cn_dm_ulog_reply(s, &in, -EAGAIN, "x", 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_sent_count(), 3);

	/* -ESRCH with as many zero bytes as the answer: the kernel
	 * reconnects and retries with that much room (what dm-ulog sends). */
	pkg = (struct dm_pkg){ .seq = 4242, .data_size = 8 };
	in_sync = 0;
	assert_int_equal(cn_dm_ulog_reply(s, &in, -ESRCH, &in_sync, sizeof(in_sync)), 0);
	m = sent_msg(s, 3, sizeof(struct dm_ulog_request) + 8);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 4242, ESRCH);
	dm_kernel_take(m, &pkg);
	assert_int_equal(pkg.error, -ESRCH);
	assert_int_equal(pkg.data_size, 8);
	/* bare, it would leave no room: the retry's answer then fails */
	pkg = (struct dm_pkg){ .seq = 4242, .data_size = 8 };
	assert_int_equal(cn_dm_ulog_ack(s, &in, -ESRCH), 0);
	dm_kernel_take(sent_msg(s, 4, 0), &pkg);
	assert_int_equal(pkg.data_size, 0);
	pkg.completed = 0;
	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, &in_sync, sizeof(in_sync)), 0);
	dm_kernel_take(sent_msg(s, 5, sizeof(struct dm_ulog_request) + 8), &pkg);
	assert_int_equal(pkg.error, -ENOSPC);

	/* A reply for another (older) request is not taken by this one. */
	pkg = (struct dm_pkg){ .seq = 4243, .data_size = 8 };
	dm_kernel_take(m, &pkg);
	assert_false(pkg.completed);
}

static void dm_bare_ack(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	const struct cn_msg *m;
	struct dm_pkg pkg = { .seq = 77, .data_size = 8 };
	uint64_t region = 3;

	dm_request(s, &in, 77, DM_ULOG_MARK_REGION, &region, sizeof(region));

	/* success */
	assert_int_equal(cn_dm_ulog_ack(s, &in, 0), 0);
	m = sent_msg(s, 0, 0);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 77, 0);
	dm_kernel_take(m, &pkg);
	assert_true(pkg.completed);
	assert_int_equal(pkg.error, 0);
	assert_int_equal(pkg.data_size, 0);

	/* an errno: the kernel reads -ack */
	pkg = (struct dm_pkg){ .seq = 77, .data_size = 8 };
	assert_int_equal(cn_dm_ulog_ack(s, &in, -EIO), 0);
	m = sent_msg(s, 1, 0);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 77, EIO);
	dm_kernel_take(m, &pkg);
	assert_int_equal(pkg.error, -EIO);
	assert_int_equal(pkg.data_size, 0);

	/* EAGAIN: the kernel resends and keeps its room for the data */
	pkg = (struct dm_pkg){ .seq = 77, .data_size = 8 };
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_DM_ULOG, -EAGAIN, NULL, 0), 0);
	m = sent_msg(s, 2, 0);
	assert_header(m, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, 77, EAGAIN);
	dm_kernel_take(m, &pkg);
	assert_int_equal(pkg.error, -EAGAIN);
	assert_int_equal(pkg.data_size, 8);

	/* What the issue found: cn_reply's ack + 1 reads as EPERM. */
	pkg = (struct dm_pkg){ .seq = 77, .data_size = 8 };
	assert_int_equal(cn_reply(s, &in, NULL, 0), 0);
	dm_kernel_take(sent_msg(s, 3, 0), &pkg);
	assert_int_equal(pkg.error, -EPERM);
}

static void dm_refusals(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(sizeof(struct dm_ulog_request) + 8)];
	} u;
	struct dm_ulog_request tfr, out;
	uint8_t raw[sizeof(tfr) + 8] = { 0 };

	dm_request(s, &in, 9, DM_ULOG_FLUSH, NULL, 0);
	errno = 0;
	assert_int_equal(cn_dm_ulog_ack(s, &in, 5), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_dm_ulog_ack(s, &in, -5000), -EINVAL);
	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, NULL, 4), -EINVAL);
	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, "x", CONNECTOR_MAX_MSG_SIZE), -EMSGSIZE);
	assert_int_equal(cn_dm_ulog_reply(NULL, &in, 0, NULL, 0), -EINVAL);
	assert_null(cn_dm_ulog_decode(NULL, &out));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_dm_ulog_decode(in.msg, NULL));
	assert_int_equal(errno, EINVAL);

	/* data_size that disagrees with len, a message too short, another id */
	memset(&tfr, 0, sizeof(tfr));
	tfr.data_size = 9;
	memcpy(raw, &tfr, sizeof(tfr));
	cn_msg_init(&u, sizeof(u), CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, raw, sizeof(raw));
	assert_null(cn_dm_ulog_decode(&u.m, &out));
	assert_int_equal(errno, EBADMSG);
	in.msg = &u.m;
	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, NULL, 0), -EBADMSG);
	cn_msg_init(&u, sizeof(u), CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, &tfr, sizeof(tfr) - 1);
	assert_null(cn_dm_ulog_decode(&u.m, &out));
	assert_int_equal(errno, EBADMSG);
	tfr.data_size = 0;
	cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, &tfr, sizeof(tfr));
	assert_null(cn_dm_ulog_decode(&u.m, &out));
	assert_int_equal(errno, ENOMSG);
	assert_int_equal(cn_dm_ulog_reply(s, &in, 0, NULL, 0), -ENOMSG);
	assert_int_equal(fake_sent_count(), 0);
}

/* ---- uvesafb ----------------------------------------------------------- */

/* uvesafb_exec (uvesafb.c 144-190): seq = a slot below UVESAFB_TASKS_MAX
 * (16), ack random; uvesafb_cn_callback (72-86) takes a reply whose seq
 * names a slot holding a task with that same ack. */
static void uvesafb_same_ack(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	const struct cn_msg *m;
	const char task[] = "regs+buf";

	fake_add_cn(fake_dgram(0), CN_IDX_V86D, CN_VAL_V86D_UVESAFB, 3, 0x9e3779b9u, task,
		    sizeof(task));
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_UVESAFB, 0, task, sizeof(task)), 0);
	m = sent_msg(s, 0, sizeof(task));
	assert_header(m, CN_IDX_V86D, CN_VAL_V86D_UVESAFB, 3, 0x9e3779b9u);
	assert_memory_equal(m->data, task, sizeof(task));
	/* the kernel's test */
	assert_true(m->seq < 16 && m->ack == in.msg->ack);
	/* no status field in this convention */
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_UVESAFB, -EIO, NULL, 0), -EINVAL);
}

/* ---- w1 ---------------------------------------------------------------- */

/* w1 waits for no answer from userspace: w1_cn_callback (w1_netlink.c
 * 537-714) takes every message it is sent as a new request, so an "answer"
 * would be run as one. Its own answers are collected by cn_request_all
 * (test_request_all.c); as an answer the convention is refused, nothing sent. */
static void w1_is_not_answered(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	struct cn_msg out;

	fake_add_cn(fake_dgram(0), CN_W1_IDX, CN_W1_VAL, 100, 5, "cmd", 3);
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	errno = 0;
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_W1, 0, "data", 4), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_reply_header(&out, in.msg, CN_REPLY_W1, 0, 0), -EINVAL);
	assert_int_equal(fake_sent_count(), 0);
}

/* ---- hv_utils ---------------------------------------------------------- */

/* hvutil_transport_send (hv_utils_transport.c 219-235) sends seq = ack = 0
 * and hvt_cn_callback (184-216) finds the transport by id only. */
static void hv_zero(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	const struct cn_msg *m;

	fake_add_cn(fake_dgram(0), CN_KVP_IDX, CN_KVP_VAL, 0, 0, "kvp", 3);
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_HV, 0, "ans", 3), 0);
	m = sent_msg(s, 0, 3);
	assert_header(m, CN_KVP_IDX, CN_KVP_VAL, 0, 0);
	/* a request that had a seq and ack still gets zeros */
	fake_add_cn(fake_dgram(0), CN_KVP_IDX, CN_KVP_VAL, 8, 9, "kvp", 3);
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_HV, 0, NULL, 0), 0);
	assert_header(sent_msg(s, 1, 0), CN_KVP_IDX, CN_KVP_VAL, 0, 0);
}

/* ---- libcn's own, and the pure builder ------------------------------- */

static void genealogy_matches_cn_request(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message in;
	const struct cn_msg *m;

	fake_add_cn(fake_dgram(0), 9, 10, 55, 0xffffffffu, "q", 1);
	assert_int_equal(cn_recv(s, &in, CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_reply_as(s, &in, CN_REPLY_GENEALOGY, 0, "a", 1), 0);
	m = sent_msg(s, 0, 1);
	assert_header(m, 9, 10, 55, 0);
	assert_int_equal(cn_is_reply(in.msg, m, CN_MATCH_STRICT), 1);
	assert_int_equal(cn_is_reply(in.msg, m, CN_MATCH_ACK_ONLY), 1);
}

static void header_builder(void **state)
{
	struct cn_msg req = { .id = { 7, 1 }, .seq = 10, .ack = 20, .len = 99, .flags = 3 };
	struct cn_msg out;

	(void)state;
	assert_int_equal(cn_reply_header(&out, &req, CN_REPLY_DM_ULOG, -ENOSPC, 12), 0);
	assert_header(&out, 7, 1, 10, ENOSPC);
	assert_int_equal(out.len, 12);
	assert_int_equal(out.flags, 0);
	assert_int_equal(cn_reply_header(&out, &req, CN_REPLY_UVESAFB, 0, 0), 0);
	assert_header(&out, 7, 1, 10, 20);
	assert_int_equal(cn_reply_header(&out, &req, CN_REPLY_HV, 0, 0), 0);
	assert_header(&out, 7, 1, 0, 0);
	assert_int_equal(cn_reply_header(&out, &req, CN_REPLY_GENEALOGY, 0, 0), 0);
	assert_header(&out, 7, 1, 10, 21);
	errno = 0;
	assert_int_equal(cn_reply_header(&out, &req, (enum cn_reply_conv)99, 0, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_reply_header(&out, &req, CN_REPLY_GENEALOGY, -EIO, 0), -EINVAL);
	assert_int_equal(cn_reply_header(&out, &req, CN_REPLY_HV, 0, CONNECTOR_MAX_MSG_SIZE + 1),
			 -EMSGSIZE);
	assert_int_equal(cn_reply_header(NULL, &req, CN_REPLY_HV, 0, 0), -EINVAL);
	assert_int_equal(cn_reply_header(&out, NULL, CN_REPLY_HV, 0, 0), -EINVAL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(dm_data_reply),
		T(dm_bare_ack),
		T(dm_refusals),
		T(uvesafb_same_ack),
		T(w1_is_not_answered),
		T(hv_zero),
		T(genealogy_matches_cn_request),
		cmocka_unit_test(header_builder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
