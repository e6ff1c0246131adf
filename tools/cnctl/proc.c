/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c - `cnctl proc`: live process events from the kernel's proc
 * connector, one line each, as an aligned table or as JSON lines.
 *
 * The hot path reads batches of events (cn_proc_recv_batch: recvmmsg, each
 * event decoded where it was read), blocking until the next event comes, and
 * prints into a large stdout buffer, written when due: there is no nap
 * between reads, so a short-lived process is still in /proc when its exec
 * is read. Every
 * event goes through libcn's process tracker (names, parents, lifetimes);
 * after loss, once the socket is drained and the tracker says a rescan is
 * due, it rescans /proc. Loss is never silent: socket overruns and per-CPU
 * sequence gaps are reported on stderr at most once a second and summed up
 * at exit. Line output is in proc_line.c, statistics and loss reports in
 * proc_stats.c, each process's command line and user in proc_info.c (in the
 * tracker's entries), the filters in proc_filter.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libcn.h>

#include "common.h"
#include "proc.h"

#define PROC_STDOUT_BUF	       (1u << 20) /* stdout buffer: flushed when idle or full */
#define PROC_LISTEN_TIMEOUT_MS 2000	  /* wait for the kernel's LISTEN ack */
#define PROC_FLUSH_MS	       100	  /* flush at least this often while events stream */

/* What the tracker needs to know every task's name and start. */
#define PROC_TRACK_MASK (CN_PROC_FORK | CN_PROC_EXEC | CN_PROC_EXIT | CN_PROC_COMM)

/* clang-format off */
static void proc_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl proc [--json|--ecs|--journal] [--metrics FILE] [--events LIST]\n"
		"                  [--stats] [--count N]\n"
		"                  [--pid PID [--tree]] [--pgrp PGID] [--uid UID|--user NAME]\n"
		"                  [--comm GLOB] [--no-threads] [--extra]\n"
		"                  [--timeout DURATION] [--time clock|iso|mono]\n"
		"                  [--color auto|always|never] [--rcvbuf BYTES] [--quiet]\n"
		"\n"
		"Print process events (fork, exec, uid, gid, sid, ptrace, comm, coredump,\n"
		"exit) from the kernel's proc connector as they happen, one line each:\n"
		"\n"
		"  TIME  EVENT  PID  PPID  [USER]  LIFETIME  PROCESS\n"
		"\n"
		"EVENT is clone for a new thread (fork for a new process). PROCESS is the\n"
		"process's command line (read from /proc at its exec, or when cnctl\n"
		"started; a child shows its parent's until it execs; one longer than 4096\n"
		"bytes ends in [argv cut at 4096 bytes]), else its name. An exec whose\n"
		"process was gone before it could be read shows its name in brackets\n"
		"([name?]: gone before its new name was known either); [?] is a task\n"
		"whose start was not seen (events lost). A comm line shows old -> new\n"
		"name. On a terminal a line ends at its edge (read again when the\n"
		"terminal is resized) and non-zero exits are red. LIFETIME, on exit\n"
		"lines: from fork to exit; '>' from exec (the fork was not seen), '~' from\n"
		"the start time in /proc (the task was running when cnctl started).\n"
		"\n"
		"Options:\n"
		"  -j, --json           one JSON object per line on stdout, for everything:\n"
		"                       events, loss reports, the summary, messages; the\n"
		"                       \"type\" key tells them apart, \"schema\" is the\n"
		"                       schema's version (3: pid is the process, exit_code\n"
		"                       the shell's status); every key: cnctl(1), section\n"
		"                       JSON output of proc\n"
		"      --ecs            the same stream as Elastic Common Schema documents\n"
		"                       (@timestamp, event.*, process.*), taken as they are\n"
		"                       by Elasticsearch and Filebeat; cnctl(1), section\n"
		"                       ECS output of proc\n"
		"      --journal        each of those objects as a native journal entry\n"
		"                       (stdout is not used): its keys as fields in upper\n"
		"                       case (ACTION=exec), a readable MESSAGE, PRIORITY\n"
		"                       warning for loss, err for errors; entries journald\n"
		"                       did not take are counted and reported\n"
		"      --metrics FILE   loss counters for node_exporter's textfile\n"
		"                       collector (FILE ending in .prom), rewritten\n"
		"                       atomically every 5 seconds and at exit\n"
		"  -e, --events LIST    only these event types, comma-separated: fork (new\n"
		"                       processes), clone (new threads), exec, uid, gid,\n"
		"                       sid, ptrace, comm, coredump, exit, nonzero_exit\n"
		"                       (exits with a non-zero status), all; forkstat's\n"
		"                       names core and ptrce too. Filtered in the kernel\n"
		"                       where it can (Linux >= 6.6); fork, exec, exit and\n"
		"                       comm are still received, for names and lifetimes\n"
		"  -p, --pid PID        only events of process PID (and the forks it\n"
		"                       makes); cnctl ends (status 0, with its summary)\n"
		"                       when PID has exited\n"
		"  -P, --tree           with --pid: PID and all its descendants, followed as\n"
		"                       they fork (running ones found at start); cnctl ends\n"
		"                       when they have all exited\n"
		"  -g, --pgrp PGID      only processes of process group PGID (as of their\n"
		"                       fork or last exec: setpgid sends no event)\n"
		"  -U, --uid UID        only processes of this effective user\n"
		"      --user NAME      the same, by user name (or uid)\n"
		"  -C, --comm GLOB      only processes whose name (comm) matches GLOB\n"
		"                       (fnmatch; a rename matches by either name)\n"
		"  -H, --no-threads     no thread events (clone, a thread's exit, rename...)\n"
		"      --threads        thread events shown (the default)\n"
		"  -x, --extra          a USER column (the effective user; JSON: user_id,\n"
		"                       user_name and the real user: real_user_id,\n"
		"                       real_user_name)\n"
		"  -S, --stats          at exit, a table per command of the events the\n"
		"                       filters let through: forks, clones, execs, exits,\n"
		"                       failed (non-zero) exits and exits lost\n"
		"  -n, --count N        exit after printing N events (1 to 2^64-1)\n"
		"  -D, -t, --timeout DURATION\n"
		"                       exit after DURATION (500ms, 5s, 2m, 1h, 1d; a bare\n"
		"                       number is seconds; 1ms to 24d)\n"
		"  -T, --time FORMAT    the TIME column: clock (local time of day, the\n"
		"                       default), iso (date and time with the UTC offset,\n"
		"                       as ip -ts monitor), mono (seconds of CLOCK_MONOTONIC,\n"
		"                       as JSON's monotonic_ns)\n"
		"  -c, --color WHEN     auto (the default: on a terminal, unless NO_COLOR is\n"
		"                       set or TERM is dumb), always or never\n"
		"      --source SOURCE  auto (the default: cnbus_proc.ko when it is loaded\n"
		"                       and --events asks for no other type than fork,\n"
		"                       clone, exec, exit; else the proc connector), kmod\n"
		"                       or connector\n"
		"  -r, --rcvbuf BYTES   socket receive buffer (suffix K, M, G allowed); a\n"
		"                       larger buffer rides out bursts (forced as root)\n"
		"  -L, --prompt         read each event as it comes (what cnctl always does;\n"
		"                       kept for the scripts that give it)\n"
		"  -q, --quiet          no 'listening' line, loss reports or summary (--json:\n"
		"                       no start and summary objects; loss is always told)\n"
		"  -h, --help           this help\n"
		"      --version        cnctl's version\n"
		"\n"
		"Lost events are reported on stderr (--json: stdout) at most once a\n"
		"second with exact totals. After a loss cnctl rescans /proc, so names\n"
		"stay right, and counts the exits it missed. At exit (--count,\n"
		"--timeout, the end of --pid, SIGINT, SIGTERM) a summary gives events\n"
		"printed, events lost (per-CPU sequence gaps; 'gaps not tracked: kernel\n"
		"filter' when the kernel filters, whose filtered events leave gaps too)\n"
		"and receive buffer overruns.\n"
		"\n"
		"Whether a user without privileges may listen is the kernel's choice:\n"
		"Linux 6.6 and later allow it, older kernels (and some builds) ask\n"
		"CAP_NET_ADMIN (cnctl(1) gives a setcap recipe).\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM, --count, --timeout or the\n"
		"end of --pid), 1 runtime error, 2 usage error (also --pid of no process),\n"
		"3 permission denied (the kernel asks CAP_NET_ADMIN), 4 no proc\n"
		"connector.\n");
}
/* clang-format on */

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

/* The process (Tgid in /proc/ID/status) of task id; 0 when unknown. */
static pid_t thread_group(pid_t id)
{
	char path[48], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)id);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int parse_opts(int argc, char **argv, struct proc_opts *o)
{
	struct cnctl_getopt g;
	const char *color = "auto";
	pid_t tgid;
	int c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_PROC);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'e': {
			char item[64];

			o->events = optarg;
			if (proc_parse_events(optarg, o, item, sizeof(item)) < 0) {
				if (!optarg[0])
					return cnctl_usage_err("proc", "invalid --events value '': "
								       "empty list");
				return cnctl_usage_err(
				    "proc",
				    "invalid --events value '%s': %s '%s' (known: fork, clone, "
				    "exec, "
				    "uid, gid, sid, ptrace, comm, coredump, exit, nonzero_exit, "
				    "all; "
				    "forkstat's core, ptrce)",
				    optarg, item[0] ? "unknown event type" : "empty item in",
				    item[0] ? item : optarg);
			}
			break;
		}
		case 'p':
		case 'g': {
			uint64_t v;

			if (cnctl_parse_uint(optarg, 1, INT32_MAX, &v) < 0)
				return cnctl_usage_err("proc",
						       "invalid --%s value '%s': expected a %s "
						       "(1 to 2147483647)",
						       c == 'p' ? "pid" : "pgrp", optarg,
						       c == 'p' ? "process id"
								: "process group id");
			if (c == 'p')
				o->pid = (pid_t)v;
			else
				o->pgrp = (pid_t)v;
			break;
		}
		case 'P':
			o->tree = 1;
			break;
		case 'U':
			if (proc_parse_user(optarg, &o->uid) < 0)
				return cnctl_usage_err("proc",
						       "invalid --uid/--user value '%s': not a uid "
						       "and no such user",
						       optarg);
			o->uid_set = 1;
			break;
		case 'C':
			if (!optarg[0])
				return cnctl_usage_err("proc", "invalid --comm value '': an empty "
							       "pattern matches no process");
			o->comm = optarg;
			break;
		case 'H':
			o->no_threads = 1;
			break;
		case 'W':
			o->no_threads = 0;
			break;
		case 'x':
			o->user_column = 1;
			break;
		case 'L':
			o->prompt = 1;
			break;
		case 'S':
			o->stats = 1;
			break;
		case CNCTL_OPT_ECS:
			o->ecs = 1;
			o->common.json = 1; /* JSON lines in every other respect */
			break;
		case 'O':
			if (strcmp(optarg, "auto") == 0)
				o->source = PROC_SOURCE_AUTO;
			else if (strcmp(optarg, "kmod") == 0)
				o->source = PROC_SOURCE_KMOD;
			else if (strcmp(optarg, "connector") == 0)
				o->source = PROC_SOURCE_CONNECTOR;
			else
				return cnctl_usage_err("proc",
						       "invalid --source value '%s': expected "
						       "auto, kmod or connector",
						       optarg);
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
		case CNCTL_OPT_JOURNAL:
			o->journal = 1;
			o->common.json = 1; /* the objects the entries are made of */
			break;
		case CNCTL_OPT_METRICS:
			if (!optarg[0])
				return cnctl_usage_err("proc",
						       "invalid --metrics value '': no file");
			o->metrics = optarg;
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
	if (o->ecs && o->journal)
		return cnctl_usage_err("proc", "--ecs and --journal: choose one output");
	if (o->tree && !o->pid)
		return cnctl_usage_err("proc", "--tree needs --pid PID (whose tree)");
	/* kill(pid, 0) finds a process (EPERM: one of another user) without
	 * touching it; a thread's id finds its process too, but events name
	 * processes by their own id. */
	if (o->pid && kill(o->pid, 0) < 0 && errno == ESRCH)
		return cnctl_usage_err("proc", "invalid --pid value '%d': no such process",
				       (int)o->pid);
	if (o->pid && (tgid = thread_group(o->pid)) > 0 && tgid != o->pid)
		return cnctl_usage_err("proc",
				       "invalid --pid value '%d': a thread of process %d (give %d)",
				       (int)o->pid, (int)tgid, (int)tgid);
	o->need_uid = o->user_column || o->uid_set || o->ecs;
	o->color = !o->common.json && color_wanted(color) > 0;
	return 0;
}

/* The reader of stdout went away (EPIPE: `cnctl proc | head -1`): cnctl
 * stops as a stop signal stops it, and writes nothing more, on either
 * stream (no summary claiming lines nobody read), as a shell pipeline
 * expects of its writers. */
static int reader_gone;

/* A write to stdout failed (not EPIPE, not a stop signal's EINTR): what
 * would still be written there is not. */
static int write_failed;

/* Where a failure to write stdout is told: the real stderr, even when
 * --json catches stderr's messages to write them on stdout. */
static FILE *diag;

/* Flush stdout. Returns 0; 1 to stop quietly: the reader went away (EPIPE)
 * or a stop signal interrupted a write blocked on a stalled reader; or -errno. */
static int flush_out(void)
{
	if (reader_gone)
		return 1;
	for (;;) {
		if (fflush(stdout) == 0 && !ferror(stdout))
			return 0;
		if (errno == EPIPE) {
			reader_gone = 1;
			return 1;
		}
		if (errno != EINTR)
			return -(errno ? errno : EIO);
		if (cnctl_stop)
			return 1;
		clearerr(stdout); /* another signal: carry on writing */
	}
}

static void on_change(const struct cn_proc_entry *e, enum cn_proc_change change, void *arg)
{
	struct proc_state *st = arg;

	if (change == CN_PROC_VANISHED) {
		/* A process's own info, or a thread's process's. */
		struct proc_info *p = proc_info_entry(st, e);

		if (!p)
			p = proc_info_find(st, e->tgid);
		proc_stats_vanished(st, e, proc_exit_wanted(st, e, p));
		proc_info_vanished(st, e);
	} else {
		proc_stats_appeared(st);
		proc_info_appeared(st, e);
	}
}

/* Make the tracker right again after loss: called once the socket is
 * drained and the tracker says a rescan is due (cn_proc_tracker_sync_timeout:
 * one per burst of losses, not one per overrun). */
static void resync(struct proc_state *st)
{
	proc_loss_resyncing(st);
	if (cn_proc_tracker_sync(st->t, on_change, st) < 0)
		return; /* kept as needing a sync: tried again next time */
	proc_loss_resynced(st);
}

/* The exit that ended a process, told as the process's (docs/DESIGN.md,
 * "Process exits"): it may be a thread's event (its pid stays: the thread
 * whose exit it was); the tracker's entry e has the process's pid, its
 * parent and the status its parent's waitpid sees. */
static const struct cn_proc_event *process_exit(struct cn_proc_event *view,
						const struct cn_proc_event *ev,
						const struct cn_proc_entry *e)
{
	*view = *ev;
	view->tgid = e->pid;
	view->parent_pid = view->parent_tgid = e->ppid;
	view->exit_code = e->status;
	return view;
}

/* Handle one event. Returns 1 when cnctl is done (--count reached, or
 * every process --pid follows has exited), else 0. */
static int handle_event(struct proc_state *st, const struct cn_proc_event *ev)
{
	const struct proc_opts *o = st->o;
	const struct cn_proc_entry *e, *pe = NULL;
	struct cn_proc_event view;
	const char *old = NULL;
	struct proc_info *p;
	char old_comm[16];
	int wanted;

	if (ev->lost_before)
		proc_loss_gap(st, ev->lost_before);
	if (ev->what == CN_PROC_COMM) {
		/* The old name, before the tracker takes the new one. */
		e = cn_proc_tracker_find(st->t, ev->pid);
		snprintf(old_comm, sizeof(old_comm), "%s", e ? e->comm : "");
		old = old_comm;
	}
	/* The tracker judges a gap itself: one an overrun's resync has
	 * repaired already asks for no second rescan. */
	e = cn_proc_tracker_event(st->t, ev);
	/* An exec's command line was read with the batch (a short-lived
	 * process may be gone a millisecond later). */
	p = proc_info_event(st, ev, e);
	if (ev->what == CN_PROC_EXIT && e && (e->flags & CN_PROC_ENTRY_EXITED))
		ev = process_exit(&view, ev, e);
	if (ev->what == CN_PROC_FORK)
		pe = cn_proc_tracker_find(st->t, ev->pid != ev->tgid ? ev->tgid : ev->parent_pid);
	/* The process's entity id while its main thread's entry is there
	 * (kept for the threads that outlive it, whether printed or not). */
	if (o->common.json)
		proc_entity_of(st, ev->tgid, proc_about_thread(ev, e) ? NULL : e);
	wanted = proc_wanted(st, ev, e, p, old);
	if (ev->what == CN_PROC_EXIT && e && (e->flags & CN_PROC_ENTRY_VANISHED))
		proc_stats_unvanished(st, e, wanted);
	if (wanted) {
		proc_print_event(stdout, st, ev, e, pe, p, old);
		proc_stats_event(st, ev, e);
		st->printed++;
	}
	if (ev->what == CN_PROC_EXIT) {
		if (e && (e->flags & CN_PROC_ENTRY_EXITED))
			proc_info_exited(st, p);
		if (o->pid && !proc_info_followed(st))
			return 1;
	}
	return o->common.count && st->printed >= o->common.count;
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
	fprintf(diag, "cnctl: write to stdout: %s\n", strerror(-r));
	write_failed = 1;
	return CNCTL_EXIT_ERROR;
}

static volatile sig_atomic_t winch = 1; /* 1: read the width at the start */

static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

/* The longest a read waits while nothing is due (a stop signal ends it
 * sooner: no SA_RESTART). */
#define PROC_IDLE_WAIT_MS 1000

/* How much longer than asked a read may wait, to spare a setsockopt:
 * a tenth of the flush interval, below what a reader of the output or a
 * --timeout can tell. */
#define PROC_WAIT_SLACK_MS 10

/* Make a blocking read of st's socket wait at most ms (SO_RCVTIMEO: the
 * read returns -EAGAIN then). *cur: the timeout set now (-1: none, or one
 * that just expired). While events stream the wait asked for alternates
 * between PROC_FLUSH_MS (output pending) and PROC_IDLE_WAIT_MS, and counts
 * down to a rescan or the --timeout near them: a setsockopt for each
 * change was most of cnctl's system calls besides the reads. So a timeout
 * set is kept while it is at most PROC_WAIT_SLACK_MS longer than asked,
 * and while it is shorter but at least PROC_FLUSH_MS: a read it wakes
 * early finds *cur reset (run) and sets the exact wait, one wake-up at the
 * end of a stream instead of two setsockopt calls per flush. 0, or
 * -errno. */
static int set_wait(struct proc_state *st, int64_t ms, int64_t *cur)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	if (*cur >= ms ? *cur - ms <= PROC_WAIT_SLACK_MS : *cur >= PROC_FLUSH_MS)
		return 0;
	if (setsockopt(cn_fd(st->s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	*cur = ms;
	return 0;
}

/* How long the next blocking read may wait (SO_RCVTIMEO; >= 1 ms, since 0
 * is no limit): until the next thing due, a rescan (when the tracker says
 * it is due), output to hand over or the --timeout, and PROC_IDLE_WAIT_MS
 * at most. Pending output waits PROC_FLUSH_MS from this read, not from the
 * last flush: a constant that set_wait keeps (a stream's reads flush it
 * when PROC_FLUSH_MS have passed; once the stream stops it is written
 * PROC_FLUSH_MS after the last read, as cnctl(1) says). */
static int64_t read_wait(struct proc_state *st, int64_t deadline)
{
	int64_t wait = PROC_IDLE_WAIT_MS;
	int due = cn_proc_tracker_sync_timeout(st->t);

	if (due >= 0 && due < wait)
		wait = due;
	if (__fpending(stdout) && PROC_FLUSH_MS < wait)
		wait = PROC_FLUSH_MS;
	if (deadline >= 0 && deadline - cnctl_now_ms() < wait)
		wait = deadline - cnctl_now_ms();
	return wait > 0 ? wait : 1;
}

/*
 * Read, print, repeat. The read blocks until events come (no poll before
 * it: one system call a wakeup) and takes what is queued, up to PROC_BATCH
 * events (cn_proc_recv_batch). There is no nap between reads, and the
 * command lines of a batch's execs are read before its events are handled
 * (proc_info_prefetch): a process that lives a millisecond is still in
 * /proc when its exec is read, so its command line is shown. Output to a
 * terminal is written at once, to a file or a pipe at least every
 * PROC_FLUSH_MS while events stream: a read waits at most until output, a
 * rescan or the --timeout is due (read_wait, computed before each read
 * that may block), else PROC_IDLE_WAIT_MS. The read after a full batch or an overrun, when more
 * is likely queued, does not block: if the socket was drained after all,
 * the wait is computed first (one set at the last drain may be far longer
 * than what is due now).
 */
static int run(struct proc_state *st)
{
	const struct proc_opts *o = st->o;
	struct cn_proc_event ev[PROC_BATCH];
	int64_t last_flush = coarse_ms(), cur_wait = -1;
	int64_t deadline = o->timeout_ms >= 0 ? cnctl_now_ms() + o->timeout_ms : -1;
	/* A person at a terminal sees each line at once; a file or a pipe
	 * gets what came within PROC_FLUSH_MS in one write. */
	int eager = isatty(STDOUT_FILENO);
	unsigned int flags = 0; /* CN_RECV_DONTWAIT: more is likely queued */
	int r;

	if (!o->common.json)
		proc_print_header(stdout, o);
	/* --pid's process may have exited before the first scan. */
	if (o->pid && !proc_info_followed(st))
		return flushed(flush_out());
	while (!cnctl_stop) {
		int64_t now;
		int n;

		if (winch) {
			winch = 0;
			proc_line_read_width(st);
		}
		r = flags ? 0 : set_wait(st, read_wait(st, deadline), &cur_wait);
		if (r < 0) {
			proc_message(st, "error", "setting the read timeout: %s", strerror(-r));
			flush_out();
			return CNCTL_EXIT_ERROR;
		}
		if (st->kmod)
			n = proc_kmod_recv(st, ev, flags);
		else
			n = cn_proc_recv_batch(st->s, ev, PROC_BATCH, flags);
		/* A timeout expired: the next wait is set as asked (set_wait). */
		if (n == -EAGAIN && !flags)
			cur_wait = -1;
		flags = 0;
		if (n > 0) {
			st->events_read += (uint64_t)n;
			if (!st->kmod)
				proc_info_prefetch(st, ev, n);
			for (int i = 0; i < n; i++)
				if (handle_event(st, &ev[i]))
					return flushed(flush_out());
		} else if (n == -ENOBUFS) {
			/* Counted here, reported at most once a second. */
			proc_loss_overrun(st);
			cn_proc_tracker_lost(st->t);
			flags = CN_RECV_DONTWAIT;
			continue;
		} else if (n != -EAGAIN && n != -EINTR) {
			uint64_t overruns = 0; /* -ENOBUFS is handled above */

			r = cnctl_recv_error(n, "events", &overruns);
			if (r)
				return r;
			continue;
		}
		now = coarse_ms();
		/* A full batch: more is queued, read on (hand the reader what
		 * is due every so often: the socket may never run dry). */
		if (n == PROC_BATCH || cn_pending(st->s)) {
			if (now - last_flush >= PROC_FLUSH_MS || ferror(stdout)) {
				r = flush_out();
				if (r)
					return flushed(r);
				last_flush = now;
				proc_loss_report(st, 0);
				proc_metrics_tick(st);
			}
			if (deadline >= 0 && cnctl_now_ms() >= deadline)
				break;
			flags = CN_RECV_DONTWAIT;
			continue;
		}
		/* Drained (a short batch) or waited in vain: catch up with
		 * /proc when a rescan is due, report loss, hand the reader
		 * what is due, wait again. */
		if (cn_proc_tracker_sync_timeout(st->t) == 0) {
			resync(st);
			if (o->pid && !proc_info_followed(st))
				return flushed(flush_out());
			continue;
		}
		proc_loss_report(st, 0);
		proc_metrics_tick(st);
		if (__fpending(stdout) && (eager || now - last_flush >= PROC_FLUSH_MS)) {
			r = flush_out();
			if (r)
				return flushed(r);
			last_flush = now;
		}
		if (deadline >= 0 && cnctl_now_ms() >= deadline)
			break;
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
	struct sigaction sa = { .sa_handler = on_winch, .sa_flags = SA_RESTART };
	FILE *real_stderr = stderr, *captured = NULL;
	char *errs = NULL;
	size_t errs_len = 0;
	uint32_t listen_mask;
	int r, ret, filter;

	o.show = PROC_SHOW_ALL;
	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? cnctl_finish_output() : r;
	diag = stderr;
	/* Output nobody can take is refused before listening: a closed stdout
	 * (main put a read-only /dev/null there), or one opened for reading.
	 * --journal writes to journald's socket instead. */
	if (!o.journal && write(STDOUT_FILENO, "", 0) < 0) {
		cnctl_err("standard output: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	/* The clocks and the boot's id, before the first record is dated. */
	proc_line_init(&st);
	proc_entity_init(&st);
	if (o.journal) {
		r = proc_journal_open(&st, outbuf, sizeof(outbuf));
		if (r < 0) {
			cnctl_err("journal socket: %s", strerror(-r));
			return CNCTL_EXIT_ERROR;
		}
	}
	r = cnctl_install_signals();
	if (r)
		return r;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	/* With --json every line is JSON, stderr too where it is no
	 * terminal (the journal takes both): what cnctl's common code says
	 * there is caught and written as "error" objects at the end. */
	if (o.common.json && !isatty(STDERR_FILENO)) {
		captured = open_memstream(&errs, &errs_len);
		if (captured)
			stderr = captured;
	}

	oo.rcvbuf = o.common.rcvbuf;
	/* cnbus_proc.ko names every exec from the kernel; it has fork, exec
	 * and exit only, so other event types asked for (--events) keep the
	 * connector. */
	if (o.source == PROC_SOURCE_KMOD ||
	    (o.source == PROC_SOURCE_AUTO && (!o.events || !(o.show & ~PROC_KMOD_SHOWS)))) {
		r = proc_kmod_open(&st, &oo);
		if (r && o.source == PROC_SOURCE_KMOD) {
			if (r == -EPERM) {
				cnctl_err("permission denied: cnbus_proc.ko's events need "
					  "CAP_NET_ADMIN in the initial user namespace");
				return CNCTL_EXIT_PERM;
			}
			cnctl_err("cnbus_proc.ko: %s",
				  r == -ENODEV ? "not loaded (modprobe cnbus_proc)" : strerror(-r));
			return CNCTL_EXIT_NOCONN;
		}
	}
	if (!st.kmod) {
		st.s = cn_open(NETLINK_CONNECTOR, &oo);
		if (!st.s)
			return cnctl_connector_err("opening a NETLINK_CONNECTOR socket", errno);
	}
	cnctl_set_rcvbuf(st.s, o.common.rcvbuf);
	if (proc_info_init(&st, 0) < 0 || proc_stats_init(&st) < 0) {
		cnctl_err("process table: %s", strerror(errno));
		ret = CNCTL_EXIT_ERROR;
		goto out;
	}

	/* The tracker needs fork, exec, exit and comm whatever is printed. */
	listen_mask = o.mask ? o.mask | PROC_TRACK_MASK : 0;
	r = st.kmod ? 0 : cn_proc_listen(st.s, listen_mask, PROC_LISTEN_TIMEOUT_MS);
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
	filter = cn_proc_filter_mode(st.s);
	st.kernel_filter = filter > 0 && (filter & CN_PROC_FILTER_KERNEL);
	/* Listening first, then the scan: a task started in between is in
	 * both, and the events that follow are applied on top. */
	r = cn_proc_tracker_sync(st.t, NULL, NULL);
	if (r < 0)
		proc_message(&st, "error", "reading /proc: %s (names appear as tasks start)",
			     strerror(-r));
	proc_info_scan(&st);
	if (!o.common.quiet) {
		const char *how = "";

		if (filter > 0)
			how = st.kernel_filter ? ", filtered in the kernel"
					       : ", filtered in userspace";
		proc_message(&st, "start", "listening for %s (%s%s)",
			     st.kmod ? "cnbus_proc.ko's process events" : "proc events",
			     o.events ? o.events : "all", how);
	}

	proc_metrics_tick(&st); /* the file exists from the start */
	ret = run(&st);

	if (!st.kmod)
		cn_proc_ignore(st.s);
	if (reader_gone || write_failed)
		goto out; /* nothing more can reach the reader */
	if (o.stats) {
		proc_stats_print(stdout, &st);
		if (ret == CNCTL_EXIT_OK)
			ret = flushed(flush_out());
	}
	proc_loss_report(&st, 1); /* quiet only in the table's mode */
	if (!o.common.quiet)
		proc_summary(&st);
	if (o.common.json && ret == CNCTL_EXIT_OK)
		ret = flushed(flush_out());
out:
	if (captured) {
		/* The caught messages, one "error" object per line; as text
		 * on stderr when stdout cannot take them. */
		int to_stdout = !reader_gone && !write_failed;

		stderr = real_stderr;
		fclose(captured);
		for (char *line = errs, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (!to_stdout) {
				if (!reader_gone)
					fprintf(stderr, "%s\n", line);
				continue;
			}
			if (!strncmp(line, "cnctl: ", 7))
				line += 7;
			proc_record_head(stdout, &st, "error", line);
			fprintf(stdout, ",\"exit_status\":%d", ret);
			proc_record_end(stdout, &st);
		}
		free(errs);
		if (to_stdout && fflush(stdout) != 0 && ret == CNCTL_EXIT_OK)
			ret = CNCTL_EXIT_ERROR;
	}
	proc_journal_close(&st);
	proc_metrics_final(&st);
	proc_info_free(&st);
	proc_stats_free(&st);
	cn_close(st.s);
	return ret;
}
