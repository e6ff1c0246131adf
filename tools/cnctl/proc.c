/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c - `cnctl proc`: live process events from the kernel's proc
 * connector, one line each, as an aligned table or as JSON lines.
 *
 * The hot path reads batches of datagrams (cn_recv_batch, recvmmsg inside)
 * without waiting, decodes them with cn_proc_handle and prints into a large
 * stdout buffer; only when nothing more is pending does it flush and sleep in
 * ppoll. Loss is never silent: socket overruns and per-CPU sequence gaps are
 * reported on stderr as they happen and summed up at exit.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <libcn.h>

#include "common.h"

#define PROC_BATCH	       64	  /* messages (and datagrams) per receive call */
#define PROC_STDOUT_BUF	       (1u << 20) /* stdout buffer: flushed when idle or full */
#define PROC_LISTEN_TIMEOUT_MS 2000	  /* wait for the kernel's LISTEN ack */
#define PROC_FLUSH_MS	       100	  /* flush at least this often while events stream */

struct proc_opts {
	struct cnctl_opts common; /* json, quiet, count, rcvbuf */
	uint32_t mask;		  /* 0: every event type */
	const char *events;	  /* as given, for messages */
};

struct proc_state {
	uint64_t printed;
	uint64_t lost;		    /* sum of per-CPU gaps reported */
	uint64_t overruns;	    /* -ENOBUFS returned by the receive calls */
	int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC, for the table */
};

/* clang-format off */
static void proc_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl proc [--json] [--events LIST] [--count N] [--rcvbuf BYTES] [--quiet]\n"
		"\n"
		"Print process events (fork, exec, uid, gid, sid, ptrace, comm, coredump,\n"
		"exit) from the kernel's proc connector as they happen, one line each.\n"
		"\n"
		"Options:\n"
		"  -j, --json           one JSON object per line instead of a table; keys:\n"
		"                       event, cpu, seq, timestamp_ns (CLOCK_MONOTONIC), pid,\n"
		"                       tgid, and per event: parent_pid, parent_tgid (fork,\n"
		"                       exit, coredump); exit_code (raw wait status),\n"
		"                       exit_signal, status (\"exited\" with exit_status, or\n"
		"                       \"killed\" with term_signal, term_signal_name,\n"
		"                       core_dumped) (exit); ruid, euid (uid); rgid, egid\n"
		"                       (gid); comm (comm); tracer_pid, tracer_tgid,\n"
		"                       ptrace_op (ptrace)\n"
		"  -e, --events LIST    only these event types, comma-separated: fork, exec,\n"
		"                       uid, gid, sid, ptrace, comm, coredump, exit,\n"
		"                       nonzero_exit (exits with a non-zero status), all.\n"
		"                       Filtered in the kernel where it can (Linux >= 6.6)\n"
		"  -n, --count N        exit after printing N events\n"
		"  -r, --rcvbuf BYTES   socket receive buffer (suffix K, M, G allowed); a\n"
		"                       larger buffer rides out bursts (forced as root)\n"
		"  -q, --quiet          no 'listening' line and no summary on stderr\n"
		"  -h, --help           this help\n"
		"\n"
		"Lost events are reported on stderr as they are detected (\"cnctl: lost N\n"
		"events on cpu C\", \"cnctl: receive buffer overrun, events lost\"), and at\n"
		"exit (--count reached, SIGINT, SIGTERM) a summary gives events printed,\n"
		"events lost (per-CPU sequence gaps; not countable when the kernel filters)\n"
		"and receive buffer overruns.\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM or --count), 1 runtime error,\n"
		"2 usage error, 3 permission denied, 4 no proc connector in the kernel.\n");
}
/* clang-format on */

/* Find the first bad item of an --events list for the error message. */
static void bad_events_item(const char *list, char *item, size_t size)
{
	const char *p = list;

	snprintf(item, size, "%s", list);
	for (;;) {
		size_t n = strcspn(p, ",");
		uint32_t m;

		snprintf(item, size, "%.*s", (int)n, p);
		if (n == 0 || cn_proc_parse_mask(item, &m) < 0)
			return;
		if (p[n] == '\0')
			return;
		p += n + 1;
	}
}

static int parse_opts(int argc, char **argv, struct proc_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "events", required_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'n' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":je:n:r:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->events = optarg;
			if (cn_proc_parse_mask(optarg, &o->mask) < 0) {
				char item[64];

				if (!optarg[0])
					return cnctl_usage_err("proc", "invalid --events value '': "
								       "empty list");
				bad_events_item(optarg, item, sizeof(item));
				return cnctl_usage_err(
				    "proc",
				    "invalid --events value '%s': %s '%s' (known: fork, exec, uid, "
				    "gid, sid, ptrace, comm, coredump, exit, nonzero_exit, all)",
				    optarg, item[0] ? "unknown event type" : "empty item in",
				    item[0] ? item : optarg);
			}
			break;
		default:
			r = cnctl_common_opt(c, argv, &o->common);
			if (r)
				return r;
		}
	}
	if (optind < argc)
		return cnctl_usage_err("proc", "unexpected argument '%s'", argv[optind]);
	return 0;
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

/* The exit event's details in the JSON line: the raw wait status decoded. */
static void json_exit(FILE *f, const struct cn_proc_event *ev)
{
	int status = (int)ev->exit_code;
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
}

static void print_json(FILE *f, const struct cn_proc_event *ev)
{
	const char *name = cn_proc_what_name(ev->what);

	fprintf(f, "{\"event\":\"%s\",", name);
	if (strcmp(name, "unknown") == 0)
		fprintf(f, "\"what\":%u,", (uint32_t)ev->what);
	fprintf(f, "\"cpu\":%u,\"seq\":%u,\"timestamp_ns\":%llu,\"pid\":%d,\"tgid\":%d", ev->cpu,
		ev->seq, (unsigned long long)ev->timestamp_ns, (int)ev->pid, (int)ev->tgid);
	switch (ev->what) {
	case CN_PROC_FORK:
	case CN_PROC_COREDUMP:
		fprintf(f, ",\"parent_pid\":%d,\"parent_tgid\":%d", (int)ev->parent_pid,
			(int)ev->parent_tgid);
		break;
	case CN_PROC_EXIT:
		fprintf(f, ",\"parent_pid\":%d,\"parent_tgid\":%d", (int)ev->parent_pid,
			(int)ev->parent_tgid);
		json_exit(f, ev);
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

static void print_header(FILE *f)
{
	fprintf(f, "%-15s %3s %-8s %7s %7s  %s\n", "TIME", "CPU", "EVENT", "PID", "TGID",
		"DETAILS");
}

static void table_parent(FILE *f, const struct cn_proc_event *ev)
{
	if (ev->parent_pid == ev->parent_tgid)
		fprintf(f, "  parent=%d", (int)ev->parent_pid);
	else
		fprintf(f, "  parent=%d(tgid %d)", (int)ev->parent_pid, (int)ev->parent_tgid);
}

static void print_table(FILE *f, const struct cn_proc_event *ev, const struct proc_state *st)
{
	int64_t ns = (int64_t)ev->timestamp_ns + st->realtime_offset_ns;
	time_t secs = (time_t)(ns / 1000000000);
	int status = (int)ev->exit_code;
	struct tm tm;
	char sb[24];

	if (!localtime_r(&secs, &tm))
		memset(&tm, 0, sizeof(tm));
	fprintf(f, "%02d:%02d:%02d.%06ld %3u %-8s %7d %7d", tm.tm_hour, tm.tm_min, tm.tm_sec,
		(long)((ns % 1000000000) / 1000), ev->cpu, cn_proc_what_name(ev->what),
		(int)ev->pid, (int)ev->tgid);
	switch (ev->what) {
	case CN_PROC_FORK:
	case CN_PROC_COREDUMP:
		table_parent(f, ev);
		break;
	case CN_PROC_EXIT:
		table_parent(f, ev);
		if (WIFEXITED(status))
			fprintf(f, " exited=%d", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			fprintf(f, " killed=%s%s", signame(WTERMSIG(status), sb, sizeof(sb)),
				WCOREDUMP(status) ? " (core dumped)" : "");
		else
			fprintf(f, " status=0x%x", ev->exit_code);
		if ((int)ev->exit_signal != SIGCHLD)
			fprintf(f, " exit_signal=%s",
				(int)ev->exit_signal < 0
				    ? "none(thread)"
				    : signame((int)ev->exit_signal, sb, sizeof(sb)));
		break;
	case CN_PROC_UID:
		fprintf(f, "  ruid=%u euid=%u", ev->ruid, ev->euid);
		break;
	case CN_PROC_GID:
		fprintf(f, "  rgid=%u egid=%u", ev->ruid, ev->euid);
		break;
	case CN_PROC_COMM:
		fputs("  comm=", f);
		json_string(f, ev->comm, sizeof(ev->comm));
		break;
	case CN_PROC_PTRACE:
		if (ev->tracer_pid)
			fprintf(f, "  attach tracer=%d(tgid %d)", (int)ev->tracer_pid,
				(int)ev->tracer_tgid);
		else
			fputs("  detach", f);
		break;
	case CN_PROC_SID:
		fputs("  new session", f);
		break;
	default:
		if (strcmp(cn_proc_what_name(ev->what), "unknown") == 0)
			fprintf(f, "  what=0x%x", (uint32_t)ev->what);
		break;
	}
	putc_unlocked('\n', f);
}

/* Flush stdout. Returns 0; 1 to stop quietly: the reader went away (EPIPE)
 * or a stop signal interrupted a write blocked on a stalled reader; or -errno. */
static int flush_out(void)
{
	for (;;) {
		if (fflush(stdout) == 0 && !ferror(stdout))
			return 0;
		if (errno == EPIPE)
			return 1;
		if (errno != EINTR)
			return -(errno ? errno : EIO);
		if (cnctl_stop)
			return 1;
		clearerr(stdout); /* another signal: carry on writing */
	}
}

static int64_t realtime_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
}

static void summary(struct cn_sock *s, const struct proc_state *st)
{
	struct cn_proc_stats ps = { 0 };

	/* Gaps: libcn's count (equal to the sum of the lost_before reported).
	 * Overruns: counted here, because cn_proc_stats only counts those seen
	 * by cn_proc_recv, not those returned by cn_recv_batch. */
	if (cn_proc_stats(s, &ps) < 0 || ps.lost < st->lost)
		ps.lost = st->lost;
	if (ps.overruns < st->overruns)
		ps.overruns = st->overruns;
	fprintf(stderr, "cnctl: %llu events printed, %llu lost (per-CPU gaps), %llu overruns\n",
		(unsigned long long)st->printed, (unsigned long long)ps.lost,
		(unsigned long long)ps.overruns);
}

/* Handle one batch of messages. Returns 1 when --count is reached, else 0. */
static int handle_batch(struct cn_sock *s, const struct cn_message *msgs, int n,
			const struct proc_opts *o, struct proc_state *st)
{
	struct cn_proc_event ev;

	for (int i = 0; i < n; i++) {
		int r;

		/* cn_proc_handle leaves ev untouched for messages of other ids. */
		ev.lost_before = 0;
		r = cn_proc_handle(s, &msgs[i], &ev);
		if (r < 0) {
			cnctl_err("malformed proc event skipped: %s", strerror(-r));
			continue;
		}
		if (ev.lost_before) {
			st->lost += ev.lost_before;
			fprintf(stderr, "cnctl: lost %u events on cpu %u\n", ev.lost_before,
				ev.cpu);
		}
		if (r == 0)
			continue;
		if (o->common.json)
			print_json(stdout, &ev);
		else
			print_table(stdout, &ev, st);
		st->printed++;
		if (o->common.count && st->printed >= o->common.count)
			return 1;
	}
	return 0;
}

/* Milliseconds on a cheap monotonic clock (vDSO, no system call). */
static int64_t coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The exit code after a final flush_out() result. */
static int flushed(int r)
{
	if (r >= 0)
		return CNCTL_EXIT_OK; /* written, or stopping quietly */
	cnctl_err("write to stdout: %s", strerror(-r));
	return CNCTL_EXIT_ERROR;
}

static int run(struct cn_sock *s, const struct proc_opts *o, struct proc_state *st)
{
	struct cn_message msgs[PROC_BATCH];
	int64_t last_flush = coarse_ms();
	int fd = cn_fd(s);
	int r;

	if (!o->common.json)
		print_header(stdout);
	while (!cnctl_stop) {
		int n = cn_recv_batch(s, msgs, PROC_BATCH, CN_RECV_DONTWAIT);

		if (n > 0) {
			int64_t now;

			if (handle_batch(s, msgs, n, o, st))
				return flushed(flush_out()); /* --count reached */
			/* Under a sustained stream the socket never runs dry:
			 * still hand the reader what we have every so often. */
			now = coarse_ms();
			if (now - last_flush >= PROC_FLUSH_MS || ferror(stdout)) {
				r = flush_out();
				if (r)
					return flushed(r);
				last_flush = now;
			}
			continue;
		}
		if (n != -EAGAIN) {
			r = cnctl_recv_error(n, "events", &st->overruns);
			if (r)
				return r;
			continue;
		}
		/* Nothing pending: let the reader see what we have. */
		r = flush_out();
		if (r)
			return flushed(r);
		r = cnctl_wait_readable(fd, -1);
		last_flush = coarse_ms();
		if (r < 0) {
			cnctl_err("poll: %s", strerror(-r));
			return CNCTL_EXIT_ERROR;
		}
	}
	return flushed(flush_out()); /* stopped by SIGINT or SIGTERM */
}

int cnctl_proc(int argc, char **argv)
{
	struct proc_opts o = { .common = { .cmd = "proc", .usage = proc_usage, .unit = -1 } };
	struct proc_state st = { 0 };
	struct cn_open_opts oo = { .sz = sizeof(oo), .batch = PROC_BATCH };
	static char outbuf[PROC_STDOUT_BUF];
	struct cn_sock *s;
	int r, kf, ret;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? CNCTL_EXIT_OK : r;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	r = cnctl_install_signals();
	if (r)
		return r;

	oo.rcvbuf = o.common.rcvbuf;
	s = cn_open(NETLINK_CONNECTOR, &oo);
	if (!s)
		return cnctl_connector_err("opening a NETLINK_CONNECTOR socket", errno);
	cnctl_set_rcvbuf(s, o.common.rcvbuf);

	kf = cn_proc_listen(s, o.mask, PROC_LISTEN_TIMEOUT_MS);
	if (kf < 0) {
		if (cnctl_stop && kf == -EINTR) {
			cn_close(s);
			return CNCTL_EXIT_OK;
		}
		if (kf == -ETIMEDOUT) {
			cnctl_err("no proc connector in the kernel: no reply to "
				  "PROC_CN_MCAST_LISTEN (CONFIG_PROC_EVENTS off, or not in the "
				  "initial user/pid namespace)");
			ret = CNCTL_EXIT_NOCONN;
		} else {
			ret = cnctl_connector_err("subscribing to proc events", -kf);
		}
		cn_close(s);
		return ret;
	}
	st.realtime_offset_ns = realtime_offset();
	if (!o.common.quiet) {
		const char *how = "";

		/* As libcn: every type (with or without nonzero_exit) is no filter. */
		if ((o.mask | CN_PROC_NONZERO_EXIT) != CN_PROC_ALL && o.mask)
			how = kf ? ", filtered in the kernel" : ", filtered in userspace";
		cnctl_err("listening for proc events (%s%s)", o.mask ? o.events : "all", how);
	}

	ret = run(s, &o, &st);

	cn_proc_ignore(s);
	if (!o.common.quiet)
		summary(s, &st);
	cn_close(s);
	return ret;
}
