/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_control.c - the proc connector's control side against the
 * running kernel: LISTEN acks matched through cn_request, kernel filters,
 * IGNORE, batch receive, cn_request's own
 * membership left, cn_set_rcvbuf's answer, unprivileged use
 * as the running kernel allows it, and CAP_NET_ADMIN alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/cn_proc.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "host_util.h"

#define WAIT_MS 5000

static void drain(struct cn_sock *s);

static int exit_zero(void *arg)
{
	(void)arg;
	return 0;
}

static void test_listen_ack_matched_by_request(void **state)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_sock *s = host_open(1 << 20);
	struct cn_msg *req = host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_LISTEN);
	struct cn_message reply, kept;
	struct cn_proc_event ev;
	uint32_t ack;

	(void)state;
	assert_non_null(req);
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, WAIT_MS, &reply), 0);
	assert_int_equal(reply.port, 0);
	assert_int_equal(reply.msg->ack, req->ack + 1);
	assert_int_equal(cn_proc_decode(reply.msg, &ev), 0);
	assert_int_equal(ev.what, CN_PROC_NONE);
	assert_int_equal(ev.ack_err, 0);

	/* The proc connector overwrites seq, so a strict match never sees its
	 * ack: the request times out, and the ack is kept, not lost. */
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_STRICT, 300, &reply), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	ack = req->ack + 1;
	assert_true(cn_pending(s) >= 1);
	for (;;) {
		assert_int_equal(cn_recv(s, &kept, CN_RECV_DONTWAIT), 0);
		if (kept.msg->ack == ack)
			break;
	}
	assert_int_equal(cn_proc_decode(kept.msg, &ev), 0);
	assert_int_equal(ev.what, CN_PROC_NONE);
	cn_close(s);
}

/* Is the socket a member of group g (the kernel's own answer)? */
static int member_of(struct cn_sock *s, uint32_t g)
{
	uint32_t groups[4] = { 0 };
	socklen_t len = sizeof(groups);

	assert_int_equal(getsockopt(cn_fd(s), SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, groups, &len),
			 0);
	return (groups[(g - 1) / 32] >> ((g - 1) % 32)) & 1;
}

/* cn_request to the proc connector from a socket that did not join group
 * 1: the ack comes (through the group, joined for the request) and the
 * socket is out of the group afterwards, so the machine's proc events do
 * not pile up on it (and a later request does not meet their overrun). */
static void test_request_to_proc_leaves_group(void **state)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_sock *s = host_open(1 << 20);
	struct cn_sock *watch = host_open(1 << 20);
	struct cn_msg *req = host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_LISTEN);
	struct cn_message reply, m;
	struct cn_proc_event ev;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(watch, 0, WAIT_MS), 0);
	assert_int_equal(member_of(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, WAIT_MS, &reply), 0);
	assert_int_equal(cn_proc_decode(reply.msg, &ev), 0);
	assert_int_equal(ev.what, CN_PROC_NONE);
	assert_int_equal(member_of(s, CN_IDX_PROC), 0);
	drain(s); /* events of the moment of the send, if any */
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	/* watch proves the events were sent; s must not have them. */
	assert_int_equal(host_wait_event(watch, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EAGAIN);
	/* Balance the LISTEN (kernels before 6.6 count it machine-wide). Not
	 * awaited: from 6.6 on, the kernel's filter of an IGNOREd socket drops
	 * the IGNORE's own ack. */
	req = host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_IGNORE);
	assert_int_equal(cn_send(s, req, 0), 0);
	assert_int_equal(member_of(s, CN_IDX_PROC), 0);
	cn_close(s);
	cn_close(watch);
}

/* cn_set_rcvbuf returns the size in the request's terms: the kernel
 * doubles a request for its bookkeeping (socket(7)) and reports the
 * doubled value; cn_set_rcvbuf halves it, so a granted request comes back
 * as itself and one raised to the kernel's minimum as more. cn_rcvbuf
 * tells the same later, and what cn_open's default asked for:
 * net.core.rmem_default, granted in full (and doubled) to root. */
static void test_set_rcvbuf_returns_requested_terms(void **state)
{
	struct cn_sock *s = host_open(0);
	int got = 0, r, dflt = 0;
	socklen_t len = sizeof(got);
	FILE *f = fopen("/proc/sys/net/core/rmem_default", "re");

	(void)state;
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &dflt), 1);
	fclose(f);
	assert_int_equal(cn_rcvbuf(s), dflt);
	r = cn_set_rcvbuf(s, 65536); /* root: SO_RCVBUFFORCE, granted in full */
	assert_int_equal(r, 65536);
	assert_int_equal(cn_rcvbuf(s), r);
	assert_int_equal(getsockopt(cn_fd(s), SOL_SOCKET, SO_RCVBUF, &got, &len), 0);
	assert_int_equal(got, 2 * r);
	r = cn_set_rcvbuf(s, 1); /* below the kernel's minimum: raised */
	assert_true(r > 1);
	assert_int_equal(cn_rcvbuf(s), r);
	assert_int_equal(getsockopt(cn_fd(s), SOL_SOCKET, SO_RCVBUF, &got, &len), 0);
	assert_int_equal(got, 2 * r);
	assert_int_equal(cn_rcvbuf(NULL), -EINVAL);
	cn_close(s);
}

static int exit_three(void *arg)
{
	(void)arg;
	return 3;
}

/* A filtered listener is never silent about loss: under the kernel's
 * filter no sequence gap shows it, the overrun is reported once however
 * many events the kernel drops, and cn_drops counts every one. A socket
 * with the smallest receive buffer, listening to non-zero exits only, is
 * not read while 40 children exit with status 3: what it receives of them
 * plus what the kernel dropped for it is at least 40 (other processes on
 * the machine may exit non-zero too). */
static void test_filtered_listener_counts_drops(void **state)
{
	struct cn_sock *s = host_open(0);
	struct cn_proc_event ev;
	uint64_t drops0 = 0, drops = 0, missed = 0;
	pid_t children[40];
	int ours = 0, enobufs = 0, r, kf;

	(void)state;
	kf = cn_proc_probe_filter(s, WAIT_MS);
	assert_true(kf >= 0);
	if (!kf)
		skip(); /* before 6.6: gaps show loss, cn_proc_stats.lost */
	assert_int_equal(cn_proc_listen(s, CN_PROC_NONZERO_EXIT, WAIT_MS), 0);
	drain(s);
	assert_true(cn_set_rcvbuf(s, 1) > 0);
	assert_int_equal(cn_drops(s, &drops0), 0);
	for (int i = 0; i < 40; i++) {
		children[i] = host_spawn(exit_three, NULL);
		host_reap(children[i]);
	}
	/* A child's exit event is sent after its parent could reap it
	 * (do_exit: exit_notify, then proc_exit_connector): read until every
	 * exit is received or dropped, or WAIT_MS has passed. Children are
	 * known by pid (a reaped child's exit may carry parent 0). */
	for (int waited = 0; waited <= WAIT_MS; waited += 10) {
		while ((r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT)) != -EAGAIN) {
			if (r == -ENOBUFS) {
				enobufs++;
				continue;
			}
			assert_int_equal(r, 0);
			if (ev.what != CN_PROC_EXIT || ev.exit_code != 3 << 8)
				continue;
			for (int i = 0; i < 40; i++)
				if (children[i] == ev.tgid) {
					children[i] = 0;
					ours++;
				}
		}
		assert_int_equal(cn_drops(s, &drops), 0);
		drops -= drops0;
		if (ours + drops >= 40)
			break;
		usleep(10000);
	}
	assert_true(ours + drops >= 40);
	assert_true(ours < 40); /* a 2304-byte buffer holds a few events */
	assert_true(drops > 0);
	assert_true(enobufs >= 1);
	assert_true(drops >= (uint64_t)enobufs); /* one report, many drops */
	/* cn_proc_missed answers with the drops, and says that under the
	 * filter its count is a lower bound. */
	assert_int_equal(cn_proc_missed(s, &missed), CN_PROC_MISSED_AT_LEAST);
	assert_true(missed >= drops);
	assert_true(ours + missed >= 40);
	cn_close(s);
}

static void test_invalid_op_acked_with_einval(void **state)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_sock *s = host_open(1 << 20);
	struct cn_sock *keep_listening = host_open(0);
	struct cn_msg *req = host_mcast_op(&u, sizeof(u), 77);
	struct cn_message reply;
	struct cn_proc_event ev;

	(void)state;
	/* The kernel sends no ack at all while nobody listens. */
	assert_int_equal(cn_proc_listen(keep_listening, 0, WAIT_MS), 0);
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	assert_int_equal(cn_request(s, req, 0, CN_MATCH_ACK_ONLY, WAIT_MS, &reply), 0);
	assert_int_equal(cn_proc_decode(reply.msg, &ev), 0);
	assert_int_equal(ev.ack_err, EINVAL);
	cn_close(s);
	cn_close(keep_listening);
}

static void test_kernel_filter_delivers_only_exits(void **state)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev;
	struct cn_message m;
	pid_t children[5];
	int kf, exits = 0, r;

	(void)state;
	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT, WAIT_MS), 0);
	kf = cn_proc_probe_filter(s, WAIT_MS);
	assert_true(kf >= 0);
	/* This machine's kernel (6.18) has proc_input filtering: detected,
	 * and used for this socket's partial mask. */
	assert_int_equal(cn_proc_filter_mode(s),
			 CN_PROC_FILTER_USER | (kf ? CN_PROC_FILTER_KERNEL : 0));
	/*
	 * cn_proc_listen waits for the ack of an unfiltered LISTEN, then sends
	 * the filtered one (a filtered LISTEN is not acked): events of any type
	 * may arrive between the two. The kernel has applied the filter when
	 * the call returns (netlink to the kernel is synchronous), so whatever
	 * is queued now is from that window: drop it, then watch the filter.
	 */
	while ((r = cn_recv(s, &m, CN_RECV_DONTWAIT)) == 0)
		;
	assert_int_equal(r, -EAGAIN);
	for (int i = 0; i < 5; i++) {
		children[i] = host_spawn(exit_zero, NULL);
		host_reap(children[i]);
	}
	/* Read raw messages so a userspace filter could not hide anything.
	 * Children are known by pid (a reaped child's exit may carry parent 0
	 * and follow a later child's). */
	while (exits < 5) {
		r = cn_recv(s, &m, 0);
		assert_int_equal(r, 0);
		assert_int_equal(cn_proc_decode(m.msg, &ev), 0);
		if (kf)
			assert_int_equal(ev.what, CN_PROC_EXIT);
		for (int i = 0; i < 5; i++)
			if (ev.what == CN_PROC_EXIT && ev.pid == children[i]) {
				children[i] = 0;
				exits++;
			}
	}
	assert_int_equal(exits, 5);
	cn_close(s);
}

static void test_userspace_view_of_filter(void **state)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev;
	pid_t child;

	(void)state;
	assert_true(cn_proc_listen(s, CN_PROC_FORK | CN_PROC_EXIT, WAIT_MS) >= 0);
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	assert_int_equal(host_wait_event(s, CN_PROC_FORK, child, WAIT_MS, &ev), 0);
	assert_int_equal(host_wait_event(s, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	cn_close(s);
}

/*
 * cn_proc_listen with a partial mask on a socket already in group 1: the
 * kernel delivers every event to a group member that has sent no LISTEN
 * yet (while anyone listens), and the filter only applies from the
 * filtered LISTEN on, so events of every type are queued before it (the
 * same window as between cn_proc_listen's unfiltered LISTEN and its
 * filtered one). cn_proc_recv must return only the types asked for, and
 * none from before the subscription: those cn_proc_listen read while it
 * waited for its ack are dropped rather than left pending where poll
 * cannot see them.
 */
static void test_filtered_listen_after_join(void **state)
{
	struct cn_sock *s = host_open(1 << 20), *other = host_open(0);
	struct cn_proc_event ev;
	struct cn_proc_stats st;
	pid_t first, second;
	int seen_first = 0;

	(void)state;
	assert_int_equal(cn_proc_listen(other, 0, WAIT_MS), 0);
	assert_int_equal(cn_join(s, CN_IDX_PROC), 0);
	first = host_spawn(exit_zero, NULL);
	host_reap(first);
	/* Its exit is sent (to both sockets) once the other one has it. */
	assert_int_equal(host_wait_event(other, CN_PROC_EXIT, first, WAIT_MS, &ev), 0);
	assert_true(cn_proc_listen(s, CN_PROC_EXIT, WAIT_MS) >= 0);
	second = host_spawn(exit_zero, NULL);
	host_reap(second);
	for (;;) {
		assert_int_equal(cn_proc_recv(s, &ev, 0), 0);
		assert_int_equal(ev.what, CN_PROC_EXIT);
		if (ev.pid == first)
			seen_first = 1;
		if (ev.pid == second)
			break;
	}
	assert_false(seen_first); /* from before cn_proc_listen: dropped */
	assert_int_equal(cn_pending(s), 0);
	assert_int_equal(cn_proc_stats(s, &st), 0);
	assert_true(st.events >= 1); /* second's exit (its fork: kernel-filtered) */
	cn_close(s);
	cn_close(other);
}

static void drain(struct cn_sock *s)
{
	struct cn_message m;

	while (cn_recv(s, &m, CN_RECV_DONTWAIT) != -EAGAIN)
		;
}

static void test_ignore_stops_events(void **state)
{
	struct cn_sock *a = host_open(1 << 20), *b = host_open(1 << 20);
	struct cn_proc_event ev;
	struct cn_message m;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(a, 0, WAIT_MS), 0);
	assert_int_equal(cn_proc_listen(b, 0, WAIT_MS), 0);
	assert_int_equal(cn_proc_ignore(a), 0);
	drain(a);
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	/* b proves the events were sent; a must not have them. */
	assert_int_equal(host_wait_event(b, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	assert_int_equal(cn_recv(a, &m, CN_RECV_DONTWAIT), -EAGAIN);
	cn_close(a);
	cn_close(b);
}

static void test_ignore_op_alone_filters_in_kernel(void **state)
{
	union {
		struct cn_msg m;
		char b[64];
	} u;
	struct cn_sock *a = host_open(1 << 20), *b = host_open(1 << 20);
	struct cn_proc_event ev;
	struct cn_message m;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(a, 0, WAIT_MS), 0);
	if (cn_proc_probe_filter(a, WAIT_MS) != 1)
		skip(); /* only kernels >= 6.6 stop a socket that stays in the group */
	assert_int_equal(cn_proc_listen(b, 0, WAIT_MS), 0);
	/* IGNORE while staying in the group: the kernel's filter drops events. */
	assert_int_equal(cn_send(a, host_mcast_op(&u, sizeof(u), PROC_CN_MCAST_IGNORE), 0), 0);
	drain(a);
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	assert_int_equal(host_wait_event(b, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	assert_int_equal(cn_recv(a, &m, CN_RECV_DONTWAIT), -EAGAIN);
	cn_close(a);
	cn_close(b);
}

static void test_batch_receive_saves_syscalls(void **state)
{
	enum { CHILDREN = 300 };
	struct cn_open_opts o = { .sz = sizeof(o), .rcvbuf = 32 << 20, .batch = 64 };
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, &o);
	struct cn_message msgs[64];
	struct cn_proc_event ev;
	struct cn_stats st;
	pid_t children[CHILDREN];
	int exits = 0;

	(void)state;
	assert_non_null(s);
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	assert_int_equal(cn_stats(s, &st), 0);
	uint64_t calls0 = st.syscalls, msgs0 = st.messages;
	for (int i = 0; i < CHILDREN; i++) {
		children[i] = host_spawn(exit_zero, NULL);
		host_reap(children[i]);
	}
	/*
	 * Children are known by pid, not by the exit's parent: the kernel sends
	 * the exit event after exit_notify(), so a child already reaped may
	 * report parent 0, and its event may follow a later child's.
	 */
	while (exits < CHILDREN) {
		int n = cn_recv_batch(s, msgs, 64, CN_RECV_DONTWAIT);

		if (n == -EAGAIN) {
			struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };

			assert_int_equal(poll(&p, 1, WAIT_MS), 1);
			continue;
		}
		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			if (cn_proc_handle(s, &msgs[i], &ev) != 1 || ev.what != CN_PROC_EXIT ||
			    ev.pid != ev.tgid)
				continue;
			for (int c = 0; c < CHILDREN; c++)
				if (children[c] == ev.tgid) {
					children[c] = 0;
					exits++;
				}
		}
	}
	assert_int_equal(cn_stats(s, &st), 0);
	fprintf(stderr, "# %lu messages in %lu receive calls\n",
		(unsigned long)(st.messages - msgs0), (unsigned long)(st.syscalls - calls0));
	/* Queued events come many per system call. */
	assert_true((st.syscalls - calls0) * 4 <= st.messages - msgs0);
	cn_close(s);
}

/* What a child as uid 65534 does: caps to keep (1 << CAP_*), and whether
 * cn_proc_listen must succeed (else: fail with EPERM). */
struct nobody_case {
	uint64_t caps;
	int may_listen;
};

/* Child: listen as uid 65534 and check the outcome; 0 when it is right. */
static int listen_as_nobody(void *arg)
{
	const struct nobody_case *c = arg;
	struct cn_proc_event ev;
	struct cn_sock *s;
	pid_t child;
	int r;

	if (host_become_nobody(c->caps) < 0)
		return 10;
	s = cn_open(NETLINK_CONNECTOR, NULL);
	if (!s)
		return 11;
	errno = 0;
	r = cn_proc_listen(s, 0, WAIT_MS);
	if (!c->may_listen) {
		/* Refused at the join, named as such: not a timeout, not a
		 * missing connector. */
		if (r != -EPERM || errno != EPERM) {
			fprintf(stderr, "cn_proc_listen as nobody: %d (%s), want -EPERM\n", r,
				strerror(errno));
			return 12;
		}
		if (cn_join(s, CN_IDX_PROC) != -EPERM ||
		    cn_proc_listen(s, CN_PROC_EXIT, WAIT_MS) != -EPERM)
			return 13;
		cn_close(s);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "cn_proc_listen as nobody (caps %#llx): %s\n",
			(unsigned long long)c->caps, strerror(-r));
		return 14;
	}
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	if (host_wait_event(s, CN_PROC_EXIT, child, WAIT_MS, &ev) < 0)
		return 15;
	cn_close(s);
	return 0;
}

/*
 * Whether a user without privileges may listen is the kernel's decision:
 * Linux 6.6 and later let any process join group CN_IDX_PROC (cn_bind in
 * drivers/connector/connector.c), earlier kernels ask CAP_NET_ADMIN (the
 * netlink table has no NL_CFG_F_NONROOT_RECV), and a kernel may be built
 * to refuse (this test was first run on such a 6.18). A raw probe finds
 * out; libcn must then either deliver events, or fail with a plain EPERM.
 */
static void test_unprivileged_listen_follows_kernel(void **state)
{
	struct nobody_case c = { .caps = 0, .may_listen = host_nobody_may_join_proc() };
	pid_t child = host_spawn(listen_as_nobody, &c);

	(void)state;
	assert_int_equal(host_reap(child), 0);
}

/* CAP_NET_ADMIN alone is enough on every kernel: what `setcap
 * cap_net_admin+ep` gives a program run by an unprivileged user. */
static void test_cap_net_admin_alone_can_listen(void **state)
{
	struct nobody_case c = { .caps = 1ull << CAP_NET_ADMIN, .may_listen = 1 };
	pid_t child = host_spawn(listen_as_nobody, &c);

	(void)state;
	assert_int_equal(host_reap(child), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_ack_matched_by_request),
		cmocka_unit_test(test_request_to_proc_leaves_group),
		cmocka_unit_test(test_set_rcvbuf_returns_requested_terms),
		cmocka_unit_test(test_filtered_listener_counts_drops),
		cmocka_unit_test(test_invalid_op_acked_with_einval),
		cmocka_unit_test(test_kernel_filter_delivers_only_exits),
		cmocka_unit_test(test_userspace_view_of_filter),
		cmocka_unit_test(test_filtered_listen_after_join),
		cmocka_unit_test(test_ignore_stops_events),
		cmocka_unit_test(test_ignore_op_alone_filters_in_kernel),
		cmocka_unit_test(test_batch_receive_saves_syscalls),
		cmocka_unit_test(test_unprivileged_listen_follows_kernel),
		cmocka_unit_test(test_cap_net_admin_alone_can_listen),
	};

	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
