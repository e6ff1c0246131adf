/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_ecs.c - `cnctl proc --ecs`: each event as an Elastic Common Schema
 * document (PROC_ECS_VERSION), which Elasticsearch, Filebeat and Logstash
 * take as it is: @timestamp on the wall clock, event.kind, category,
 * type and action, and the process.* fields ECS defines, nested as ECS
 * writes them. Only ECS fields: what ECS has no field for stays in --json.
 * User and group ids are strings, as ECS types them (keyword).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proc.h"

/* event.type (ECS's expected types for category process): a process
 * starts (fork, exec) or ends; a thread's start or end, a coredump say
 * something of a process (info); the rest change one. */
static const char *event_type(const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	int thread = proc_about_thread(ev, e);

	switch (ev->what) {
	case CN_PROC_FORK:
		return thread ? "info" : "start";
	case CN_PROC_EXEC:
		return "start";
	case CN_PROC_EXIT:
		return thread ? "info" : "end";
	case CN_PROC_UID:
	case CN_PROC_GID:
	case CN_PROC_SID:
	case CN_PROC_COMM:
	case CN_PROC_PTRACE:
		return "change";
	default:
		return "info";
	}
}

/* ,"KEY":"NAME" of a comm (at most 16 bytes, NUL-terminated or not). */
static void put_comm(FILE *f, const char *key, const char *comm)
{
	fprintf(f, ",\"%s\":", key);
	json_string(f, comm, 16);
}

/* A user object: {"id":"UID","name":"NAME"}. */
static void put_user(FILE *f, struct proc_state *st, const char *key, uid_t uid)
{
	const char *name = proc_user_name(st, uid);

	fprintf(f, ",\"%s\":{\"id\":\"%u\",\"name\":", key, (unsigned int)uid);
	json_string(f, name, strlen(name));
	putc_unlocked('}', f);
}

/* process.args, args_count and command_line (the arguments joined by
 * spaces, as /proc/PID/cmdline gives them). */
static void put_args(FILE *f, const struct proc_cmdline *c)
{
	size_t count;

	fputs_unlocked(",\"args\":", f);
	count = proc_json_args(f, c, 0);
	fprintf(f, ",\"args_count\":%zu,\"command_line\":", count);
	proc_json_args(f, c, 1);
}

/* The parent: process.parent.pid (the event's, or for a thread's exit,
 * which names none, the tracker's), its entity id and name when known. */
static void put_parent(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		       const struct cn_proc_entry *e)
{
	pid_t ppid = ev->parent_tgid ? ev->parent_tgid : e ? e->ppid : 0;
	const struct cn_proc_entry *pp;
	const char *id;

	if (!ppid)
		return;
	pp = cn_proc_tracker_find(st->t, ppid);
	fprintf(f, ",\"parent\":{\"pid\":%d", (int)ppid);
	id = proc_entity_of(st, ppid, pp);
	if (id)
		fprintf(f, ",\"entity_id\":\"%s\"", id);
	if (pp && pp->comm[0])
		put_comm(f, "name", pp->comm);
	putc_unlocked('}', f);
}

/* process.exit_code (the shell's status: 3, or 128 + the signal) and, at
 * the process's own end, process.end. */
static void put_exit(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		     const struct cn_proc_entry *e)
{
	struct proc_exit x;

	proc_exit_decode(ev->exit_code, &x);
	if (x.how != PROC_EXIT_UNKNOWN)
		fprintf(f, ",\"exit_code\":%d", x.code);
	if (!proc_about_thread(ev, e)) {
		fputs_unlocked(",\"end\":", f);
		proc_put_utc(f, st, ev->timestamp_ns);
	}
}

void proc_ecs_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		    const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
		    const struct proc_info *p, const char *old_comm)
{
	int thread = proc_about_thread(ev, e);
	const struct cn_proc_entry *proc = thread ? cn_proc_tracker_find(st->t, ev->tgid) : e;
	const char *action = cn_proc_what_name(ev->what);
	const char *id = proc_entity_of(st, ev->tgid, thread ? NULL : e);

	(void)pe;
	(void)old_comm;
	if (ev->what == CN_PROC_FORK && thread)
		action = "clone";
	fputs_unlocked("{\"@timestamp\":", f);
	proc_put_utc(f, st, ev->timestamp_ns);
	fprintf(f,
		",\"ecs\":{\"version\":\"" PROC_ECS_VERSION "\"},\"event\":{\"kind\":\"event\","
		"\"category\":[\"process\"],\"type\":[\"%s\"],\"action\":\"%s\"}",
		event_type(ev, e), action);
	fprintf(f, ",\"process\":{\"pid\":%d", (int)ev->tgid);
	if (id)
		fprintf(f, ",\"entity_id\":\"%s\"", id);
	/* The process's name is its main thread's; a rename names the new. */
	if (ev->what == CN_PROC_COMM && !thread)
		put_comm(f, "name", ev->comm);
	else if (proc && proc->comm[0])
		put_comm(f, "name", proc->comm);
	fprintf(f, ",\"thread\":{\"id\":%d", (int)ev->pid);
	if (ev->what == CN_PROC_COMM)
		put_comm(f, "name", ev->comm);
	else if (e && e->comm[0])
		put_comm(f, "name", e->comm);
	putc_unlocked('}', f);
	if (proc && (proc->flags & (CN_PROC_ENTRY_FORK | CN_PROC_ENTRY_SCANNED))) {
		fputs_unlocked(",\"start\":", f);
		proc_put_utc(f, st, proc->start_ns);
	}
	if (p && p->cmd)
		put_args(f, p->cmd);
	if (ev->what == CN_PROC_UID) {
		/* The event's own ids: what the process changed to. */
		put_user(f, st, "user", ev->euid);
		put_user(f, st, "real_user", ev->ruid);
	} else if (p && (p->flags & PROC_INFO_UID)) {
		put_user(f, st, "user", p->uid);
		put_user(f, st, "real_user", p->ruid);
	}
	if (ev->what == CN_PROC_GID)
		fprintf(f, ",\"group\":{\"id\":\"%u\"},\"real_group\":{\"id\":\"%u\"}", ev->euid,
			ev->ruid);
	if (ev->what == CN_PROC_FORK || ev->what == CN_PROC_EXIT || ev->what == CN_PROC_COREDUMP)
		put_parent(f, st, ev, e);
	if (ev->what == CN_PROC_EXIT)
		put_exit(f, st, ev, e);
	fputs_unlocked("}}\n", f);
}

/* event.kind of a record that is not an event, and its log.level: loss
 * and the counts are metrics; loss is a warning, an error an error. */
static void record_kind(const char *type, const char **kind, const char **level)
{
	*kind = "event";
	*level = "info";
	if (!strcmp(type, "loss") || !strcmp(type, "summary") || !strcmp(type, "stats"))
		*kind = "metric";
	if (!strcmp(type, "loss") || !strcmp(type, "resync"))
		*level = "warning";
	else if (!strcmp(type, "error"))
		*level = "error";
}

void proc_ecs_record_head(FILE *f, struct proc_state *st, const char *type, const char *message)
{
	struct timespec now;
	const char *kind, *level;

	clock_gettime(CLOCK_MONOTONIC, &now);
	record_kind(type, &kind, &level);
	fputs_unlocked("{\"@timestamp\":", f);
	proc_put_utc(f, st, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	fprintf(f,
		",\"ecs\":{\"version\":\"" PROC_ECS_VERSION "\"},\"event\":{\"kind\":\"%s\","
		"\"action\":\"%s\"},\"log\":{\"level\":\"%s\"}",
		kind, type, level);
	if (message) {
		fputs_unlocked(",\"message\":", f);
		json_string(f, message, strlen(message));
	}
	/* What ECS has no field for, under cnctl's own name, which no ECS
	 * field set uses. */
	fprintf(f, ",\"cnctl\":{\"type\":\"%s\",\"schema\":%d", type, PROC_JSON_SCHEMA);
}
