/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * readers.h - the receive loops bench/listen.c measures on a live burst and
 * bench/replay.c on synthetic events: the raw loops (raw_loop.h: recv, and
 * recvmmsg at the batch readers' batch),
 * cn_proc_recv, the cn_recv_batch + cn_proc_handle loop a daemon writes,
 * and cn_proc_recv_batch's. Each is one cnb_read_* function, and callgrind
 * counts only those (--toggle-collect='cnb_read_*'), so that the program's
 * choice among them (a compare chain or a jump table, as the compiler
 * likes) is not counted in any of them.
 */
#ifndef CNB_READERS_H
#define CNB_READERS_H

#include "libcn.h"

#include "bench.h"
#include "raw_loop.h"

#define CNB_BATCH_MAX 1024

static int fd = -1;	   /* the raw loop's socket */
static struct cn_sock *cs; /* the libcn readers' socket */
/* cn_open's batch and the batch loops' max: datagrams per receive call */
static unsigned int batch_max = 32;

/* The loop a daemon writes: hand each message of a batch to cn_proc_handle,
 * read the next batch when none is left. The array holds batch_max
 * messages, as many datagrams as the socket reads per call (proc events:
 * one each). */
static struct cn_message msgs[CNB_BATCH_MAX];
static const struct cn_message *cur = msgs, *end = msgs; /* not yet handled */

static int libcn_batch_next(struct cn_proc_event *e)
{
	for (;;) {
		int n;

		while (cur < end)
			if (cn_proc_handle(cs, cur++, e) == 1)
				return 0;
		n = cn_recv_batch(cs, msgs, batch_max, 0);
		if (n < 0)
			return n;
		cur = msgs;
		end = msgs + n;
	}
}

/* The loop a daemon writes around cn_proc_recv_batch: the events of one
 * call, then the next call. Each is handed out by pointer (ev_out), decoded
 * once as the other readers' are. */
static struct cn_proc_event evs[CNB_BATCH_MAX];
static const struct cn_proc_event *ev_next = evs, *ev_end = evs, *ev_out;

static int libcn_proc_batch_next(void)
{
	if (ev_next == ev_end) {
		int n = cn_proc_recv_batch(cs, evs, batch_max, 0);

		if (n < 0)
			return n;
		ev_next = evs;
		ev_end = evs + n;
	}
	ev_out = ev_next++;
	return 0;
}

/* One event into *ev (raw), *e (cn_proc_recv, the batch loop) or ev_out
 * (cn_proc_recv_batch's own array): each reader's own result type, so no
 * conversion is counted. */
CNB_NOINLINE int cnb_read_raw(struct bev *ev);
CNB_NOINLINE int cnb_read_raw_batch(struct bev *ev);
CNB_NOINLINE int cnb_read_libcn(struct cn_proc_event *e);
CNB_NOINLINE int cnb_read_libcn_batch(struct cn_proc_event *e);
CNB_NOINLINE int cnb_read_libcn_proc_batch(void);

CNB_NOINLINE int cnb_read_raw(struct bev *ev)
{
	return raw_next(fd, ev);
}

CNB_NOINLINE int cnb_read_raw_batch(struct bev *ev)
{
	return raw_batch_next(fd, ev);
}

CNB_NOINLINE int cnb_read_libcn(struct cn_proc_event *e)
{
	return cn_proc_recv(cs, e, 0);
}

CNB_NOINLINE int cnb_read_libcn_batch(struct cn_proc_event *e)
{
	return libcn_batch_next(e);
}

CNB_NOINLINE int cnb_read_libcn_proc_batch(void)
{
	return libcn_proc_batch_next();
}

#endif /* CNB_READERS_H */
