/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_line.c - one line per proc event for `cnctl proc`: the table a person
 * reads (time, event, pid, parent, lifetime, process name or command line,
 * what happened; colored on a terminal); JSON lines are proc_json.c's and
 * proc_ecs.c's. Names come from the process tracker; an exec's command line
 * is read from /proc at once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

#define C_RESET "\033[0m"
#define C_RED	"\033[31m"
#define C_BRED	"\033[1;31m"
#define C_GREEN "\033[32m"
#define C_YEL	"\033[33m"
#define C_CYAN	"\033[36m"
#define C_DIM	"\033[2m"

static const char *color(const struct proc_state *st, const char *c)
{
	return st->o->color ? c : "";
}

/* Text from the kernel or a process on a terminal: control bytes shown as
 * \xNN, so a command line cannot move the cursor or change colors. */
static void put_safe(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			putc_unlocked(c, f);
	}
}

/* A task's name: its comm, "[?]" when unknown (its start was lost); a '?'
 * after a name from before an exec whose new name could not be read. */
static void put_name(FILE *f, const struct cn_proc_entry *e)
{
	if (!e || !e->comm[0]) {
		fputs("[?]", f);
		return;
	}
	put_safe(f, e->comm, sizeof(e->comm));
	if (e->flags & CN_PROC_ENTRY_STALE_COMM)
		putc_unlocked('?', f);
}

/* put_time's seconds past January 2038 (_TIME_BITS=64: CMakeLists.txt). */
_Static_assert(sizeof(time_t) == 8, "64-bit time_t");

/* The broken-down local time of secs, from a cache of the last second:
 * localtime_r costs more than the rest of a line. */
static const struct tm *local_tm(struct proc_state *st, time_t secs)
{
	struct proc_line_state *l = &st->line;

	if (l->tm_secs != (int64_t)secs) {
		if (!localtime_r(&secs, &l->tm_cache))
			memset(&l->tm_cache, 0, sizeof(l->tm_cache));
		l->tm_secs = (int64_t)secs;
	}
	return &l->tm_cache;
}

static void put_time(FILE *f, struct proc_state *st, uint64_t ts_ns)
{
	int64_t ns = (int64_t)ts_ns + st->line.realtime_offset_ns;
	time_t secs = (time_t)(ns / 1000000000);
	long us = (long)((ns % 1000000000) / 1000);
	const struct tm *tm;

	if (st->o->time_fmt == PROC_TIME_MONO) {
		fprintf(f, "%8llu.%06llu", (unsigned long long)(ts_ns / 1000000000),
			(unsigned long long)(ts_ns % 1000000000 / 1000));
		return;
	}
	tm = local_tm(st, secs);
	if (st->o->time_fmt == PROC_TIME_ISO) {
		char zone[8];

		strftime(zone, sizeof(zone), "%z", tm);
		fprintf(f, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld%.3s:%s", tm->tm_year + 1900,
			tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, us, zone,
			zone + 3);
		return;
	}
	fprintf(f, "%02d:%02d:%02d.%06ld", tm->tm_hour, tm->tm_min, tm->tm_sec, us);
}

void proc_put_utc(FILE *f, struct proc_state *st, uint64_t ts_ns)
{
	struct proc_line_state *l = &st->line;
	int64_t ns = (int64_t)ts_ns + l->realtime_offset_ns;
	time_t secs = (time_t)(ns / 1000000000);
	const struct tm *tm = &l->utc_cache;

	if (l->utc_secs != (int64_t)secs) {
		if (!gmtime_r(&secs, &l->utc_cache))
			memset(&l->utc_cache, 0, sizeof(l->utc_cache));
		l->utc_secs = (int64_t)secs;
	}
	fprintf(f, "\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\"", tm->tm_year + 1900, tm->tm_mon + 1,
		tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, (long)((ns % 1000000000) / 1000));
}

const char *proc_lifetime(const struct cn_proc_entry *e, uint64_t ts_ns, uint64_t *ns)
{
	const char *from;
	uint64_t start;

	if (!e)
		return NULL;
	if (e->flags & (CN_PROC_ENTRY_FORK | CN_PROC_ENTRY_SCANNED)) {
		start = e->start_ns;
		from = e->flags & CN_PROC_ENTRY_FORK ? "fork" : "scan";
	} else if (e->flags & CN_PROC_ENTRY_EXEC) {
		start = e->exec_ns;
		from = "exec";
	} else {
		return NULL;
	}
	*ns = ts_ns > start ? ts_ns - start : 0;
	return from;
}

/* A duration in at most 9 columns: 312us, 5.12ms, 1.234s, 12m03s, 3h04m, 2d03h. */
static void fmt_duration(char *buf, size_t size, uint64_t ns, const char *from)
{
	const char *pre = !strcmp(from, "fork") ? "" : !strcmp(from, "exec") ? ">" : "~";
	unsigned long long s = ns / 1000000000;

	if (ns < 1000000)
		snprintf(buf, size, "%s%lluus", pre, (unsigned long long)(ns / 1000));
	else if (ns < 1000000000)
		snprintf(buf, size, "%s%.2fms", pre, (double)ns / 1e6);
	else if (s < 60)
		snprintf(buf, size, "%s%.3fs", pre, (double)ns / 1e9);
	else if (s < 3600)
		snprintf(buf, size, "%s%llum%02llus", pre, s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%s%lluh%02llum", pre, s / 3600, s % 3600 / 60);
	else
		snprintf(buf, size, "%s%llud%02lluh", pre, s / 86400, s % 86400 / 3600);
}

/* The columns before PROCESS: time, event, pid, ppid, [user,] lifetime. */
static size_t columns_before(const struct proc_opts *o)
{
	size_t tw = o->time_fmt == PROC_TIME_ISO ? 32 : 15;

	return tw + 1 + PROC_EVENT_WIDTH + 1 + 7 + 1 + 7 + (o->user_column ? 9 : 0) + 1 + 9 + 2;
}

void proc_line_init(struct proc_state *st)
{
	/* The clocks' offset, once: times stay in order across a step of
	 * the wall clock. */
	st->line.realtime_offset_ns = (int64_t)cn_proc_realtime_ns(0);
	st->line.tm_secs = st->line.utc_secs = -1;
}

void proc_line_read_width(struct proc_state *st)
{
	struct winsize ws;

	st->line.width = 0;
	if (!st->o->common.json && isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		st->line.width = proc_line_width(st->o, ws.ws_col);
}

size_t proc_line_width(const struct proc_opts *o, unsigned int cols)
{
	size_t used = columns_before(o);

	return cols > used + 10 ? cols - used : 0;
}

void proc_print_header(FILE *f, const struct proc_opts *o)
{
	int tw = o->time_fmt == PROC_TIME_ISO ? 32 : 15;

	fprintf(f, "%-*s %-*s %7s %7s", tw, "TIME", PROC_EVENT_WIDTH, "EVENT", "PID", "PPID");
	if (o->user_column)
		fprintf(f, " %-8s", "USER");
	fprintf(f, " %9s  %s\n", "LIFETIME", "PROCESS");
}

/* Columns text takes on the screen: control bytes are shown as \xNN, color
 * sequences take none. */
static size_t visible(const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		if (*s == '\033') {
			while (*s && *s != 'm')
				s++;
			if (!*s)
				break;
			continue;
		}
		n += ((unsigned char)*s < 0x20 || *s == 0x7f) ? 4 : 1;
	}
	return n;
}

/* After a command line cut at PROC_ARGV_MAX bytes (JSON: argv_truncated). */
#define ARGV_CUT_MARK " [argv cut at 4096 bytes]"
_Static_assert(PROC_ARGV_MAX == 4096, "ARGV_CUT_MARK names PROC_ARGV_MAX");

/* A command line (arguments NUL-separated) joined by spaces, at most room
 * columns ("..." at the cut; room 0: all), and marked when /proc gave more
 * than PROC_ARGV_MAX bytes. */
static void put_cmdline(FILE *f, const struct proc_cmdline *c, size_t room)
{
	size_t n = c->len, cols = 0, limit;
	size_t mark = c->truncated ? sizeof(ARGV_CUT_MARK) - 1 : 0;

	for (size_t i = 0; i < n; i++)
		cols +=
		    ((unsigned char)c->text[i] < 0x20 && c->text[i]) || c->text[i] == 0x7f ? 4 : 1;
	limit = room && cols + mark > room ? (room > 3 ? room - 3 : 0) : (size_t)-1;
	cols = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)c->text[i];
		size_t w = (ch < 0x20 && ch) || ch == 0x7f ? 4 : 1;

		if (cols + w > limit)
			break;
		cols += w;
		if (ch == '\0')
			putc_unlocked(' ', f);
		else if (w == 4)
			fprintf(f, "\\x%02x", ch);
		else
			putc_unlocked(ch, f);
	}
	if (limit != (size_t)-1)
		fputs_unlocked("...", f);
	else if (mark)
		fputs_unlocked(ARGV_CUT_MARK, f);
}

/* The process: its command line when it has one, else its name. */
static void put_process(FILE *f, const struct cn_proc_entry *e, const struct proc_info *p,
			size_t room)
{
	if (p && p->cmd)
		put_cmdline(f, p->cmd, room);
	else
		put_name(f, e);
}

/* The exit's status after the process: "exit 0", "exit 3" (red), "killed
 * SIGSEGV (core dumped)"; a thread's marked. */
static void exit_text(char *buf, size_t size, const struct proc_state *st,
		      const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	const char *th = proc_about_thread(ev, e) ? "thread " : "";
	struct proc_exit x;
	char sb[24];

	proc_exit_decode(ev->exit_code, &x);
	if (x.how == PROC_EXIT_EXITED && x.code == 0)
		snprintf(buf, size, "  %sexit 0", th);
	else if (x.how == PROC_EXIT_EXITED)
		snprintf(buf, size, "  %s%sexit %d%s", th, color(st, C_RED), x.code,
			 color(st, C_RESET));
	else if (x.how == PROC_EXIT_KILLED)
		snprintf(buf, size, "  %s%skilled %s%s%s", th, color(st, C_BRED),
			 proc_signal_name(x.signal, sb, sizeof(sb)),
			 x.core_dumped ? " (core dumped)" : "", color(st, C_RESET));
	else
		snprintf(buf, size, "  %sstatus 0x%x", th, ev->exit_code);
}

static void print_table(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
			const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
			const struct proc_info *p, const char *old_comm)
{
	int thread = proc_about_thread(ev, e);
	const char *what = cn_proc_what_name(ev->what), *from, *ec;
	char dur[16] = "", suffix[96] = "";
	pid_t ppid = e ? e->ppid : ev->parent_tgid;
	size_t room;
	uint64_t ns;

	if (ev->what == CN_PROC_FORK && thread)
		what = "clone";
	if (ev->what == CN_PROC_EXIT && (from = proc_lifetime(e, ev->timestamp_ns, &ns)))
		fmt_duration(dur, sizeof(dur), ns, from);
	if ((ev->what == CN_PROC_FORK || ev->what == CN_PROC_EXIT) && ev->parent_tgid)
		ppid = ev->parent_tgid; /* a thread's exit names no parent */
	put_time(f, st, ev->timestamp_ns);
	ec = color(st, ev->what == CN_PROC_EXEC				      ? C_GREEN
		       : ev->what == CN_PROC_FORK && thread		      ? C_DIM
		       : ev->what == CN_PROC_COREDUMP			      ? C_BRED
		       : ev->what == CN_PROC_COMM			      ? C_CYAN
		       : ev->what == CN_PROC_FORK || ev->what == CN_PROC_EXIT ? ""
									      : C_YEL);
	/* The pad inside the color, the reset only after a color: the columns
	 * read the same with and without. */
	/* A process's exit shows the process, whichever thread's event it was. */
	fprintf(f, " %s%-*s%s %7d %7d", ec, PROC_EVENT_WIDTH, what, *ec ? color(st, C_RESET) : "",
		(int)(thread ? ev->pid : ev->tgid), (int)ppid);
	if (st->o->user_column) {
		if (p && (p->flags & PROC_INFO_UID))
			fprintf(f, " %-8.8s", proc_user_name(st, p->uid));
		else
			fprintf(f, " %-8s", "?");
	}
	fprintf(f, " %9s  ", dur);

	/* What follows the process (its parent, its status...), made first:
	 * on a terminal the command line gets the room that is left. */
	switch (ev->what) {
	case CN_PROC_FORK:
		if (thread)
			snprintf(suffix, sizeof(suffix), "  %sthread of %d%s", color(st, C_DIM),
				 (int)ev->tgid, color(st, C_RESET));
		break;
	case CN_PROC_EXIT:
		exit_text(suffix, sizeof(suffix), st, ev, e);
		break;
	case CN_PROC_UID:
		snprintf(suffix, sizeof(suffix), "  ruid %u euid %u", ev->ruid, ev->euid);
		break;
	case CN_PROC_GID:
		snprintf(suffix, sizeof(suffix), "  rgid %u egid %u", ev->ruid, ev->euid);
		break;
	case CN_PROC_SID:
		snprintf(suffix, sizeof(suffix), "  new session");
		break;
	case CN_PROC_PTRACE:
		if (ev->tracer_pid)
			snprintf(suffix, sizeof(suffix), "  traced by %d", (int)ev->tracer_tgid);
		else
			snprintf(suffix, sizeof(suffix), "  trace detached");
		break;
	case CN_PROC_COREDUMP:
		snprintf(suffix, sizeof(suffix), "  dumping core");
		break;
	default:
		break;
	}
	room = st->line.width;
	if (room && ev->what == CN_PROC_FORK && !thread) {
		/* "  child of " and the parent's name */
		size_t pn = 11 + (pe && pe->comm[0] ? strnlen(pe->comm, sizeof(pe->comm)) + 1 : 3);

		room = room > pn + 1 ? room - pn : 1;
	} else if (room)
		room = room > visible(suffix) + 1 ? room - visible(suffix) : 1;

	switch (ev->what) {
	case CN_PROC_FORK:
		put_process(f, e, p, room);
		if (!thread) {
			fputs_unlocked("  child of ", f);
			put_name(f, pe);
		}
		break;
	case CN_PROC_EXEC:
		/* The command line; when the process was gone before it could
		 * be read, its name in brackets (as ps shows what has none). */
		if (p && p->cmd) {
			fputs_unlocked(color(st, C_GREEN), f);
			put_cmdline(f, p->cmd, room);
			fputs_unlocked(color(st, C_RESET), f);
		} else {
			putc_unlocked('[', f);
			put_name(f, e);
			putc_unlocked(']', f);
		}
		break;
	case CN_PROC_COMM:
		/* old -> new; the old name unknown: "[?]". */
		if (old_comm && old_comm[0])
			put_safe(f, old_comm, 16);
		else
			fputs_unlocked("[?]", f);
		fputs_unlocked(" -> ", f);
		put_safe(f, ev->comm, sizeof(ev->comm));
		break;
	case CN_PROC_UID:
	case CN_PROC_GID:
	case CN_PROC_SID:
	case CN_PROC_PTRACE:
	case CN_PROC_COREDUMP:
	case CN_PROC_EXIT:
		put_process(f, e, p, room);
		break;
	default:
		fprintf(f, "what=0x%x", (uint32_t)ev->what);
		break;
	}
	fputs_unlocked(suffix, f);
	putc_unlocked('\n', f);
}

/* Room for a table line: a command line of PROC_ARGV_MAX bytes, each
 * control byte shown as \xNN, and the columns. */
#define JOURNAL_TEXT_MAX (PROC_ARGV_MAX * 4 + 512)

/* --journal: the JSON line with the table's line as its "message" (the
 * entry's MESSAGE: proc_journal_fields.c), without the time column (the
 * journal has its own) and with the columns' padding squeezed. */
static void print_journal(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
			  const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
			  const struct proc_info *p, const char *old_comm)
{
	static char table[JOURNAL_TEXT_MAX], json[JOURNAL_TEXT_MAX * 2], text[JOURNAL_TEXT_MAX];
	FILE *m = fmemopen(table, sizeof(table), "w");
	FILE *j = fmemopen(json, sizeof(json), "w");
	size_t n = 0, jl;
	const char *s;

	if (!m || !j) {
		if (m)
			fclose(m);
		if (j)
			fclose(j);
		proc_json_event(f, st, ev, e, pe, p, old_comm); /* without its message */
		return;
	}
	print_table(m, st, ev, e, pe, p, old_comm);
	proc_json_event(j, st, ev, e, pe, p, old_comm);
	fputc('\0', m);
	fputc('\0', j);
	fclose(m);
	fclose(j);
	table[sizeof(table) - 1] = json[sizeof(json) - 1] = '\0';
	s = strchr(table, ' '); /* past the time */
	for (s = s ? s : table; *s && *s != '\n'; s++)
		if (*s != ' ' || (n && text[n - 1] != ' '))
			text[n++] = *s;
	while (n && text[n - 1] == ' ')
		n--;
	jl = strlen(json);
	if (jl < 2 || strcmp(json + jl - 2, "}\n") != 0) {
		fputs(json, f); /* cut short: the journal gets it as it is */
		return;
	}
	fwrite(json, 1, jl - 2, f);
	fputs(",\"message\":", f);
	json_string(f, text, n);
	fputs("}\n", f);
}

void proc_print_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
		      const struct proc_info *p, const char *old_comm)
{
	if (st->o->journal)
		print_journal(f, st, ev, e, pe, p, old_comm);
	else if (st->o->ecs)
		proc_ecs_event(f, st, ev, e, pe, p, old_comm);
	else if (st->o->common.json)
		proc_json_event(f, st, ev, e, pe, p, old_comm);
	else
		print_table(f, st, ev, e, pe, p, old_comm);
}
