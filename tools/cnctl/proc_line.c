/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_line.c - one line per proc event for `cnctl proc`: the table a person
 * reads (time, event, pid, parent, lifetime, process name or command line,
 * what happened; colored on a terminal) or a JSON object for programs and
 * the journal. Names come from the process tracker; an exec's command line
 * is read from /proc at once.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
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

static const char *signame(int sig, char *buf, size_t size)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "%d", sig);
	return buf;
}

/* The command line of pid, read now: argv joined by spaces into buf.
 * Returns its length; 0 when it cannot be had (gone, a zombie, a kernel
 * thread). */
static size_t read_cmdline(pid_t pid, char *buf, size_t size)
{
	char path[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	while (n > 0 && buf[n - 1] == '\0')
		n--; /* the last argument's NUL */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return (size_t)n;
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

static void put_time(FILE *f, const struct proc_state *st, uint64_t ts_ns)
{
	int64_t ns = (int64_t)ts_ns + st->realtime_offset_ns;
	time_t secs = (time_t)(ns / 1000000000);
	long us = (long)((ns % 1000000000) / 1000);
	struct tm tm;

	if (st->o->time_fmt == PROC_TIME_MONO) {
		fprintf(f, "%8llu.%06llu", (unsigned long long)(ts_ns / 1000000000),
			(unsigned long long)(ts_ns % 1000000000 / 1000));
		return;
	}
	if (!localtime_r(&secs, &tm))
		memset(&tm, 0, sizeof(tm));
	if (st->o->time_fmt == PROC_TIME_ISO) {
		char zone[8];

		strftime(zone, sizeof(zone), "%z", &tm);
		fprintf(f, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld%.3s:%s", tm.tm_year + 1900,
			tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us, zone,
			zone + 3);
		return;
	}
	fprintf(f, "%02d:%02d:%02d.%06ld", tm.tm_hour, tm.tm_min, tm.tm_sec, us);
}

/* How long e lived until ts_ns, and from what: "fork", "exec" (the fork was
 * not seen: at least this long), "scan" (start time from /proc, to the
 * clock tick), or NULL (unknown). */
static const char *lifetime(const struct cn_proc_entry *e, uint64_t ts_ns, uint64_t *ns)
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

void proc_print_header(FILE *f, const struct proc_opts *o)
{
	int tw = o->time_fmt == PROC_TIME_ISO ? 32 : 15;

	fprintf(f, "%-*s %-6s %7s %7s %9s  %s\n", tw, "TIME", "EVENT", "PID", "PPID", "LIFETIME",
		"PROCESS");
}

static void table_exit(FILE *f, const struct proc_state *st, const struct cn_proc_event *ev,
		       const struct cn_proc_entry *e)
{
	int status = (int)ev->exit_code;
	char sb[24];

	put_name(f, e);
	fputs(e && (e->flags & CN_PROC_ENTRY_THREAD) ? "  thread " : "  ", f);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		fputs("exit 0", f);
	else if (WIFEXITED(status))
		fprintf(f, "%sexit %d%s", color(st, C_RED), WEXITSTATUS(status),
			color(st, C_RESET));
	else if (WIFSIGNALED(status))
		fprintf(f, "%skilled %s%s%s", color(st, C_BRED),
			signame(WTERMSIG(status), sb, sizeof(sb)),
			WCOREDUMP(status) ? " (core dumped)" : "", color(st, C_RESET));
	else
		fprintf(f, "status 0x%x", ev->exit_code);
}

static void print_table(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
			const struct cn_proc_entry *e, const struct cn_proc_entry *pe)
{
	int thread = ev->pid != ev->tgid;
	const char *what = cn_proc_what_name(ev->what), *from, *ec;
	char dur[16] = "", cmd[4096];
	pid_t ppid = e ? e->ppid : ev->parent_tgid;
	uint64_t ns;

	if (ev->what == CN_PROC_FORK && thread)
		what = "clone";
	if (ev->what == CN_PROC_EXIT && (from = lifetime(e, ev->timestamp_ns, &ns)))
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
	fprintf(f, " %s%-6s%s %7d %7d %9s  ", ec, what, *ec ? color(st, C_RESET) : "", (int)ev->pid,
		(int)ppid, dur);
	switch (ev->what) {
	case CN_PROC_FORK:
		put_name(f, e);
		if (thread) {
			fprintf(f, "  %sthread of %d%s", color(st, C_DIM), (int)ev->tgid,
				color(st, C_RESET));
		} else {
			fputs("  child of ", f);
			put_name(f, pe);
		}
		break;
	case CN_PROC_EXEC: {
		size_t n = read_cmdline(ev->pid, cmd, sizeof(cmd));

		/* The command line; when the process is gone already, its name
		 * in brackets (as ps shows what has no command line). */
		if (n) {
			/* On a terminal a command line ends at its edge: one
			 * event, one line. */
			if (st->width && n > st->width) {
				n = st->width > 3 ? st->width - 3 : 0;
				memcpy(cmd + n, "...", 4);
				n += 3;
			}
			fputs(color(st, C_GREEN), f);
			put_safe(f, cmd, n);
			fputs(color(st, C_RESET), f);
		} else {
			putc_unlocked('[', f);
			put_name(f, e);
			putc_unlocked(']', f);
		}
		break;
	}
	case CN_PROC_EXIT:
		table_exit(f, st, ev, e);
		break;
	case CN_PROC_UID:
		put_name(f, e);
		fprintf(f, "  ruid %u euid %u", ev->ruid, ev->euid);
		break;
	case CN_PROC_GID:
		put_name(f, e);
		fprintf(f, "  rgid %u egid %u", ev->ruid, ev->euid);
		break;
	case CN_PROC_SID:
		put_name(f, e);
		fputs("  new session", f);
		break;
	case CN_PROC_COMM:
		fputs("renamed to ", f);
		put_safe(f, ev->comm, sizeof(ev->comm));
		break;
	case CN_PROC_PTRACE:
		put_name(f, e);
		if (ev->tracer_pid)
			fprintf(f, "  traced by %d", (int)ev->tracer_tgid);
		else
			fputs("  trace detached", f);
		break;
	case CN_PROC_COREDUMP:
		put_name(f, e);
		fputs("  dumping core", f);
		break;
	default:
		fprintf(f, "what=0x%x", (uint32_t)ev->what);
		break;
	}
	putc_unlocked('\n', f);
}

/* The exit event's details in the JSON line: the raw wait status decoded. */
static void json_exit(FILE *f, const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	int status = (int)ev->exit_code;
	const char *from;
	uint64_t ns;
	char sb[24];

	fprintf(f, ",\"exit_code\":%u,\"exit_signal\":%d", ev->exit_code, (int)ev->exit_signal);
	if (WIFEXITED(status)) {
		fprintf(f, ",\"status\":\"exited\",\"exit_status\":%d", WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		fprintf(f,
			",\"status\":\"killed\",\"term_signal\":%d,\"term_signal_name\":\"%s\","
			"\"core_dumped\":%s",
			WTERMSIG(status), signame(WTERMSIG(status), sb, sizeof(sb)),
			WCOREDUMP(status) ? "true" : "false");
	} else {
		fputs(",\"status\":\"unknown\"", f);
	}
	from = lifetime(e, ev->timestamp_ns, &ns);
	if (from)
		fprintf(f, ",\"lifetime_ns\":%llu,\"lifetime_from\":\"%s\"", (unsigned long long)ns,
			from);
}

static void json_argv(FILE *f, pid_t pid)
{
	char path[32], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	if (buf[n - 1] != '\0')
		buf[n++] = '\0'; /* cut at the buffer's end */
	fputs(",\"argv\":[", f);
	for (ssize_t i = 0; i < n;) {
		size_t len = strlen(buf + i);

		if (i)
			putc_unlocked(',', f);
		json_string(f, buf + i, len);
		i += (ssize_t)len + 1;
	}
	putc_unlocked(']', f);
}

static void print_json(FILE *f, const struct cn_proc_event *ev, const struct cn_proc_entry *e,
		       const struct cn_proc_entry *pe)
{
	const char *name = cn_proc_what_name(ev->what);

	fprintf(f, "{\"event\":\"%s\",", name);
	if (strcmp(name, "unknown") == 0)
		fprintf(f, "\"what\":%u,", (uint32_t)ev->what);
	fprintf(f, "\"cpu\":%u,\"seq\":%u,\"timestamp_ns\":%llu,\"pid\":%d,\"tgid\":%d", ev->cpu,
		ev->seq, (unsigned long long)ev->timestamp_ns, (int)ev->pid, (int)ev->tgid);
	if (ev->pid != ev->tgid)
		fputs(",\"thread\":true", f);
	if (e && e->comm[0] && ev->what != CN_PROC_COMM) {
		fputs(",\"comm\":", f);
		json_string(f, e->comm, sizeof(e->comm));
		if (e->flags & CN_PROC_ENTRY_STALE_COMM)
			fputs(",\"comm_stale\":true", f);
	}
	switch (ev->what) {
	case CN_PROC_FORK:
		fprintf(f, ",\"parent_pid\":%d,\"parent_tgid\":%d", (int)ev->parent_pid,
			(int)ev->parent_tgid);
		if (pe && pe->comm[0]) {
			fputs(",\"parent_comm\":", f);
			json_string(f, pe->comm, sizeof(pe->comm));
		}
		break;
	case CN_PROC_COREDUMP:
		fprintf(f, ",\"parent_pid\":%d,\"parent_tgid\":%d", (int)ev->parent_pid,
			(int)ev->parent_tgid);
		break;
	case CN_PROC_EXEC:
		json_argv(f, ev->pid);
		break;
	case CN_PROC_EXIT:
		fprintf(f, ",\"parent_pid\":%d,\"parent_tgid\":%d", (int)ev->parent_pid,
			(int)ev->parent_tgid);
		json_exit(f, ev, e);
		break;
	case CN_PROC_UID:
		fprintf(f, ",\"ruid\":%u,\"euid\":%u", ev->ruid, ev->euid);
		break;
	case CN_PROC_GID:
		fprintf(f, ",\"rgid\":%u,\"egid\":%u", ev->ruid, ev->euid);
		break;
	case CN_PROC_COMM:
		fputs(",\"comm\":", f);
		json_string(f, ev->comm, sizeof(ev->comm));
		break;
	case CN_PROC_PTRACE:
		fprintf(f, ",\"tracer_pid\":%d,\"tracer_tgid\":%d,\"ptrace_op\":\"%s\"",
			(int)ev->tracer_pid, (int)ev->tracer_tgid,
			ev->tracer_pid ? "attach" : "detach");
		break;
	default:
		break;
	}
	fputs("}\n", f);
}

void proc_print_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e, const struct cn_proc_entry *pe)
{
	if (st->o->common.json)
		print_json(f, ev, e, pe);
	else
		print_table(f, st, ev, e, pe);
}
