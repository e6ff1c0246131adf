/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_dm_ulog.c - examples/dm-ulog against the fake socket: requests the
 * kernel sends (and some it never sends: a newer version, an unknown type,
 * a short message, a region beyond the log) go in as datagrams from group
 * CN_IDX_DM; the server's main() runs until the queue is empty; every
 * request must have exactly one answer, in the form the kernel matches,
 * with the core log's results and the errors the README promises. The VM
 * test (tests/vm/run-dm-test.sh) runs it against the real kernel.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/dm-log-userspace.h>

#include "fake_sys.h"

int dm_ulog_main(int argc, char **argv); /* examples/dm-ulog/main.c, renamed */

#define UUID "LVM-test-mirror-uuid"
#define LUID 0xffff888000001000ull

static uint32_t next_seq = 100;

/* Queue a request as dm_consult_userspace builds it: returns its seq.
 * `version` 0 means the current one; `cut` shortens the message. */
static uint32_t request(uint32_t type, const char *uuid, const void *data, uint32_t size,
			uint32_t version, size_t cut)
{
	static union {
		struct dm_ulog_request tfr;
		uint8_t b[512];
	} u;
	struct fake_dgram *d = fake_dgram(0);

	memset(&u, 0, sizeof(u));
	strcpy(u.tfr.uuid, uuid);
	u.tfr.version = version ? version : DM_ULOG_REQUEST_VERSION;
	u.tfr.luid = LUID;
	u.tfr.seq = next_seq;
	u.tfr.request_type = type;
	u.tfr.data_size = size;
	if (size)
		memcpy(u.tfr.data, data, size);
	fake_add_cn(d, CN_IDX_DM, CN_VAL_DM_USERSPACE_LOG, next_seq, 0, &u,
		    sizeof(u.tfr) + size - cut);
	d->group = CN_IDX_DM;
	return next_seq++;
}

static uint32_t req_region(uint32_t type, uint64_t region)
{
	return request(type, UUID, &region, sizeof(region), 0, 0);
}

/* Run the server over what is queued (it stops when the fake socket has
 * nothing more: "receive: Resource temporarily unavailable"). */
static void run_server(void)
{
	char prog[] = "dm-ulog", *argv[] = { prog, NULL };

	optind = 0;
	assert_int_equal(dm_ulog_main(1, argv), 1);
	assert_int_equal(fake_queued(), 0);
}

static unsigned sent_i;

/* The next answer: to the kernel, id and seq of request `seq`; returns the
 * error the kernel would take and copies the data it would take (up to
 * `room` bytes) to `data`. */
static int answer(uint32_t seq, void *data, size_t room, size_t *len)
{
	const struct fake_sent *f = fake_sent(sent_i++);
	struct dm_ulog_request tfr;
	struct cn_msg m;

	assert_non_null(f);
	assert_int_equal(f->dst_port, 0);
	memcpy(&m, f->data + NLMSG_HDRLEN, sizeof(m));
	assert_int_equal(m.id.idx, CN_IDX_DM);
	assert_int_equal(m.id.val, CN_VAL_DM_USERSPACE_LOG);
	assert_int_equal(f->len, NLMSG_HDRLEN + sizeof(m) + m.len);
	*len = 0;
	if (m.len == 0) { /* bare: seq in the header, -ack the error */
		assert_int_equal(m.seq, seq);
		return -(int)m.ack;
	}
	assert_true(m.len >= sizeof(tfr));
	memcpy(&tfr, f->data + NLMSG_HDRLEN + sizeof(m), sizeof(tfr));
	assert_int_equal(tfr.seq, seq);
	assert_int_equal(m.len, sizeof(tfr) + tfr.data_size);
	assert_true(tfr.data_size <= room);
	memcpy(data, f->data + NLMSG_HDRLEN + sizeof(m) + sizeof(tfr), tfr.data_size);
	*len = tfr.data_size;
	return tfr.error;
}

static void answer_ok_empty(uint32_t seq)
{
	size_t len;
	char d[8];

	assert_int_equal(answer(seq, d, sizeof(d), &len), 0);
	assert_int_equal(len, 0);
}

static int64_t answer_i64(uint32_t seq, int64_t second[1])
{
	int64_t v[2] = { -1, -1 };
	size_t len;

	assert_int_equal(answer(seq, v, sizeof(v), &len), 0);
	assert_int_equal(len, second ? 16 : 8);
	if (second)
		*second = v[1];
	return v[0];
}

static int answer_error(uint32_t seq)
{
	size_t len;
	char d[16];

	return answer(seq, d, sizeof(d), &len);
}

static void serves_a_log(void **state)
{
	const char ctr[] = "16384 core 1 1024"; /* the first CTR: no NUL */
	uint64_t set[2] = { 0, 1 };
	uint64_t marks[2] = { 3, 4 };
	uint32_t s[20];
	int64_t second;
	char text[64];
	size_t len;

	(void)state;
	s[0] = request(DM_ULOG_CTR, UUID, ctr, sizeof(ctr) - 1, 0, 0);
	s[1] = request(DM_ULOG_CTR, UUID, ctr, sizeof(ctr) - 1, 0, 0); /* resent */
	s[2] = request(DM_ULOG_GET_REGION_SIZE, UUID, NULL, 0, 0, 0);
	s[3] = request(DM_ULOG_GET_RESYNC_WORK, UUID, NULL, 0, 0, 0);
	s[4] = request(DM_ULOG_GET_RESYNC_WORK, UUID, NULL, 0, 0, 0); /* resent */
	s[5] = request(DM_ULOG_SET_REGION_SYNC, UUID, set, sizeof(set), 0, 0);
	s[6] = request(DM_ULOG_SET_REGION_SYNC, UUID, set, sizeof(set), 0, 0); /* resent */
	s[7] = request(DM_ULOG_GET_RESYNC_WORK, UUID, NULL, 0, 0, 0);
	s[8] = request(DM_ULOG_GET_SYNC_COUNT, UUID, NULL, 0, 0, 0);
	s[9] = req_region(DM_ULOG_IN_SYNC, 0);
	s[10] = req_region(DM_ULOG_IN_SYNC, 1);
	s[11] = request(DM_ULOG_MARK_REGION, UUID, marks, sizeof(marks), 0, 0);
	s[12] = req_region(DM_ULOG_IS_CLEAN, 4);
	s[13] = request(DM_ULOG_CLEAR_REGION, UUID, marks, sizeof(marks), 0, 0);
	s[14] = req_region(DM_ULOG_IS_CLEAN, 4);
	s[15] = req_region(DM_ULOG_IS_REMOTE_RECOVERING, 5);
	s[16] = request(DM_ULOG_STATUS_INFO, UUID, NULL, 0, 0, 0);
	s[17] = request(DM_ULOG_STATUS_TABLE, UUID, NULL, 0, 0, 0);
	s[18] = request(DM_ULOG_DTR, UUID, NULL, 0, 0, 0);
	s[19] = request(DM_ULOG_DTR, UUID, NULL, 0, 0, 0); /* resent */
	run_server();

	answer_ok_empty(s[0]);
	answer_ok_empty(s[1]);
	assert_int_equal(answer_i64(s[2], NULL), 1024);
	/* 16 regions, none in sync: region 0 handed out, and again */
	assert_int_equal(answer_i64(s[3], &second), 1);
	assert_int_equal(second, 0);
	assert_int_equal(answer_i64(s[4], &second), 1);
	assert_int_equal(second, 0);
	answer_ok_empty(s[5]);
	answer_ok_empty(s[6]);
	assert_int_equal(answer_i64(s[7], &second), 1);
	assert_int_equal(second, 1);
	assert_int_equal(answer_i64(s[8], NULL), 1); /* counted once */
	assert_int_equal(answer_i64(s[9], NULL), 1);
	assert_int_equal(answer_i64(s[10], NULL), 0);
	answer_ok_empty(s[11]);
	assert_int_equal(answer_i64(s[12], NULL), 0);
	answer_ok_empty(s[13]);
	assert_int_equal(answer_i64(s[14], NULL), 1);
	assert_int_equal(answer_i64(s[15], &second), 0);
	assert_int_equal(second, 1); /* the first region not in sync */
	assert_int_equal(answer(s[16], text, sizeof(text), &len), 0);
	assert_string_equal(text, "1 dm-ulog");
	assert_int_equal(len, strlen(text) + 1);
	assert_int_equal(answer(s[17], text, sizeof(text), &len), 0);
	assert_string_equal(text, "core 1 1024");
	answer_ok_empty(s[18]);
	answer_ok_empty(s[19]);
	assert_int_equal(fake_sent_count(), 20);
}

static void refuses_with_an_error(void **state)
{
	const char bad_type[] = "16384 disk 1 1024";
	const char bad_count[] = "16384 core 2 1024";
	const char not_pow2[] = "16384 core 1 1000";
	const char ok[] = "16384 core 2 1024 nosync";
	uint64_t odd[1] = { 99 };
	uint32_t s[12];
	int64_t v[2];
	size_t len;

	(void)state;
	s[0] = request(DM_ULOG_CTR, UUID, bad_type, sizeof(bad_type), 0, 0);
	s[1] = request(DM_ULOG_CTR, UUID, bad_count, sizeof(bad_count), 0, 0);
	s[2] = request(DM_ULOG_CTR, UUID, not_pow2, sizeof(not_pow2), 0, 0);
	s[3] = request(DM_ULOG_CTR, UUID, ok, sizeof(ok), 0, 0); /* with its NUL */
	s[4] = request(DM_ULOG_GET_SYNC_COUNT, UUID, NULL, 0, DM_ULOG_REQUEST_VERSION + 1, 0);
	s[5] = request(99, UUID, NULL, 0, 0, 0);
	s[6] = request(DM_ULOG_FLUSH, UUID, NULL, 0, 0, 1);	 /* one byte short */
	s[7] = req_region(DM_ULOG_IN_SYNC, 16);			 /* beyond the log */
	s[8] = request(DM_ULOG_MARK_REGION, UUID, odd, 4, 0, 0); /* not __u64s */
	s[9] = request(DM_ULOG_GET_RESYNC_WORK, "another-uuid", NULL, 0, 0, 0);
	s[10] = request(DM_ULOG_GET_SYNC_COUNT, UUID, NULL, 0, 0, 0);
	s[11] = request(DM_ULOG_DTR, UUID, NULL, 0, 0, 0);
	run_server();

	assert_int_equal(answer_error(s[0]), -EINVAL);
	assert_int_equal(answer_error(s[1]), -EINVAL);
	assert_int_equal(answer_error(s[2]), -EINVAL);
	assert_int_equal(answer_error(s[3]), 0);
	assert_int_equal(answer_error(s[4]), -EPROTONOSUPPORT);
	assert_int_equal(answer_error(s[5]), -EINVAL);
	assert_int_equal(answer_error(s[6]), -EBADMSG); /* bare: matched on cn_msg.seq */
	assert_int_equal(answer_error(s[7]), -EINVAL);
	assert_int_equal(answer_error(s[8]), -EINVAL);
	/* an unknown log: -ESRCH with room for GET_RESYNC_WORK's 16 bytes */
	memset(v, 0xff, sizeof(v));
	assert_int_equal(answer(s[9], v, sizeof(v), &len), -ESRCH);
	assert_int_equal(len, 16);
	assert_true(v[0] == 0 && v[1] == 0);
	assert_int_equal(answer_i64(s[10], NULL), 16); /* nosync: all in sync */
	answer_ok_empty(s[11]);
	assert_int_equal(fake_sent_count(), 12);
}

static int setup(void **state)
{
	(void)state;
	fake_reset();
	sent_i = 0;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(serves_a_log, setup),
		cmocka_unit_test_setup(refuses_with_an_error, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
