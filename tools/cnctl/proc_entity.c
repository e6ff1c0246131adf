/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_entity.c - an id for a process that a reused pid does not repeat
 * (ECS process.entity_id): a hash of the boot's id, the pid and the
 * process's start. Two processes that get the same pid in one boot start
 * at different times; the same process keeps its id in every event.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

void proc_entity_init(struct proc_state *st)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, st->boot_id, sizeof(st->boot_id) - 1) : -1;

	if (fd >= 0)
		close(fd);
	/* Without it (no procfs sysctl) the ids are still unique within
	 * the boot, not across machines. */
	st->boot_id[n > 0 ? n : 0] = '\0';
	st->boot_id[strcspn(st->boot_id, "\n")] = '\0';
}

/* FNV-1a, 64 bits: ids to tell processes apart, not a defence. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int proc_entity_id(const struct proc_state *st, const struct cn_proc_entry *proc,
		   char out[PROC_ENTITY_ID_SIZE])
{
	uint64_t h = 0xcbf29ce484222325ull, start;
	int32_t tgid;

	/* Only a start cnctl knows (its fork, or /proc's start time) is the
	 * same in every event of the process. */
	if (!proc || !(proc->flags & (CN_PROC_ENTRY_FORK | CN_PROC_ENTRY_SCANNED)))
		return 0;
	tgid = (int32_t)proc->tgid;
	start = proc->start_ns;
	h = fnv1a(h, st->boot_id, strlen(st->boot_id));
	h = fnv1a(h, &tgid, sizeof(tgid));
	h = fnv1a(h, &start, sizeof(start));
	snprintf(out, PROC_ENTITY_ID_SIZE, "%016llx", (unsigned long long)h);
	return 1;
}

const char *proc_entity_of(struct proc_state *st, pid_t tgid, const struct cn_proc_entry *main)
{
	struct proc_info *p = proc_info_find(st, tgid);

	if (!p)
		return NULL;
	if (p->entity_id[0])
		return p->entity_id;
	if (!main)
		main = cn_proc_tracker_find(st->t, tgid);
	return proc_entity_id(st, main, p->entity_id) ? p->entity_id : NULL;
}
