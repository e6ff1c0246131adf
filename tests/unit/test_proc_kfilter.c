/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_kfilter.c - cn_proc_listen on a (fake) kernel that filters proc
 * events per socket (Linux >= 6.6): the probe, the bytes of the filtered
 * LISTEN, no wait for the ack a filtered LISTEN never gets, and loss
 * tracking that does not mistake filtered-out events for lost ones.
 * A separate program: the probe result is kept once per process.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/cn_proc.h>

#include "fake_sys.h"

static uint32_t kseq;
static unsigned acks;

/* Answers LISTEN with event_type ALL (4- or 8-byte); like the kernel, a
 * filtered LISTEN gets no ack. */
static void kernel(const struct cn_msg *req, uint32_t dst, void *arg)
{
	struct proc_event pe;
	uint32_t in[2] = { 0, 0 };

	(void)dst;
	(void)arg;
	if (req->id.idx != CN_IDX_PROC || (req->len != 4 && req->len != 8))
		return;
	memcpy(in, req->data, req->len);
	if (in[0] != PROC_CN_MCAST_LISTEN)
		return;
	if (req->len == 8 && in[1] != CN_PROC_ALL)
		return;
	memset(&pe, 0, sizeof(pe));
	acks++;
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq++, req->ack + 1, &pe, sizeof(pe));
}

static void event(uint32_t what, uint32_t skip, uint32_t pid)
{
	struct proc_event pe;

	memset(&pe, 0, sizeof(pe));
	pe.what = what;
	pe.event_data.exit.process_pid = (__kernel_pid_t)pid;
	pe.event_data.exit.process_tgid = (__kernel_pid_t)pid;
	kseq += skip;
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq++, 0, &pe, sizeof(pe));
}

static int setup(void **state)
{
	struct cn_sock *s = fake_open(0, 0);

	kseq = 40;
	acks = 0;
	fake_on_send(kernel, NULL);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	cn_close(*state);
	return 0;
}

static struct cn_sock *sock(void **state)
{
	if (!*state)
		skip(); /* no netlink socket here */
	return *state;
}

static void payload(unsigned i, uint32_t *op, uint32_t *type, uint16_t *len)
{
	const struct cn_msg *m = fake_sent_cn(i);
	uint32_t in[2] = { 0, 0 };

	assert_non_null(m);
	assert_int_equal(m->id.idx, CN_IDX_PROC);
	assert_int_equal(m->id.val, CN_VAL_PROC);
	*len = m->len;
	memcpy(in, m->data, m->len <= 8 ? m->len : 8);
	*op = in[0];
	*type = in[1];
}

static void filtered_listen(void **state)
{
	struct cn_sock *s = sock(state);
	struct cn_proc_event ev;
	uint32_t op, type;
	uint16_t len;
	unsigned n;

	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT | CN_PROC_FORK, 1000), 1);
	n = fake_sent_count();
	assert_true(n >= 2);
	/* the probe: an 8-byte LISTEN of every type */
	payload(0, &op, &type, &len);
	assert_int_equal(len, 8);
	assert_int_equal(op, PROC_CN_MCAST_LISTEN);
	assert_int_equal(type, CN_PROC_ALL);
	/* last: the filtered LISTEN, 8 bytes {LISTEN, mask} */
	payload(n - 1, &op, &type, &len);
	assert_int_equal(len, 8);
	assert_int_equal(op, PROC_CN_MCAST_LISTEN);
	assert_int_equal(type, CN_PROC_EXIT | CN_PROC_FORK);
	/* probed once per process: a second query sends nothing */
	assert_int_equal(cn_proc_kernel_filters(s, 1000), 1);
	assert_int_equal(fake_sent_count(), n);

	/* The kernel filters, so its per-CPU counter skips what this socket
	 * does not get: not loss. */
	event(PROC_EVENT_FORK, 0, 10);
	event(PROC_EVENT_EXIT, 3, 10);
	event(PROC_EVENT_FORK, 1, 11);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_FORK);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 10);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
	{
		struct cn_proc_stats st;

		assert_int_equal(cn_proc_stats(s, &st), 0);
		assert_int_equal(st.lost, 0);
	}
}

static void full_listen_on_filtering_kernel(void **state)
{
	struct cn_sock *s = sock(state);
	struct cn_proc_event ev;
	uint32_t op, type;
	uint16_t len;

	/* all types: a plain 4-byte LISTEN, and exact loss tracking */
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	assert_int_equal(fake_sent_count(), 1);
	payload(0, &op, &type, &len);
	assert_int_equal(len, 4);
	assert_int_equal(op, PROC_CN_MCAST_LISTEN);
	event(PROC_EVENT_FORK, 0, 10);
	event(PROC_EVENT_EXIT, 2, 10);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 2);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(filtered_listen),
		T(full_listen_on_filtering_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
