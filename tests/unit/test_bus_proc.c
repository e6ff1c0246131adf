/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_bus_proc.c - cnbus_proc.ko's records in libcn (bus_proc.c):
 * decoding (fields, filename and argv in place, cut argv, refusals),
 * receiving with per-CPU loss and overruns, the batch form, the module's
 * totals. The fake kernel is fake_sys.c's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <libcn/cnbus_proc.h>
#include <libcn/kmod.h>

#include "fake_sys.h"

static uint32_t kseq[2]; /* the fake module's per-CPU record numbers */

/* Queue a record from `cpu` after skipping `skip` numbers (lost), with
 * filename and argv for an exec, into a new datagram. */
static struct cn_msg *record(uint32_t cpu, uint16_t type, uint32_t skip, int32_t pid,
			     const char *filename, const char *argv, size_t argv_len,
			     uint32_t argv_total)
{
	uint8_t buf[512];
	struct cnbus_proc_record r;
	size_t flen = filename ? strlen(filename) : 0;

	memset(&r, 0, sizeof(r));
	r.hdr_len = sizeof(r);
	r.type = type;
	r.cpu = cpu;
	r.timestamp_ns = 5000 + kseq[cpu];
	r.pid = pid;
	r.tgid = pid;
	r.parent_pid = r.parent_tgid = 1;
	r.ruid = 1000;
	r.euid = 0;
	r.rgid = 100;
	r.egid = 101;
	if (type == CNBUS_PROC_EXIT) {
		r.exit_code = 0x300;
		r.exit_signal = 17;
	}
	memcpy(r.comm, "storm", 6);
	r.filename_len = (uint32_t)flen;
	r.argv_len = (uint32_t)argv_len;
	r.argv_total = argv_total;
	if (argv_total > argv_len)
		r.flags = CNBUS_PROC_ARGV_CUT;
	memcpy(buf, &r, sizeof(r));
	if (flen) /* memcpy's pointers must be valid, even for 0 bytes */
		memcpy(buf + sizeof(r), filename, flen);
	if (argv_len)
		memcpy(buf + sizeof(r) + flen, argv, argv_len);
	kseq[cpu] += skip;
	return fake_add_cn(fake_dgram(0), CNBUS_PROC_IDX, CNBUS_PROC_VAL, kseq[cpu]++, 0, buf,
			   sizeof(r) + flen + argv_len);
}

static int setup(void **state)
{
	*state = fake_open(0, 0);
	kseq[0] = 7;
	kseq[1] = 900;
	return 0;
}

static void decode_fields(void **state)
{
	static const char argv[] = "ls\0-l\0\xff\xfe\0";
	struct cn_bus_proc_event ev;
	const struct cn_msg *m;

	(void)state;
	m = record(1, CNBUS_PROC_EXEC, 0, 42, "/bin/ls", argv, sizeof(argv) - 1, sizeof(argv) - 1);
	assert_int_equal(cn_bus_proc_decode(m, &ev), 0);
	assert_int_equal(ev.what, CN_PROC_EXEC);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.seq, 900);
	assert_int_equal(ev.pid, 42);
	assert_int_equal(ev.ruid, 1000);
	assert_int_equal(ev.egid, 101);
	assert_int_equal(ev.flags, 0);
	assert_int_equal(ev.filename_len, 7);
	assert_memory_equal(ev.filename, "/bin/ls", 7);
	assert_int_equal(ev.argv_len, sizeof(argv) - 1);
	assert_memory_equal(ev.argv, argv, sizeof(argv) - 1);
	assert_ptr_equal(ev.argv, ev.filename + 7); /* in place, not copied */
	assert_int_equal(ev.lost_before, 0);
	assert_string_equal(ev.comm, "storm");

	/* cut: argv_total says how long it was */
	m = record(0, CNBUS_PROC_EXEC, 0, 43, "/x", "aaaa", 4, 100000);
	assert_int_equal(cn_bus_proc_decode(m, &ev), 0);
	assert_int_equal(ev.flags, CN_BUS_PROC_ARGV_CUT);
	assert_int_equal(ev.argv_len, 4);
	assert_int_equal(ev.argv_total, 100000);

	m = record(0, CNBUS_PROC_EXIT, 0, 44, NULL, NULL, 0, 0);
	assert_int_equal(cn_bus_proc_decode(m, &ev), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.exit_code, 0x300);
	assert_int_equal(ev.exit_signal, 17);
	assert_null(ev.filename);
	assert_null(ev.argv);
}

/* A record of a module older than comm: hdr_len ends before it, the
 * filename follows there, the decoded comm is empty. */
static void decode_before_comm(void **state)
{
	uint8_t buf[CNBUS_PROC_RECORD_MIN + 5];
	struct cn_bus_proc_event ev;
	struct cnbus_proc_record r;
	const struct cn_msg *m;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.hdr_len = CNBUS_PROC_RECORD_MIN;
	r.type = CNBUS_PROC_EXEC;
	r.pid = r.tgid = 45;
	r.filename_len = 5;
	memcpy(buf, &r, CNBUS_PROC_RECORD_MIN);
	memcpy(buf + CNBUS_PROC_RECORD_MIN, "/bin/", 5);
	m = fake_add_cn(fake_dgram(0), CNBUS_PROC_IDX, CNBUS_PROC_VAL, 1, 0, buf, sizeof(buf));
	assert_int_equal(cn_bus_proc_decode(m, &ev), 0);
	assert_int_equal(ev.pid, 45);
	assert_int_equal(ev.filename_len, 5);
	assert_memory_equal(ev.filename, "/bin/", 5);
	assert_string_equal(ev.comm, "");
}

static void decode_refusals(void **state)
{
	struct cn_bus_proc_event ev;
	struct cnbus_proc_record r;
	struct cn_msg *m;

	(void)state;
	m = record(0, CNBUS_PROC_FORK, 0, 1, NULL, NULL, 0, 0);
	errno = 0;
	assert_int_equal(cn_bus_proc_decode(NULL, &ev), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_bus_proc_decode(m, NULL), -EINVAL);
	/* lengths beyond the message */
	memcpy(&r, m->data, sizeof(r));
	r.argv_len = 1;
	memcpy(m->data, &r, sizeof(r));
	assert_int_equal(cn_bus_proc_decode(m, &ev), -EBADMSG);
	r.argv_len = 0;
	r.hdr_len = CNBUS_PROC_RECORD_MIN - 4;
	memcpy(m->data, &r, sizeof(r));
	assert_int_equal(cn_bus_proc_decode(m, &ev), -EBADMSG);
	/* a type of a newer module */
	r.hdr_len = sizeof(r);
	r.type = 99;
	memcpy(m->data, &r, sizeof(r));
	assert_int_equal(cn_bus_proc_decode(m, &ev), -ENOMSG);
	/* another id; too short */
	m->id.val = CNBUS_PROC_VAL_STATS;
	assert_int_equal(cn_bus_proc_decode(m, &ev), -EPROTO);
	m->id.val = CNBUS_PROC_VAL;
	m->len = sizeof(r) - 1;
	assert_int_equal(cn_bus_proc_decode(m, &ev), -EBADMSG);
}

static void recv_loss_and_overrun(void **state)
{
	struct cn_sock *s = *state;
	struct cn_bus_proc_event ev[8];
	struct cn_proc_stats st;

	if (!s)
		skip();
	assert_int_equal(cn_bus_proc_listen(s), 0);
	assert_int_equal(fake_calls.last_join, CNBUS_PROC_IDX);
	record(0, CNBUS_PROC_FORK, 0, 10, NULL, NULL, 0, 0);
	fake_add_cn(fake_dgram(0), 5, 6, 1, 0, "other", 5); /* skipped */
	record(0, CNBUS_PROC_EXEC, 3, 10, "/a", "a", 2, 2); /* 3 lost before it */
	record(1, CNBUS_PROC_EXIT, 0, 10, NULL, NULL, 0, 0);
	fake_error(ENOBUFS);
	record(1, CNBUS_PROC_EXIT, 2, 11, NULL, NULL, 0, 0); /* 2 lost */

	assert_int_equal(cn_bus_proc_recv(s, ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev[0].what, CN_PROC_FORK);
	assert_int_equal(ev[0].lost_before, 0);
	assert_int_equal(cn_bus_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 2);
	assert_int_equal(ev[0].what, CN_PROC_EXEC);
	assert_int_equal(ev[0].lost_before, 3);
	assert_memory_equal(ev[0].argv, "a", 2);
	assert_int_equal(ev[1].what, CN_PROC_EXIT);
	assert_int_equal(ev[1].lost_before, 0);
	assert_int_equal(cn_bus_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(cn_bus_proc_recv_batch(s, ev, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(ev[0].pid, 11);
	assert_int_equal(ev[0].lost_before, 2);
	assert_int_equal(cn_bus_proc_recv(s, ev, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(cn_proc_stats(s, &st), 0);
	assert_int_equal(st.events, 4);
	assert_int_equal(st.lost, 5);
	assert_int_equal(st.overruns, 1);

	assert_int_equal(cn_bus_proc_recv_batch(s, ev, 0, 0), -EINVAL);
	assert_int_equal(cn_bus_proc_recv_batch(NULL, ev, 1, 0), -EINVAL);
	assert_int_equal(cn_bus_proc_recv(s, ev, 0x80), -EINVAL);
}

/* The fake module answers a stats request (same seq, ack + 1). */
static void module_answers(const struct cn_msg *req, uint32_t dst, void *arg)
{
	struct cnbus_proc_stats st = {
		.records = 10, .inserted = 7, .refused = 3, .argv_max = 4096
	};
	struct cn_msg *m;

	(void)dst;
	(void)arg;
	if (req->id.idx != CNBUS_PROC_IDX || req->id.val != CNBUS_PROC_VAL_STATS)
		return;
	m = fake_add_cn(fake_dgram(0), CNBUS_PROC_IDX, CNBUS_PROC_VAL_STATS, req->seq, req->ack + 1,
			&st, sizeof(st));
	(void)m;
}

static void totals(void **state)
{
	struct cn_sock *s = *state;
	struct cn_bus_proc_totals t;

	if (!s)
		skip();
	fake_on_send(module_answers, NULL);
	assert_int_equal(cn_bus_proc_totals(s, &t, 1000), 0);
	assert_int_equal(t.records, 10);
	assert_int_equal(t.inserted, 7);
	assert_int_equal(t.refused, 3);
	assert_int_equal(t.argv_max, 4096);
	assert_int_equal(cn_bus_proc_totals(s, NULL, 1000), -EINVAL);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(decode_fields),   T(decode_before_comm),
		T(decode_refusals), T(recv_loss_and_overrun),
		T(totals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
