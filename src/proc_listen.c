/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_listen.c - subscribing to proc events and unsubscribing: the LISTEN
 * and IGNORE operations (proc_ops.c) in the order each kernel needs, the
 * kernel filter when the probe (proc_probe.c) found one. */
#include <stdio.h>
#include <sys/utsname.h>

#include "proc_internal.h"

/* What LISTEN and IGNORE check first: a socket, not in a cn_request_all
 * callback (cn__busy), with its proc state (made on first use). 0 with *t
 * set, or the error the call returns. */
static int proc_op_state(struct cn_sock *s, struct cn_proc_state **t)
{
	if (!s)
		return cn_fail(EINVAL);
	if (cn__busy(s))
		return -EBUSY;
	*t = cn__proc_state(s);
	if (!*t)
		return cn_fail(ENOMEM);
	return 0;
}

int cn_proc_listen(struct cn_sock *s, uint32_t mask, int timeout_ms)
{
	struct cn_proc_state *t;
	int partial, kf = 0, fresh, r;

	if (mask & ~(uint32_t)CN_PROC_ALL)
		return cn_fail(EINVAL);
	r = proc_op_state(s, &t);
	if (r)
		return r;
	partial = mask != 0 && (mask & PROC_TYPES) != PROC_TYPES;
	fresh = !t->subscribed;
	r = cn__proc_track_reset(t, 0, 0);
	if (r < 0)
		return cn_fail(-r);
	r = cn_join(s, CN_IDX_PROC);
	if (r < 0)
		return r;
	if (partial) {
		/* With timeout 0 nothing is awaited: a filter only when an
		 * earlier probe found one (else libcn filters alone). */
		kf = cn_proc_probe_filter(s, timeout_ms);
		if (kf == -EAGAIN && timeout_ms == 0)
			kf = 0;
		if (kf < 0)
			return kf;
	}
	if (kf) {
		/* The probe (or this LISTEN ALL) proved the connector answers
		 * this socket; the filtered LISTEN that follows gets no ack. */
		r = cn__proc_listen_all(s, 1, timeout_ms);
		if (r < 0)
			return r;
		struct cn_proc_input in = { PROC_CN_MCAST_LISTEN, mask };

		r = cn__proc_op(s, &in, sizeof(in), 0);
	} else {
		r = cn__proc_listen_all(s, 0, timeout_ms);
	}
	if (r < 0)
		return r;
	/* The mask is applied in userspace even when the kernel filters:
	 * events of every type may have been queued between the unfiltered
	 * LISTEN and the filtered one. */
	r = cn__proc_track_reset(t, mask, kf);
	if (r < 0)
		return cn_fail(-r);
	/* A socket that was listening already keeps what arrived meanwhile
	 * (its events, and the acks in order for its tracking): the caller
	 * drains them (cn_pending). */
	if (fresh) {
		cn__proc_drop_kept(s, t);
		cn__proc_missed_start(s, t);
	}
	t->subscribed = 1;
	return 0;
}

/* Does the running kernel keep proc state per socket (a filter: 6.6 on)?
 * The probe's answer when one was made, else the kernel's version. */
static int kernel_keeps_socket_state(struct cn_sock *s)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;
	int r = cn_proc_probe_filter(s, 0); /* no probe: known or -EAGAIN */

	if (r >= 0)
		return r;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 6);
}

int cn_proc_ignore(struct cn_sock *s)
{
	uint32_t op = PROC_CN_MCAST_IGNORE;
	struct cn_proc_state *t;
	int r;

	r = proc_op_state(s, &t);
	if (r)
		return r;
	/* One IGNORE per counted LISTEN (extra ones are harmless on kernels
	 * that count a socket once), none without one: before 6.6 every
	 * IGNORE decrements one count for the whole machine, and at 0 no
	 * listener anywhere gets events. */
	int sent = t->listens > 0;

	while (t->listens > 0) {
		r = cn__proc_op(s, &op, sizeof(op), 0);
		if (r < 0)
			return r;
		t->listens--;
	}
	t->subscribed = 0;
	/* Kernels that filter per socket (6.6 on) keep the socket's proc
	 * state from its first LISTEN and free it at close only while the
	 * socket is still in the group (connector.c, cn_release): leaving
	 * would leak it. There the IGNORE just sent filters every event
	 * out, so the socket stays. */
	if (sent && kernel_keeps_socket_state(s))
		return 0;
	return cn_leave(s, CN_IDX_PROC);
}
