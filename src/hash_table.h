/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash_table.h - libcn's one hash table: open addressing on a 64-bit key
 * with linear probing, sized once, with backward-shift deletion (no
 * tombstones, so probe runs stay short however many keys come and go).
 * Its users are the process tracker (keyed by pid) and the async table's
 * index (keyed by a reply's ack).
 *
 * A slot is the user's struct, of the size the user chose (a multiple of
 * 8), whose first member is the uint64_t key: 0 marks a free slot, so 0 is
 * never a key. The table never holds more than half its slots, so a probe
 * run always ends at a free slot. The same key may be added twice (the
 * async index holds the acks callers chose, which may repeat);
 * cn__htab_find_next walks them.
 *
 * Deleting moves later slots of the run back, data and all: a pointer to a
 * slot is valid until the next add or delete.
 */
#ifndef LIBCN_HASH_TABLE_H
#define LIBCN_HASH_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct cn__htab {
	unsigned char *slot; /* (mask + 1) slots of size bytes */
	size_t size;	     /* bytes per slot: a multiple of 8, the key first */
	uint32_t mask;	     /* slots - 1: a power of two, >= 2 * max */
	uint32_t count;	     /* keys held */
	uint32_t max;	     /* keys held at most: cn__htab_add refuses beyond */
};

/* Allocate room for max keys (max >= 1) in slots of size bytes, all free.
 * 0, or -EINVAL (max 0 or above 2^30, size not a multiple of 8), -ENOMEM. */
int cn__htab_init(struct cn__htab *h, uint32_t max, size_t size);
void cn__htab_free(struct cn__htab *h);

/* The slot key's probe run starts at: the low 32 bits, multiplied by
 * 2^32 / the golden ratio (Knuth's multiplicative hash). */
static inline uint32_t cn__htab_home(const struct cn__htab *h, uint64_t key)
{
	return ((uint32_t)key * 0x9e3779b1u) & h->mask;
}

static inline void *cn__htab_at(const struct cn__htab *h, uint32_t i)
{
	return h->slot + (size_t)i * h->size;
}

static inline uint64_t cn__htab_key(const void *slot)
{
	return *(const uint64_t *)slot;
}

/* The index of a slot of h. */
static inline uint32_t cn__htab_index(const struct cn__htab *h, const void *slot)
{
	return (uint32_t)((size_t)((const unsigned char *)slot - h->slot) / h->size);
}

/* The first slot of key's run from index i on holding key, or NULL. */
static inline void *cn__htab_probe(const struct cn__htab *h, uint64_t key, uint32_t i)
{
	for (;; i = (i + 1) & h->mask) {
		unsigned char *s = cn__htab_at(h, i);
		uint64_t k = cn__htab_key(s);

		if (k == key)
			return s;
		if (k == 0)
			return NULL;
	}
}

/* A slot holding key (key != 0), or NULL. */
static inline void *cn__htab_find(const struct cn__htab *h, uint64_t key)
{
	return cn__htab_probe(h, key, cn__htab_home(h, key));
}

/* The next slot after `slot` (found by cn__htab_find or this) holding the
 * same key, or NULL. */
static inline void *cn__htab_find_next(const struct cn__htab *h, const void *slot)
{
	return cn__htab_probe(h, cn__htab_key(slot), (cn__htab_index(h, slot) + 1) & h->mask);
}

/* A free slot for key (key != 0; one already held is added once more),
 * zeroed but for its key; NULL when max keys are held. */
void *cn__htab_add(struct cn__htab *h, uint64_t key);

/* Free `slot`, moving the later slots of its run back where they would no
 * longer be found past it. */
void cn__htab_del(struct cn__htab *h, void *slot);

/* The held slot after `prev` in index order (NULL: the first), or NULL at
 * the end. Nothing may be added or deleted meanwhile (cn__htab_sweep
 * may delete). */
void *cn__htab_next(const struct cn__htab *h, const void *prev);

/* What a sweep's fn returns. */
#define CN__HTAB_KEEP	0
#define CN__HTAB_DELETE 1

/* Call fn once for every held slot; a slot it returns CN__HTAB_DELETE for
 * is deleted before the next call. fn must not add or delete itself. */
void cn__htab_sweep(struct cn__htab *h, int (*fn)(void *slot, void *arg), void *arg);

#endif /* LIBCN_HASH_TABLE_H */
