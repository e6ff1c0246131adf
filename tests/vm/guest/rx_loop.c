// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rx_loop.c - see rx_loop.h.
 */
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "rx_loop.h"

static double rx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void rx_loop(struct cn_sock *s, volatile int *stop, volatile uint64_t *overruns,
	     volatile double *last_rx, rx_took_fn *took, void *arg)
{
	struct cn_message msgs[64];
	struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
	int n;

	while (!*stop) {
		n = cn_recv_batch(s, msgs, 64, CN_RECV_DONTWAIT);
		if (n == -EAGAIN) {
			poll(&p, 1, 100);
		} else if (n == -ENOBUFS) {
			(*overruns)++;
		} else if (n > 0) {
			took(arg, msgs, n);
			*last_rx = rx_now();
		}
	}
}
