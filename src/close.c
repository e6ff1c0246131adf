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
	cn__socket_free(s);
	errno = saved;
}
