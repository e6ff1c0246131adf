/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c - `cnctl proc`: live process events from the kernel's proc
 * connector, one line each, as an aligned table or as JSON lines.
 *
 * The hot path reads batches of datagrams (cn_recv_batch, recvmmsg inside)
 * without waiting, decodes them with cn_proc_handle and prints into a large
 * stdout buffer; only when nothing more is pending does it flush and sleep in
 * ppoll. Every event goes through libcn's process tracker (names, parents,
 * lifetimes); after loss, once the socket is drained, the tracker rescans
 * /proc. Loss is never silent: socket overruns and per-CPU sequence gaps are
 * reported on stderr at most once a second and summed up at exit.
 * Line output is in proc_line.c, statistics and loss reports in proc_stats.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <libcn.h>

#include "common.h"
#include "proc.h"

#define PROC_BATCH	       64	  /* messages (and datagrams) per receive call */
#define PROC_STDOUT_BUF	       (1u << 20) /* stdout buffer: flushed when idle or full */
#define PROC_LISTEN_TIMEOUT_MS 2000	  /* wait for the kernel's LISTEN ack */
#define PROC_FLUSH_MS	       100	  /* flush at least this often while events stream */

/* What the tracker needs to know every task's name and start. */
#define PROC_TRACK_MASK (CN_PROC_FORK | CN_PROC_EXEC | CN_PROC_EXIT | CN_PROC_COMM)

/* clang-format off */
static void proc_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl proc [--json] [--events LIST] [--stats] [--count N]\n"
		"                  [--timeout DURATION] [--time clock|iso|mono]\n"
		"                  [--color auto|always|never] [--rcvbuf BYTES] [--quiet]\n"
		"\n"
		"Print process events (fork, exec, uid, gid, sid, ptrace, comm, coredump,\n"
		"exit) from the kernel's proc connector as they happen, one line each:\n"
		"\n"
		"  TIME  EVENT  PID  PPID  LIFETIME  PROCESS\n"
		"\n"
		"EVENT is clone for a new thread (fork for a new process). PROCESS is the\n"
		"task's name; for exec the command line, read from /proc at once, or the\n"
		"name in brackets when the process was gone before it could be read\n"
		"([name?]: gone before its new name was known either). [?]: a task whose\n"
		"start was not seen since cnctl started (events lost). LIFETIME, on exit\n"
		"lines: from fork to exit; '>' from exec (the fork was not seen), '~' from\n"
		"the start time in /proc (the task was running when cnctl started).\n"
		"Non-zero exits are red on a terminal.\n"
		"\n"
		"Options:\n"
		"  -j, --json           one JSON object per line instead of a table; keys:\n"
		"                       event, cpu, seq, timestamp_ns (CLOCK_MONOTONIC\n"
		"                       nanoseconds, the kernel's ktime_get_ns), pid,\n"
		"                       tgid, thread (true for threads), comm, and per\n"
		"                       event: parent_pid, parent_tgid (fork, exit,\n"
		"                       coredump), parent_comm (fork); argv (exec, when\n"
		"                       still readable); exit_code (raw wait status),\n"
		"                       exit_signal, status (\"exited\" with exit_status,\n"
		"                       or \"killed\" with term_signal, term_signal_name,\n"
		"                       core_dumped), lifetime_ns, lifetime_from (fork,\n"
		"                       exec or scan) (exit); ruid, euid (uid); rgid, egid\n"
		"                       (gid); comm (comm: the new name); tracer_pid,\n"
		"                       tracer_tgid, ptrace_op (ptrace)\n"
		"  -e, --events LIST    only these event types, comma-separated: fork, exec,\n"
		"                       uid, gid, sid, ptrace, comm, coredump, exit,\n"
		"                       nonzero_exit (exits with a non-zero status), all.\n"
		"                       Filtered in the kernel where it can (Linux >= 6.6);\n"
		"                       fork, exec, exit and comm are still received, for\n"
		"                       names and lifetimes\n"
		"  -S, --stats          at exit, a table per command: forks, clones, execs,\n"
		"                       exits, failed (non-zero) exits and exits lost\n"
		"  -n, --count N        exit after printing N events (1 to 2^64-1)\n"
		"  -D, -t, --timeout DURATION\n"
		"                       exit after DURATION (500ms, 5s, 2m, 1h, 1d; a bare\n"
		"                       number is seconds; 1ms to 24d)\n"
		"  -T, --time FORMAT    the TIME column: clock (local time of day, the\n"
		"                       default), iso (date and time with the UTC offset,\n"
		"                       as ip -ts monitor), mono (seconds of CLOCK_MONOTONIC,\n"
		"                       as JSON's timestamp_ns)\n"
		"  -c, --color WHEN     auto (the default: on a terminal, unless NO_COLOR is\n"
		"                       set or TERM is dumb), always or never\n"
		"  -r, --rcvbuf BYTES   socket receive buffer (suffix K, M, G allowed); a\n"
		"                       larger buffer rides out bursts (forced as root)\n"
		"  -q, --quiet          no 'listening' line, loss reports or summary on stderr\n"
		"  -h, --help           this help\n"
		"      --version        cnctl's version\n"
		"\n"
		"Lost events are reported on stderr at most once a second with exact\n"
		"totals. After a loss cnctl rescans /proc, so names stay right, and counts\n"
		"the exits it missed. At exit (--count, --timeout, SIGINT, SIGTERM) a\n"
		"summary gives events printed, events lost (per-CPU sequence gaps; 'gaps\n"
		"not tracked: kernel filter' when the kernel filters, since its filtered\n"
		"events leave gaps too) and receive buffer overruns.\n"
		"\n"
		"Whether a user without privileges may listen is the kernel's choice:\n"
		"Linux 6.6 and later allow it, older kernels (and some builds) ask\n"
		"CAP_NET_ADMIN (cnctl(1) gives a setcap recipe).\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM, --count or --timeout), 1\n"
		"runtime error, 2 usage error, 3 permission denied (the kernel asks\n"
		"CAP_NET_ADMIN), 4 no proc connector.\n");
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

static int color_wanted(const char *when)
{
	const char *term = getenv("TERM");

	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	if (strcmp(when, "auto") != 0)
		return -1;
	return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && strcmp(term, "dumb") != 0;
}

static int parse_opts(int argc, char **argv, struct proc_opts *o)
{
	struct cnctl_getopt g;
	const char *color = "auto";
	int c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_PROC);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
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
		case 'S':
			o->stats = 1;
			break;
		case 'D':
		case 't':
			if (cnctl_parse_timeout("proc", optarg, &o->timeout_ms))
				return CNCTL_EXIT_USAGE;
			break;
		case 'T':
			if (strcmp(optarg, "clock") == 0)
				o->time_fmt = PROC_TIME_CLOCK;
			else if (strcmp(optarg, "iso") == 0)
				o->time_fmt = PROC_TIME_ISO;
			else if (strcmp(optarg, "mono") == 0)
				o->time_fmt = PROC_TIME_MONO;
			else
				return cnctl_usage_err("proc",
						       "invalid --time value '%s': expected "
						       "clock, iso or mono",
						       optarg);
			break;
		case 'c':
			color = optarg;
			if (color_wanted(optarg) < 0)
				return cnctl_usage_err("proc",
						       "invalid --color value '%s': expected auto, "
						       "always or never",
						       optarg);
			break;
		default:
			r = cnctl_common_opt(c, argv, &o->common);
			if (r)
				return r;
		}
	}
	if (optind < argc)
		return cnctl_usage_err("proc", "unexpected argument '%s'", argv[optind]);
	o->color = !o->common.json && color_wanted(color) > 0;
	return 0;
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

/* Is ev one the user asked to see? (The socket may receive more: what the
 * tracker needs.) */
static int wanted(uint32_t mask, const struct cn_proc_event *ev)
{
	uint32_t what = (uint32_t)ev->what;

	if (mask == 0 || (mask & what))
		return 1;
	return what == CN_PROC_EXIT && (mask & CN_PROC_NONZERO_EXIT) && ev->exit_code != 0;
}

static void on_change(const struct cn_proc_entry *e, enum cn_proc_change change, void *arg)
{
	struct proc_state *st = arg;

	if (change == CN_PROC_VANISHED) {
		st->vanished++;
		proc_stats_vanished(st, e);
	} else {
		st->appeared++;
	}
}

/* Make the tracker right again after loss (called once the socket is
 * drained, so a storm costs one rescan per pause, not one per overrun). */
static void resync(struct proc_state *st)
{
	uint64_t app = st->appeared, van = st->vanished;

	if (cn_proc_tracker_sync(st->t, on_change, st) < 0)
		return; /* kept as needing a sync: tried again next time */
	st->resyncs++;
	if (!st->o->common.quiet && st->resyncs <= 3)
		cnctl_err("resynchronized with /proc after lost events: %llu tasks appeared, "
			  "%llu vanished unseen%s",
			  (unsigned long long)(st->appeared - app),
			  (unsigned long long)(st->vanished - van),
			  st->resyncs == 3 ? " (further resyncs: in the summary)" : "");
}

/* Handle one batch of messages. Returns 1 when --count is reached, else 0. */
static int handle_batch(const struct cn_message *msgs, int n, struct proc_state *st)
{
	const struct proc_opts *o = st->o;
	struct cn_proc_event ev;

	for (int i = 0; i < n; i++) {
		const struct cn_proc_entry *e, *pe = NULL;
		int r;

		/* cn_proc_handle leaves ev untouched for messages of other ids. */
		ev.lost_before = 0;
		r = cn_proc_handle(st->s, &msgs[i], &ev);
		if (r < 0) {
			cnctl_err("malformed proc event skipped: %s", strerror(-r));
			continue;
		}
		if (ev.lost_before) {
			st->gaps += ev.lost_before;
			st->unreported_gaps += ev.lost_before;
			cn_proc_tracker_lost(st->t);
		}
		if (r == 0)
			continue;
		e = cn_proc_tracker_event(st->t, &ev);
		if (ev.what == CN_PROC_FORK)
			pe = cn_proc_tracker_find(st->t,
						  ev.pid != ev.tgid ? ev.tgid : ev.parent_pid);
		proc_stats_event(st, &ev, e);
		if (!wanted(o->mask, &ev))
			continue;
		proc_print_event(stdout, st, &ev, e, pe);
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

static int run(struct proc_state *st)
{
	const struct proc_opts *o = st->o;
	struct cn_message msgs[PROC_BATCH];
	int64_t last_flush = coarse_ms();
	int64_t deadline = o->timeout_ms >= 0 ? cnctl_now_ms() + o->timeout_ms : -1;
	int fd = cn_fd(st->s);
	int r;

	if (!o->common.json)
		proc_print_header(stdout, o);
	while (!cnctl_stop) {
		int n = cn_recv_batch(st->s, msgs, PROC_BATCH, CN_RECV_DONTWAIT);
		int64_t now;

		if (n > 0) {
			if (handle_batch(msgs, n, st))
				return flushed(flush_out()); /* --count reached */
			/* Under a sustained stream the socket never runs dry:
			 * still hand the reader what we have every so often. */
			now = coarse_ms();
			if (now - last_flush >= PROC_FLUSH_MS || ferror(stdout)) {
				r = flush_out();
				if (r)
					return flushed(r);
				last_flush = now;
				proc_loss_report(st, 0);
				if (deadline >= 0 && cnctl_now_ms() >= deadline)
					break;
			}
			continue;
		}
		if (n == -ENOBUFS) {
			/* Counted here, reported at most once a second. */
			st->overruns++;
			st->unreported_overruns++;
			cn_proc_tracker_lost(st->t);
			continue;
		}
		if (n != -EAGAIN) {
			r = cnctl_recv_error(n, "events", &st->overruns);
			if (r)
				return r;
			continue;
		}
		/* Nothing pending: catch up with /proc if blind, let the
		 * reader see what we have. */
		if (cn_proc_tracker_needs_sync(st->t))
			resync(st);
		proc_loss_report(st, 0);
		r = flush_out();
		if (r)
			return flushed(r);
		now = cnctl_now_ms();
		if (deadline >= 0 && now >= deadline)
			break;
		r = cnctl_wait_readable(fd, deadline >= 0 ? (int)(deadline - now) : -1);
		last_flush = coarse_ms();
		if (r < 0) {
			cnctl_err("poll: %s", strerror(-r));
			return CNCTL_EXIT_ERROR;
		}
	}
	return flushed(flush_out()); /* stopped by a signal or --timeout */
}

int cnctl_proc(int argc, char **argv)
{
	struct proc_opts o = { .common = { .cmd = "proc", .usage = proc_usage, .unit = -1 },
			       .timeout_ms = -1 };
	struct proc_state st = { .o = &o };
	struct cn_open_opts oo = { .sz = sizeof(oo), .batch = PROC_BATCH };
	static char outbuf[PROC_STDOUT_BUF];
	uint32_t listen_mask;
	int r, ret, filter;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? CNCTL_EXIT_OK : r;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	r = cnctl_install_signals();
	if (r)
		return r;

	oo.rcvbuf = o.common.rcvbuf;
	st.s = cn_open(NETLINK_CONNECTOR, &oo);
	if (!st.s)
		return cnctl_connector_err("opening a NETLINK_CONNECTOR socket", errno);
	cnctl_set_rcvbuf(st.s, o.common.rcvbuf);
	st.t = cn_proc_tracker_new(NULL);
	if (!st.t || proc_stats_init(&st) < 0) {
		cnctl_err("process table: %s", strerror(errno));
		ret = CNCTL_EXIT_ERROR;
		goto out;
	}

	/* The tracker needs fork, exec, exit and comm whatever is printed. */
	listen_mask = o.mask ? o.mask | PROC_TRACK_MASK : 0;
	r = cn_proc_listen(st.s, listen_mask, PROC_LISTEN_TIMEOUT_MS);
	if (r < 0) {
		if (cnctl_stop && r == -EINTR) {
			ret = CNCTL_EXIT_OK;
		} else if (r == -ETIMEDOUT) {
			cnctl_err("no proc connector in the kernel: no reply to "
				  "PROC_CN_MCAST_LISTEN (CONFIG_PROC_EVENTS off, or not in the "
				  "initial user/pid namespace)");
			ret = CNCTL_EXIT_NOCONN;
		} else if (r == -EPERM) {
			/* The kernel's policy: Linux 6.6 and later let anyone
			 * join the proc group, older kernels (and some builds)
			 * only CAP_NET_ADMIN. */
			cnctl_err("permission denied: subscribing to proc events: this kernel lets "
				  "only processes with CAP_NET_ADMIN listen; run as root, or give "
				  "cnctl the capability (setcap cap_net_admin+ep on the cnctl "
				  "binary; see cnctl(1))");
			ret = CNCTL_EXIT_PERM;
		} else {
			ret = cnctl_connector_err("subscribing to proc events", -r);
		}
		goto out;
	}
	filter = cn_proc_filter(st.s);
	st.kernel_filter = filter > 0 && (filter & CN_PROC_FILTER_KERNEL);
	/* Listening first, then the scan: a task started in between is in
	 * both, and the events that follow are applied on top. */
	r = cn_proc_tracker_sync(st.t, NULL, NULL);
	if (r < 0)
		cnctl_err("reading /proc: %s (names appear as tasks start)", strerror(-r));
	st.realtime_offset_ns = realtime_offset();
	{
		struct winsize ws;

		/* The columns before PROCESS: time, event, pid, ppid, lifetime. */
		size_t used = (o.time_fmt == PROC_TIME_ISO ? 32 : 15) + 37;

		if (!o.common.json && isatty(STDOUT_FILENO) &&
		    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > used + 10)
			st.width = ws.ws_col - used;
	}
	if (!o.common.quiet) {
		const char *how = "";

		if (filter > 0)
			how = st.kernel_filter ? ", filtered in the kernel"
					       : ", filtered in userspace";
		cnctl_err("listening for proc events (%s%s)", o.mask ? o.events : "all", how);
	}

	ret = run(&st);

	cn_proc_ignore(st.s);
	if (o.stats) {
		proc_stats_print(stdout, &st);
		if (ret == CNCTL_EXIT_OK)
			ret = flushed(flush_out());
	}
	if (!o.common.quiet) {
		proc_loss_report(&st, 1);
		proc_summary(&st);
	}
out:
	proc_stats_free(&st);
	cn_proc_tracker_free(st.t);
	cn_close(st.s);
	return ret;
}
