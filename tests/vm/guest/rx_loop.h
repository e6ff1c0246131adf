/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rx_loop.h - the loop of a listener thread (guest tests, bench/cbus): it
 * reads without blocking for long, so that it sees its stop flag soon, and
 * counts an overrun instead of stopping at it (the caller checks them).
 */
#ifndef CNBUS_VM_RX_LOOP_H
#define CNBUS_VM_RX_LOOP_H

#include <stdint.h>

#include <libcn.h>

/* What the loop hands each batch of n (>= 1) messages to. */
typedef void rx_took_fn(void *arg, const struct cn_message *msgs, int n);

/* Until *stop: batches of up to 64 messages from s (cn_recv_batch, waiting
 * at most 100 ms at a time), each given to took(arg, ...), *last_rx then
 * set to the time (CLOCK_MONOTONIC seconds, as now_s()); overruns counted
 * in *overruns, other errors passed over. */
void rx_loop(struct cn_sock *s, volatile int *stop, volatile uint64_t *overruns,
	     volatile double *last_rx, rx_took_fn *took, void *arg);

#endif
