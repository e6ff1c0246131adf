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
/* != 0: after each ack to an unfiltered LISTEN, an event of this type
 * (an event the socket got before its filtered LISTEN took effect). */
static uint32_t after_ack;
static uint32_t after_ack_code;

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
	if (after_ack) {
		pe.what = after_ack;
		pe.event_data.exit.process_pid = 99;
		pe.event_data.exit.process_tgid = 99;
		pe.event_data.exit.exit_code = after_ack_code;
		fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq++, 0, &pe, sizeof(pe));
	}
}

static void event_code(uint32_t what, uint32_t skip, uint32_t pid, uint32_t code)
{
	struct proc_event pe;

	memset(&pe, 0, sizeof(pe));
	pe.what = what;
	pe.event_data.exit.exit_code = code;
	pe.event_data.exit.process_pid = (__kernel_pid_t)pid;
	pe.event_data.exit.process_tgid = (__kernel_pid_t)pid;
	kseq += skip;
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq++, 0, &pe, sizeof(pe));
}

static void event(uint32_t what, uint32_t skip, uint32_t pid)
{
	event_code(what, skip, pid, 0);
}

static int setup(void **state)
{
	struct cn_sock *s = fake_open(0, 0);

	kseq = 40;
	acks = 0;
	after_ack = 0;
	after_ack_code = 0;
	fake_on_send(kernel, NULL);
	*state = s;
	return 0;
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
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	uint32_t op, type;
	uint16_t len;
	unsigned n;

	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT | CN_PROC_FORK, 1000), 0);
	assert_int_equal(cn_proc_filter_mode(s), CN_PROC_FILTER_USER | CN_PROC_FILTER_KERNEL);
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
	assert_int_equal(cn_proc_probe_filter(s, 1000), 1);
	assert_int_equal(fake_sent_count(), n);

	/* The kernel filters, so its per-CPU counter skips what this socket
	 * does not get: not loss. */
	event(PROC_EVENT_FORK, 0, 10);
	event(PROC_EVENT_EXIT, 3, 10);
	event(PROC_EVENT_FORK, 1, 11);
	memset(&ev, 0xa5, sizeof(ev)); /* lost_before is written, not kept */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_FORK);
	assert_int_equal(ev.lost_before, 0);
	memset(&ev, 0xa5, sizeof(ev)); /* lost_before is written, not kept */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 10);
	assert_int_equal(ev.lost_before, 0);
	memset(&ev, 0xa5, sizeof(ev)); /* lost_before is written, not kept */
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
	struct cn_sock *s = fake_sock(state);
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
	memset(&ev, 0xa5, sizeof(ev)); /* lost_before is written, not kept */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 0);
	memset(&ev, 0xa5, sizeof(ev)); /* lost_before is written, not kept */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.lost_before, 2);
}

/* cn_proc_listen's unfiltered LISTEN is acked before the filtered one is
 * sent: an exec queued after that ack reaches the socket although only
 * exits were asked for. It must not reach the caller. */
static void event_before_filter_not_delivered(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	after_ack = PROC_EVENT_EXEC;
	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT, 1000), 0);
	assert_int_equal(cn_proc_filter_mode(s), CN_PROC_FILTER_USER | CN_PROC_FILTER_KERNEL);
	after_ack = 0;
	event(PROC_EVENT_EXIT, 0, 10);
	/* cn_proc_recv: the exec is skipped, the exit returned */
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 10);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);
}

/* The same through cn_recv_batch + cn_proc_handle. */
static void event_before_filter_not_handled(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;
	struct cn_message m[8];
	int n, wanted = 0, seen = 0;

	after_ack = PROC_EVENT_EXEC;
	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT, 1000), 0);
	assert_int_equal(cn_proc_filter_mode(s), CN_PROC_FILTER_USER | CN_PROC_FILTER_KERNEL);
	after_ack = 0;
	event(PROC_EVENT_EXIT, 0, 10);
	/* the exec and the exit (the ack was consumed: nothing kept) */
	while ((n = cn_recv_batch(s, m, 8, CN_RECV_DONTWAIT)) > 0) {
		for (int i = 0; i < n; i++) {
			int r = cn_proc_handle(s, &m[i], &ev);

			assert_true(r == 0 || r == 1);
			if (r == 1) {
				assert_int_equal(ev.what, CN_PROC_EXIT);
				assert_int_equal(ev.pid, 10);
				wanted++;
			}
			seen++;
		}
	}
	assert_int_equal(n, -EAGAIN);
	assert_int_equal(seen, 2);
	assert_int_equal(wanted, 1);
}

/* CN_PROC_NONZERO_EXIT alone: exits with status 0, and other types that
 * arrived before the filter, stay in userspace. */
static void nonzero_exit_in_userspace(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_proc_event ev;

	after_ack = PROC_EVENT_EXIT; /* status 0: not wanted */
	assert_int_equal(cn_proc_listen(s, CN_PROC_NONZERO_EXIT, 1000), 0);
	after_ack = 0;
	event(PROC_EVENT_FORK, 0, 11);
	event_code(PROC_EVENT_EXIT, 0, 12, 0);
	event_code(PROC_EVENT_EXIT, 0, 13, 1 << 8);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.what, CN_PROC_EXIT);
	assert_int_equal(ev.pid, 13);
	assert_int_equal(ev.exit_code, 1 << 8);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), -EAGAIN);

	/* with CN_PROC_EXIT as well, every exit */
	assert_int_equal(cn_proc_listen(s, CN_PROC_EXIT | CN_PROC_NONZERO_EXIT, 1000), 0);
	assert_int_equal(cn_proc_filter_mode(s), CN_PROC_FILTER_USER | CN_PROC_FILTER_KERNEL);
	event_code(PROC_EVENT_EXIT, 0, 14, 0);
	assert_int_equal(cn_proc_recv(s, &ev, CN_RECV_DONTWAIT), 0);
	assert_int_equal(ev.pid, 14);
}

/* LISTENs sent without waiting (timeout 0, the probe done before) are
 * undone by cn_proc_ignore like acked ones: one IGNORE each. */
static void unawaited_filtered_listen_undone(void **state)
{
	struct cn_sock *s = fake_sock(state);
	struct cn_sock *s2;
	unsigned n, i, ignores = 0;
	uint32_t op, type;
	uint16_t len;

	assert_int_equal(cn_proc_probe_filter(s, 1000), 1);
	s2 = fake_open(0, 0);
	assert_non_null(s2);
	n = fake_sent_count();
	assert_int_equal(cn_proc_listen(s2, CN_PROC_EXIT, 0), 0);
	assert_int_equal(cn_proc_filter_mode(s2), CN_PROC_FILTER_USER | CN_PROC_FILTER_KERNEL);
	assert_int_equal(fake_sent_count(), n + 2); /* LISTEN all, then the filtered one */
	n = fake_sent_count();
	assert_int_equal(cn_proc_ignore(s2), 0);
	for (i = n; i < fake_sent_count(); i++) {
		payload(i, &op, &type, &len);
		assert_int_equal(len, 4);
		assert_int_equal(op, PROC_CN_MCAST_IGNORE);
		ignores++;
	}
	assert_int_equal(ignores, 2);
	cn_close(s2);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		T(filtered_listen),
		T(full_listen_on_filtering_kernel),
		T(event_before_filter_not_delivered),
		T(event_before_filter_not_handled),
		T(nonzero_exit_in_userspace),
		T(unawaited_filtered_listen_undone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
