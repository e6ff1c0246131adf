/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_stats.c - what `cnctl proc` sums up: a per-command table (forks,
 * clones, execs, exits, non-zero exits, exits lost while blind) like
 * `forkstat -S`, loss reports on stderr at most once a second with exact
 * totals, and the one-line summary at exit. The table's rows are found by
 * name through libc's hash table (hsearch_r): cnctl keeps no hash table of
 * its own.
 */
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define CMD_MAX		 4096u /* commands with a row; the others count as one */
#define LOSS_REPORT_MS	 1000
#define STATS_NAME_OTHER "(other)"

int proc_stats_init(struct proc_state *st)
{
	struct proc_cmd_table *ct = &st->cmds;

	ct->row = calloc(CMD_MAX, sizeof(*ct->row));
	/* Twice the rows: glibc's table (double hashing) stays fast. */
	if (!ct->row || !hcreate_r(2 * CMD_MAX, &ct->index)) {
		free(ct->row);
		ct->row = NULL;
		return -1;
	}
	snprintf(ct->other.comm, sizeof(ct->other.comm), "%s", STATS_NAME_OTHER);
	return 0;
}

void proc_stats_free(struct proc_state *st)
{
	if (!st->cmds.row)
		return;
	hdestroy_r(&st->cmds.index);
	free(st->cmds.row);
	st->cmds.row = NULL;
}

/* The counters of command `comm` ("[?]" when unknown). */
static struct proc_cmd_stats *cmd(struct proc_state *st, const struct cn_proc_entry *e)
{
	struct proc_cmd_table *ct = &st->cmds;
	ENTRY item = { .key = (char *)(e && e->comm[0] ? e->comm : "[?]") }, *found;
	struct proc_cmd_stats *row;

	if (!ct->row)
		return &ct->other;
	if (hsearch_r(item, FIND, &found, &ct->index))
		return found->data;
	if (ct->used >= CMD_MAX)
		return &ct->other;
	row = &ct->row[ct->used];
	snprintf(row->comm, sizeof(row->comm), "%.15s", item.key);
	item.key = row->comm; /* the row's copy: the key must outlive e */
	item.data = row;
	if (!hsearch_r(item, ENTER, &found, &ct->index))
		return &ct->other;
	ct->used++;
	return row;
}

void proc_stats_event(struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e)
{
	struct proc_cmd_stats *c;

	switch (ev->what) {
	case CN_PROC_FORK:
		c = cmd(st, e);
		if (ev->pid != ev->tgid)
			c->clones++;
		else
			c->forks++;
		break;
	case CN_PROC_EXEC:
		cmd(st, e)->execs++;
		break;
	case CN_PROC_EXIT:
		/* A thread's end is not a process's exit. */
		if (proc_about_thread(ev, e))
			break;
		c = cmd(st, e);
		c->exits++;
		if (ev->exit_code != 0)
			c->failed++;
		break;
	default:
		break;
	}
}

void proc_stats_unvanished(struct proc_state *st, const struct cn_proc_entry *e, int wanted)
{
	/* A rescan counted it lost; it ended during the scan and its exit
	 * came after all. */
	if (st->loss.vanished)
		st->loss.vanished--;
	if (wanted && !(e->flags & CN_PROC_ENTRY_THREAD)) {
		struct proc_cmd_stats *c = cmd(st, e);

		if (c->lost)
			c->lost--;
	}
}

void proc_stats_vanished(struct proc_state *st, const struct cn_proc_entry *e, int wanted)
{
	st->loss.vanished++;
	if (wanted && !(e->flags & CN_PROC_ENTRY_THREAD))
		cmd(st, e)->lost++;
}

void proc_stats_appeared(struct proc_state *st)
{
	st->loss.appeared++;
}

void proc_loss_gap(struct proc_state *st, uint32_t lost)
{
	st->loss.gaps += lost;
	st->loss.unreported_gaps += lost;
}

void proc_loss_overrun(struct proc_state *st)
{
	st->loss.overruns++;
	st->loss.unreported_overruns++;
}

void proc_loss_resyncing(struct proc_state *st)
{
	st->loss.appeared_before = st->loss.appeared;
	st->loss.vanished_before = st->loss.vanished;
}

/* now - before, 0 if now is below: counts only the sync's changes grow
 * while it runs, but an exit of a task reported vanished takes one back
 * (proc_stats_unvanished) at any time. */
static uint64_t since(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

void proc_loss_resynced(struct proc_state *st)
{
	struct proc_loss *l = &st->loss;
	uint64_t app = since(l->appeared, l->appeared_before);
	uint64_t van = since(l->vanished, l->vanished_before);

	l->resyncs++;
	if (!st->o->common.quiet && l->resyncs <= 3)
		proc_message(st, "resync",
			     "resynchronized with /proc after lost events: %llu tasks appeared, "
			     "%llu vanished unseen%s",
			     (unsigned long long)app, (unsigned long long)van,
			     l->resyncs == 3 ? " (further resyncs: in the summary)" : "");
}

static uint64_t total(const struct proc_cmd_stats *c)
{
	return c->forks + c->clones + c->execs + c->exits + c->lost;
}

static int by_total(const void *a, const void *b)
{
	const struct proc_cmd_stats *x = a, *y = b;
	uint64_t tx = total(x), ty = total(y);

	if (tx != ty)
		return tx < ty ? 1 : -1;
	return strncmp(x->comm, y->comm, sizeof(x->comm));
}

static void json_row(FILE *f, const struct proc_cmd_stats *c, int first)
{
	fputs(first ? "" : ",", f);
	fputs("{\"comm\":", f);
	json_string(f, c->comm, sizeof(c->comm));
	fprintf(f,
		",\"forks\":%llu,\"clones\":%llu,\"execs\":%llu,\"exits\":%llu,"
		"\"nonzero_exits\":%llu,\"lost_exits\":%llu}",
		(unsigned long long)c->forks, (unsigned long long)c->clones,
		(unsigned long long)c->execs, (unsigned long long)c->exits,
		(unsigned long long)c->failed, (unsigned long long)c->lost);
}

static void text_row(FILE *f, const struct proc_cmd_stats *c)
{
	fprintf(f, "%8llu %8llu %8llu %8llu %8llu %8llu  %.16s\n", (unsigned long long)c->forks,
		(unsigned long long)c->clones, (unsigned long long)c->execs,
		(unsigned long long)c->exits, (unsigned long long)c->failed,
		(unsigned long long)c->lost, c->comm);
}

void proc_stats_print(FILE *f, struct proc_state *st)
{
	struct proc_cmd_stats sum = { .comm = "(total)" };
	const struct proc_cmd_table *ct = &st->cmds;
	struct proc_cmd_stats *rows;
	uint32_t n = 0;

	rows = calloc(ct->used + 1, sizeof(*rows));
	if (!rows)
		return;
	for (uint32_t i = 0; i < ct->used; i++)
		rows[n++] = ct->row[i];
	if (total(&ct->other))
		rows[n++] = ct->other;
	qsort(rows, n, sizeof(*rows), by_total);
	for (uint32_t i = 0; i < n; i++) {
		sum.forks += rows[i].forks;
		sum.clones += rows[i].clones;
		sum.execs += rows[i].execs;
		sum.exits += rows[i].exits;
		sum.failed += rows[i].failed;
		sum.lost += rows[i].lost;
	}
	if (st->o->common.json) {
		proc_record_head(f, st, "stats", NULL);
		fputs(",\"commands\":[", f);
		for (uint32_t i = 0; i < n; i++)
			json_row(f, &rows[i], i == 0);
		fputs("],\"total\":", f);
		json_row(f, &sum, 1);
		fprintf(f, ",\"lost_events\":%llu,\"overruns\":%llu",
			(unsigned long long)st->loss.gaps, (unsigned long long)st->loss.overruns);
		proc_record_end(f, st);
	} else {
		fprintf(f, "\n%8s %8s %8s %8s %8s %8s  %s\n", "FORKS", "CLONES", "EXECS", "EXITS",
			"FAILED", "LOST", "COMMAND");
		for (uint32_t i = 0; i < n; i++)
			text_row(f, &rows[i]);
		text_row(f, &sum);
		fputs("FAILED: exits with a non-zero status or by a signal; LOST: exits not seen "
		      "(events lost; found by a /proc rescan)\n",
		      f);
	}
	free(rows);
}

void proc_loss_report(struct proc_state *st, int force)
{
	int64_t now = cnctl_now_ms();
	uint64_t g = st->loss.unreported_gaps, o = st->loss.unreported_overruns;

	if (!g && !o)
		return;
	if (!force && now - st->loss.last_report_ms < LOSS_REPORT_MS)
		return;
	st->loss.last_report_ms = now;
	st->loss.unreported_gaps = st->loss.unreported_overruns = 0;
	if (st->o->common.json) {
		/* In the event stream, where a pipeline sees it; never left
		 * out (--quiet or not): loss is never silent. */
		proc_record_head(stdout, st, "loss", NULL);
		fprintf(stdout,
			",\"missing\":%llu,\"overruns\":%llu,\"total_missing\":%llu,"
			"\"total_overruns\":%llu",
			(unsigned long long)g, (unsigned long long)o,
			(unsigned long long)st->loss.gaps, (unsigned long long)st->loss.overruns);
		proc_record_end(stdout, st);
		return;
	}
	if (st->o->common.quiet)
		return;
	/* One line however many losses since the last: a storm used to
	 * print one line per overrun. */
	fprintf(stderr,
		"cnctl: lost events: %llu missing from per-CPU sequences, %llu receive "
		"buffer overruns since the last report (total: %llu missing, %llu overruns)\n",
		(unsigned long long)g, (unsigned long long)o, (unsigned long long)st->loss.gaps,
		(unsigned long long)st->loss.overruns);
}

void proc_summary(struct proc_state *st)
{
	char gaps[48];
	/* The kernel's own count of events dropped for the socket: under a
	 * kernel filter no gap shows loss, and an overrun still pending when
	 * cnctl stops (blocked on stdout, then SIGINT) was never read as
	 * ENOBUFS. */
	uint64_t drops = 0;
	int have_drops = cn_drops(st->s, &drops) == 0;

	/* --metrics's last write says the same. */
	st->final_drops = drops;
	st->have_final_drops = have_drops;
	if (st->o->common.json) {
		proc_record_head(stdout, st, "summary", NULL);
		fprintf(stdout, ",\"source\":\"%s\",\"read\":%llu,\"printed\":%llu,",
			st->kmod ? "cnbus_proc" : "connector", (unsigned long long)st->events_read,
			(unsigned long long)st->printed);
		if (st->kernel_filter)
			fputs("\"gaps_tracked\":false", stdout);
		else
			fprintf(stdout, "\"gaps_tracked\":true,\"missing\":%llu",
				(unsigned long long)st->loss.gaps);
		fprintf(stdout,
			",\"overruns\":%llu,\"resyncs\":%llu,\"appeared\":%llu,\"vanished\":%llu",
			(unsigned long long)st->loss.overruns, (unsigned long long)st->loss.resyncs,
			(unsigned long long)st->loss.appeared,
			(unsigned long long)st->loss.vanished);
		if (have_drops)
			fprintf(stdout, ",\"kernel_drops\":%llu", (unsigned long long)drops);
		proc_record_end(stdout, st);
		return;
	}
	if (st->kernel_filter)
		snprintf(gaps, sizeof(gaps), "gaps not tracked: kernel filter");
	else
		snprintf(gaps, sizeof(gaps), "%llu lost (per-CPU gaps)",
			 (unsigned long long)st->loss.gaps);
	fprintf(stderr, "cnctl: %llu events printed, %s, %llu overruns\n",
		(unsigned long long)st->printed, gaps, (unsigned long long)st->loss.overruns);
	fprintf(stderr, "cnctl: events read from %s\n",
		st->kmod ? "cnbus_proc.ko (command lines read by the kernel at exec)"
			 : "the kernel's proc connector (command lines read from /proc)");
	/* On a line of its own: the line above keeps its shape. */
	if (have_drops)
		fprintf(stderr, "cnctl: %llu events dropped by the kernel for this socket\n",
			(unsigned long long)drops);
	if (st->loss.resyncs)
		fprintf(stderr,
			"cnctl: %llu resyncs with /proc after loss: %llu tasks appeared and %llu "
			"vanished unseen\n",
			(unsigned long long)st->loss.resyncs, (unsigned long long)st->loss.appeared,
			(unsigned long long)st->loss.vanished);
}

void proc_message(struct proc_state *st, const char *type, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* With --json the message is a line of the stream: a pipeline that
	 * takes stdout and stderr together (the journal, 2>&1) parses
	 * every line. A person at a terminal still reads it on stderr. */
	if (!st->o->common.json || isatty(STDERR_FILENO))
		fprintf(stderr, "cnctl: %s\n", msg);
	if (st->o->common.json) {
		proc_record_head(stdout, st, type, msg);
		proc_record_end(stdout, st);
	}
}
