/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_filter.c - which events `cnctl proc` prints: the --events list
 * (cnctl's names and forkstat's: clone, core, ptrce), threads on or off, and
 * the process filters --pid (--tree), --pgrp, --uid/--user and --comm. The
 * kernel filters by event type only (Linux >= 6.6); the rest is decided
 * here, on the tracker's and proc_info.c's picture of each process.
 */
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

static const struct {
	const char *name;
	uint32_t show;	 /* PROC_SHOW_* */
	uint32_t kernel; /* CN_PROC_* to receive it */
} event_names[] = {
	{ "fork", PROC_SHOW_FORK, CN_PROC_FORK },
	{ "clone", PROC_SHOW_CLONE, CN_PROC_FORK }, /* forkstat's: a new thread */
	{ "exec", PROC_SHOW_EXEC, CN_PROC_EXEC },
	{ "exit", PROC_SHOW_EXIT, CN_PROC_EXIT },
	{ "nonzero_exit", PROC_SHOW_NONZERO_EXIT, CN_PROC_NONZERO_EXIT },
	{ "uid", PROC_SHOW_UID, CN_PROC_UID },
	{ "gid", PROC_SHOW_GID, CN_PROC_GID },
	{ "sid", PROC_SHOW_SID, CN_PROC_SID },
	{ "ptrace", PROC_SHOW_PTRACE, CN_PROC_PTRACE },
	{ "ptrce", PROC_SHOW_PTRACE, CN_PROC_PTRACE }, /* forkstat's */
	{ "comm", PROC_SHOW_COMM, CN_PROC_COMM },
	{ "coredump", PROC_SHOW_COREDUMP, CN_PROC_COREDUMP },
	{ "core", PROC_SHOW_COREDUMP, CN_PROC_COREDUMP }, /* forkstat's */
	{ "all", PROC_SHOW_ALL, 0 },
};

int proc_parse_events(const char *list, struct proc_opts *o, char *bad, size_t size)
{
	const char *p = list;
	int all = 0;

	o->show = 0;
	o->mask = 0;
	snprintf(bad, size, "%s", "");
	for (;;) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++)
			if (strlen(event_names[i].name) == n && !strncmp(p, event_names[i].name, n))
				break;
		if (i == sizeof(event_names) / sizeof(event_names[0])) {
			snprintf(bad, size, "%.*s", (int)n, p);
			return -1;
		}
		all |= event_names[i].show == PROC_SHOW_ALL;
		o->show |= event_names[i].show;
		o->mask |= event_names[i].kernel;
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	if (all) {
		o->show = PROC_SHOW_ALL;
		o->mask = 0; /* every type: no kernel filter */
	}
	return 0;
}

#ifdef CNCTL_NO_NSS
/* A static cnctl (the VM tests' initramfs has no libraries): glibc's NSS
 * would load its shared modules at run time, and the static link warns of
 * it; /etc/passwd is read directly (fgetpwent needs no NSS). The rest of
 * the binary is not free of NSS: see cnctl_static in CMakeLists.txt. */
static struct passwd *find_user(const char *name, uid_t uid)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw = NULL;

	if (!f)
		return NULL;
	while ((pw = fgetpwent(f)))
		if (name ? !strcmp(pw->pw_name, name) : pw->pw_uid == uid)
			break;
	fclose(f);
	return pw; /* fgetpwent's static entry: valid until the next call */
}
#define getpwnam(name) find_user(name, 0)
#define getpwuid(uid)  find_user(NULL, uid)
#endif

int proc_parse_user(const char *arg, uid_t *uid)
{
	uint64_t v;
	struct passwd *pw;

	if (cnctl_parse_uint(arg, 0, UINT32_MAX - 1, &v) == 0) {
		*uid = (uid_t)v;
		return 0;
	}
	pw = getpwnam(arg);
	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	return 0;
}

const char *proc_user_name(struct proc_state *st, uid_t uid)
{
	struct passwd *pw;

	struct proc_user_cache *c = &st->user;

	/* A one-entry cache: a log's lines are mostly one user's. */
	if (c->cached && c->uid == uid)
		return c->name;
	pw = getpwuid(uid);
	if (pw)
		snprintf(c->name, sizeof(c->name), "%s", pw->pw_name);
	else
		snprintf(c->name, sizeof(c->name), "%u", (unsigned int)uid);
	c->uid = uid;
	c->cached = 1;
	return c->name;
}

/* The filters on the process: --tree, --pgrp, --uid/--user, --comm (a
 * rename matches by its old name or its new one). */
static int process_wanted(const struct proc_state *st, const struct cn_proc_entry *e,
			  const struct proc_info *p, const char *old_comm)
{
	const struct proc_opts *o = st->o;

	if (o->tree && (!p || !(p->flags & PROC_INFO_FOLLOWED)))
		return 0;
	if (o->pgrp && (!p || !(p->flags & PROC_INFO_PGRP) || p->pgrp != o->pgrp))
		return 0;
	if (o->uid_set && (!p || !(p->flags & PROC_INFO_UID) || p->uid != o->uid))
		return 0;
	if (o->comm) {
		int match = e && e->comm[0] && fnmatch(o->comm, e->comm, 0) == 0;

		if (!match && old_comm && old_comm[0])
			match = fnmatch(o->comm, old_comm, 0) == 0;
		if (!match)
			return 0;
	}
	return 1;
}

int proc_wanted(const struct proc_state *st, const struct cn_proc_event *ev,
		const struct cn_proc_entry *e, const struct proc_info *p, const char *old_comm)
{
	const struct proc_opts *o = st->o;
	int thread = proc_about_thread(ev, e);
	uint32_t kind;

	switch (ev->what) {
	case CN_PROC_FORK:
		kind = thread ? PROC_SHOW_CLONE : PROC_SHOW_FORK;
		break;
	case CN_PROC_EXEC:
		kind = PROC_SHOW_EXEC;
		break;
	case CN_PROC_EXIT:
		kind = PROC_SHOW_EXIT;
		if (ev->exit_code != 0)
			kind |= PROC_SHOW_NONZERO_EXIT;
		break;
	case CN_PROC_UID:
		kind = PROC_SHOW_UID;
		break;
	case CN_PROC_GID:
		kind = PROC_SHOW_GID;
		break;
	case CN_PROC_SID:
		kind = PROC_SHOW_SID;
		break;
	case CN_PROC_PTRACE:
		kind = PROC_SHOW_PTRACE;
		break;
	case CN_PROC_COMM:
		kind = PROC_SHOW_COMM;
		break;
	case CN_PROC_COREDUMP:
		kind = PROC_SHOW_COREDUMP;
		break;
	default:
		kind = PROC_SHOW_ALL; /* a type this cnctl does not know: shown with all */
		break;
	}
	if (!(o->show & kind))
		return 0;
	if (thread && o->no_threads)
		return 0;
	if (o->pid && !o->tree && ev->tgid != o->pid &&
	    !(ev->what == CN_PROC_FORK && !thread && ev->parent_tgid == o->pid))
		return 0;
	return process_wanted(st, e, p, old_comm);
}

int proc_exit_wanted(const struct proc_state *st, const struct cn_proc_entry *e,
		     const struct proc_info *p)
{
	const struct proc_opts *o = st->o;

	if (!(o->show & (PROC_SHOW_EXIT | PROC_SHOW_NONZERO_EXIT)))
		return 0;
	if ((e->flags & CN_PROC_ENTRY_THREAD) && o->no_threads)
		return 0;
	if (o->pid && !o->tree && e->tgid != o->pid)
		return 0;
	return process_wanted(st, e, p, NULL);
}
