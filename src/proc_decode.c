/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_decode.c - cn_proc_decode: one proc connector message to a struct
 * cn_proc_event (the test and the decoder are inline in proc_internal.h,
 * shared with the proc receive calls). */
#include "proc_internal.h"

int cn_proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev)
{
	int r;

	if (!msg || !ev)
		return cn_fail(EINVAL);
	r = cn__proc_whole_event(msg);
	if (r <= 0)
		return cn_fail(r == 0 ? EPROTO : EBADMSG);
	cn__proc_decode_fields(msg, ev);
	ev->lost_before = 0;
	return 0;
}
