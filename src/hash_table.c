/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash_table.c - the parts of libcn's hash table (hash_table.h) that change
 * it: allocation, adding, backward-shift deletion and a sweep that may
 * delete as it goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash_table.h"

int cn__htab_init(struct cn__htab *h, uint32_t max, size_t size)
{
	uint32_t slots = 2;

	if (max == 0 || max > (1u << 30) || size < sizeof(uint64_t) || size % sizeof(uint64_t))
		return -EINVAL;
	while (slots < 2 * max)
		slots <<= 1;
	/* calloc refuses a product that overflows. */
	h->slot = calloc(slots, size);
	if (!h->slot)
		return -ENOMEM;
	h->size = size;
	h->mask = slots - 1;
	h->count = 0;
	h->max = max;
	return 0;
}

void cn__htab_free(struct cn__htab *h)
{
	free(h->slot);
	h->slot = NULL;
	h->count = 0;
}

void *cn__htab_add(struct cn__htab *h, uint64_t key)
{
	uint32_t i = cn__htab_home(h, key);
	unsigned char *s;

	if (h->count >= h->max)
		return NULL;
	while (cn__htab_key(cn__htab_at(h, i)) != 0)
		i = (i + 1) & h->mask;
	s = cn__htab_at(h, i);
	memset(s, 0, h->size);
	memcpy(s, &key, sizeof(key));
	h->count++;
	return s;
}

void cn__htab_del(struct cn__htab *h, void *slot)
{
	uint32_t hole = cn__htab_index(h, slot), i = hole;

	for (;;) {
		unsigned char *s;
		uint32_t home;

		i = (i + 1) & h->mask;
		s = cn__htab_at(h, i);
		if (cn__htab_key(s) == 0)
			break;
		home = cn__htab_home(h, cn__htab_key(s));
		/* The slot at i stays unless its home lies cyclically in
		 * (hole, i]: then it is reachable where it is. */
		if (((i - home) & h->mask) >= ((i - hole) & h->mask)) {
			memcpy(cn__htab_at(h, hole), s, h->size);
			hole = i;
		}
	}
	memset(cn__htab_at(h, hole), 0, h->size);
	h->count--;
}

void *cn__htab_next(const struct cn__htab *h, const void *prev)
{
	uint32_t i = prev ? cn__htab_index(h, prev) + 1 : 0;

	for (; i <= h->mask; i++)
		if (cn__htab_key(cn__htab_at(h, i)) != 0)
			return cn__htab_at(h, i);
	return NULL;
}

void cn__htab_sweep(struct cn__htab *h, int (*fn)(void *slot, void *arg), void *arg)
{
	uint32_t start = 0, n;

	/* Start after a free slot (there is one: the table is at most half
	 * full): no probe run crosses it, so a deletion moves a slot only
	 * from later in the sweep back to where the sweep is, never one the
	 * sweep has passed to where it is still to go. */
	while (cn__htab_key(cn__htab_at(h, start)) != 0)
		start++;
	for (n = 1; n <= h->mask; n++) {
		uint32_t i = (start + n) & h->mask;
		void *s = cn__htab_at(h, i);

		/* A deletion moves the next slot of the run into i: its
		 * turn comes at once. */
		while (cn__htab_key(s) != 0 && fn(s, arg) == CN__HTAB_DELETE)
			cn__htab_del(h, s);
	}
}
