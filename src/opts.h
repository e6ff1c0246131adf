/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * opts.h - the size rule for options structs that start with `size_t sz`
 * (cn_open_opts, cn_proc_tracker_opts), libbpf's: a caller built against an
 * older, smaller struct passes its smaller sz and gets defaults for the rest;
 * one built against a newer, larger struct is accepted when every byte this
 * library does not know is zero (it asked for nothing new), else refused
 * with E2BIG.
 */
#ifndef LIBCN_OPTS_H
#define LIBCN_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* Are bytes [known, sz) of opts nonzero? */
static inline int cn__opts_tail_nonzero(const void *opts, size_t sz, size_t known)
{
	const uint8_t *p = opts;

	for (size_t i = known; i < sz; i++)
		if (p[i])
			return 1;
	return 0;
}

#endif /* LIBCN_OPTS_H */
