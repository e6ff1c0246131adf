/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * alloccount.c - libcnb-alloccount.so, an LD_PRELOAD heap allocation counter.
 *
 * Counts every malloc/calloc/realloc/aligned_alloc/posix_memalign/memalign
 * call of the process (forwarding to glibc's __libc_* implementations).
 * A benchmark looks up cnb_alloc_count() with dlsym(RTLD_DEFAULT) and takes
 * the difference across its receive loop, so setup allocations don't count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static unsigned long count;

#define EXPORT __attribute__((visibility("default")))

EXPORT unsigned long cnb_alloc_count(void);
EXPORT unsigned long cnb_alloc_count(void)
{
	return __atomic_load_n(&count, __ATOMIC_RELAXED);
}

static inline void bump(void)
{
	__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
}

EXPORT void *malloc(size_t n)
{
	bump();
	return __libc_malloc(n);
}

EXPORT void *calloc(size_t a, size_t b)
{
	bump();
	return __libc_calloc(a, b);
}

EXPORT void *realloc(void *p, size_t n)
{
	bump();
	return __libc_realloc(p, n);
}

EXPORT void *memalign(size_t al, size_t n)
{
	bump();
	return __libc_memalign(al, n);
}

EXPORT void *aligned_alloc(size_t al, size_t n)
{
	bump();
	return __libc_memalign(al, n);
}

EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
	void *p;

	bump();
	if (al < sizeof(void *) || (al & (al - 1)))
		return EINVAL;
	p = __libc_memalign(al, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
