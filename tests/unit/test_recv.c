/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_recv.c - the receive path (cn_recv, cn_recv_batch) over fake
 * datagrams: several messages per datagram, malformed and truncated data,
 * overruns, kernel errors, foreign senders, batching.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_sys.h"
#include "w1_bundle.h"

static int setup(void **state)
{
	struct cn_sock *s = fake_open(0, 0);

	*state = s;
	return 0;
}

static int setup_any(void **state)
{
	struct cn_sock *s = fake_open(CN_OPEN_ANY_SENDER, 0);

	*state = s;
	return 0;
}

static void add(struct fake_dgram *d, uint32_t seq, const char *text)
{
	fake_add_cn(d, 0x123, 0x456, seq, seq + 1000, text, strlen(text));
}

static void expect_msg(struct cn_sock *s, uint32_t seq, const char *text)
{
	struct cn_message m;

	memset(&m, 0, sizeof(m));
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_non_null(m.msg);
	assert_int_equal(m.msg->id.idx, 0x123);
	assert_int_equal(m.msg->id.val, 0x456);
	assert_int_equal(m.msg->seq, seq);
	assert_int_equal(m.msg->ack, seq + 1000);
	assert_int_equal(m.msg->len, strlen(text));
	assert_memory_equal(m.msg->data, text, strlen(text));
}

static void expect_err(struct cn_sock *s, int err)
{
	struct cn_message m;

	errno = 0;
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -err);
	assert_int_equal(errno, err);
}

static struct cn_stats stats(struct cn_sock *s)
{
	struct cn_stats st;

	assert_int_equal(cn_stats(s, &st), 0);
	return st;
}

static void several_messages_one_per_call(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d = fake_dgram(0);
	struct cn_message m;
	struct cn_stats st;

	d->groups = 1u << 4; /* came through group 5 */
	add(d, 1, "first");
	add(d, 2, "second message");
	add(d, 3, "");
	add(d, 4, "abc");
	d->len -= 1; /* the last message without its padding */

	memset(&m, 0, sizeof(m));
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 1);
	assert_int_equal(m.port, 0);
	assert_int_equal(m.group, 5);
	expect_msg(s, 2, "second message");
	expect_msg(s, 3, "");
	expect_msg(s, 4, "abc");
	expect_err(s, EAGAIN);

	st = stats(s);
	assert_int_equal(st.messages, 4);
	assert_int_equal(st.datagrams, 1);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(fake_calls.recvfrom, 2); /* one datagram, then EAGAIN */
}

static void unicast_group_zero(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message m;

	add(fake_dgram(0), 1, "u");
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.group, 0);
}

static void malformed_then_good(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d;
	struct cn_msg *cm;

	/* datagram 1: a good message, then one whose cn_msg.len is too big,
	 * then one that must not be delivered (the datagram is dropped). */
	d = fake_dgram(0);
	add(d, 1, "good");
	cm = fake_add_cn(d, 0x123, 0x456, 2, 1002, "bad", 3);
	cm->len = 200;
	add(d, 3, "lost with the rest of the datagram");
	/* datagram 2: truncated netlink header */
	d = fake_dgram(0);
	add(d, 4, "ok");
	memset(d->data + d->len, 0, 8);
	d->len += 8;
	/* datagram 3: good */
	add(fake_dgram(0), 5, "next");
	/* datagram 4: nlmsg_len beyond the datagram */
	d = fake_dgram(0);
	((struct nlmsghdr *)d->data)->nlmsg_len = 0; /* placeholder, rewritten below */
	add(d, 6, "x");
	((struct nlmsghdr *)d->data)->nlmsg_len = 4000;
	add(fake_dgram(0), 7, "last");

	expect_msg(s, 1, "good");
	expect_err(s, EBADMSG);
	assert_int_equal(stats(s).malformed, 1);
	expect_msg(s, 4, "ok");
	expect_err(s, EBADMSG);
	assert_int_equal(stats(s).malformed, 2);
	expect_msg(s, 5, "next");
	expect_err(s, EBADMSG);
	expect_msg(s, 7, "last");
	expect_err(s, EAGAIN);
	assert_int_equal(stats(s).malformed, 3);
	assert_int_equal(stats(s).messages, 4);
	assert_int_equal(stats(s).overruns, 0);
}

static void enobufs_is_overrun(void **state)
{
	struct cn_sock *s = fake_sock(state);

	fake_error(ENOBUFS);
	add(fake_dgram(0), 1, "after overrun");
	fake_error(ENOMEM);
	fake_error(EINTR);
	add(fake_dgram(0), 2, "after errors");

	expect_err(s, ENOBUFS);
	assert_int_equal(stats(s).overruns, 1);
	expect_msg(s, 1, "after overrun");
	/* other errors are passed on as they are, and are not overruns */
	expect_err(s, ENOMEM);
	expect_err(s, EINTR);
	assert_int_equal(stats(s).overruns, 1);
	expect_msg(s, 2, "after errors");
}

static void nlmsg_overrun_in_datagram(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d = fake_dgram(0);

	add(d, 1, "before");
	fake_add_nl(d, NLMSG_OVERRUN, NULL, 0);
	add(d, 2, "after");

	expect_msg(s, 1, "before");
	expect_err(s, ENOBUFS);
	assert_int_equal(stats(s).overruns, 1);
	expect_msg(s, 2, "after");
}

static void nlmsg_error_and_noop(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d = fake_dgram(0);
	struct cn_message m;

	fake_add_nl(d, NLMSG_NOOP, NULL, 0);
	fake_add_nlerr(d, 0); /* an ack: nothing for the caller */
	add(d, 1, "data");
	fake_add_nlerr(d, -EPERM);
	add(d, 2, "more");

	expect_msg(s, 1, "data");
	memset(&m, 0xff, sizeof(m));
	errno = 0;
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), -EPERM);
	assert_int_equal(errno, EPERM);
	assert_int_equal(m.port, 0);
	assert_null(m.msg);
	expect_msg(s, 2, "more");
	assert_int_equal(stats(s).malformed, 0);
	assert_int_equal(stats(s).messages, 2);
}

static void truncated_datagram(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct fake_dgram *d = fake_dgram(0);

	add(d, 1, "cut");
	d->msg_flags = MSG_TRUNC;
	add(fake_dgram(0), 2, "whole");
	/* a datagram really larger than the receive slot */
	d = fake_dgram(0);
	{
		static char big[CONNECTOR_MAX_MSG_SIZE];

		memset(big, 'x', sizeof(big));
		fake_add_cn(d, 0x123, 0x456, 3, 1003, big, sizeof(big));
		fake_add_cn(d, 0x123, 0x456, 4, 1004, big, 200);
	}
	add(fake_dgram(0), 5, "whole again");

	expect_err(s, EMSGSIZE);
	expect_msg(s, 2, "whole");
	expect_err(s, EMSGSIZE);
	expect_msg(s, 5, "whole again");
	assert_int_equal(stats(s).messages, 2);
}

/* The walk takes a datagram that is exactly one kernel message with one
 * test (cn__rx_next's fast half) and checks every other field by field: both ways
 * give the same messages, groups, refusals and counters. Payloads of 4
 * bytes make datagrams as long as their message (the simple kind); the
 * foreign, cut and flagged ones are simple in size but not in kind. */
static void walk_simple_and_checked_alike(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message m;
	struct fake_dgram *d;
	struct nlmsghdr *nlh;

	d = fake_dgram(0);
	d->groups = 1u << 2; /* group 3 */
	add(d, 1, "wxyz");
	add(fake_dgram(4242), 90, "spof");
	d = fake_dgram(0);
	add(d, 91, "cut!");
	d->msg_flags = MSG_TRUNC;
	add(fake_dgram(0), 2, "wxyz");
	d = fake_dgram(0); /* two messages: walked */
	add(d, 3, "wxyz");
	add(d, 4, "wxyz");
	d = fake_dgram(0); /* one message with nlmsg_flags: walked, delivered */
	add(d, 5, "wxyz");
	nlh = (struct nlmsghdr *)d->data;
	nlh->nlmsg_flags = NLM_F_MULTI;
	add(fake_dgram(0), 6, "wxyz");

	memset(&m, 0, sizeof(m));
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.msg->seq, 1);
	assert_int_equal(m.group, 3);
	assert_int_equal(m.port, 0);
	expect_err(s, EMSGSIZE); /* after the foreign one, skipped */
	for (uint32_t seq = 2; seq <= 6; seq++) {
		expect_msg(s, seq, "wxyz");
	}
	expect_err(s, EAGAIN);
	assert_int_equal(stats(s).messages, 6);
	assert_int_equal(stats(s).datagrams, 7);
	assert_int_equal(stats(s).foreign, 1);
	assert_int_equal(stats(s).malformed, 1);
}

/* A datagram as long as its netlink header says, but whose cn_msg.len
 * says otherwise (longer than the message, or shorter by more than the
 * alignment padding): malformed on every path, counted, the next one
 * delivered. */
static void cn_msg_len_disagrees(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[4];
	struct cn_msg *m;

	for (int batch = 0; batch < 2; batch++) {
		fake_reset();
		m = fake_add_cn(fake_dgram(0), 0x123, 0x456, 1, 1001, "wxyz", 4);
		m->len = 8;
		/* 3 bytes of 8: a record, then 5 bytes that are neither
		 * padding nor a whole record (a cut w1 bundle) */
		m = fake_add_cn(fake_dgram(0), 0x123, 0x456, 2, 1002, "wxyzwxyz", 8);
		m->len = 3;
		add(fake_dgram(0), 3, "wxyz");
		if (batch) {
			assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), -EBADMSG);
			assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 1);
			assert_int_equal(out[0].msg->seq, 2);
			assert_int_equal(out[0].msg->len, 3);
			assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), -EBADMSG);
			assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 1);
			assert_int_equal(out[0].msg->seq, 3);
		} else {
			expect_err(s, EBADMSG);
			expect_msg(s, 2, "wxy");
			expect_err(s, EBADMSG);
			expect_msg(s, 3, "wxyz");
		}
		assert_int_equal(stats(s).malformed, 2 * (uint64_t)(batch + 1));
	}
}

/* A datagram cut exactly at the end of a message that fills the receive
 * slot: every length agrees, only MSG_TRUNC tells that more was sent. */
static void truncated_at_a_message_end(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[2];
	/* CN_SLOT_SIZE (src/internal.h): what one slot holds */
	const size_t slot =
	    NLMSG_ALIGN(NLMSG_HDRLEN + sizeof(struct cn_msg) + CONNECTOR_MAX_MSG_SIZE + 64);
	static char
	    big[NLMSG_ALIGN(NLMSG_HDRLEN + sizeof(struct cn_msg) + CONNECTOR_MAX_MSG_SIZE + 64)];
	struct fake_dgram *d;

	memset(big, 'x', sizeof(big));
	for (int batch = 0; batch < 2; batch++) {
		fake_reset();
		d = fake_dgram(0);
		fake_add_cn(d, 0x123, 0x456, 1, 1001, big,
			    slot - NLMSG_HDRLEN - sizeof(struct cn_msg));
		assert_int_equal(d->len, slot);
		d->msg_flags = MSG_TRUNC;
		add(fake_dgram(0), 2, "wxyz");
		if (batch) {
			assert_int_equal(cn_recv_batch(s, out, 2, CN_RECV_DONTWAIT), -EMSGSIZE);
			assert_int_equal(cn_recv_batch(s, out, 2, CN_RECV_DONTWAIT), 1);
			assert_int_equal(out[0].msg->seq, 2);
		} else {
			expect_err(s, EMSGSIZE);
			expect_msg(s, 2, "wxyz");
		}
	}
}

static void foreign_sender_skipped(void **state)
{
	struct cn_sock *s = fake_sock(state);

	add(fake_dgram(4242), 1, "spoofed");
	add(fake_dgram(0), 2, "kernel");
	add(fake_dgram(77), 3, "spoofed too");

	expect_msg(s, 2, "kernel");
	expect_err(s, EAGAIN);
	assert_int_equal(stats(s).foreign, 2);
	assert_int_equal(stats(s).messages, 1);
}

static void foreign_sender_accepted(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message m;

	add(fake_dgram(4242), 1, "peer");
	add(fake_dgram(0), 2, "kernel");
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.port, 4242);
	assert_int_equal(m.msg->seq, 1);
	assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
	assert_int_equal(m.port, 0);
	assert_int_equal(m.msg->seq, 2);
	assert_int_equal(stats(s).foreign, 0);
}

static void batch_several_datagrams_one_syscall(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[8];
	struct fake_dgram *d = fake_dgram(0);
	int n;

	add(d, 1, "a");
	add(d, 2, "b");
	add(fake_dgram(0), 3, "c");
	d = fake_dgram(0);
	d->groups = 1;
	add(d, 4, "d");

	memset(out, 0, sizeof(out));
	n = cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		assert_non_null(out[i].msg);
		assert_int_equal(out[i].msg->seq, (uint32_t)i + 1);
		assert_int_equal(out[i].msg->len, 1);
		assert_int_equal(out[i].msg->data[0], 'a' + i);
	}
	assert_int_equal(out[3].group, 1);
	assert_int_equal(fake_calls.recvmmsg + fake_calls.recvfrom, 1);
	assert_int_equal(stats(s).syscalls, 1);
	assert_int_equal(stats(s).datagrams, 3);
	assert_int_equal(stats(s).messages, 4);

	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
}

/* cn_recv_batch takes lone kernel messages straight from a fresh read and
 * leaves the first other datagram, and everything after it, to the walk:
 * the order, the sender check, truncation, NLMSG_ERROR and nlmsg_flags are
 * handled as they would be by the walk alone. */
static void batch_fast_then_walked(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[16];
	struct fake_dgram *d;
	struct nlmsghdr *nlh;
	int n;

	add(fake_dgram(0), 1, "a");
	d = fake_dgram(0);
	d->groups = 1u << 2; /* group 3 */
	add(d, 2, "b");
	add(fake_dgram(4242), 90, "spoofed");
	d = fake_dgram(0);
	add(d, 3, "c");
	add(d, 4, "d");
	add(fake_dgram(0), 5, "e");
	/* a lone message with nlmsg_flags set: walked, still delivered */
	d = fake_dgram(0);
	add(d, 6, "f");
	nlh = (struct nlmsghdr *)d->data;
	nlh->nlmsg_flags = NLM_F_MULTI;
	d = fake_dgram(0);
	fake_add_nlerr(d, -EPERM);
	add(fake_dgram(0), 7, "g");

	n = cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT);
	assert_int_equal(n, 6);
	for (int i = 0; i < n; i++) {
		assert_int_equal(out[i].msg->seq, (uint32_t)i + 1);
		assert_int_equal(out[i].msg->data[0], 'a' + i);
		assert_int_equal(out[i].port, 0);
	}
	assert_int_equal(out[0].group, 0);
	assert_int_equal(out[1].group, 3);
	assert_int_equal(stats(s).foreign, 1);
	assert_int_equal(stats(s).syscalls, 1);
	assert_int_equal(cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT), -EPERM);
	assert_int_equal(cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 7);
	assert_int_equal(stats(s).syscalls, 1);
	assert_int_equal(stats(s).messages, 7);

	/* a truncated datagram after a lone message: the message first */
	fake_reset();
	add(fake_dgram(0), 8, "h");
	d = fake_dgram(0);
	add(d, 9, "cut");
	d->msg_flags = MSG_TRUNC;
	add(fake_dgram(0), 10, "j");
	assert_int_equal(cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 8);
	assert_int_equal(cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT), -EMSGSIZE);
	assert_int_equal(cn_recv_batch(s, out, 16, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 10);
}

/* Every slot of a full fresh read taken by the fill loop (one index for
 * out[], the senders and the mmsghdrs): each message, group and port where
 * it belongs, and the sender check applied to the last slot as to the first.
 * Payloads of 4 bytes: the datagram is exactly as long as its message, as
 * the kernel sends it (fake_add_cn pads the datagram, so a 1-byte payload
 * makes a datagram the fill leaves to the walk). */
static void batch_fill_every_slot(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[40];
	struct fake_dgram *d;
	int n;

	for (uint32_t i = 0; i < 31; i++) {
		d = fake_dgram(0);
		d->groups = 1u << i; /* group i + 1 */
		add(d, i, "wxyz");
	}
	add(fake_dgram(4242), 99, "spof"); /* slot 31 of 32 */
	add(fake_dgram(0), 31, "wxyz");

	memset(out, 0xa5, sizeof(out));
	n = cn_recv_batch(s, out, 40, CN_RECV_DONTWAIT);
	assert_int_equal(n, 31);
	for (int i = 0; i < n; i++) {
		assert_int_equal(out[i].msg->seq, (uint32_t)i);
		assert_int_equal(out[i].group, (uint32_t)i + 1);
		assert_int_equal(out[i].port, 0);
	}
	assert_int_equal(stats(s).messages, 31);
	assert_int_equal(stats(s).foreign, 1);
	assert_int_equal(stats(s).syscalls, 1);
	assert_int_equal(cn_recv_batch(s, out, 40, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 31);
}

/* A fresh read whose datagrams are all simple counts them in one counter of
 * its own (one add per call): cn_stats still reports each as a datagram and
 * a message, added to what the other paths count. */
static void batch_all_simple_counted(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[8];
	struct fake_dgram *d;

	for (uint32_t i = 1; i <= 3; i++)
		add(fake_dgram(0), i, "wxyz");
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 3);
	assert_int_equal(out[2].msg->seq, 3);
	assert_int_equal(stats(s).syscalls, 1);
	assert_int_equal(stats(s).datagrams, 3);
	assert_int_equal(stats(s).messages, 3);

	fake_reset();
	d = fake_dgram(0); /* two messages: the walk's counters */
	add(d, 4, "wxyz");
	add(d, 5, "wxyz");
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 2);
	assert_int_equal(stats(s).syscalls, 2);
	assert_int_equal(stats(s).datagrams, 4);
	assert_int_equal(stats(s).messages, 5);
}

static void batch_smaller_than_available(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[2];
	struct fake_dgram *d = fake_dgram(0);

	add(d, 1, "a");
	add(d, 2, "b");
	add(d, 3, "c");
	add(fake_dgram(0), 4, "d");
	add(fake_dgram(0), 5, "e");

	assert_int_equal(cn_recv_batch(s, out, 2, CN_RECV_DONTWAIT), 2);
	assert_int_equal(out[0].msg->seq, 1);
	assert_int_equal(out[1].msg->seq, 2);
	/* the first call read two datagrams (max 2) with one system call */
	assert_int_equal(stats(s).syscalls, 1);
	assert_int_equal(stats(s).datagrams, 2);
	/* the rest of them is walked without another one */
	assert_int_equal(cn_recv_batch(s, out, 2, CN_RECV_DONTWAIT), 2);
	assert_int_equal(out[0].msg->seq, 3);
	assert_int_equal(out[1].msg->seq, 4);
	assert_int_equal(stats(s).syscalls, 1);
	/* cn_recv continues with the next datagram */
	expect_msg(s, 5, "e");
	assert_int_equal(stats(s).syscalls, 2);
}

static void batch_overrun_after_messages(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[8];
	struct fake_dgram *d = fake_dgram(0);

	add(d, 1, "a");
	fake_add_nl(d, NLMSG_OVERRUN, NULL, 0);
	/* returned first, the overrun is reported by the next call */
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 1);
	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(stats(s).overruns, 1);

	/* recvmmsg itself failing with ENOBUFS */
	fake_error(ENOBUFS);
	add(fake_dgram(0), 2, "b");
	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -ENOBUFS);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(stats(s).overruns, 2);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 2);
}

static void batch_malformed_and_foreign(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[8];
	struct fake_dgram *d;
	int n;

	add(fake_dgram(99), 1, "foreign");
	d = fake_dgram(0);
	add(d, 2, "good");
	d = fake_dgram(0);
	fake_add_cn(d, 0x123, 0x456, 3, 1003, "bad", 3)->len = 100;

	n = cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].msg->seq, 2);
	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(stats(s).foreign, 1);
	assert_int_equal(stats(s).malformed, 1);
	assert_int_equal(stats(s).syscalls, 1);

	/* a malformed datagram first: reported alone, the good one next */
	d = fake_dgram(0);
	fake_add_cn(d, 0x123, 0x456, 4, 1004, "bad", 3)->len = 100;
	add(fake_dgram(0), 5, "after");
	errno = 0;
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 5);
	assert_int_equal(stats(s).malformed, 2);
}

/* cn_recv_batch documents: "An overrun found after some messages were read
 * is returned by the next call". Datagram A holds a message and then an
 * overrun report, datagram B another message, both read by one recvmmsg:
 * the first call returns A's message, the next must report the overrun
 * (it sits before B's message in the stream), then B's message follows. */
static void batch_deferred_error_reported_by_next_call(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[8];
	struct fake_dgram *d = fake_dgram(0);
	int r;

	add(d, 1, "a");
	fake_add_nl(d, NLMSG_OVERRUN, NULL, 0);
	add(fake_dgram(0), 2, "b");

	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 1);
	r = cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT);
	assert_int_equal(r, -ENOBUFS);
	assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), 1);
	assert_int_equal(out[0].msg->seq, 2);
}

static void nonblocking_socket(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message m;

	/* no datagram: a non-blocking socket returns EAGAIN without DONTWAIT */
	assert_int_equal(cn_set_nonblocking(s, 1), 0);
	errno = 0;
	assert_int_equal(cn_recv(s, &m, 0), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
	add(fake_dgram(0), 1, "x");
	assert_int_equal(cn_recv(s, &m, 0), 0);
	assert_int_equal(m.msg->seq, 1);
}

/* The opts.batch setting: with one slot, cn_recv_batch reads one datagram
 * per call (recvmsg), with three, up to three (recvmmsg). */
static void batch_option_slots(void **state)
{
	struct cn_open_opts o;
	struct cn_message out[8];
	struct cn_sock *s;

	(void)state;
	/* aligned_alloc needs a size that is a multiple of the alignment:
	 * batch sizes that are not multiples of 16 once broke this under ASan. */
	for (uint32_t slots = 1; slots <= 3; slots += 2) {
		memset(&o, 0, sizeof(o));
		o.sz = sizeof(o);
		o.batch = slots;
		fake_reset();
		s = cn_open(NETLINK_CONNECTOR, &o);
		assert_non_null(s);
		for (uint32_t i = 1; i <= 4; i++)
			add(fake_dgram(0), i, "x");
		assert_int_equal(cn_recv_batch(s, out, 8, CN_RECV_DONTWAIT), (int)slots);
		assert_int_equal(out[0].msg->seq, 1);
		assert_int_equal(out[slots - 1].msg->seq, slots);
		if (slots == 1)
			assert_int_equal(fake_calls.recvfrom, 1);
		else
			assert_int_equal(fake_calls.recvmmsg, 1);
		cn_close(s);
	}
}

/* Three w1 replies bundled in one netlink message, framed as
 * drivers/w1/w1_netlink.c frames them (w1_bundle.h), come out as three
 * messages through cn_recv and through cn_recv_batch. */
static const struct w1_record w1_three[] = {
	{ 7, 8, "temp" }, /* a data reply: ack = request seq + 1 */
	{ 7, 99, "" },	  /* a status reply: the request's own ack */
	{ 7, 8, "21.5C" },
};

static void queue_w1_bundle(void)
{
	struct fake_dgram *d = fake_dgram(0);

	d->groups = 1u << (CN_W1_IDX - 1);
	d->len = w1_bundle(d->data, w1_three, 3);
}

static void expect_w1(const struct cn_message *m, const struct w1_record *r)
{
	struct cn_msg h;

	assert_non_null(m->msg);
	/* Delivered aligned (a bundle's records are not, in the datagram). */
	assert_int_equal((uintptr_t)m->msg % 4, 0);
	memcpy(&h, m->msg, sizeof(h));
	assert_int_equal(h.id.idx, CN_W1_IDX);
	assert_int_equal(h.id.val, CN_W1_VAL);
	assert_int_equal(h.seq, r->seq);
	assert_int_equal(h.ack, r->ack);
	assert_int_equal(h.len, strlen(r->data));
	assert_memory_equal((const uint8_t *)m->msg + sizeof(h), r->data, strlen(r->data));
	assert_int_equal(m->port, 0);
	assert_int_equal(m->group, CN_W1_IDX);
}

static void w1_bundle_by_recv_and_batch(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[4];

	queue_w1_bundle();
	for (int i = 0; i < 3; i++) {
		memset(&out[0], 0, sizeof(out[0]));
		assert_int_equal(cn_recv(s, &out[0], CN_RECV_DONTWAIT), 0);
		expect_w1(&out[0], &w1_three[i]);
	}
	expect_err(s, EAGAIN);

	queue_w1_bundle();
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 3);
	for (int i = 0; i < 3; i++)
		expect_w1(&out[i], &w1_three[i]);
	assert_int_equal(stats(s).messages, 6);
	assert_int_equal(stats(s).datagrams, 2);
	assert_int_equal(stats(s).malformed, 0);
}

/* Records of a datagram already read wait where poll cannot see them:
 * cn_pending counts them, as it counts an error to report after messages
 * already returned. */
static void pending_counts_records_already_read(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[4];
	struct fake_dgram *d;

	assert_int_equal(cn_pending(s), 0);
	queue_w1_bundle();
	assert_int_equal(cn_recv(s, &out[0], CN_RECV_DONTWAIT), 0);
	assert_int_equal(cn_pending(s), 2);
	assert_int_equal(cn_recv_batch(s, out, 1, CN_RECV_DONTWAIT), 1);
	assert_int_equal(cn_pending(s), 1);
	assert_int_equal(cn_recv(s, &out[0], CN_RECV_DONTWAIT), 0);
	expect_w1(&out[0], &w1_three[2]);
	assert_int_equal(cn_pending(s), 0);

	/* A batch read of more datagrams than max: the rest, and a foreign
	 * datagram (skipped, not counted) among them. */
	add(fake_dgram(0), 1, "a");
	add(fake_dgram(0), 2, "b");
	add(fake_dgram(4242), 3, "spoofed");
	add(fake_dgram(0), 4, "c");
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 3);
	assert_int_equal(cn_pending(s), 0);
	d = fake_dgram(0);
	add(d, 5, "d");
	fake_add_nl(d, NLMSG_NOOP, NULL, 0);
	add(d, 6, "e");
	fake_add_nl(d, NLMSG_OVERRUN, NULL, 0);
	assert_int_equal(cn_recv(s, &out[0], CN_RECV_DONTWAIT), 0);
	assert_int_equal(out[0].msg->seq, 5);
	assert_int_equal(cn_pending(s), 2); /* "e" and the overrun, not the no-op */
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 1);
	assert_int_equal(cn_pending(s), 1); /* the overrun, reported next */
	expect_err(s, ENOBUFS);
	assert_int_equal(cn_pending(s), 0);
	expect_err(s, EAGAIN);
}

/* A bundle whose last record runs past its netlink message: the records
 * before it are delivered, then -EBADMSG, counted as malformed. */
static void w1_bundle_cut_record(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_message out[4];
	struct fake_dgram *d = fake_dgram(0);
	struct cn_msg third;
	size_t at = NLMSG_HDRLEN + 24 + 20; /* after "temp" and the status */

	d->groups = 1u << (CN_W1_IDX - 1);
	d->len = w1_bundle(d->data, w1_three, 3);
	memcpy(&third, d->data + at, sizeof(third));
	third.len = 6; /* one byte more than the message holds */
	memcpy(d->data + at, &third, sizeof(third));
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), 2);
	expect_w1(&out[0], &w1_three[0]);
	expect_w1(&out[1], &w1_three[1]);
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), -EBADMSG);
	assert_int_equal(stats(s).malformed, 1);
	assert_int_equal(cn_recv_batch(s, out, 4, CN_RECV_DONTWAIT), -EAGAIN);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(several_messages_one_per_call),
		T(unicast_group_zero),
		T(malformed_then_good),
		T(enobufs_is_overrun),
		T(nlmsg_overrun_in_datagram),
		T(nlmsg_error_and_noop),
		T(truncated_datagram),
		T(walk_simple_and_checked_alike),
		T(cn_msg_len_disagrees),
		T(truncated_at_a_message_end),
		T(foreign_sender_skipped),
		cmocka_unit_test_setup_teardown(foreign_sender_accepted, setup_any, fake_teardown),
		T(batch_several_datagrams_one_syscall),
		T(batch_all_simple_counted),
		T(batch_fast_then_walked),
		T(batch_fill_every_slot),
		T(batch_smaller_than_available),
		T(batch_overrun_after_messages),
		T(batch_malformed_and_foreign),
		T(batch_deferred_error_reported_by_next_call),
		T(nonblocking_socket),
		T(w1_bundle_by_recv_and_batch),
		T(w1_bundle_cut_record),
		T(pending_counts_records_already_read),
		cmocka_unit_test(batch_option_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
