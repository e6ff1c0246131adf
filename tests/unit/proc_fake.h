/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_fake.h - the fake proc connector of the proc unit tests
 * (test_proc_listen.c, test_proc_seq.c, test_proc_recv.c): a fake kernel
 * (fake_sys.c) that answers LISTEN with an ack and queues events with
 * chosen per-CPU seqs, and the helpers those tests share.
 */
#ifndef CN_TEST_PROC_FAKE_H
#define CN_TEST_PROC_FAKE_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/cn_proc.h>

#include "fake_sys.h"

/* The fake kernel's per-CPU event counters. */
static uint32_t kseq[4];
static unsigned listens4, listens8;
static uint32_t ack_err; /* error the fake kernel puts in LISTEN acks */

/* Queue a proc event from `cpu` with that CPU's next seq (after skipping
 * `skip` seqs, i.e. events lost), into datagram d (NULL: a new one). */
static inline void event(struct fake_dgram *d, uint32_t cpu, uint32_t what, uint32_t skip,
			 uint32_t pid, uint32_t exit_code)
{
	struct proc_event pe;

	memset(&pe, 0, sizeof(pe));
	pe.what = what;
	pe.cpu = cpu;
	pe.timestamp_ns = 1000 + kseq[cpu];
	switch (what) {
	case PROC_EVENT_FORK:
		pe.event_data.fork.parent_pid = 1;
		pe.event_data.fork.parent_tgid = 1;
		pe.event_data.fork.child_pid = (__kernel_pid_t)pid;
		pe.event_data.fork.child_tgid = (__kernel_pid_t)pid;
		break;
	case PROC_EVENT_EXIT:
		pe.event_data.exit.process_pid = (__kernel_pid_t)pid;
		pe.event_data.exit.process_tgid = (__kernel_pid_t)pid;
		pe.event_data.exit.exit_code = exit_code;
		pe.event_data.exit.exit_signal = 17;
		break;
	default:
		pe.event_data.exec.process_pid = (__kernel_pid_t)pid;
		pe.event_data.exec.process_tgid = (__kernel_pid_t)pid;
		break;
	}
	kseq[cpu] += skip;
	fake_add_cn(d ? d : fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq[cpu]++, 0, &pe,
		    sizeof(pe));
}

/* The kernel's answer to LISTEN: an ack from CPU 0 with ack + 1 and that
 * CPU's next seq (not the request's). 8-byte proc_input LISTENs are not
 * answered: an old kernel (so libcn filters in userspace). */
static inline void kernel(const struct cn_msg *req, uint32_t dst, void *arg)
{
	struct proc_event pe;
	uint32_t op;

	(void)dst;
	(void)arg;
	if (req->id.idx != CN_IDX_PROC || req->len < 4)
		return;
	memcpy(&op, req->data, 4);
	if (req->len == 8) {
		listens8++;
		return;
	}
	listens4++;
	if (op != PROC_CN_MCAST_LISTEN)
		return;
	memset(&pe, 0, sizeof(pe));
	pe.what = PROC_EVENT_NONE;
	pe.cpu = 0;
	pe.event_data.ack.err = ack_err;
	fake_add_cn(fake_dgram(0), CN_IDX_PROC, CN_VAL_PROC, kseq[0]++, req->ack + 1, &pe,
		    sizeof(pe));
}

static inline int setup(void **state)
{
	struct cn_sock *s = fake_open(0, 0);

	memset(kseq, 0, sizeof(kseq));
	kseq[0] = 9;
	kseq[1] = 500;
	listens4 = listens8 = 0;
	ack_err = 0;
	fake_on_send(kernel, NULL);
	*state = s;
	return 0;
}

static inline struct cn_proc_stats pstats(struct cn_sock *s)
{
	struct cn_proc_stats st;

	assert_int_equal(cn_proc_stats(s, &st), 0);
	return st;
}

/* Receive with cn_recv and hand to cn_proc_handle; skip what it skips. */
static inline void next_event(struct cn_sock *s, struct cn_proc_event *ev)
{
	struct cn_message m;
	int r;

	for (int i = 0; i < 16; i++) {
		assert_int_equal(cn_recv(s, &m, CN_RECV_DONTWAIT), 0);
		memset(ev, 0xa5, sizeof(*ev));
		r = cn_proc_handle(s, &m, ev);
		assert_true(r == 0 || r == 1);
		if (r == 1)
			return;
	}
	fail_msg("no event");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, fake_teardown)

#endif /* CN_TEST_PROC_FAKE_H */
