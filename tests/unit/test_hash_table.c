/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_hash_table.c - libcn's one hash table (src/hash_table.c): keys
 * found where their probe runs put them, backward-shift deletion mending
 * runs that wrap around the end of the array, data moving with its key,
 * duplicate keys, the bound, and a sweep that deletes as it goes visiting
 * every slot once. Keys are made with the home slot a test wants by
 * inverting the multiplicative hash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hash_table.h"

struct item {
	uint64_t key;
	uint64_t payload; /* moves with the key */
};

/* The inverse of the hash's multiplier modulo 2^32 (Newton's iteration). */
static uint32_t inverse(void)
{
	uint32_t c = 0x9e3779b1u, x = c;

	for (int i = 0; i < 5; i++)
		x *= 2 - c * x;
	return x;
}

/* The n-th key (n >= 0) whose home slot in h is `home`. */
static uint64_t key_at(const struct cn__htab *h, uint32_t home, uint32_t n)
{
	uint64_t k = (uint32_t)((home + n * (h->mask + 1u)) * inverse());

	assert_int_equal(cn__htab_home(h, k), home);
	assert_true(k != 0);
	return k;
}

static struct item *add(struct cn__htab *h, uint64_t key)
{
	struct item *it = cn__htab_add(h, key);

	assert_non_null(it);
	assert_true(it->key == key);
	assert_true(it->payload == 0); /* zeroed */
	it->payload = key ^ 0x5555;
	return it;
}

/* Four keys, added in this order. */
struct four {
	uint64_t a, b, c, d;
};

/* h made with bound 4 (8 slots) and four keys added to it, a to d, each
 * given as { home slot, which of that home's keys } (key_at). */
static struct four add_four(struct cn__htab *h, const uint32_t at[4][2])
{
	uint64_t k[4];

	assert_int_equal(cn__htab_init(h, 4, sizeof(struct item)), 0);
	for (int i = 0; i < 4; i++)
		k[i] = key_at(h, at[i][0], at[i][1]);
	for (int i = 0; i < 4; i++)
		add(h, k[i]);
	return (struct four){ k[0], k[1], k[2], k[3] };
}

static uint32_t index_of(const struct cn__htab *h, uint64_t key)
{
	struct item *it = cn__htab_find(h, key);

	assert_non_null(it);
	assert_true(it->payload == (key ^ 0x5555)); /* its own data */
	return cn__htab_index(h, it);
}

/* Where k's keys are: at[] the slots of a to d, -1 for one deleted (not
 * found). */
static void assert_slots(const struct cn__htab *h, const struct four *k, const int at[4])
{
	const uint64_t key[4] = { k->a, k->b, k->c, k->d };

	for (int i = 0; i < 4; i++)
		if (at[i] < 0)
			assert_null(cn__htab_find(h, key[i]));
		else
			assert_int_equal(index_of(h, key[i]), at[i]);
}

static void init_refuses_bad_sizes(void **state)
{
	struct cn__htab h;

	(void)state;
	assert_int_equal(cn__htab_init(&h, 0, 16), -EINVAL);
	assert_int_equal(cn__htab_init(&h, 4, 12), -EINVAL);
	assert_int_equal(cn__htab_init(&h, 4, 0), -EINVAL);
	assert_int_equal(cn__htab_init(&h, 3, 16), 0);
	assert_int_equal(h.mask, 7); /* the power of two >= twice the bound */
	cn__htab_free(&h);
}

static void bound_refuses_more(void **state)
{
	struct cn__htab h;

	(void)state;
	assert_int_equal(cn__htab_init(&h, 4, sizeof(struct item)), 0);
	for (uint64_t k = 1; k <= 4; k++)
		add(&h, k);
	assert_null(cn__htab_add(&h, 5));
	cn__htab_del(&h, cn__htab_find(&h, 2));
	assert_null(cn__htab_find(&h, 2));
	add(&h, 5);
	for (uint64_t k = 1; k <= 5; k++)
		if (k != 2)
			index_of(&h, k);
	cn__htab_free(&h);
}

/* A run that starts at the last slot and goes on at slot 0: deleting its
 * first key moves the wrapped ones back across the end. */
static void delete_wraps_around_the_end(void **state)
{
	struct cn__htab h;
	struct four k;

	(void)state;
	k = add_four(&h, (const uint32_t[4][2]){ { 7, 0 }, { 7, 1 }, { 7, 2 }, { 0, 1 } });
	assert_slots(&h, &k, (const int[4]){ 7, 0, 1, 2 });

	cn__htab_del(&h, cn__htab_find(&h, k.a));
	/* b back across the end; d (home 0) one back, not to 7 */
	assert_slots(&h, &k, (const int[4]){ -1, 7, 0, 1 });
	assert_true(cn__htab_key(cn__htab_at(&h, 2)) == 0);
	assert_int_equal(h.count, 3);
	cn__htab_free(&h);
}

/* A slot whose home lies between the hole and itself stays where it is,
 * and the ones after it still move. */
static void delete_keeps_what_is_reachable(void **state)
{
	struct cn__htab h;
	struct four k;

	(void)state;
	/* a at 6, b at 7 (its home), c at 0, d at 1 */
	k = add_four(&h, (const uint32_t[4][2]){ { 6, 0 }, { 7, 0 }, { 6, 1 }, { 7, 1 } });
	cn__htab_del(&h, cn__htab_find(&h, k.a));
	/* b (home 7) stays; c (home 6) past b into the hole; d (home 7) one back */
	assert_slots(&h, &k, (const int[4]){ -1, 7, 6, 0 });
	cn__htab_del(&h, cn__htab_find(&h, k.b));
	assert_slots(&h, &k, (const int[4]){ -1, -1, 6, 7 });
	assert_true(cn__htab_key(cn__htab_at(&h, 0)) == 0);
	assert_true(cn__htab_key(cn__htab_at(&h, 1)) == 0);
	cn__htab_free(&h);
}

static void duplicates_found_one_after_another(void **state)
{
	struct cn__htab h;
	struct item *it;
	int n = 0;

	(void)state;
	assert_int_equal(cn__htab_init(&h, 8, sizeof(struct item)), 0);
	add(&h, 42)->payload = 1;
	add(&h, 43);
	add(&h, 42)->payload = 2;
	for (it = cn__htab_find(&h, 42); it; it = cn__htab_find_next(&h, it)) {
		assert_true(it->key == 42);
		n += (int)it->payload;
	}
	assert_int_equal(n, 3);
	cn__htab_del(&h, cn__htab_find(&h, 42));
	it = cn__htab_find(&h, 42);
	assert_non_null(it);
	assert_true(it->payload == 2);
	assert_null(cn__htab_find_next(&h, it));
	cn__htab_free(&h);
}

/* Random adds and deletes in a small table against a model of what it
 * holds: after each, every key held is found with its data and every other
 * is not. The keys crowd four homes across the end of the array, so runs
 * are long and wrap. */
static void random_against_a_model(void **state)
{
	enum { KEYS = 64, MAX = 24 };
	static const uint32_t homes[4] = { 62, 63, 0, 1 };
	uint64_t key[KEYS];
	int held[KEYS] = { 0 };
	struct cn__htab h;
	uint32_t x = 12345;

	(void)state;
	assert_int_equal(cn__htab_init(&h, MAX, sizeof(struct item)), 0);
	assert_int_equal(h.mask, 63);
	for (int i = 0; i < KEYS; i++)
		key[i] = key_at(&h, homes[i % 4], (uint32_t)i / 4 + 1);
	for (int round = 0; round < 20000; round++) {
		int i;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		i = (int)(x % KEYS);
		if (held[i]) {
			cn__htab_del(&h, cn__htab_find(&h, key[i]));
			held[i] = 0;
		} else if (h.count < MAX) {
			add(&h, key[i]);
			held[i] = 1;
		}
		for (int j = 0; j < KEYS; j++) {
			if (held[j])
				index_of(&h, key[j]);
			else
				assert_null(cn__htab_find(&h, key[j]));
		}
	}
	cn__htab_free(&h);
}

struct sweep_ctx {
	uint64_t seen[16];
	int n;
	int delete_odd; /* delete the slots of odd keys */
	int delete_all;
};

static int visit(void *slot, void *arg)
{
	struct sweep_ctx *c = arg;
	struct item *it = slot;

	for (int i = 0; i < c->n; i++)
		assert_true(c->seen[i] != it->key); /* once each */
	c->seen[c->n++] = it->key;
	return c->delete_all || (c->delete_odd && (it->key & 1)) ? CN__HTAB_DELETE : CN__HTAB_KEEP;
}

/* A sweep that deletes: a run wrapping around the end loses slots, the
 * ones after move back, and each slot is still seen exactly once. */
static void sweep_deletes_each_once(void **state)
{
	struct sweep_ctx c = { .delete_odd = 1 };
	struct cn__htab h;
	uint64_t k[4];
	int odd = 0;

	(void)state;
	assert_int_equal(cn__htab_init(&h, 4, sizeof(struct item)), 0);
	/* Homes 6, 6, 7, 7: slots 6, 7, 0, 1 (the run wraps). */
	k[0] = key_at(&h, 6, 0);
	k[1] = key_at(&h, 6, 1);
	k[2] = key_at(&h, 7, 0);
	k[3] = key_at(&h, 7, 1);
	for (int i = 0; i < 4; i++) {
		add(&h, k[i]);
		odd += (int)(k[i] & 1);
	}
	cn__htab_sweep(&h, visit, &c);
	assert_int_equal(c.n, 4);
	assert_int_equal(h.count, 4 - odd);
	for (int i = 0; i < 4; i++) {
		if (k[i] & 1)
			assert_null(cn__htab_find(&h, k[i]));
		else
			index_of(&h, k[i]);
	}
	cn__htab_free(&h);
}

/* A sweep that deletes everything from a run at slot 0, where a sweep that
 * did not look for a free slot to start after would start. */
static void sweep_deletes_all(void **state)
{
	struct sweep_ctx c = { .delete_all = 1 };
	struct cn__htab h;

	(void)state;
	assert_int_equal(cn__htab_init(&h, 4, sizeof(struct item)), 0);
	for (uint32_t n = 0; n < 4; n++)
		add(&h, key_at(&h, 0, n + 1)); /* slots 0 to 3 */
	cn__htab_sweep(&h, visit, &c);
	assert_int_equal(c.n, 4);
	assert_int_equal(h.count, 0);
	for (uint32_t i = 0; i <= h.mask; i++)
		assert_true(cn__htab_key(cn__htab_at(&h, i)) == 0);
	cn__htab_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init_refuses_bad_sizes),
		cmocka_unit_test(bound_refuses_more),
		cmocka_unit_test(delete_wraps_around_the_end),
		cmocka_unit_test(delete_keeps_what_is_reachable),
		cmocka_unit_test(duplicates_found_one_after_another),
		cmocka_unit_test(random_against_a_model),
		cmocka_unit_test(sweep_deletes_each_once),
		cmocka_unit_test(sweep_deletes_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
