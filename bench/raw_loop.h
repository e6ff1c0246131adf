/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * raw_loop.h - the baseline every receive path is measured against: a raw
 * recv loop that frames, decodes and tracks proc events by hand, as a
 * program without libcn does (bench/listen.c; bench/replay.c runs the same
 * code on synthetic events).
 */
#ifndef CNB_RAW_LOOP_H
#define CNB_RAW_LOOP_H

#include "bench.h"

/* What every mode hands to the accounting. */
struct bev {
	uint32_t what, cpu, seq;
	int32_t pid, tgid, ptgid;
	char comm[16];
};

/* Per-CPU tracking for the raw and libnl modes (libcn tracks itself). */
#define MAXCPU 1024
static uint32_t next_seq[MAXCPU];
static uint8_t seen[MAXCPU];
static uint64_t own_lost, own_overruns, own_syscalls;

static inline void track(uint32_t cpu, uint32_t seq)
{
	if (cpu >= MAXCPU)
		return;
	if (seen[cpu]) {
		uint32_t gap = seq - next_seq[cpu];

		if (gap < 0x80000000u)
			own_lost += gap;
	}
	seen[cpu] = 1;
	next_seq[cpu] = seq + 1;
}

static uint8_t rbuf[65536] __attribute__((aligned(8)));
static size_t rlen, roff;

static inline int raw_decode(const struct nlmsghdr *h, struct bev *ev)
{
	const struct cn_msg *m = NLMSG_DATA(h);
	const struct proc_event *pe;

	if (h->nlmsg_type != NLMSG_DONE || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) ||
	    NLMSG_LENGTH(sizeof(*m) + m->len) > h->nlmsg_len || m->id.idx != CN_IDX_PROC ||
	    m->id.val != CN_VAL_PROC || m->len < sizeof(*pe))
		return 0;
	pe = (const struct proc_event *)m->data;
	ev->what = pe->what;
	ev->cpu = pe->cpu;
	ev->seq = m->seq;
	ev->ptgid = 0;
	switch (pe->what) {
	case PROC_EVENT_FORK:
		ev->pid = pe->event_data.fork.child_pid;
		ev->tgid = pe->event_data.fork.child_tgid;
		ev->ptgid = pe->event_data.fork.parent_tgid;
		break;
	case PROC_EVENT_EXEC:
		ev->pid = pe->event_data.exec.process_pid;
		ev->tgid = pe->event_data.exec.process_tgid;
		break;
	case PROC_EVENT_EXIT:
		ev->pid = pe->event_data.exit.process_pid;
		ev->tgid = pe->event_data.exit.process_tgid;
		ev->ptgid = pe->event_data.exit.parent_tgid;
		break;
	case PROC_EVENT_COMM:
		ev->pid = pe->event_data.comm.process_pid;
		ev->tgid = pe->event_data.comm.process_tgid;
		memcpy(ev->comm, pe->event_data.comm.comm, sizeof(ev->comm));
		break;
	default:
		ev->pid = ev->tgid = 0;
		break;
	}
	track(ev->cpu, ev->seq);
	return 1;
}

static int raw_next(int fd, struct bev *ev)
{
	for (;;) {
		const struct nlmsghdr *h;

		if (roff >= rlen) {
			ssize_t n;

			own_syscalls++;
			n = recv(fd, rbuf, sizeof(rbuf), 0);
			if (n < 0) {
				if (errno == ENOBUFS)
					own_overruns++;
				return -errno;
			}
			rlen = (size_t)n;
			roff = 0;
		}
		h = (const struct nlmsghdr *)(rbuf + roff);
		if (rlen - roff < NLMSG_HDRLEN || h->nlmsg_len < NLMSG_HDRLEN ||
		    h->nlmsg_len > rlen - roff) {
			rlen = 0;
			continue;
		}
		roff += NLMSG_ALIGN(h->nlmsg_len);
		if (raw_decode(h, ev))
			return 0;
	}
}

/* The same loop reading with recvmmsg, up to raw_batch datagrams per call
 * (MSG_WAITFORONE: wait for the first, take what is queued), each datagram
 * framed, decoded and tracked as above: the baseline of the batch readers.
 * A datagram buffer of 4 KiB each, as a program would size them for proc
 * events. */
#define RAW_BATCH_MAX  1024
#define RAW_BATCH_SLOT 4160
static unsigned int raw_batch = 32;
static struct mmsghdr rmm[RAW_BATCH_MAX];
static struct iovec riov[RAW_BATCH_MAX];
static uint8_t (*rslots)[RAW_BATCH_SLOT];
static unsigned int rgot, rnext; /* datagrams read, the next to walk */
static const uint8_t *rdgram;	 /* the datagram being walked */

static int raw_batch_next(int fd, struct bev *ev)
{
	if (!rslots) {
		rslots = aligned_alloc(64, (size_t)RAW_BATCH_MAX * RAW_BATCH_SLOT);
		if (!rslots)
			return -ENOMEM;
		for (unsigned int i = 0; i < RAW_BATCH_MAX; i++) {
			riov[i].iov_base = rslots[i];
			riov[i].iov_len = RAW_BATCH_SLOT;
			rmm[i].msg_hdr.msg_iov = &riov[i];
			rmm[i].msg_hdr.msg_iovlen = 1;
		}
	}
	for (;;) {
		const struct nlmsghdr *h;

		if (roff >= rlen) {
			if (rnext >= rgot) {
				int got;

				own_syscalls++;
				got = recvmmsg(fd, rmm, raw_batch, MSG_WAITFORONE, NULL);
				if (got < 0) {
					if (errno == ENOBUFS)
						own_overruns++;
					return -errno;
				}
				rgot = (unsigned int)got;
				rnext = 0;
			}
			rdgram = rslots[rnext];
			rlen = rmm[rnext].msg_len;
			roff = 0;
			rnext++;
		}
		h = (const struct nlmsghdr *)(rdgram + roff);
		if (rlen - roff < NLMSG_HDRLEN || h->nlmsg_len < NLMSG_HDRLEN ||
		    h->nlmsg_len > rlen - roff) {
			rlen = 0;
			continue;
		}
		roff += NLMSG_ALIGN(h->nlmsg_len);
		if (raw_decode(h, ev))
			return 0;
	}
}

#endif /* CNB_RAW_LOOP_H */
