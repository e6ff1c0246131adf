/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_decode.c - cn_proc_decode: one proc connector message to a struct
 * cn_proc_event (the decoder itself is inline in proc_internal.h, shared
 * with the receive fast path). */
#include "proc_internal.h"

int cn_proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev)
{
	if (!msg || !ev)
		return cn_fail(EINVAL);
	if (msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC)
		return cn_fail(EPROTO);
	/* The header is fixed; the union may grow, so only the part up to
	 * the largest member we know of must be there. */
	if (msg->len < sizeof(struct proc_event))
		return cn_fail(EBADMSG);
	cn__proc_decode_fields(msg, ev);
	ev->lost_before = 0;
	return 0;
}
