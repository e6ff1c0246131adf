/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_decode.c - cn_proc_decode: one proc connector message to a struct
 * cn_proc_event (cn__proc_decode, inline in proc_internal.h, is shared
 * with the proc receive calls). */
#include "proc_internal.h"

int cn_proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev)
{
	int r;

	if (!msg || !ev)
		return cn_fail(EINVAL);
	r = cn__proc_decode(msg, ev);
	if (r <= 0)
		return cn_fail(r == 0 ? EPROTO : EBADMSG);
	ev->lost_before = 0;
	return 0;
}
