/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * receive_loop.c - receiving until stopped, for cnctl's proc, listen, request and
 * notify: the stop signals, waiting for the socket, what a receive error
 * means (overruns are counted and reported, never silent), and the receive
 * loop of listen and notify.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libcn.h>

#include "common.h"

volatile sig_atomic_t cnctl_stop;

static void on_signal(int sig)
{
	cnctl_stop = sig;
}

int cnctl_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: poll and recv return EINTR */
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
		cnctl_err("sigaction: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	/* A closed pipe ends the output quietly (EPIPE), with the summary. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int64_t cnctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cnctl_wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	sigset_t block, old;
	int r = 0;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	/* Signals blocked between the flag check and ppoll: none slips through. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (!cnctl_stop) {
		r = ppoll(&p, 1, tsp, &old);
		if (r < 0)
			r = -errno;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r == -EINTR)
		return 0;
	return r > 0 ? 1 : r;
}

int cnctl_recv_error(int err, const char *lost, uint64_t *overruns)
{
	switch (err) {
	case -EINTR:
		return 0;
	case -ENOBUFS:
		(*overruns)++;
		fprintf(stderr, "cnctl: receive buffer overrun, %s lost\n", lost);
		return 0;
	case -EBADMSG:
	case -EMSGSIZE:
		cnctl_err("malformed datagram skipped: %s", strerror(-err));
		return 0;
	default:
		cnctl_err("receive: %s", strerror(-err));
		return CNCTL_EXIT_ERROR;
	}
}

/* Flush stdout: 0; 1 when the reader went away (EPIPE: stop quietly); -1
 * after a one-line error. */
static int flush_stdout(void)
{
	if (fflush(stdout) == 0)
		return 0;
	if (errno == EPIPE)
		return 1;
	cnctl_err("write to stdout: %s", strerror(errno));
	return -1;
}

int cnctl_recv_loop(struct cnctl_recv_loop *rl)
{
	const struct cnctl_opts *o = rl->o;
	struct cn_message msgs[CNCTL_RECV_BATCH];
	int64_t deadline = o->timeout >= 0 ? cnctl_now_ms() + o->timeout : 0;
	int r;

	while (!cnctl_stop && !(o->count && rl->printed >= o->count)) {
		int n = cn_recv_batch(rl->s, msgs, CNCTL_RECV_BATCH, CN_RECV_DONTWAIT);

		if (n > 0) {
			for (int i = 0; i < n && !(o->count && rl->printed >= o->count); i++)
				rl->printed += (uint64_t)rl->print(&msgs[i], rl->ctx);
			continue;
		}
		if (n == -EAGAIN) {
			int wait = -1;

			r = flush_stdout();
			if (r)
				return r < 0 ? CNCTL_EXIT_ERROR : CNCTL_EXIT_OK;
			if (o->timeout >= 0) {
				int64_t left = deadline - cnctl_now_ms();

				if (left <= 0)
					break;
				wait = (int)left;
			}
			r = cnctl_wait_readable(cn_fd(rl->s), wait);
			if (r < 0) {
				cnctl_err("poll: %s", strerror(-r));
				return CNCTL_EXIT_ERROR;
			}
			continue;
		}
		r = cnctl_recv_error(n, rl->lost, &rl->overruns);
		if (r)
			return r;
	}
	if (flush_stdout() < 0)
		return CNCTL_EXIT_ERROR;
	if (o->count && rl->printed < o->count && o->timeout >= 0 && !cnctl_stop)
		return CNCTL_EXIT_TIMEOUT;
	return CNCTL_EXIT_OK;
}
