/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_info.c - what `cnctl proc` knows of each process beyond libcn's
 * tracker (name, parent, start): its command line, user, process group and
 * whether it is in the --tree being followed. One entry per process (tgid),
 * made at its fork from its parent's (a child runs its parent's command line
 * until it execs, with its credentials and group), refreshed at exec, gone
 * at the exit the tracker says ends the process (its last thread's, which
 * need not be its main one's). The command line is shared between parent
 * and children (a reference count), so a fork costs no copy: the table's
 * cost per event is a hash lookup. Processes running when cnctl started are read from /proc.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "proc_stat.h"

#define INFO_SLOTS (1u << 17) /* a power of two, twice the tracker's 65536 */
#define INFO_MAX   (INFO_SLOTS / 2)

int proc_info_init(struct proc_state *st)
{
	st->info.slot = calloc(INFO_SLOTS, sizeof(*st->info.slot));
	if (!st->info.slot)
		return -1;
	st->info.mask = INFO_SLOTS - 1;
	return 0;
}

static void cmd_put(struct proc_cmdline *c)
{
	if (c && --c->refs == 0)
		free(c);
}

/* Drop what the last batch's prefetch read and no exec took. */
static void prefetch_clear(struct proc_info_prefetch *pre)
{
	for (int i = 0; i < pre->n; i++) {
		cmd_put(pre->cmd[i]);
		pre->cmd[i] = NULL;
	}
	pre->ev = NULL;
	pre->n = 0;
}

void proc_info_free(struct proc_state *st)
{
	struct proc_info_table *it = &st->info;

	prefetch_clear(&it->pre);

	for (uint32_t i = 0; it->slot && i <= it->mask; i++)
		if (it->slot[i].tgid)
			cmd_put(it->slot[i].cmd);
	free(it->slot);
	it->slot = NULL;
}

static uint32_t slot_of(const struct proc_info_table *it, pid_t tgid)
{
	return ((uint32_t)tgid * 2654435761u) & it->mask; /* Knuth's multiplicative hash */
}

struct proc_info *proc_info_find(struct proc_state *st, pid_t tgid)
{
	struct proc_info_table *it = &st->info;
	uint32_t i;

	if (!it->slot || tgid <= 0)
		return NULL;
	for (i = slot_of(it, tgid); it->slot[i].tgid; i = (i + 1) & it->mask)
		if (it->slot[i].tgid == tgid)
			return &it->slot[i];
	return NULL;
}

uint32_t proc_info_followed(const struct proc_state *st)
{
	return st->info.followed;
}

/* Set p's flags, keeping the count of followed processes. */
static void set_flags(struct proc_state *st, struct proc_info *p, uint32_t flags)
{
	int was = (p->flags & PROC_INFO_FOLLOWED) && !(p->flags & PROC_INFO_VANISHED);
	int is = (flags & PROC_INFO_FOLLOWED) && !(flags & PROC_INFO_VANISHED);

	p->flags = flags;
	st->info.followed += (uint32_t)(is - was);
}

/* Make p an empty entry for tgid (a new process, or one read afresh). */
static void reset(struct proc_state *st, struct proc_info *p, pid_t tgid)
{
	set_flags(st, p, 0);
	cmd_put(p->cmd);
	*p = (struct proc_info){ .tgid = tgid };
}

/* The entry of tgid, made empty when new; NULL when the table is full. */
static struct proc_info *info_add(struct proc_state *st, pid_t tgid)
{
	struct proc_info_table *it = &st->info;
	uint32_t i;

	if (!it->slot || tgid <= 0)
		return NULL;
	for (i = slot_of(it, tgid); it->slot[i].tgid; i = (i + 1) & it->mask)
		if (it->slot[i].tgid == tgid)
			return &it->slot[i];
	if (it->used >= INFO_MAX)
		return NULL;
	it->used++;
	it->slot[i] = (struct proc_info){ .tgid = tgid };
	return &it->slot[i];
}

static void info_remove(struct proc_state *st, struct proc_info *p)
{
	struct proc_info_table *it = &st->info;
	uint32_t i, j;

	reset(st, p, 0);
	/* Linear probing without tombstones: shift back the entries that
	 * would no longer be found past the hole. */
	i = (uint32_t)(p - it->slot);
	it->used--;
	for (j = (i + 1) & it->mask; it->slot[j].tgid; j = (j + 1) & it->mask) {
		uint32_t home = slot_of(it, it->slot[j].tgid);

		/* Entry j may move to the hole i unless its home lies in (i, j]. */
		if (((j - home) & it->mask) >= ((j - i) & it->mask)) {
			it->slot[i] = it->slot[j];
			it->slot[j].tgid = 0;
			it->slot[j].cmd = NULL;
			i = j;
		}
	}
}

/* Up to size bytes of /proc/tgid/file, read at once: how many, or -1. */
static ssize_t read_proc(pid_t tgid, const char *file, char *buf, size_t size)
{
	char path[48];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)tgid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	return n;
}

/* A command line from n bytes of arguments as /proc/PID/cmdline gives
 * them (at most PROC_ARGV_MAX kept); NULL when there is none. */
static struct proc_cmdline *cmdline_new(const char *buf, size_t n, int truncated)
{
	struct proc_cmdline *c;

	if (n > PROC_ARGV_MAX)
		n = PROC_ARGV_MAX;
	while (n > 0 && buf[n - 1] == '\0')
		n--; /* the last argument's NUL */
	if (n == 0)
		return NULL;
	c = malloc(sizeof(*c) + n + 1);
	if (!c)
		return NULL;
	c->refs = 1;
	c->truncated = truncated;
	memcpy(c->text, buf, n);
	c->text[n] = '\0';
	c->len = (uint32_t)n;
	return c;
}

/* The command line of tgid, read now (NUL-separated arguments, as in
 * /proc); NULL when it cannot be had (gone, a zombie, a kernel thread). */
static struct proc_cmdline *read_cmdline(pid_t tgid)
{
	/* Two bytes more than kept: the last argument's NUL and one byte
	 * that, read, says the line was longer (a full buffer). */
	char buf[PROC_ARGV_MAX + 2];
	ssize_t n = read_proc(tgid, "cmdline", buf, sizeof(buf));
	ssize_t len = n;

	if (n <= 0)
		return NULL;
	if (n < (ssize_t)sizeof(buf) && buf[n - 1] == '\0')
		len--; /* all of it read: the arguments without the last NUL */
	return cmdline_new(buf, (size_t)n, len > PROC_ARGV_MAX);
}

/* The text after "\nKEY:" in /proc/tgid/status, read into buf[size];
 * NULL when it cannot be had. */
static const char *status_field(pid_t tgid, const char *key, char *buf, size_t size)
{
	ssize_t n = read_proc(tgid, "status", buf, size - 1);
	char *p;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? p + strlen(key) : NULL;
}

/* The effective and real uids of tgid from /proc/PID/status (not the
 * owner of /proc/PID: root's for a process that is not dumpable). */
static int read_uid(pid_t tgid, uid_t *uid, uid_t *ruid)
{
	char buf[4096];
	const char *p = status_field(tgid, "\nUid:", buf, sizeof(buf));
	unsigned int r, e;

	if (!p || sscanf(p, "%u %u", &r, &e) != 2)
		return -1;
	*uid = (uid_t)e;
	*ruid = (uid_t)r;
	return 0;
}

/* tgid's /proc/PID/stat. 0, or -1 (gone, unreadable). */
static int read_stat(pid_t tgid, struct cn__proc_stat *st)
{
	char buf[1024];
	ssize_t n = read_proc(tgid, "stat", buf, sizeof(buf) - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return cn__proc_stat_parse(buf, st) == 0 ? 0 : -1;
}

/* The process group of tgid. */
static int read_pgrp(pid_t tgid, pid_t *pgrp)
{
	struct cn__proc_stat st;

	if (read_stat(tgid, &st) < 0)
		return -1;
	*pgrp = st.pgrp;
	return 0;
}

/* Fill what the options need and is not known yet (at most one /proc read
 * each, for processes whose fork cnctl did not see). */
static void complete(const struct proc_state *st, struct proc_info *p)
{
	if (!(p->flags & PROC_INFO_CMD_TRIED)) {
		p->flags |= PROC_INFO_CMD_TRIED;
		p->cmd = read_cmdline(p->tgid);
	}
	if (st->o->need_uid && !(p->flags & PROC_INFO_UID) &&
	    read_uid(p->tgid, &p->uid, &p->ruid) == 0)
		p->flags |= PROC_INFO_UID;
	if (st->o->pgrp && !(p->flags & PROC_INFO_PGRP) && read_pgrp(p->tgid, &p->pgrp) == 0)
		p->flags |= PROC_INFO_PGRP;
}

/* Is tgid (whose tracker entry is e, may be NULL) o->pid or below it? The
 * parents as the tracker has them now. */
static int below_root(const struct proc_state *st, const struct cn_proc_entry *e)
{
	for (int depth = 0; e && depth < 4096; depth++) {
		if (e->tgid == st->o->pid)
			return 1;
		if (e->ppid <= 0 || e->ppid == e->tgid)
			return 0;
		e = cn_proc_tracker_find(st->t, e->ppid);
	}
	return 0;
}

/* Is the process of tracker entry e followed (--pid; with --tree, its
 * descendants too)? */
static int followed(const struct proc_state *st, const struct cn_proc_entry *e)
{
	if (!st->o->pid)
		return 0;
	return st->o->tree ? below_root(st, e) : e->tgid == st->o->pid;
}

/* The process of a new tracker entry e: its entry, read from /proc. */
static void add_process(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_info *p = info_add(st, e->tgid);

	if (!p)
		return;
	/* What the table holds for its pid is from before (a reused pid, or
	 * a task whose events were lost): read afresh. */
	reset(st, p, e->tgid);
	complete(st, p);
	if (followed(st, e))
		set_flags(st, p, p->flags | PROC_INFO_FOLLOWED);
}

void proc_info_scan(struct proc_state *st)
{
	const struct cn_proc_entry *e = NULL;

	while ((e = cn_proc_tracker_next(st->t, e)))
		if (e->pid == e->tgid)
			add_process(st, e);
}

void proc_info_vanished(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_info *p = proc_info_find(st, e->tgid);

	if (p && e->pid == e->tgid)
		set_flags(st, p, p->flags | PROC_INFO_VANISHED);
}

void proc_info_drop_vanished(struct proc_state *st)
{
	struct proc_info_table *it = &st->info;
	uint32_t i = 0;

	if (!it->slot)
		return;
	while (i <= it->mask) {
		/* A removal may shift another entry into slot i: look again. */
		if (it->slot[i].tgid && (it->slot[i].flags & PROC_INFO_VANISHED))
			info_remove(st, &it->slot[i]);
		else
			i++;
	}
}

void proc_info_appeared(struct proc_state *st, const struct cn_proc_entry *e)
{
	if (e->pid == e->tgid)
		add_process(st, e);
}

static struct proc_info *on_fork(struct proc_state *st, const struct cn_proc_event *ev)
{
	struct proc_info *p, *parent;
	uint32_t flags = 0;

	if (ev->pid != ev->tgid)
		return proc_info_find(st, ev->tgid); /* a thread: its process's entry */
	parent = proc_info_find(st, ev->parent_tgid);
	p = info_add(st, ev->pid);
	if (!p)
		return NULL;
	/* pid reuse after a lost exit: the old entry goes. */
	reset(st, p, ev->pid);
	if (parent) {
		/* The child runs its parent's program, as its parent's user,
		 * in its group, until it execs. */
		p->cmd = parent->cmd;
		if (p->cmd)
			p->cmd->refs++;
		p->uid = parent->uid;
		p->ruid = parent->ruid;
		p->pgrp = parent->pgrp;
		flags = parent->flags & (PROC_INFO_CMD_TRIED | PROC_INFO_UID | PROC_INFO_PGRP);
		if (st->o->tree)
			flags |= parent->flags & PROC_INFO_FOLLOWED;
	}
	if (st->o->tree && ev->parent_tgid == st->o->pid)
		flags |= PROC_INFO_FOLLOWED;
	set_flags(st, p, flags);
	complete(st, p);
	return p;
}

/* Does an exec of the same process, or its end, follow ev[i] in the batch? */
static int superseded(const struct cn_proc_event *ev, int i, int n)
{
	pid_t tgid = ev[i].tgid;

	for (int j = i + 1; j < n; j++)
		if (ev[j].tgid == tgid && (ev[j].what == CN_PROC_EXEC ||
					   (ev[j].what == CN_PROC_EXIT && ev[j].pid == tgid)))
			return 1;
	return 0;
}

/* A new batch ev[0..n) to prefetch for; returns how many it may hold. */
static int prefetch_start(struct proc_info_prefetch *pre, const struct cn_proc_event *ev, int n)
{
	prefetch_clear(pre);
	if (n > PROC_BATCH)
		n = PROC_BATCH;
	pre->ev = ev;
	pre->n = n;
	return n;
}

void proc_info_prefetch(struct proc_state *st, const struct cn_proc_event *ev, int n)
{
	struct proc_info_prefetch *pre = &st->info.pre;

	n = prefetch_start(pre, ev, n);
	for (int i = 0; i < n; i++) {
		if (ev[i].what == CN_PROC_EXEC && !superseded(ev, i, n))
			pre->cmd[i] = read_cmdline(ev[i].tgid);
	}
}

void proc_info_prefetch_argv(struct proc_state *st, const struct cn_proc_event *ev, int n,
			     const char *const *argv, const size_t *len, const int *cut)
{
	struct proc_info_prefetch *pre = &st->info.pre;

	n = prefetch_start(pre, ev, n);
	for (int i = 0; i < n; i++) {
		size_t args =
		    len[i] && argv[i] && argv[i][len[i] - 1] == '\0' ? len[i] - 1 : len[i];

		if (argv[i])
			pre->cmd[i] = cmdline_new(argv[i], len[i], cut[i] || args > PROC_ARGV_MAX);
	}
}

/* The command line prefetched for exec event ev: 1 and *cmd (a reference
 * handed over, NULL: none to be had), or 0: not prefetched, read it now. */
static int prefetched(struct proc_state *st, const struct cn_proc_event *ev,
		      struct proc_cmdline **cmd)
{
	struct proc_info_prefetch *pre = &st->info.pre;
	uintptr_t at = (uintptr_t)ev, first = (uintptr_t)pre->ev;
	size_t i;

	/* Compared as addresses: an ev outside the batch is another object,
	 * which pointer subtraction may not be given (the exact division by
	 * the event's size it compiles to makes garbage of the distance). */
	if (!pre->ev || at < first || (at - first) % sizeof(*ev) != 0)
		return 0;
	i = (at - first) / sizeof(*ev);
	if (i >= (size_t)pre->n)
		return 0;
	*cmd = pre->cmd[i];
	pre->cmd[i] = NULL;
	return 1;
}

static struct proc_info *on_exec(struct proc_state *st, const struct cn_proc_event *ev)
{
	struct proc_info *p = proc_info_find(st, ev->tgid);
	struct proc_cmdline *cmd;

	if (!p) {
		p = info_add(st, ev->tgid);
		if (!p)
			return NULL;
		/* Its fork was not seen: followed if its parents say so. */
		if (st->o->pid) {
			const struct cn_proc_entry *e = cn_proc_tracker_find(st->t, ev->tgid);

			if (e && followed(st, e))
				set_flags(st, p, p->flags | PROC_INFO_FOLLOWED);
		}
	}
	cmd_put(p->cmd);
	p->cmd = NULL;
	p->flags &= ~(uint32_t)PROC_INFO_CMD_TRIED;
	if (prefetched(st, ev, &cmd)) {
		p->cmd = cmd;
		p->flags |= PROC_INFO_CMD_TRIED;
	}
	/* A setuid program runs as its file's owner from its exec on (no uid
	 * event says so): read again (kept as it was when the process is
	 * gone already). */
	if (st->o->need_uid && (p->flags & PROC_INFO_UID))
		read_uid(p->tgid, &p->uid, &p->ruid);
	complete(st, p);
	/* A shell puts a job in its group between fork and exec: read it
	 * again (kept as it was when the process is gone already). */
	if (st->o->pgrp) {
		pid_t g;

		if (read_pgrp(p->tgid, &g) == 0) {
			p->pgrp = g;
			p->flags |= PROC_INFO_PGRP;
		}
	}
	return p;
}

struct proc_info *proc_info_event(struct proc_state *st, const struct cn_proc_event *ev)
{
	struct proc_info *p;

	switch (ev->what) {
	case CN_PROC_FORK:
		return on_fork(st, ev);
	case CN_PROC_EXEC:
		return on_exec(st, ev);
	case CN_PROC_UID:
		p = info_add(st, ev->tgid);
		if (p) {
			p->uid = ev->euid;
			p->ruid = ev->ruid;
			p->flags |= PROC_INFO_UID;
			complete(st, p);
		}
		return p;
	case CN_PROC_SID:
		/* setsid: the caller leads a new session and group. */
		p = info_add(st, ev->tgid);
		if (p) {
			p->pgrp = ev->tgid;
			p->flags |= PROC_INFO_PGRP;
			complete(st, p);
		}
		return p;
	default:
		break;
	}
	/* Every other event: the process as known, completed where new. */
	p = proc_info_find(st, ev->tgid);
	if (!p && ev->what != CN_PROC_EXIT) {
		p = info_add(st, ev->tgid);
		if (p)
			complete(st, p);
	}
	return p;
}

void proc_info_exited(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_info *p;

	/* A thread's end, the main thread's too while others run on: the
	 * process's entry stays. */
	if (!e || !(e->flags & CN_PROC_ENTRY_EXITED))
		return;
	p = proc_info_find(st, e->pid);
	if (p)
		info_remove(st, p);
}
