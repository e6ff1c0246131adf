/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_decode.c - proc connector events decoded from raw bytes laid out
 * as the kernel sends them (offsets written by hand, not through the
 * kernel's structs), at the 8-byte and the 4-byte aligned addresses a
 * payload has in a real datagram; cn_proc_what_name, cn_proc_parse_mask and
 * cn_proc_status_text.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <libcn.h>

/* Wire layout of a proc event message (struct cn_msg + struct proc_event). */
#define CN_OFF_IDX 0
#define CN_OFF_VAL 4
#define CN_OFF_SEQ 8
#define CN_OFF_ACK 12
#define CN_OFF_LEN 16
#define CN_HDR	   20
#define PE_WHAT	   0
#define PE_CPU	   4
#define PE_TS	   8
#define PE_DATA	   16
#define PE_SIZE	   40 /* what, cpu, timestamp, the 24-byte union */

struct raw {
	/* 8-aligned storage; the message is placed at `shift` into it */
	uint64_t store[32];
	uint8_t *m;
};

static void put32(uint8_t *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

static void put16(uint8_t *p, size_t off, uint16_t v)
{
	memcpy(p + off, &v, 2);
}

static void put64(uint8_t *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

/* Start a proc event message at byte `shift` of r->store. In a datagram the
 * cn_msg follows a 16-byte nlmsghdr, so shift 16 (or 0) puts the payload at
 * 4 mod 8, and the 64-bit timestamp too; shift 4 aligns the payload. */
static uint8_t *start(struct raw *r, size_t shift, uint32_t what, uint32_t cpu)
{
	memset(r->store, 0x5a, sizeof(r->store));
	r->m = (uint8_t *)r->store + shift;
	put32(r->m, CN_OFF_IDX, CN_IDX_PROC);
	put32(r->m, CN_OFF_VAL, CN_VAL_PROC);
	put32(r->m, CN_OFF_SEQ, 4242);
	put32(r->m, CN_OFF_ACK, 77);
	put16(r->m, CN_OFF_LEN, PE_SIZE);
	put16(r->m, CN_OFF_LEN + 2, 0);
	memset(r->m + CN_HDR, 0, PE_SIZE);
	put32(r->m + CN_HDR, PE_WHAT, what);
	put32(r->m + CN_HDR, PE_CPU, cpu);
	put64(r->m + CN_HDR, PE_TS, 0x0123456789abcdefull);
	return r->m + CN_HDR + PE_DATA;
}

static void decode(struct raw *r, struct cn_proc_event *ev)
{
	memset(ev, 0xa5, sizeof(*ev));
	assert_int_equal(cn_proc_decode((const struct cn_msg *)r->m, ev), 0);
}

static void check_header(const struct cn_proc_event *ev, uint32_t what, uint32_t cpu)
{
	assert_int_equal((uint32_t)ev->what, what);
	assert_int_equal(ev->cpu, cpu);
	assert_int_equal(ev->seq, 4242);
	assert_int_equal(ev->ack, 77);
	assert_true(ev->timestamp_ns == 0x0123456789abcdefull);
	assert_int_equal(ev->lost_before, 0);
}

static const size_t shifts[] = { 0, 4, 16, 20 };
#define NSHIFTS (sizeof(shifts) / sizeof(shifts[0]))

static void fork_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000001, 3);

		put32(d, 0, 100); /* parent_pid */
		put32(d, 4, 101); /* parent_tgid */
		put32(d, 8, 200); /* child_pid */
		put32(d, 12, 201);
		decode(&r, &ev);
		check_header(&ev, CN_PROC_FORK, 3);
		assert_int_equal(ev.parent_pid, 100);
		assert_int_equal(ev.parent_tgid, 101);
		assert_int_equal(ev.pid, 200);
		assert_int_equal(ev.tgid, 201);
		assert_int_equal(ev.exit_code, 0);
		assert_int_equal(ev.tracer_pid, 0);
		assert_int_equal(ev.ruid, 0);
		assert_string_equal(ev.comm, "");
	}
}

static void exec_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000002, 1);

		put32(d, 0, 300);
		put32(d, 4, 301);
		decode(&r, &ev);
		check_header(&ev, CN_PROC_EXEC, 1);
		assert_int_equal(ev.pid, 300);
		assert_int_equal(ev.tgid, 301);
		assert_int_equal(ev.parent_pid, 0);
		assert_int_equal(ev.parent_tgid, 0);
	}
}

static void uid_gid_events(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000004, 0);

		put32(d, 0, 400);
		put32(d, 4, 401);
		put32(d, 8, 1000);  /* ruid */
		put32(d, 12, 1001); /* euid */
		decode(&r, &ev);
		check_header(&ev, CN_PROC_UID, 0);
		assert_int_equal(ev.pid, 400);
		assert_int_equal(ev.tgid, 401);
		assert_int_equal(ev.ruid, 1000);
		assert_int_equal(ev.euid, 1001);

		d = start(&r, shifts[i], 0x00000040, 0);
		put32(d, 0, 402);
		put32(d, 4, 403);
		put32(d, 8, 2000);  /* rgid */
		put32(d, 12, 2001); /* egid */
		decode(&r, &ev);
		check_header(&ev, CN_PROC_GID, 0);
		assert_int_equal(ev.pid, 402);
		assert_int_equal(ev.tgid, 403);
		assert_int_equal(ev.ruid, 2000);
		assert_int_equal(ev.euid, 2001);
	}
}

static void sid_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000080, 2);

		put32(d, 0, 500);
		put32(d, 4, 501);
		decode(&r, &ev);
		check_header(&ev, CN_PROC_SID, 2);
		assert_int_equal(ev.pid, 500);
		assert_int_equal(ev.tgid, 501);
	}
}

static void ptrace_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000100, 0);

		put32(d, 0, 600);
		put32(d, 4, 601);
		put32(d, 8, 602);  /* tracer_pid */
		put32(d, 12, 603); /* tracer_tgid */
		decode(&r, &ev);
		check_header(&ev, CN_PROC_PTRACE, 0);
		assert_int_equal(ev.pid, 600);
		assert_int_equal(ev.tgid, 601);
		assert_int_equal(ev.tracer_pid, 602);
		assert_int_equal(ev.tracer_tgid, 603);
	}
}

static void comm_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000200, 0);

		put32(d, 0, 700);
		put32(d, 4, 701);
		memcpy(d + 8, "worker\0\0\0\0\0\0\0\0\0\0", 16);
		decode(&r, &ev);
		check_header(&ev, CN_PROC_COMM, 0);
		assert_int_equal(ev.pid, 700);
		assert_int_equal(ev.tgid, 701);
		assert_string_equal(ev.comm, "worker");

		/* A 16-byte name without NUL (the kernel's get_task_comm
		 * always ends one within its 16 bytes) is cut to 15 and
		 * ends in a NUL: comm is as long as cn_proc_entry's. */
		d = start(&r, shifts[i], 0x00000200, 0);
		memcpy(d + 8, "0123456789abcdef", 16);
		decode(&r, &ev);
		assert_int_equal(sizeof(ev.comm), sizeof(((struct cn_proc_entry *)0)->comm));
		assert_string_equal(ev.comm, "0123456789abcde");
	}
}

static void coredump_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x40000000, 1);

		put32(d, 0, 800);
		put32(d, 4, 801);
		put32(d, 8, 802);
		put32(d, 12, 803);
		decode(&r, &ev);
		check_header(&ev, CN_PROC_COREDUMP, 1);
		assert_int_equal(ev.pid, 800);
		assert_int_equal(ev.tgid, 801);
		assert_int_equal(ev.parent_pid, 802);
		assert_int_equal(ev.parent_tgid, 803);
	}
}

static void exit_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x80000000, 1);

		put32(d, 0, 900);
		put32(d, 4, 901);
		put32(d, 8, 3 << 8); /* exit_code: exited with status 3 */
		put32(d, 12, 17);    /* exit_signal: SIGCHLD */
		put32(d, 16, 902);
		put32(d, 20, 903);
		decode(&r, &ev);
		check_header(&ev, CN_PROC_EXIT, 1);
		assert_int_equal(ev.pid, 900);
		assert_int_equal(ev.tgid, 901);
		assert_int_equal(ev.exit_code, 0x300);
		assert_int_equal(ev.exit_signal, 17);
		assert_int_equal(ev.parent_pid, 902);
		assert_int_equal(ev.parent_tgid, 903);

		/* killed by SIGKILL */
		put32(d, 8, 9);
		decode(&r, &ev);
		assert_int_equal(ev.exit_code, 9);
	}
}

static void ack_event(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t i = 0; i < NSHIFTS; i++) {
		uint8_t *d = start(&r, shifts[i], 0x00000000, 0);

		decode(&r, &ev);
		check_header(&ev, CN_PROC_NONE, 0);
		assert_int_equal(ev.ack_err, 0);
		assert_int_equal(ev.pid, 0);

		put32(d, 0, EPERM);
		decode(&r, &ev);
		assert_int_equal(ev.ack_err, EPERM);
	}
}

static void unknown_type_header_only(void **state)
{
	struct raw r;
	struct cn_proc_event ev;
	uint8_t *d = start(&r, 16, 0x00000008, 1);

	(void)state;
	put32(d, 0, 1234);
	decode(&r, &ev);
	assert_int_equal((uint32_t)ev.what, 0x8);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.pid, 0);
}

/* Every field an event type does not use is 0, whatever the rest of the
 * union holds and whatever *ev held before (decoding does not clear the
 * struct as a whole, so each type's path must clear what it leaves). */
static void unused_fields_are_zero(void **state)
{
	static const uint32_t types[] = { 0x0,	 0x1,	0x2,	    0x4,	0x40, 0x80,
					  0x100, 0x200, 0x40000000, 0x80000000, 0x8 };
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (size_t i = 0; i < NSHIFTS; i++) {
			uint32_t w = types[t];
			uint8_t *d = start(&r, shifts[i], w, 1);

			memset(d, 0x11, PE_SIZE - PE_DATA);
			decode(&r, &ev);
			check_header(&ev, w, 1);
			/* clear what the type uses; everything else must be 0 already */
			if (w != 0x0 && w != 0x8)
				ev.pid = ev.tgid = 0;
			if (w == 0x1 || w == 0x40000000 || w == 0x80000000)
				ev.parent_pid = ev.parent_tgid = 0;
			if (w == 0x4 || w == 0x40)
				ev.ruid = ev.euid = 0;
			if (w == 0x100)
				ev.tracer_pid = ev.tracer_tgid = 0;
			if (w == 0x80000000)
				ev.exit_code = ev.exit_signal = 0;
			if (w == 0x0)
				ev.ack_err = 0;
			if (w == 0x200) {
				assert_int_equal(ev.comm[sizeof(ev.comm) - 1], 0);
				memset(ev.comm, 0, sizeof(ev.comm));
			}
			assert_int_equal(ev.pid, 0);
			assert_int_equal(ev.tgid, 0);
			assert_int_equal(ev.parent_pid, 0);
			assert_int_equal(ev.parent_tgid, 0);
			assert_int_equal(ev.tracer_pid, 0);
			assert_int_equal(ev.tracer_tgid, 0);
			assert_int_equal(ev.ruid, 0);
			assert_int_equal(ev.euid, 0);
			assert_int_equal(ev.exit_code, 0);
			assert_int_equal(ev.exit_signal, 0);
			assert_int_equal(ev.ack_err, 0);
			for (size_t k = 0; k < sizeof(ev.comm); k++)
				assert_int_equal(ev.comm[k], 0);
			assert_int_equal(ev.lost_before, 0);
		}
	}
}

static void longer_payload_accepted(void **state)
{
	/* A newer kernel's larger union: the known part decodes. */
	struct raw r;
	struct cn_proc_event ev;
	uint8_t *d = start(&r, 16, 0x00000002, 0);

	(void)state;
	put32(d, 0, 55);
	put16(r.m, CN_OFF_LEN, PE_SIZE + 8);
	decode(&r, &ev);
	assert_int_equal(ev.pid, 55);
}

static void wrong_id_and_short_payload(void **state)
{
	struct raw r;
	struct cn_proc_event ev;

	(void)state;
	start(&r, 16, 0x00000001, 0);
	put32(r.m, CN_OFF_IDX, CN_IDX_PROC + 1);
	errno = 0;
	assert_int_equal(cn_proc_decode((const struct cn_msg *)r.m, &ev), -EPROTO);
	assert_int_equal(errno, EPROTO);

	start(&r, 16, 0x00000001, 0);
	put32(r.m, CN_OFF_VAL, CN_VAL_PROC + 1);
	errno = 0;
	assert_int_equal(cn_proc_decode((const struct cn_msg *)r.m, &ev), -EPROTO);
	assert_int_equal(errno, EPROTO);

	start(&r, 16, 0x00000001, 0);
	put16(r.m, CN_OFF_LEN, PE_SIZE - 1);
	errno = 0;
	assert_int_equal(cn_proc_decode((const struct cn_msg *)r.m, &ev), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	put16(r.m, CN_OFF_LEN, 0);
	errno = 0;
	assert_int_equal(cn_proc_decode((const struct cn_msg *)r.m, &ev), -EBADMSG);
	assert_int_equal(errno, EBADMSG);

	errno = 0;
	assert_int_equal(cn_proc_decode(NULL, &ev), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_decode((const struct cn_msg *)r.m, NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

/* A wait status in words, cut as snprintf cuts. */
static void status_texts(void **state)
{
	char buf[48];

	(void)state;
	assert_int_equal(cn_proc_status_text(7 << 8, buf, sizeof(buf)), 20);
	assert_string_equal(buf, "exited with status 7");
	cn_proc_status_text(0, buf, sizeof(buf));
	assert_string_equal(buf, "exited with status 0");
	cn_proc_status_text(SIGKILL, buf, sizeof(buf));
	assert_string_equal(buf, "killed by signal 9");
	cn_proc_status_text(SIGSEGV | 0x80, buf, sizeof(buf));
	assert_string_equal(buf, "killed by signal 11 (core dumped)");
	cn_proc_status_text(0x137f, buf, sizeof(buf)); /* stopped: not an exit */
	assert_string_equal(buf, "status 0x137f");
	assert_int_equal(cn_proc_status_text(7 << 8, buf, 8), 20);
	assert_string_equal(buf, "exited ");
	assert_int_equal(cn_proc_status_text(7 << 8, NULL, 0), 20);
	assert_int_equal(cn_proc_status_text(7 << 8, NULL, 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void what_names(void **state)
{
	(void)state;
	assert_string_equal(cn_proc_what_name(CN_PROC_NONE), "none");
	assert_string_equal(cn_proc_what_name(CN_PROC_FORK), "fork");
	assert_string_equal(cn_proc_what_name(CN_PROC_EXEC), "exec");
	assert_string_equal(cn_proc_what_name(CN_PROC_UID), "uid");
	assert_string_equal(cn_proc_what_name(CN_PROC_GID), "gid");
	assert_string_equal(cn_proc_what_name(CN_PROC_SID), "sid");
	assert_string_equal(cn_proc_what_name(CN_PROC_PTRACE), "ptrace");
	assert_string_equal(cn_proc_what_name(CN_PROC_COMM), "comm");
	assert_string_equal(cn_proc_what_name(CN_PROC_COREDUMP), "coredump");
	assert_string_equal(cn_proc_what_name(CN_PROC_EXIT), "exit");
	assert_string_equal(cn_proc_what_name(CN_PROC_NONZERO_EXIT), "nonzero_exit");
	assert_string_equal(cn_proc_what_name(0x8), "unknown");
	assert_string_equal(cn_proc_what_name(CN_PROC_FORK | CN_PROC_EXEC), "unknown");
	assert_string_equal(cn_proc_what_name(0x12345678), "unknown");
	/* The values are the kernel's PROC_EVENT_* */
	assert_int_equal(CN_PROC_FORK, 0x1);
	assert_int_equal(CN_PROC_GID, 0x40);
	assert_int_equal((uint32_t)CN_PROC_EXIT, 0x80000000u);
	assert_int_equal((uint32_t)CN_PROC_ALL, 0xe00003c7u);
}

static void expect_mask(const char *list, uint32_t want)
{
	uint32_t m = 0xdeadbeef;

	errno = 0;
	assert_int_equal(cn_proc_parse_mask(list, &m), 0);
	assert_int_equal(m, want);
}

static void expect_bad_mask(const char *list)
{
	uint32_t m = 0xdeadbeef;

	errno = 0;
	assert_int_equal(cn_proc_parse_mask(list, &m), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(m, 0xdeadbeef); /* untouched on failure */
}

static void parse_mask(void **state)
{
	(void)state;
	expect_mask("fork", CN_PROC_FORK);
	expect_mask("fork,exit", CN_PROC_FORK | CN_PROC_EXIT);
	expect_mask("exit,fork", CN_PROC_FORK | CN_PROC_EXIT);
	expect_mask("fork,fork", CN_PROC_FORK);
	expect_mask("exec,uid,gid,sid,ptrace,comm,coredump",
		    CN_PROC_EXEC | CN_PROC_UID | CN_PROC_GID | CN_PROC_SID | CN_PROC_PTRACE |
			CN_PROC_COMM | CN_PROC_COREDUMP);
	expect_mask("all", CN_PROC_ALL);
	expect_mask("fork,all", CN_PROC_ALL);
	expect_mask("nonzero_exit", CN_PROC_NONZERO_EXIT);
	expect_mask("nonzero_exit,fork", CN_PROC_NONZERO_EXIT | CN_PROC_FORK);

	expect_bad_mask("");
	expect_bad_mask(",");
	expect_bad_mask("fork,");
	expect_bad_mask(",fork");
	expect_bad_mask("fork,,exit");
	expect_bad_mask("none");
	expect_bad_mask("bogus");
	expect_bad_mask("fork,bogus");
	expect_bad_mask("forks");
	expect_bad_mask("for");
	expect_bad_mask("FORK");
	expect_bad_mask("fork exit");
	expect_bad_mask("unknown");

	errno = 0;
	assert_int_equal(cn_proc_parse_mask(NULL, &(uint32_t){ 0 }), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_proc_parse_mask("fork", NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(id, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An event's time on the wall clock: a monotonic time taken between two
 * readings of the wall clock lands between them (no step meanwhile), however
 * long the thread is preempted between any two of the readings. */
static void realtime_of_an_event_time(void **state)
{
	uint64_t before, mono, after, wall;

	(void)state;
	before = clock_ns(CLOCK_REALTIME);
	mono = clock_ns(CLOCK_MONOTONIC);
	wall = cn_proc_realtime_ns(mono);
	after = clock_ns(CLOCK_REALTIME);
	assert_true(before <= wall);
	assert_true(wall <= after);
	assert_true(cn_proc_realtime_ns(0) > 0); /* the offset: booted after 1970 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fork_event),
		cmocka_unit_test(exec_event),
		cmocka_unit_test(uid_gid_events),
		cmocka_unit_test(sid_event),
		cmocka_unit_test(ptrace_event),
		cmocka_unit_test(comm_event),
		cmocka_unit_test(coredump_event),
		cmocka_unit_test(exit_event),
		cmocka_unit_test(ack_event),
		cmocka_unit_test(unknown_type_header_only),
		cmocka_unit_test(unused_fields_are_zero),
		cmocka_unit_test(longer_payload_accepted),
		cmocka_unit_test(wrong_id_and_short_payload),
		cmocka_unit_test(what_names),
		cmocka_unit_test(status_texts),
		cmocka_unit_test(parse_mask),
		cmocka_unit_test(realtime_of_an_event_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
