/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_drops.c - cn_drops asks the socket itself: one getsockopt
 * (SOL_SOCKET, SO_MEMINFO), whose SK_MEMINFO_DROPS is the socket's
 * sk_drops, whatever else is open on the machine; /proc/net/netlink only
 * where the kernel has no SO_MEMINFO (before 4.12). The real kernel's
 * answer, with thousands of other netlink sockets churning, is the host
 * tier's (tests/host/test_drops.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/sock_diag.h>

#include "fake_sys.h"

static int setup(void **state)
{
	*state = fake_open(0, 0);
	return 0;
}

#define MEMINFO_SIZE (SK_MEMINFO_VARS * sizeof(uint32_t))

/* The socket's own counter, in one system call. */
static void drops_from_the_socket(void **state)
{
	struct cn_sock *s = fake_sock(state);
	uint64_t drops = 0;

	fake_meminfo(0, 1234, MEMINFO_SIZE);
	assert_int_equal(cn_drops(s, &drops), 0);
	assert_int_equal(drops, 1234);
	assert_int_equal(fake_calls.meminfo, 1);
	/* the counter is 32 bits in the kernel (atomic_t sk_drops) */
	fake_meminfo(0, 0xffffffffu, MEMINFO_SIZE);
	assert_int_equal(cn_drops(s, &drops), 0);
	assert_int_equal(drops, 0xffffffffu);
}

/* A kernel without SO_MEMINFO (ENOPROTOOPT), or with fewer counters than
 * SK_MEMINFO_DROPS: /proc/net/netlink, where this socket is listed with
 * what the kernel counted for it (nothing: the fakes read nothing). */
static void fallback_where_it_is_missing(void **state)
{
	struct cn_sock *s = fake_sock(state);
	uint64_t drops = 77;

	fake_meminfo(ENOPROTOOPT, 0, 0);
	assert_int_equal(cn_drops(s, &drops), 0);
	assert_int_equal(drops, 0);
	assert_int_equal(fake_calls.meminfo, 1);
	drops = 77;
	fake_meminfo(0, 1234, SK_MEMINFO_DROPS * sizeof(uint32_t));
	assert_int_equal(cn_drops(s, &drops), 0);
	assert_int_equal(drops, 0);
}

/* Any other failure is the caller's to see. */
static void errors(void **state)
{
	struct cn_sock *s = fake_sock(state);
	uint64_t drops = 5;

	fake_meminfo(EFAULT, 0, 0);
	errno = 0;
	assert_int_equal(cn_drops(s, &drops), -EFAULT);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(drops, 5);
	assert_int_equal(cn_drops(NULL, &drops), -EINVAL);
	assert_int_equal(cn_drops(s, NULL), -EINVAL);
}

/* The real kernel's SO_MEMINFO (the fakes answer only once told to). */
static void real_kernel_answers(void **state)
{
	struct cn_sock *s = fake_sock(state);
	uint64_t drops = 77;

	assert_int_equal(cn_drops(s, &drops), 0);
	assert_int_equal(drops, 0);
	assert_int_equal(fake_calls.meminfo, 1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(drops_from_the_socket),
		T(fallback_where_it_is_missing),
		T(errors),
		T(real_kernel_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
