/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parse.c - walking the netlink messages of one received datagram. */
#include <string.h>

#include "internal.h"

int cn_parse_next(const void *buf, size_t len, size_t *offset, const struct cn_msg **out)
{
	if (!buf || !offset || !out)
		return cn_fail(EINVAL);
	return cn_ret(cn__parse_next(buf, len, offset, out));
}
