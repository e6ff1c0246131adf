/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * core_log.h - the mirror logs dm-ulog keeps: in memory, with the semantics
 * of the kernel's "core" dirty log (drivers/md/dm-log.c): a clean bit and a
 * sync bit per region, everything out of sync at creation unless "nosync".
 */
#ifndef DM_ULOG_CORE_LOG_H
#define DM_ULOG_CORE_LOG_H

#include <stdint.h>
#include <linux/dm-ioctl.h>

#define NO_REGION UINT64_MAX

struct core_log {
	char uuid[DM_UUID_LEN];
	uint64_t luid;
	char *table;	      /* the constructor string without its sector count */
	uint64_t region_size; /* sectors */
	uint64_t region_count;
	uint64_t sync_count;
	uint64_t sync_search; /* where get_resync_work looks next */
	uint64_t recovering;  /* region handed out for resync, NO_REGION: none */
	uint8_t *clean, *in_sync;
	struct core_log *next;
};

/* The log of (uuid, luid), or NULL. */
struct core_log *log_find(const char *uuid, uint64_t luid);

/* Create the log of (uuid, luid) from the constructor string `args`
 * ("<sectors> core <#args> <region_size> [sync|nosync]", also
 * "clustered-core" as cmirrord's tables name it). A log that exists already
 * with the same string is kept as it is (a resent CTR). Returns 0 or -errno
 * (-EINVAL with *why set for a string it does not take). */
int log_create(const char *uuid, uint64_t luid, const char *args, const char **why);

/* Forget the log (a DTR). */
void log_destroy(struct core_log *l);

int log_is_clean(const struct core_log *l, uint64_t region);
int log_in_sync(const struct core_log *l, uint64_t region);
void log_mark(struct core_log *l, uint64_t region);
void log_clear(struct core_log *l, uint64_t region);
void log_set_sync(struct core_log *l, uint64_t region, int in_sync);
/* The next region to resync: 1 and *region, or 0 when none is left. Until
 * its SET_REGION_SYNC arrives the same region is handed out again, so a
 * request the kernel resent gets the answer it missed. */
int log_resync_work(struct core_log *l, uint64_t *region);
/* A resume starts the search for out-of-sync regions again. */
void log_resume(struct core_log *l);
/* The lowest region not in sync (region_count: none). */
uint64_t log_first_unsynced(const struct core_log *l);

#endif
