/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * listen.c - cnb-listen: one proc connector listener per process, so that
 * several implementations can watch the same storm side by side.
 *
 * Modes:
 *   raw          recv() into a buffer, hand-parsed netlink + cn_msg + proc_event,
 *                per-CPU sequence tracking (the baseline a user would write)
 *   raw-batch    the same with recvmmsg, -B datagrams per call
 *   libcn        cn_proc_recv, one event per call
 *   libcn-batch  cn_recv_batch (recvmmsg) + cn_proc_handle
 *   libcn-proc-batch  cn_proc_recv_batch (recvmmsg), events decoded in place
 *   libnl        libnl-3 nl_recvmsgs with an NL_CB_FINISH callback (connector
 *                messages are NLMSG_DONE, which libnl treats as end of dump)
 *
 * The receive-and-decode step of every mode is one function, cnb_read_MODE(),
 * so `valgrind --tool=callgrind --toggle-collect='cnb_read_*'` counts exactly
 * the receive path. When libcnb-alloccount.so is preloaded,
 * heap allocations made during the receive loop (after setup) are counted.
 *
 * -B d sets the libcn modes' cn_open batch (datagrams per receive call), the
 * batch loops' max and raw-batch's recvmmsg vlen; -w waits for SIGUSR1
 * before reading, so a burst produced meanwhile is read at exactly d
 * datagrams per call.
 *
 * It prints one line of key=value counters at the end; calls, dgrams and
 * handled are the receive calls, datagrams and connector messages (events
 * and acks) of the receive loop, not of setup (raw and libnl: counted
 * outside the measured step, from the events, one per datagram). utime_us
 * and stime_us are the process's CPU time (getrusage) over the receive loop:
 * the library, the loop around it and the kernel, as a user pays them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "readers.h"

enum mode { RAW, LIBCN, LIBCN_BATCH, LIBNL, LIBCN_PROC_BATCH, RAW_BATCH };

static enum mode mode;
static struct nl_sock *nls;
static struct nl_cb *nlcb;

/* ---- libcn -------------------------------------------------------------- */

static void from_cn(const struct cn_proc_event *e, struct bev *ev)
{
	ev->what = e->what;
	ev->cpu = e->cpu;
	ev->seq = e->seq;
	ev->pid = e->pid;
	ev->tgid = e->tgid;
	ev->ptgid = e->parent_tgid;
	memcpy(ev->comm, e->comm, sizeof(ev->comm));
}

/* ---- libnl -------------------------------------------------------------- */

/* Events decoded by the callback of one nl_recvmsgs call. */
static struct bev nlq[64];
static unsigned int nlq_n, nlq_i;

static int nl_finish(struct nl_msg *msg, void *arg)
{
	(void)arg;
	if (nlq_n < 64 && raw_decode(nlmsg_hdr(msg), &nlq[nlq_n]))
		nlq_n++;
	return NL_OK;
}

static int libnl_next(struct bev *ev)
{
	while (nlq_i >= nlq_n) {
		int r;

		nlq_i = nlq_n = 0;
		own_syscalls++;
		r = nl_recvmsgs(nls, nlcb);
		if (r == -NLE_NOMEM) { /* libnl reports ENOBUFS as NLE_NOMEM */
			own_overruns++;
			return -ENOBUFS;
		}
		if (r < 0)
			return -EIO;
		if (nlq_n == 0)
			return -EAGAIN; /* SO_RCVTIMEO expired: nl_recv returns 0 */
	}
	*ev = nlq[nlq_i++];
	return 0;
}

/* ---- the measured step --------------------------------------------------- */

/* Receive and decode one proc event: the mode's cnb_read_* (readers.h, and
 * libnl's here), the only functions callgrind counts. */
CNB_NOINLINE int cnb_read_libnl(struct bev *ev);
CNB_NOINLINE int cnb_read_libnl(struct bev *ev)
{
	return libnl_next(ev);
}

static int cnb_next_event(struct bev *ev, struct cn_proc_event *e)
{
	switch (mode) {
	case RAW:
		return cnb_read_raw(ev);
	case RAW_BATCH:
		return cnb_read_raw_batch(ev);
	case LIBCN:
		return cnb_read_libcn(e);
	case LIBCN_BATCH:
		return cnb_read_libcn_batch(e);
	case LIBCN_PROC_BATCH:
		return cnb_read_libcn_proc_batch();
	default:
		return cnb_read_libnl(ev);
	}
}

/* ---- setup and accounting ------------------------------------------------ */

static uint8_t *mine; /* pids forked by the storm */

static long tv_us(const struct timeval *tv)
{
	return (long)tv->tv_sec * 1000000L + (long)tv->tv_usec;
}

static void setup(int rcvbuf, int batch)
{
	struct timeval tv = { .tv_sec = 2 };

	switch (mode) {
	case RAW:
	case RAW_BATCH:
		fd = cnb_raw_open(rcvbuf, CN_IDX_PROC);
		cnb_raw_proc_op(fd, PROC_CN_MCAST_LISTEN);
		break;
	case LIBCN:
	case LIBCN_BATCH:
	case LIBCN_PROC_BATCH: {
		struct cn_open_opts o = { .sz = sizeof(o),
					  .rcvbuf = rcvbuf,
					  .batch = (uint32_t)batch };

		cs = cn_open(NETLINK_CONNECTOR, &o);
		if (!cs)
			cnb_die("cn_open");
		if (cn_proc_listen(cs, 0, 2000) < 0)
			cnb_die("cn_proc_listen");
		fd = cn_fd(cs);
		break;
	}
	case LIBNL: {
		struct cnb_proc_req r;

		nls = nl_socket_alloc();
		if (!nls)
			cnb_die("nl_socket_alloc");
		nl_socket_disable_seq_check(nls);
		nl_socket_disable_auto_ack(nls);
		if (nl_connect(nls, NETLINK_CONNECTOR) < 0)
			cnb_die("nl_connect");
		/* nl_connect shrinks the buffer to 32 KiB: give it the same as the others. */
		fd = nl_socket_get_fd(nls);
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
			cnb_die("SO_RCVBUFFORCE");
		if (nl_socket_add_membership(nls, CN_IDX_PROC) < 0)
			cnb_die("nl_socket_add_membership");
		cnb_proc_req_init(&r, PROC_CN_MCAST_LISTEN, 1, 1);
		if (nl_send_simple(nls, NLMSG_DONE, 0, &r.cn, sizeof(r.cn) + sizeof(r.op)) < 0)
			cnb_die("nl_send_simple");
		nlcb = nl_cb_alloc(NL_CB_DEFAULT);
		nl_cb_set(nlcb, NL_CB_FINISH, NL_CB_CUSTOM, nl_finish, NULL);
		break;
	}
	}
	/* Bound every wait: a receive returns EAGAIN after 2 s of silence. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		cnb_die("SO_RCVTIMEO");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: cnb-listen -m raw|raw-batch|libcn|libcn-batch|libcn-proc-batch|libnl [-b "
		"rcvbuf]\n"
		"       [-B batch]"
		"       [-r readyfile] [-t timeout_s] [-w (wait for SIGUSR1 before reading)]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *ready = NULL, *mname = NULL;
	int rcvbuf = 212992, batch = 32, timeout = 60, wait_usr1 = 0, opt;
	uint64_t events = 0, ours_fork = 0, ours_exec = 0, ours_exit = 0, eagain = 0, enobufs = 0;
	int32_t storm = -1;
	int ended = 0;
	unsigned long (*alloc_count)(void);
	unsigned long allocs0 = 0, allocs1 = 0;
	double t0, deadline;

	while ((opt = getopt(argc, argv, "m:b:B:r:t:w")) != -1) {
		switch (opt) {
		case 'm':
			mname = optarg;
			break;
		case 'b':
			rcvbuf = atoi(optarg);
			break;
		case 'B':
			batch = atoi(optarg);
			if (batch < 1 || batch > CNB_BATCH_MAX)
				usage();
			batch_max = raw_batch = (unsigned int)batch;
			break;
		case 'r':
			ready = optarg;
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		case 'w':
			wait_usr1 = 1;
			break;
		default:
			usage();
		}
	}
	if (!mname)
		usage();
	if (!strcmp(mname, "raw"))
		mode = RAW;
	else if (!strcmp(mname, "raw-batch"))
		mode = RAW_BATCH;
	else if (!strcmp(mname, "libcn"))
		mode = LIBCN;
	else if (!strcmp(mname, "libcn-batch"))
		mode = LIBCN_BATCH;
	else if (!strcmp(mname, "libnl"))
		mode = LIBNL;
	else if (!strcmp(mname, "libcn-proc-batch"))
		mode = LIBCN_PROC_BATCH;
	else
		usage();

	mine = calloc(1u << 22, 1);
	if (!mine)
		cnb_die("calloc");
	/* Its pages faulted in now, not in the measured loop. */
	memset(mine, 0, 1u << 22);
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	setup(rcvbuf, batch);
	alloc_count = (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "cnb_alloc_count");
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	if (wait_usr1) {
		int sig;
		/* Burst: let the storm queue up in the socket, then read it all. */
		sigwait(&set, &sig);
	}

	struct cn_stats st0 = { 0 };
	struct rusage ru0, ru1;

	if (cs)
		cn_stats(cs, &st0);
	t0 = cnb_now();
	deadline = t0 + timeout;
	if (alloc_count)
		allocs0 = alloc_count();
	getrusage(RUSAGE_SELF, &ru0);
	while (!ended && cnb_now() < deadline) {
		struct bev ev;
		struct cn_proc_event e;
		int r = cnb_next_event(&ev, &e);

		if (r == -ENOBUFS) {
			enobufs++;
			continue;
		}
		if (r == -EAGAIN || r == -EINTR) {
			eagain++;
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "cnb-listen %s: %s\n", mname, strerror(-r));
			break;
		}
		if (mode == LIBCN || mode == LIBCN_BATCH)
			from_cn(&e, &ev);
		else if (mode == LIBCN_PROC_BATCH)
			from_cn(ev_out, &ev);
		events++;
		switch (ev.what) {
		case PROC_EVENT_COMM:
			if (!strncmp(ev.comm, CNB_START, sizeof(ev.comm)))
				storm = ev.tgid;
			else if (ev.tgid == storm && !strncmp(ev.comm, CNB_END, sizeof(ev.comm)))
				ended = 1;
			break;
		case PROC_EVENT_FORK:
			/* pids are reused during a long storm: mark and unmark */
			if ((uint32_t)ev.tgid < (1u << 22))
				mine[ev.tgid] = ev.ptgid == storm && storm > 0;
			if (ev.ptgid == storm && storm > 0)
				ours_fork++;
			break;
		case PROC_EVENT_EXEC:
			if ((uint32_t)ev.tgid < (1u << 22) && mine[ev.tgid])
				ours_exec++;
			break;
		case PROC_EVENT_EXIT:
			/* An exit is sent after exit_notify: a child already
			 * reaped may carry parent 0, so its fork marks it too. */
			if (ev.pid == ev.tgid && storm > 0 &&
			    (ev.ptgid == storm ||
			     ((uint32_t)ev.tgid < (1u << 22) && mine[ev.tgid])))
				ours_exit++;
			if ((uint32_t)ev.tgid < (1u << 22) && ev.pid == ev.tgid)
				mine[ev.tgid] = 0;
			break;
		default:
			break;
		}
	}
	getrusage(RUSAGE_SELF, &ru1);
	if (alloc_count)
		allocs1 = alloc_count();

	uint64_t lost = own_lost, overruns = own_overruns, syscalls = own_syscalls;
	uint64_t msgs = events;
	/* Receive calls and datagrams of the receive loop only (not setup), and
	 * the connector messages (events and acks) it took: what the receive
	 * step's instructions are divided by. */
	uint64_t calls = own_syscalls, dgrams = events, handled = events;

	if (cs) {
		struct cn_proc_stats ps;
		struct cn_stats st;

		cn_proc_stats(cs, &ps);
		cn_stats(cs, &st);
		lost = ps.lost;
		overruns = ps.overruns > enobufs ? ps.overruns : enobufs;
		syscalls = st.syscalls;
		msgs = st.messages;
		calls = st.syscalls - st0.syscalls;
		dgrams = st.datagrams - st0.datagrams;
		/* Messages a last batch read past the end marker were not taken. */
		handled = st.messages - st0.messages - (uint64_t)(end - cur) -
			  (uint64_t)(ev_end - ev_next);
	}
	printf("mode=%s events=%lu msgs=%lu ours_fork=%lu ours_exec=%lu ours_exit=%lu lost=%lu "
	       "overruns=%lu syscalls=%lu calls=%lu dgrams=%lu handled=%lu allocs=%ld ended=%d "
	       "secs=%.3f utime_us=%ld stime_us=%ld\n",
	       mname, (unsigned long)events, (unsigned long)msgs, (unsigned long)ours_fork,
	       (unsigned long)ours_exec, (unsigned long)ours_exit, (unsigned long)lost,
	       (unsigned long)overruns, (unsigned long)syscalls, (unsigned long)calls,
	       (unsigned long)dgrams, (unsigned long)handled,
	       alloc_count ? (long)(allocs1 - allocs0) : -1L, ended, cnb_now() - t0,
	       tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime),
	       tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime));
	(void)eagain;
	if (cs)
		cn_close(cs);
	if (nls) {
		nl_cb_put(nlcb);
		nl_socket_free(nls);
	}
	if (mode == RAW || mode == RAW_BATCH)
		close(fd);
	free(mine);
	return 0;
}
