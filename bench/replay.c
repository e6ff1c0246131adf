/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay.c - the receive paths of bench/listen.c fed the same synthetic proc
 * events every time, for instruction counts that do not depend on what else
 * runs on the machine (bench/replay runs it under callgrind).
 *
 * The live bench (bench/run, case 2b) reads a real fork storm, so the events
 * of other processes join the burst and the mix and batch sizes move with the
 * machine's load. Here recv, recvfrom and recvmmsg are defined in the
 * program: the dynamic linker binds libcn's calls to them too. Until the
 * measured loop starts they pass through to the kernel (cn_open, the LISTEN
 * and its ack are real); from then on they copy datagrams built in memory as
 * the kernel builds them (fork and exit on two CPUs, per-CPU sequence numbers
 * without gaps) into the caller's buffers, all of them from port 0 through
 * group 1. The copy is done in serve(), which bench/replay subtracts; the
 * stand-ins' own few instructions stay in, as a libc wrapper's would.
 *
 * Usage: cnb-replay raw|libcn|batch|proc-batch [datagrams per call]
 * (needs root for the LISTEN). Everything counted is inside a cnb_read_*
 * function (readers.h).
 */
#define _GNU_SOURCE
#include <sys/syscall.h>

#include "readers.h"

#define EVENTS	  6144 /* a multiple of every batch size bench/replay uses */
#define DGRAM_LEN NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(struct proc_event))

static uint8_t dgrams[EVENTS][NLMSG_ALIGN(DGRAM_LEN)] __attribute__((aligned(8)));
static int replaying;
static unsigned int served;

static void build_events(void)
{
	uint32_t seq[2] = { 0, 0 };

	for (int i = 0; i < EVENTS; i++) {
		struct nlmsghdr *h = (struct nlmsghdr *)dgrams[i];
		struct cn_msg *m = NLMSG_DATA(h);
		struct proc_event *pe = (struct proc_event *)m->data;
		uint32_t cpu = (uint32_t)(i / 2) % 2, pid = 1000 + (uint32_t)(i & ~1);

		h->nlmsg_len = DGRAM_LEN;
		h->nlmsg_type = NLMSG_DONE;
		m->id.idx = CN_IDX_PROC;
		m->id.val = CN_VAL_PROC;
		m->seq = seq[cpu]++;
		m->len = sizeof(*pe);
		pe->cpu = cpu;
		pe->timestamp_ns = 1000 + (uint64_t)i;
		if (i % 2 == 0) {
			pe->what = PROC_EVENT_FORK;
			pe->event_data.fork.parent_pid = pe->event_data.fork.parent_tgid = 100;
			pe->event_data.fork.child_pid = pe->event_data.fork.child_tgid = (int)pid;
		} else {
			pe->what = PROC_EVENT_EXIT;
			pe->event_data.exit.process_pid = pe->event_data.exit.process_tgid =
			    (int)pid;
			pe->event_data.exit.parent_pid = pe->event_data.exit.parent_tgid = 100;
		}
	}
}

/* The next datagram into buf, and its sender (the kernel) into *a. */
static CNB_NOINLINE size_t serve(void *buf, struct sockaddr *a, socklen_t *alen)
{
	memcpy(buf, dgrams[served++ % EVENTS], DGRAM_LEN);
	if (a) {
		struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_groups = 1 };

		memcpy(a, &nl, sizeof(nl));
		*alen = sizeof(nl);
	}
	return DGRAM_LEN;
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	if (!replaying)
		return syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
	return (ssize_t)serve(buf, NULL, NULL);
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *a, socklen_t *alen)
{
	if (!replaying)
		return syscall(SYS_recvfrom, fd, buf, len, flags, a, alen);
	return (ssize_t)serve(buf, a, alen);
}

int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t)
{
	if (!replaying)
		return (int)syscall(SYS_recvmmsg, fd, v, n, flags, t);
	for (unsigned int i = 0; i < n; i++) {
		struct msghdr *h = &v[i].msg_hdr;

		v[i].msg_len =
		    (unsigned int)serve(h->msg_iov[0].iov_base, h->msg_name, &h->msg_namelen);
		h->msg_flags = 0;
	}
	return (int)n;
}

/* ---- the readers: readers.h, as bench/listen.c measures them ---- */

enum mode { RAW, LIBCN, BATCH, PROC_BATCH };
static enum mode mode;

static int step(struct bev *ev, struct cn_proc_event *e)
{
	switch (mode) {
	case RAW:
		return cnb_read_raw(ev);
	case LIBCN:
		return cnb_read_libcn(e);
	case BATCH:
		return cnb_read_libcn_batch(e);
	default:
		return cnb_read_libcn_proc_batch();
	}
}

int main(int argc, char **argv)
{
	struct bev ev;
	struct cn_proc_event e;
	uint64_t sum = 0;

	if (argc < 2 || (strcmp(argv[1], "raw") && strcmp(argv[1], "libcn") &&
			 strcmp(argv[1], "batch") && strcmp(argv[1], "proc-batch"))) {
		fprintf(stderr,
			"usage: cnb-replay raw|libcn|batch|proc-batch [datagrams per call]\n");
		return 2;
	}
	mode = !strcmp(argv[1], "raw")	   ? RAW
	       : !strcmp(argv[1], "libcn") ? LIBCN
	       : !strcmp(argv[1], "batch") ? BATCH
					   : PROC_BATCH;
	batch_max = argc > 2 ? (unsigned int)atoi(argv[2]) : 1;
	if (batch_max < 1 || batch_max > 64 || EVENTS % batch_max) {
		fprintf(stderr, "cnb-replay: datagrams per call: 1..64, dividing %d\n", EVENTS);
		return 2;
	}
	build_events();
	if (mode != RAW) {
		struct cn_open_opts o = { .sz = sizeof(o), .batch = batch_max };

		cs = cn_open(NETLINK_CONNECTOR, &o);
		if (!cs || cn_proc_listen(cs, 0, 2000) < 0) {
			perror("cnb-replay: cn_open, cn_proc_listen");
			return 1;
		}
	}
	replaying = 1;
	for (int i = 0; i < EVENTS; i++) {
		int r = step(&ev, &e);

		if (r < 0) {
			fprintf(stderr, "cnb-replay: event %d: %s\n", i, strerror(-r));
			return 1;
		}
		sum += mode == RAW	    ? (uint64_t)ev.pid
		       : mode == PROC_BATCH ? (uint64_t)ev_out->pid
					    : (uint64_t)e.pid;
	}
	/* Every reader saw every event: the same sum of pids. */
	printf("events=%d pidsum=%llu lost=%llu\n", EVENTS, (unsigned long long)sum,
	       (unsigned long long)own_lost);
	return 0;
}
