/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_socket_errors.c - cn_open options and the error paths of the socket
 * calls: NULL handles, invalid flags and arguments give -EINVAL (or NULL)
 * with errno set.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <stdio.h>

#include <cmocka.h>

#include "fake_sys.h"

static struct cn_sock *open_opts(int unit, const struct cn_open_opts *o)
{
	errno = 0;
	return cn_open(unit, o);
}

static void expect_open_einval(int unit, const struct cn_open_opts *o)
{
	struct cn_sock *s = open_opts(unit, o);

	assert_null(s);
	assert_int_equal(errno, EINVAL);
}

static void open_defaults(void **state)
{
	struct cn_sock *s;
	struct cn_open_opts o;
	struct cn_stats st;

	(void)state;
	fake_reset();
	s = open_opts(NETLINK_CONNECTOR, NULL);
	if (!s)
		skip(); /* no netlink connector socket here */
	assert_true(cn_fd(s) >= 0);
	assert_int_equal(cn_unit(s), NETLINK_CONNECTOR);
	assert_int_not_equal(cn_port(s), 0);
	assert_int_equal(fcntl(cn_fd(s), F_GETFL) & O_NONBLOCK, 0);
	assert_int_equal(cn_stats(s, &st), 0);
	assert_int_equal(st.messages + st.datagrams + st.overruns + st.malformed + st.foreign +
			     st.kept + st.kept_lost + st.syscalls,
			 0);
	assert_int_equal(cn_pending(s), 0);
	cn_close(s);

	/* any unit: NETLINK_ROUTE */
	s = open_opts(NETLINK_ROUTE, NULL);
	assert_non_null(s);
	assert_int_equal(cn_unit(s), NETLINK_ROUTE);
	cn_close(s);

	/* CN_OPEN_NONBLOCK sets O_NONBLOCK */
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = CN_OPEN_NONBLOCK | CN_OPEN_ANY_SENDER;
	o.batch = 16;
	o.backlog = 16484;
	s = open_opts(NETLINK_CONNECTOR, &o);
	assert_non_null(s);
	assert_int_not_equal(fcntl(cn_fd(s), F_GETFL) & O_NONBLOCK, 0);
	assert_int_equal(cn_set_nonblocking(s, 0), 0);
	assert_int_equal(fcntl(cn_fd(s), F_GETFL) & O_NONBLOCK, 0);
	assert_int_equal(cn_set_nonblocking(s, 1), 0);
	assert_int_not_equal(fcntl(cn_fd(s), F_GETFL) & O_NONBLOCK, 0);
	cn_close(s);

	/* an older, smaller options struct (only sz and flags) is accepted */
	memset(&o, 0, sizeof(o));
	o.sz = offsetof(struct cn_open_opts, flags) + sizeof(o.flags);
	o.flags = CN_OPEN_NONBLOCK;
	o.rcvbuf = -1; /* beyond the caller's size: must not be read */
	s = open_opts(NETLINK_CONNECTOR, &o);
	assert_non_null(s);
	assert_int_not_equal(fcntl(cn_fd(s), F_GETFL) & O_NONBLOCK, 0);
	cn_close(s);
}

/* A caller built with a newer, larger cn_open_opts: accepted when the
 * bytes this version does not know are zero (libbpf's rule), E2BIG when
 * it asks for something this version lacks. CN_OPTS sets the size. */
static void open_newer_options(void **state)
{
	struct {
		struct cn_open_opts o;
		uint32_t newer_field;
	} big;
	struct cn_sock *s;

	(void)state;
	fake_reset();
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	s = open_opts(NETLINK_CONNECTOR, &big.o);
	if (!s)
		skip();
	cn_close(s);
	big.newer_field = 1;
	assert_null(open_opts(NETLINK_CONNECTOR, &big.o));
	assert_int_equal(errno, E2BIG);
	{
		CN_OPTS(cn_open_opts, o, .flags = CN_OPEN_NONBLOCK);

		assert_int_equal(o.sz, sizeof(struct cn_open_opts));
		s = open_opts(NETLINK_CONNECTOR, &o);
		assert_non_null(s);
		cn_close(s);
	}
}

/* The header's version, the library's and the project's agree. */
static void version_matches(void **state)
{
	char v[32];

	(void)state;
	assert_int_equal(cn_version(), LIBCN_VERSION);
	snprintf(v, sizeof(v), "%d.%d.%d", LIBCN_VERSION_MAJOR, LIBCN_VERSION_MINOR,
		 LIBCN_VERSION_PATCH);
	assert_string_equal(v, LIBCN_VERSION_STRING);
	assert_string_equal(LIBCN_VERSION_STRING, CN_PROJECT_VERSION);
	assert_true(LIBCN_VERSION >= LIBCN_VERSION_NUM(0, 1, 0));
}

static void open_bad_options(void **state)
{
	struct cn_open_opts o;

	(void)state;
	memset(&o, 0, sizeof(o));
	expect_open_einval(NETLINK_CONNECTOR, &o); /* .sz 0 */
	o.sz = sizeof(o.sz);
	expect_open_einval(NETLINK_CONNECTOR, &o); /* too small to hold flags */
	o.sz = sizeof(o);
	o.flags = 0x8; /* the first undefined flag (0x4 is CN_OPEN_PKTINFO) */
	expect_open_einval(NETLINK_CONNECTOR, &o);
	o.flags = 0x80000000u;
	expect_open_einval(NETLINK_CONNECTOR, &o);
	o.flags = 0;
	o.rcvbuf = -1;
	expect_open_einval(NETLINK_CONNECTOR, &o);
	o.rcvbuf = 0;
	o.batch = 1025;
	expect_open_einval(NETLINK_CONNECTOR, &o);
	o.batch = 0;
	o.backlog = 100; /* smaller than one message */
	expect_open_einval(NETLINK_CONNECTOR, &o);
	o.backlog = 0;
	expect_open_einval(-1, &o);
	expect_open_einval(32, &o); /* MAX_LINKS */
	expect_open_einval(-1, NULL);
}

static void open_missing_unit(void **state)
{
	struct cn_sock *s;

	(void)state;
	/* A unit no kernel protocol owns (and no module is loaded for). */
	s = open_opts(30, NULL);
	if (s) {
		cn_close(s);
		skip(); /* something owns unit 30 here */
	}
	assert_int_equal(errno, EPROTONOSUPPORT);
}

static void close_null_keeps_errno(void **state)
{
	(void)state;
	errno = EMSGSIZE;
	cn_close(NULL);
	assert_int_equal(errno, EMSGSIZE);
}

static void null_socket(void **state)
{
	struct cn_message m;
	struct cn_stats st;
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4)];
	} u;
	struct cn_msg *msg = cn_msg_init(&u, sizeof(u), 1, 2, NULL, 0);

	(void)state;
#define EINVAL_CALL(call)                                                                          \
	do {                                                                                       \
		errno = 0;                                                                         \
		assert_int_equal((call), -EINVAL);                                                 \
		assert_int_equal(errno, EINVAL);                                                   \
	} while (0)
	EINVAL_CALL(cn_fd(NULL));
	EINVAL_CALL(cn_unit(NULL));
	EINVAL_CALL(cn_set_nonblocking(NULL, 1));
	EINVAL_CALL(cn_set_rcvbuf(NULL, 4096));
	EINVAL_CALL(cn_join(NULL, 1));
	EINVAL_CALL(cn_leave(NULL, 1));
	EINVAL_CALL(cn_send(NULL, msg, 0));
	EINVAL_CALL(cn_sendto(NULL, msg, 0, 0));
	EINVAL_CALL(cn_recv(NULL, &m, 0));
	EINVAL_CALL(cn_recv_batch(NULL, &m, 1, 0));
	EINVAL_CALL(cn_stats(NULL, &st));
	EINVAL_CALL(cn_request(NULL, msg, 0, CN_MATCH_STRICT, 0, &m));
	EINVAL_CALL(cn_reply(NULL, &m, NULL, 0));
	EINVAL_CALL(cn_proc_listen(NULL, 0, 0));
	EINVAL_CALL(cn_proc_ignore(NULL));
	EINVAL_CALL(cn_proc_recv(NULL, NULL, 0));
	assert_int_equal(cn_port(NULL), 0);
	assert_int_equal(cn_pending(NULL), 0);
	cn_set_handler(NULL, NULL, NULL);
}

static void bad_arguments_on_open_socket(void **state)
{
	struct cn_sock *s;
	struct cn_message m[2];
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4)];
	} u;
	struct cn_msg *msg = cn_msg_init(&u, sizeof(u), 1, 2, NULL, 0);

	(void)state;
	s = fake_open(0, 0);
	if (!s)
		skip();
	EINVAL_CALL(cn_set_rcvbuf(s, 0));
	EINVAL_CALL(cn_set_rcvbuf(s, -5));
	EINVAL_CALL(cn_join(s, 0));
	EINVAL_CALL(cn_leave(s, 0));
	EINVAL_CALL(cn_send(s, NULL, 0));
	EINVAL_CALL(cn_send(s, msg, 0x100));
	EINVAL_CALL(cn_recv(s, NULL, 0));
	EINVAL_CALL(cn_recv(s, m, 0x2));
	EINVAL_CALL(cn_recv_batch(s, NULL, 2, 0));
	EINVAL_CALL(cn_recv_batch(s, m, 0, 0));
	EINVAL_CALL(cn_recv_batch(s, m, 2, 0x8));
	EINVAL_CALL(cn_stats(s, NULL));
	assert_int_equal(fake_calls.recvmsg + fake_calls.recvmmsg + fake_calls.recvfrom +
			     fake_calls.sendmsg + fake_calls.sendmmsg + fake_calls.send,
			 0);
	assert_int_equal(fake_calls.join + fake_calls.leave, 0);

	/* the good calls go through */
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(fake_calls.join, 1);
	assert_int_equal(cn_leave(s, CN_IDX_PROC), 0);
	assert_int_equal(fake_calls.leave, 1);
	assert_true(cn_set_rcvbuf(s, 65536) >= 65536);
	cn_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_defaults),
		cmocka_unit_test(open_bad_options),
		cmocka_unit_test(open_newer_options),
		cmocka_unit_test(version_matches),
		cmocka_unit_test(open_missing_unit),
		cmocka_unit_test(close_null_keeps_errno),
		cmocka_unit_test(null_socket),
		cmocka_unit_test(bad_arguments_on_open_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
