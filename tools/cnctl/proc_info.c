/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_info.c - what `cnctl proc` knows of each process beyond libcn's
 * tracker (name, parent, start): its command line, user, process group and
 * whether it is in the --tree being followed. It lives in the tracker's
 * entries, as their caller data (cn_proc_tracker_data): a process's is in
 * its main thread's entry, which stands for the process until its last
 * thread exits, so it follows every fork, exit, pid reuse and resync the
 * tracker sees, and ends when the tracker says (proc_info_end). Made at the
 * fork from the parent's (a child runs its parent's command line until it
 * execs, with its credentials and group), refreshed at exec; a process
 * first seen in /proc or at its exec is read from /proc. The command line
 * is shared between parent and children (a reference count), so a fork
 * costs no copy.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

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

/* Set p's flags, keeping the count of followed processes. */
static void set_flags(struct proc_state *st, struct proc_info *p, uint32_t flags)
{
	int was = (p->flags & PROC_INFO_FOLLOWED) && !(p->flags & PROC_INFO_VANISHED);
	int is = (flags & PROC_INFO_FOLLOWED) && !(flags & PROC_INFO_VANISHED);

	p->flags = flags;
	st->info.followed += (uint32_t)(is - was);
}

/* The tracker says an entry's data ends (its task is gone, or its pid's
 * entry is another task's now): what the process's info holds goes. */
static void proc_info_end(const struct cn_proc_entry *e, void *data, void *arg)
{
	struct proc_info *p = data;

	(void)e;
	set_flags(arg, p, 0);
	cmd_put(p->cmd);
}

int proc_info_init(struct proc_state *st, uint32_t tracker_flags)
{
	struct cn_proc_tracker_opts o = { .sz = sizeof(o),
					  .flags = tracker_flags,
					  .data_size = sizeof(struct proc_info),
					  .data_end = proc_info_end,
					  .data_arg = st };

	st->t = cn_proc_tracker_new(&o);
	return st->t ? 0 : -1;
}

void proc_info_free(struct proc_state *st)
{
	prefetch_clear(&st->info.pre);
	st->info.exited = NULL;
	cn_proc_tracker_free(st->t); /* every entry's info ends */
	st->t = NULL;
}

struct proc_info *proc_info_entry(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_info *p;

	if (!e || e->pid != e->tgid)
		return NULL;
	p = cn_proc_tracker_data(st->t, e);
	return p && p->tgid ? p : NULL;
}

struct proc_info *proc_info_find(struct proc_state *st, pid_t tgid)
{
	struct proc_info *p = proc_info_entry(st, cn_proc_tracker_find(st->t, tgid));

	if (!p && st->info.exited && st->info.exited->tgid == tgid)
		p = st->info.exited;
	return p;
}

uint32_t proc_info_followed(const struct proc_state *st)
{
	return st->info.followed;
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

/* The process group of tgid (0, or -1: gone). */
static int read_pgrp(pid_t tgid, pid_t *pgrp)
{
	pid_t g = getpgid(tgid);

	if (g < 0)
		return -1;
	*pgrp = g;
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

/* Make p, the zeroed info of process entry e, the process's: followed if
 * its parents say so. */
static void start(struct proc_state *st, struct proc_info *p, const struct cn_proc_entry *e)
{
	p->tgid = e->tgid;
	if (followed(st, e))
		set_flags(st, p, p->flags | PROC_INFO_FOLLOWED);
}

/* A process entry e the tracker made without a fork cnctl saw (a scan, an
 * exec): its info read from /proc. */
static void add_process(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_info *p = e->pid == e->tgid ? cn_proc_tracker_data(st->t, e) : NULL;

	if (!p)
		return;
	start(st, p, e);
	complete(st, p);
}

void proc_info_scan(struct proc_state *st)
{
	const struct cn_proc_entry *e = NULL;

	while ((e = cn_proc_tracker_next(st->t, e)))
		add_process(st, e);
}

void proc_info_vanished(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_info *p = proc_info_entry(st, e);

	if (p)
		set_flags(st, p, p->flags | PROC_INFO_VANISHED);
}

void proc_info_appeared(struct proc_state *st, const struct cn_proc_entry *e)
{
	add_process(st, e);
}

/* A new process (the fork's child, entry e, info p, zeroed unless a resync
 * found it first): its parent's program, user and group, until it execs. */
static void on_fork(struct proc_state *st, const struct cn_proc_event *ev,
		    const struct cn_proc_entry *e, struct proc_info *p)
{
	struct proc_info *parent;
	uint32_t flags = 0;

	if (p->tgid)
		return; /* known from /proc already */
	p->tgid = e->tgid;
	parent = proc_info_find(st, ev->parent_tgid);
	if (parent) {
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

static void on_exec(struct proc_state *st, const struct cn_proc_event *ev,
		    const struct cn_proc_entry *e, struct proc_info *p)
{
	struct proc_cmdline *cmd;

	if (!p->tgid)
		start(st, p, e); /* its fork was not seen */
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
}

struct proc_info *proc_info_event(struct proc_state *st, const struct cn_proc_event *ev,
				  const struct cn_proc_entry *e)
{
	/* The process's entry: e when it is one (a process's own event, the
	 * exit that ended it), else the live one of ev's process. */
	const struct cn_proc_entry *proc =
	    e && e->pid == e->tgid ? e : cn_proc_tracker_find(st->t, ev->tgid);
	struct proc_info *p;

	st->info.exited = NULL;
	if (!proc || proc->tgid != ev->tgid || !(p = cn_proc_tracker_data(st->t, proc)))
		return NULL;
	switch (ev->what) {
	case CN_PROC_FORK:
		if (ev->pid == ev->tgid)
			on_fork(st, ev, proc, p);
		break;
	case CN_PROC_EXEC:
		on_exec(st, ev, proc, p);
		break;
	case CN_PROC_EXIT:
		/* Its info stays readable until the tracker's next change. */
		if (proc->flags & CN_PROC_ENTRY_EXITED)
			st->info.exited = p->tgid ? p : NULL;
		break;
	case CN_PROC_UID:
		if (!p->tgid) {
			start(st, p, proc);
			complete(st, p);
		}
		p->uid = ev->euid;
		p->ruid = ev->ruid;
		p->flags |= PROC_INFO_UID;
		break;
	case CN_PROC_SID:
		/* setsid: the caller leads a new session and group. */
		if (!p->tgid) {
			start(st, p, proc);
			complete(st, p);
		}
		p->pgrp = ev->tgid;
		p->flags |= PROC_INFO_PGRP;
		break;
	default:
		break;
	}
	/* Every other event: the process as known, completed where new. */
	if (!p->tgid && ev->what != CN_PROC_EXIT) {
		start(st, p, proc);
		complete(st, p);
	}
	return p->tgid ? p : NULL;
}

void proc_info_exited(struct proc_state *st, struct proc_info *p)
{
	/* The process is gone: no longer followed. Its info ends with the
	 * tracker's entry (proc_info_end), at the tracker's next change. */
	if (p)
		set_flags(st, p, p->flags & ~(uint32_t)PROC_INFO_FOLLOWED);
	st->info.exited = NULL;
}
