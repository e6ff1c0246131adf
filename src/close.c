/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* close.c - closing a socket: the layers above it first (async requests,
 * proc tracking), then the socket itself. On top of the other files so that
 * the socket layer needs to know none of them. */
#include "internal.h"

void cn_close(struct cn_sock *s)
{
	int saved = errno;

	if (!s)
		return;
	cn__async_free(s);
	cn__proc_free(s);
	/* Leaving the proc group (cn_request's own membership, cn_leave)
	 * after talking to the proc connector would leak the kernel's
	 * per-socket proc state at close (internal.h, proc_spoken): join
	 * back. Nothing is read any more, so no event is seen. */
	if (s->proc_spoken && !(s->joined & (1u << (CN_IDX_PROC - 1))))
		(void)cn_join(s, CN_IDX_PROC);
	cn__socket_free(s);
	errno = saved;
}
