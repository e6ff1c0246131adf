/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_wire_layout.c - the structures that cross between userspace and the
 * kernel as bytes have one layout on every architecture. No compat layer
 * translates netlink payloads: a 32-bit program (i386, armhf) on a 64-bit
 * kernel reads the kernel's x86-64/arm64 layout as it is, so the 32-bit
 * build must lay these out exactly so. The sizes and offsets below are the
 * x86-64 ones; the arch tier runs this test for i386, armhf and s390x,
 * where a 64-bit field without explicit alignment (i386 aligns a 64-bit
 * field in a struct to 4) or a long would move.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>
#include <libcn/proto.h>
#include <linux/cn_proc.h>

#define OFF(type, field) offsetof(type, field)

static void netlink_and_connector(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct nlmsghdr), 16);
	assert_int_equal(sizeof(struct sockaddr_nl), 12);
	assert_int_equal(sizeof(struct cn_msg), 20);
	assert_int_equal(OFF(struct cn_msg, seq), 8);
	assert_int_equal(OFF(struct cn_msg, ack), 12);
	assert_int_equal(OFF(struct cn_msg, len), 16);
	assert_int_equal(OFF(struct cn_msg, flags), 18);
	assert_int_equal(OFF(struct cn_msg, data), 20);
}

/* struct proc_event: a 64-bit timestamp at offset 8 (aligned(8) in the uapi
 * header), and libcn's fast path compares cn_msg.len with its size. */
static void proc_event(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct proc_event), 40);
	assert_int_equal(OFF(struct proc_event, cpu), 4);
	assert_int_equal(OFF(struct proc_event, timestamp_ns), 8);
	assert_int_equal(OFF(struct proc_event, event_data), 16);
	assert_int_equal(OFF(struct proc_event, event_data.fork.child_tgid), 28);
	assert_int_equal(OFF(struct proc_event, event_data.exit.exit_code), 24);
	assert_int_equal(OFF(struct proc_event, event_data.exit.parent_tgid), 36);
	assert_int_equal(OFF(struct proc_event, event_data.comm.comm), 24);
	assert_int_equal(OFF(struct proc_event, event_data.coredump.parent_tgid), 28);
}

/* kmod's control messages (libcn/proto.h). */
static void kmod_control(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct cn_notify_req), 8);
	assert_int_equal(sizeof(struct cn_ctl_msg), 16);
	assert_int_equal(OFF(struct cn_ctl_msg, data), 16);
}

/* kmod's test module requests and replies (libcn/cnbus_test.h): 64-bit
 * counters after explicit padding. */
static void kmod_test_module(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct cnbus_test_burst), 48);
	assert_int_equal(OFF(struct cnbus_test_burst, inserted), 16);
	assert_int_equal(OFF(struct cnbus_test_burst, status), 32);
	assert_int_equal(OFF(struct cnbus_test_burst, enobufs), 40);
	assert_int_equal(sizeof(struct cnbus_test_bench_cpu), 72);
	assert_int_equal(OFF(struct cnbus_test_bench_cpu, direct_ns), 8);
	assert_int_equal(OFF(struct cnbus_test_bench, cpu), 24);
	assert_int_equal(sizeof(struct cnbus_test_bench), 24 + CNBUS_TEST_BENCH_CPUS * 72);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(netlink_and_connector),
		cmocka_unit_test(proc_event),
		cmocka_unit_test(kmod_control),
		cmocka_unit_test(kmod_test_module),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
