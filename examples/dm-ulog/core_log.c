/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* core_log.c - in-memory mirror logs with the kernel's core log semantics. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_log.h"

static struct core_log *logs;

static int bit(const uint8_t *map, uint64_t i)
{
	return (map[i / 8] >> (i % 8)) & 1;
}

static void set_bit(uint8_t *map, uint64_t i, int on)
{
	if (on)
		map[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		map[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

struct core_log *log_find(const char *uuid, uint64_t luid)
{
	struct core_log *l;

	for (l = logs; l; l = l->next)
		if (l->luid == luid && !strncmp(l->uuid, uuid, DM_UUID_LEN))
			return l;
	return NULL;
}

/* "<sectors> <type> <#args> <region_size> [sync|nosync]": what dm-mirror's
 * table gives after the uuid (dm-log-userspace-base.c, userspace_ctr and
 * build_constructor_string). */
static int parse(const char *args, uint64_t *sectors, uint64_t *region_size, int *nosync,
		 const char **why)
{
	char type[32], opt[16] = "";
	unsigned int nargs;
	int n = sscanf(args, "%" SCNu64 " %31s %u %" SCNu64 " %15s", sectors, type, &nargs,
		       region_size, opt);

	if (n < 4) {
		*why = "expected '<type> <#args> <region_size> [[no]sync]'";
		return -EINVAL;
	}
	if (strcmp(type, "core") && strcmp(type, "clustered-core")) {
		*why = "only a core log is kept (type core or clustered-core)";
		return -EINVAL;
	}
	if (nargs != (unsigned int)(n - 3)) {
		*why = "#args does not count the arguments";
		return -EINVAL;
	}
	if (!*region_size || (*region_size & (*region_size - 1))) {
		*why = "region size must be a power of 2";
		return -EINVAL;
	}
	if (n == 5 && strcmp(opt, "sync") && strcmp(opt, "nosync")) {
		*why = "the only option is sync or nosync";
		return -EINVAL;
	}
	*nosync = n == 5 && !strcmp(opt, "nosync");
	return 0;
}

int log_create(const char *uuid, uint64_t luid, const char *args, const char **why)
{
	struct core_log *l = log_find(uuid, luid);
	const char *table = strchr(args, ' ');
	uint64_t sectors, region_size;
	size_t bytes;
	int nosync, r;

	if (l && table && !strcmp(l->table, table + 1))
		return 0; /* a resent CTR: keep what the first one made */
	if (l) {
		*why = "a log with this uuid and luid exists with another table";
		return -EEXIST;
	}
	r = parse(args, &sectors, &region_size, &nosync, why);
	if (r < 0)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	strncpy(l->uuid, uuid, DM_UUID_LEN - 1);
	l->luid = luid;
	l->region_size = region_size;
	l->region_count = (sectors + region_size - 1) / region_size;
	bytes = (size_t)(l->region_count + 7) / 8;
	l->table = strdup(table + 1);
	l->clean = malloc(bytes);
	l->in_sync = malloc(bytes);
	if (!l->table || !l->clean || !l->in_sync) {
		log_destroy(l);
		return -ENOMEM;
	}
	/* dm-log.c, create_log_context: all clean; in sync only with nosync. */
	memset(l->clean, 0xff, bytes);
	memset(l->in_sync, nosync ? 0xff : 0, bytes);
	l->sync_count = nosync ? l->region_count : 0;
	l->recovering = NO_REGION;
	l->next = logs;
	logs = l;
	return 0;
}

void log_destroy(struct core_log *l)
{
	struct core_log **p;

	for (p = &logs; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	free(l->table);
	free(l->clean);
	free(l->in_sync);
	free(l);
}

int log_is_clean(const struct core_log *l, uint64_t region)
{
	return bit(l->clean, region);
}

int log_in_sync(const struct core_log *l, uint64_t region)
{
	return bit(l->in_sync, region);
}

void log_mark(struct core_log *l, uint64_t region)
{
	set_bit(l->clean, region, 0);
}

void log_clear(struct core_log *l, uint64_t region)
{
	set_bit(l->clean, region, 1);
}

void log_set_sync(struct core_log *l, uint64_t region, int in_sync)
{
	if (region == l->recovering)
		l->recovering = NO_REGION;
	if (bit(l->in_sync, region) == !!in_sync)
		return; /* idempotent: a resent request changes nothing */
	set_bit(l->in_sync, region, in_sync);
	l->sync_count += in_sync ? 1 : -1;
}

int log_resync_work(struct core_log *l, uint64_t *region)
{
	uint64_t i;

	if (l->recovering != NO_REGION) {
		*region = l->recovering;
		return 1;
	}
	for (i = l->sync_search; i < l->region_count && bit(l->in_sync, i); i++)
		;
	l->sync_search = i + 1;
	if (i >= l->region_count)
		return 0;
	l->recovering = *region = i;
	return 1;
}

void log_resume(struct core_log *l)
{
	l->sync_search = 0;
	l->recovering = NO_REGION;
}

uint64_t log_first_unsynced(const struct core_log *l)
{
	uint64_t i;

	for (i = 0; i < l->region_count && bit(l->in_sync, i); i++)
		;
	return i;
}
