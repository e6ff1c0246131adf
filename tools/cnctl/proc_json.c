/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_json.c - `cnctl proc --json`: one JSON object per line, in cnctl's
 * schema (PROC_JSON_SCHEMA; every key in cnctl(1)). Its keys mean what the
 * process fields of the same name mean in the conventions log pipelines
 * map to (Elastic Common Schema, OpenTelemetry): pid is the process,
 * thread_id the task, exit_code what a shell's $? says; no key is a string
 * where ECS has an object (event, user). The records that are not events
 * (loss, summary, ...) open and close here for both JSON modes.
 */
#include <stdio.h>
#include <string.h>

#include "proc.h"

size_t proc_json_args(FILE *f, const struct proc_cmdline *c, int joined)
{
	size_t count = 0;

	putc_unlocked(joined ? '"' : '[', f);
	for (size_t i = 0; i <= c->len; count++) {
		size_t len = strlen(c->text + i);

		if (i)
			putc_unlocked(joined ? ' ' : ',', f);
		if (joined)
			json_string_body(f, c->text + i, len);
		else
			json_string(f, c->text + i, len);
		i += len + 1;
	}
	putc_unlocked(joined ? '"' : ']', f);
	return count;
}

/* "argv": the command line's arguments, "argv_truncated" when it was cut. */
static void json_argv(FILE *f, const struct proc_cmdline *c)
{
	fputs_unlocked(",\"argv\":", f);
	proc_json_args(f, c, 0);
	if (c->truncated)
		fputs_unlocked(",\"argv_truncated\":true", f);
}

/* An exit: the raw wait status, and what it says (proc_exit.c). */
static void json_exit(FILE *f, const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	struct proc_exit x;
	const char *from;
	uint64_t ns;
	char sb[24];

	proc_exit_decode(ev->exit_code, &x);
	fprintf(f, ",\"wait_status\":%u,\"parent_signal\":%d", ev->exit_code, (int)ev->exit_signal);
	if (x.how == PROC_EXIT_EXITED)
		fprintf(f, ",\"status\":\"exited\",\"exit_code\":%d", x.code);
	else if (x.how == PROC_EXIT_KILLED)
		fprintf(f,
			",\"status\":\"killed\",\"exit_code\":%d,\"term_signal\":%d,"
			"\"term_signal_name\":\"%s\",\"core_dumped\":%s",
			x.code, x.signal, proc_signal_name(x.signal, sb, sizeof(sb)),
			x.core_dumped ? "true" : "false");
	else
		fputs(",\"status\":\"unknown\"", f);
	from = proc_lifetime(e, ev->timestamp_ns, &ns);
	if (from)
		fprintf(f, ",\"lifetime_ns\":%llu,\"lifetime_from\":\"%s\"", (unsigned long long)ns,
			from);
}

/* The effective and real users, by number and name. */
static void json_users(FILE *f, struct proc_state *st, const struct proc_info *p)
{
	const char *name = proc_user_name(st, p->uid);

	fprintf(f, ",\"user_id\":%u,\"user_name\":", (unsigned int)p->uid);
	json_string(f, name, strlen(name));
	name = proc_user_name(st, p->ruid);
	fprintf(f, ",\"real_user_id\":%u,\"real_user_name\":", (unsigned int)p->ruid);
	json_string(f, name, strlen(name));
}

/* The parent process of a fork, a coredump or an exit: the event's, or for
 * a thread's exit (which names none) the tracker's. */
static void json_parent(FILE *f, const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	pid_t ppid = ev->parent_tgid ? ev->parent_tgid : e ? e->ppid : 0;

	if (ppid)
		fprintf(f, ",\"parent_pid\":%d", (int)ppid);
	if (ev->parent_pid)
		fprintf(f, ",\"parent_thread_id\":%d", (int)ev->parent_pid);
}

void proc_json_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		     const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
		     const struct proc_info *p, const char *old_comm)
{
	const char *name = cn_proc_what_name(ev->what);
	int thread = proc_about_thread(ev, e);
	const char *id;

	if (ev->what == CN_PROC_FORK && thread)
		name = "clone"; /* as the table says */
	proc_record_head(f, st, "event", NULL);
	fprintf(f, ",\"action\":\"%s\"", name);
	if (strcmp(name, "unknown") == 0)
		fprintf(f, ",\"what\":%u", (uint32_t)ev->what);
	fputs_unlocked(",\"time\":", f);
	proc_put_utc(f, st, ev->timestamp_ns);
	fprintf(f, ",\"cpu\":%u,\"seq\":%u,\"monotonic_ns\":%llu,\"pid\":%d,\"thread_id\":%d",
		ev->cpu, ev->seq, (unsigned long long)ev->timestamp_ns, (int)ev->tgid,
		(int)ev->pid);
	if (thread)
		fputs_unlocked(",\"thread\":true", f);
	id = proc_entity_of(st, ev->tgid, thread ? NULL : e);
	if (id)
		fprintf(f, ",\"entity_id\":\"%s\"", id);
	if (e && e->comm[0] && ev->what != CN_PROC_COMM) {
		fputs_unlocked(",\"comm\":", f);
		json_string(f, e->comm, sizeof(e->comm));
		if (e->flags & CN_PROC_ENTRY_STALE_COMM)
			fputs_unlocked(",\"comm_stale\":true", f);
	}
	if (st->o->user_column && p && (p->flags & PROC_INFO_UID))
		json_users(f, st, p);
	switch (ev->what) {
	case CN_PROC_FORK:
		json_parent(f, ev, e);
		if (pe && pe->comm[0]) {
			fputs_unlocked(",\"parent_comm\":", f);
			json_string(f, pe->comm, sizeof(pe->comm));
		}
		if (!thread && (id = proc_entity_of(st, ev->parent_tgid, NULL)))
			fprintf(f, ",\"parent_entity_id\":\"%s\"", id);
		break;
	case CN_PROC_COREDUMP:
		json_parent(f, ev, e);
		break;
	case CN_PROC_EXEC:
		if (p && p->cmd)
			json_argv(f, p->cmd);
		break;
	case CN_PROC_EXIT:
		json_parent(f, ev, e);
		json_exit(f, ev, e);
		break;
	case CN_PROC_UID:
		fprintf(f, ",\"ruid\":%u,\"euid\":%u", ev->ruid, ev->euid);
		break;
	case CN_PROC_GID:
		fprintf(f, ",\"rgid\":%u,\"egid\":%u", ev->ruid, ev->euid);
		break;
	case CN_PROC_COMM:
		fputs_unlocked(",\"comm\":", f);
		json_string(f, ev->comm, sizeof(ev->comm));
		if (old_comm && old_comm[0]) {
			fputs_unlocked(",\"old_comm\":", f);
			json_string(f, old_comm, 16);
		}
		break;
	case CN_PROC_PTRACE:
		fprintf(f, ",\"tracer_pid\":%d,\"tracer_thread_id\":%d,\"ptrace_op\":\"%s\"",
			(int)ev->tracer_tgid, (int)ev->tracer_pid,
			ev->tracer_pid ? "attach" : "detach");
		break;
	default:
		break;
	}
	proc_record_end(f, st);
}

void proc_record_head(FILE *f, struct proc_state *st, const char *type, const char *message)
{
	if (st->o->ecs) {
		proc_ecs_record_head(f, st, type, message);
		return;
	}
	fprintf(f, "{\"type\":\"%s\",\"schema\":%d", type, PROC_JSON_SCHEMA);
	if (message) {
		fputs_unlocked(",\"message\":", f);
		json_string(f, message, strlen(message));
	}
}

void proc_record_end(FILE *f, const struct proc_state *st)
{
	fputs_unlocked(st->o->ecs ? "}}\n" : "}\n", f);
}
