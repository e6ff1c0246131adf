/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.h - what `cnctl proc`'s files share: options, the state of a run,
 * line output (proc_line.c), the per-command statistics and loss
 * reports (proc_stats.c), what is known of each process beyond the tracker
 * (proc_info.c, kept in the tracker's entries) and which events are printed
 * (proc_filter.c).
 */
#ifndef CNCTL_PROC_H
#define CNCTL_PROC_H

#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <libcn.h>

#include "common.h"

enum proc_time_fmt {
	PROC_TIME_CLOCK, /* 12:48:52.123456 (local time) */
	PROC_TIME_ISO,	 /* 2026-12-03T12:48:52.123456+00:00 */
	PROC_TIME_MONO,	 /* 12345.678901: CLOCK_MONOTONIC seconds, as timestamp_ns */
};

/* The version of the JSON lines' schema (the "schema" key; cnctl(1)):
 * raised when a key changes meaning or goes, not when one is added. 3: the
 * keys mean what ECS's and OpenTelemetry's process fields of the same name
 * mean (pid the process, exit_code the shell's status). */
#define PROC_JSON_SCHEMA 3

/* The Elastic Common Schema version --ecs documents conform to (its
 * ecs.version; the fields as generated/csv/fields.csv of that release
 * defines them, tests/host/cnctl/ecs_fields.csv). */
#define PROC_ECS_VERSION "9.3.0"

/* An entity id (proc_entity.c): 16 hex digits and the NUL. */
#define PROC_ENTITY_ID_SIZE 17

/* Is ev about one thread rather than its process? e: the tracker's entry
 * for it. An exit is the process's only when the tracker says it ended the
 * process (its last thread's, not always its main one's: docs/DESIGN.md,
 * "Process exits"); a main thread that leaves while others run is a
 * thread's end. */
static inline int proc_about_thread(const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	if (ev->what == CN_PROC_EXIT && e)
		return !(e->flags & CN_PROC_ENTRY_EXITED);
	return ev->pid != ev->tgid;
}

/* Argument bytes of a command line kept (as /proc/PID/cmdline gives them,
 * NUL-separated, without the last NUL); a longer one is cut there and said
 * to be (argv_truncated). */
#define PROC_ARGV_MAX 4096

/* The width of the table's EVENT column: the longest name, "coredump". */
#define PROC_EVENT_WIDTH 8

/* Which events are shown (--events): cnctl's names, and forkstat's. */
#define PROC_SHOW_FORK	       0x001u /* a new process */
#define PROC_SHOW_CLONE	       0x002u /* a new thread */
#define PROC_SHOW_EXEC	       0x004u
#define PROC_SHOW_EXIT	       0x008u
#define PROC_SHOW_NONZERO_EXIT 0x010u /* exits with a non-zero status only */
#define PROC_SHOW_UID	       0x020u
#define PROC_SHOW_GID	       0x040u
#define PROC_SHOW_SID	       0x080u
#define PROC_SHOW_PTRACE       0x100u
#define PROC_SHOW_COMM	       0x200u
#define PROC_SHOW_COREDUMP     0x400u
#define PROC_SHOW_ALL	       0x7ffu

/* Where events come from (--source). */
#define PROC_SOURCE_AUTO      0 /* cnbus_proc.ko when loaded, else the connector */
#define PROC_SOURCE_KMOD      1 /* cnbus_proc.ko only */
#define PROC_SOURCE_CONNECTOR 2 /* the kernel's proc connector only */

/* The events cnbus_proc.ko has: fork, exec, exit (and so clone). */
#define PROC_KMOD_SHOWS                                                                            \
	(PROC_SHOW_FORK | PROC_SHOW_CLONE | PROC_SHOW_EXEC | PROC_SHOW_EXIT |                      \
	 PROC_SHOW_NONZERO_EXIT)

struct proc_opts {
	struct cnctl_opts common; /* json, quiet, count, rcvbuf */
	uint32_t mask;		  /* kernel types asked for (CN_PROC_*); 0: every type */
	uint32_t show;		  /* PROC_SHOW_* printed */
	const char *events;	  /* as given, for messages */
	pid_t pid;		  /* --pid; 0: any */
	int tree;		  /* --tree: pid and its descendants */
	pid_t pgrp;		  /* --pgrp; 0: any */
	uid_t uid;		  /* --uid/--user, when uid_set */
	int uid_set;
	const char *comm;   /* --comm GLOB; NULL: any */
	int no_threads;	    /* --no-threads */
	int user_column;    /* -x, --extra: the USER column */
	int prompt;	    /* --prompt: each event as it comes, never a nap */
	int need_uid;	    /* user_column or uid_set: track every process's uid */
	int64_t timeout_ms; /* --timeout; < 0: none */
	enum proc_time_fmt time_fmt;
	int color;	     /* decided from --color and the terminal */
	int stats;	     /* --stats */
	int ecs;	     /* --ecs: Elastic Common Schema documents (common.json is set too) */
	int journal;	     /* --journal: native journal entries, not stdout */
	const char *metrics; /* --metrics FILE; NULL: none */
	int source;	     /* --source: PROC_SOURCE_* */
};

/* A command line shared by a process and the children running it. */
struct proc_cmdline {
	uint32_t refs;
	uint32_t len;  /* bytes in text, the arguments NUL-separated */
	int truncated; /* longer than PROC_ARGV_MAX: cut */
	char text[];   /* NUL-terminated too */
};

#define PROC_INFO_CMD_TRIED 0x1u /* cmd read (or inherited); NULL: none to be had */
#define PROC_INFO_UID	    0x2u /* uid known */
#define PROC_INFO_PGRP	    0x4u /* pgrp known */
#define PROC_INFO_FOLLOWED  0x8u /* --pid's process, or with --tree one of its descendants */
#define PROC_INFO_VANISHED                                                                         \
	0x10u /* a resync found it gone: dropped at the next, unless its exit comes */

/* What is known of one process (proc_info.c): the caller data of its main
 * thread's tracker entry; tgid 0: not made yet (the tracker zeroes it). */
struct proc_info {
	pid_t tgid;
	uint32_t flags; /* PROC_INFO_* */
	uid_t uid;	/* effective */
	uid_t ruid;	/* real: who ran a setuid program */
	pid_t pgrp;
	struct proc_cmdline *cmd;
	/* Its entity id (proc_entity_of), made once; "": not known. */
	char entity_id[PROC_ENTITY_ID_SIZE];
};

/* Each file's own part of a run's state; the others reach it only through
 * that file's functions below. */

#define PROC_BATCH 64 /* events (and datagrams) per receive call */

/* proc_info.c: the command lines of one batch's execs, read before its
 * events are handled (proc_info_prefetch); cmd[i] belongs to ev[i] (NULL:
 * not an exec, none to be had, or taken already). */
struct proc_info_prefetch {
	const struct cn_proc_event *ev; /* the batch; NULL: none */
	int n;
	struct proc_cmdline *cmd[PROC_BATCH];
};

/* proc_info.c: the count of followed processes, the prefetch, and the
 * info of the process the last exit ended (the tracker keeps it until its
 * next change, out of its table: found by tgid here meanwhile). */
struct proc_info_state {
	uint32_t followed; /* processes with PROC_INFO_FOLLOWED, not vanished */
	struct proc_info_prefetch pre;
	struct proc_info *exited;
};

/* proc_line.c: the clocks and the terminal a line is printed for. */
struct proc_line_state {
	int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	size_t width;		    /* room for the PROCESS column on a terminal; 0: all */
	int64_t tm_secs;	    /* the second tm_cache holds (put_time); -1: none */
	struct tm tm_cache;
	int64_t utc_secs; /* the same for the JSON's UTC time */
	struct tm utc_cache;
};

/* proc_filter.c: the last uid's name (proc_user_name). */
struct proc_user_cache {
	uid_t uid;
	int cached;
	char name[33];
};

/* proc_stats.c: loss, exact totals and what the last stderr report did not
 * say yet. */
struct proc_loss {
	uint64_t gaps, overruns, vanished, appeared, resyncs;
	uint64_t unreported_gaps, unreported_overruns;
	uint64_t appeared_before, vanished_before; /* as the last resync began */
	int64_t last_report_ms;
};

/* Per-command counters (proc_stats.c). */
struct proc_cmd_stats {
	char comm[16];
	uint64_t forks, clones, execs, exits, failed, lost;
};

/* proc_stats.c: the per-command table, rows found by name (hsearch_r). */
struct proc_cmd_table {
	struct hsearch_data index;
	struct proc_cmd_stats *row; /* in the order the commands came */
	uint32_t used;
	struct proc_cmd_stats other; /* commands beyond the table's bound */
};

/* proc_journal_fields.c: one native journal entry being built. */
struct proc_journal_entry {
	char *buf;
	size_t len, cap;
};

/* proc_journal.c: the stream stdout is swapped for, and what was lost. */
struct proc_journal {
	int fd;		   /* datagram socket to journald */
	FILE *real_stdout; /* NULL: --journal not in use */
	char *part;	   /* a line not complete yet */
	size_t part_len, part_cap;
	struct proc_journal_entry entry;
	uint64_t sent, lost; /* entries handed to journald, or not */
	uint64_t unreported; /* lost, not told in the journal yet */
	int last_err;	     /* errno of the last entry lost */
	int stopping;	     /* a stop signal came: sends wait a bounded time */
};

/* A run of `cnctl proc` (proc.c): what every file reads, and each file's part. */
struct proc_state {
	const struct proc_opts *o;
	struct cn_sock *s;
	struct cn_proc_tracker *t;
	uint64_t printed;
	uint64_t events_read; /* every event received, before the filters */
	int kernel_filter;    /* the kernel filters: per-CPU gaps not tracked */
	char boot_id[40];     /* /proc/sys/kernel/random/boot_id; "": not known */
	int kmod;	      /* reading cnbus_proc.ko's records (proc_kmod.c) */

	struct proc_info_state info;
	struct proc_line_state line;
	struct proc_user_cache user;
	struct proc_loss loss;
	struct proc_cmd_table cmds;
	struct proc_journal journal;
	int64_t metrics_last_ms; /* proc_metrics.c: the last write */
	int metrics_failed;
	uint64_t final_drops; /* the kernel's drops as the summary said them */
	int have_final_drops;
};

/* proc_info.c */
/* Make the process tracker (st->t, with tracker_flags) whose entries carry
 * each process's info. 0, or -1 with errno. */
int proc_info_init(struct proc_state *st, uint32_t tracker_flags);
/* Free the tracker, every process's info with it. */
void proc_info_free(struct proc_state *st);
/* Fill every process's info from /proc (after the tracker's first sync). */
void proc_info_scan(struct proc_state *st);
/* A task a resync found gone (e, as the sync reports it). A process keeps
 * its info, flagged, as long as the tracker keeps it (until the next
 * resync): its exit may still be on its way (it ended while /proc was
 * read) and is then named. */
void proc_info_vanished(struct proc_state *st, const struct cn_proc_entry *e);
/* A task the tracker found running after a loss (its start was lost). */
void proc_info_appeared(struct proc_state *st, const struct cn_proc_entry *e);
/* Before the n events of a batch are handled one by one: read the command
 * line of each exec among them now, while the process is most likely to
 * live (handling the events before it takes time); proc_info_event takes
 * them. An exec that another exec or the exit of the same process follows
 * in the batch gets none: its command line is already another's, or gone. */
void proc_info_prefetch(struct proc_state *st, const struct cn_proc_event *ev, int n);
/* The same with the command lines the events carry (cnbus_proc.ko's
 * records: read in the kernel at the exec): argv[i] (len[i] bytes, as
 * /proc/PID/cmdline has them, cut[i] when the kernel cut them) for ev[i],
 * NULL for events that are not execs. */
void proc_info_prefetch_argv(struct proc_state *st, const struct cn_proc_event *ev, int n,
			     const char *const *argv, const size_t *len, const int *cut);

/* proc_kmod.c: events from cnbus_proc.ko. proc_kmod_open opens st->s on
 * cnbus.ko's unit and listens: 0, or -ENODEV (the module is not loaded),
 * -EPERM, -errno. proc_kmod_recv receives up to PROC_BATCH events into
 * ev[] as cn_proc_recv_batch does, their command lines prefetched. */
int proc_kmod_open(struct proc_state *st, const struct cn_open_opts *oo);
int proc_kmod_recv(struct proc_state *st, struct cn_proc_event *ev, unsigned int flags);
/* Update ev's process's info once the tracker has applied ev (e: what
 * cn_proc_tracker_event returned), before ev is printed; returns it (NULL:
 * unknown). For the exit that ended the process, the info stays until the
 * tracker's next change. */
struct proc_info *proc_info_event(struct proc_state *st, const struct cn_proc_event *ev,
				  const struct cn_proc_entry *e);
/* After the exit that ended process p was printed: no longer followed,
 * and no longer found by proc_info_find. */
void proc_info_exited(struct proc_state *st, struct proc_info *p);
/* The info of process tgid (the one the event being handled ended, too),
 * or of the process whose main thread's tracker entry is e; NULL when not
 * known. */
struct proc_info *proc_info_find(struct proc_state *st, pid_t tgid);
struct proc_info *proc_info_entry(struct proc_state *st, const struct cn_proc_entry *e);
/* Processes followed (--pid, --tree) that have not exited. */
uint32_t proc_info_followed(const struct proc_state *st);

/* proc_filter.c */
/* Parse an --events list into o->show and o->mask; -1 with the bad item in
 * bad (empty for an empty item). */
int proc_parse_events(const char *list, struct proc_opts *o, char *bad, size_t size);
/* A uid, or a user name looked up. */
int proc_parse_user(const char *arg, uid_t *uid);
const char *proc_user_name(struct proc_state *st, uid_t uid);
/* Is ev to be printed (and counted by --stats)? e: the tracker's entry, p:
 * proc_info's (both may be NULL); old_comm: a rename's old name (else NULL). */
int proc_wanted(const struct proc_state *st, const struct cn_proc_event *ev,
		const struct cn_proc_entry *e, const struct proc_info *p, const char *old_comm);
/* Would task e's exit be printed? (for the exits a resync found lost) */
int proc_exit_wanted(const struct proc_state *st, const struct cn_proc_entry *e,
		     const struct proc_info *p);

/* proc_exit.c: an exit's raw wait status decoded. */
enum proc_exit_how { PROC_EXIT_EXITED, PROC_EXIT_KILLED, PROC_EXIT_UNKNOWN };
struct proc_exit {
	enum proc_exit_how how;
	int code;	 /* exited: its status; killed: 128 + signal; unknown: -1 */
	int signal;	 /* killed: the signal */
	int core_dumped; /* killed: a core was dumped */
};
void proc_exit_decode(uint32_t wait_status, struct proc_exit *x);
/* "SIGKILL", or the number for a signal without a name. */
const char *proc_signal_name(int sig, char *buf, size_t size);

/* proc_entity.c */
/* Read the boot's id, which entity ids include. */
void proc_entity_init(struct proc_state *st);
/* The entity id of the process whose main thread's tracker entry is proc
 * (may be NULL): 1 with out filled, 0 when its start is not known. */
int proc_entity_id(const struct proc_state *st, const struct cn_proc_entry *proc,
		   char out[PROC_ENTITY_ID_SIZE]);
/* The entity id of process tgid, kept in its proc_info entry from the
 * first time it is known; main: its main thread's tracker entry when the
 * caller has it (NULL: looked up). NULL when not known. */
const char *proc_entity_of(struct proc_state *st, pid_t tgid, const struct cn_proc_entry *main);

/* proc_line.c */
/* Read the clocks (the wall-clock offset of event times) and reset the caches. */
void proc_line_init(struct proc_state *st);
void proc_print_header(FILE *f, const struct proc_opts *o);
/* Print the event ev about task e (the tracker's entry, may be NULL) and,
 * for a fork, its parent's entry pe (may be NULL). */
void proc_print_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
		      const struct proc_info *p, const char *old_comm);
/* The event's wall-clock time, UTC, RFC 3339 with microseconds, quoted. */
void proc_put_utc(FILE *f, struct proc_state *st, uint64_t ts_ns);
/* How long e lived until ts_ns, and from what: "fork", "exec" (the fork was
 * not seen: at least this long), "scan" (start time from /proc, to the
 * clock tick), or NULL (unknown). */
const char *proc_lifetime(const struct cn_proc_entry *e, uint64_t ts_ns, uint64_t *ns);
/* Read the terminal's width again (at start and after a SIGWINCH). */
void proc_line_read_width(struct proc_state *st);
/* The width of the PROCESS column for a terminal of cols columns. */
size_t proc_line_width(const struct proc_opts *o, unsigned int cols);

/* proc_json.c: the event as a JSON line of cnctl's schema (--json). */
void proc_json_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		     const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
		     const struct proc_info *p, const char *old_comm);
/* A command line's arguments as a JSON array, or joined: one JSON string
 * of them separated by spaces; returns how many. */
size_t proc_json_args(FILE *f, const struct proc_cmdline *c, int joined);
/* Every other record of the stream (loss, summary, stats, messages) in
 * either JSON mode: proc_record_head opens it (type: "loss", ...; message:
 * its text, or NULL), the caller adds ,"key":value pairs of cnctl's own,
 * proc_record_end closes it. With --ecs the pairs go into a "cnctl"
 * object, ECS's fields around it. */
void proc_record_head(FILE *f, struct proc_state *st, const char *type, const char *message);
void proc_record_end(FILE *f, const struct proc_state *st);

/* proc_ecs.c: the event as an Elastic Common Schema document (--ecs). */
void proc_ecs_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		    const struct cn_proc_entry *e, const struct cn_proc_entry *pe,
		    const struct proc_info *p, const char *old_comm);
/* The ECS fields that open a record that is not an event (proc_record_head). */
void proc_ecs_record_head(FILE *f, struct proc_state *st, const char *type, const char *message);

/* proc_stats.c */
int proc_stats_init(struct proc_state *st);
void proc_stats_free(struct proc_state *st);
/* Count a printed event ev (about e, may be NULL) for its command. */
void proc_stats_event(struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e);
/* An exit the last resync counted lost came after all (e is flagged
 * CN_PROC_ENTRY_VANISHED); wanted: proc_wanted's verdict on it. */
void proc_stats_unvanished(struct proc_state *st, const struct cn_proc_entry *e, int wanted);
/* A task the tracker found vanished while blind: a lost exit (counted in
 * the table when wanted: proc_exit_wanted). */
void proc_stats_vanished(struct proc_state *st, const struct cn_proc_entry *e, int wanted);
/* A task the tracker found running after a loss. */
void proc_stats_appeared(struct proc_state *st);
/* Loss met by the receive loop: per-CPU sequence gaps, an overrun. */
void proc_loss_gap(struct proc_state *st, uint32_t lost);
void proc_loss_overrun(struct proc_state *st);
/* A resync begins (the counts it changes are taken from here), and it
 * completed: counted, and what it found told (the first three). */
void proc_loss_resyncing(struct proc_state *st);
void proc_loss_resynced(struct proc_state *st);
void proc_stats_print(FILE *f, struct proc_state *st);
/* Loss on stderr (with --json: a "loss" object on stdout), at most one line
 * a second (force: print what is pending). */
void proc_loss_report(struct proc_state *st, int force);
/* The one-line summary on stderr (with --json: a "summary" object). */
void proc_summary(struct proc_state *st);
/* A message: on stderr, or with --json a {"type":type,"message":...}
 * object on stdout (and on stderr too when that is a terminal). */
void proc_message(struct proc_state *st, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* proc_journal.c */
/* Swap stdout for a stream that sends each line to journald as a native
 * entry (buf: its buffer). 0, or -errno. */
int proc_journal_open(struct proc_state *st, char *buf, size_t size);
/* Send what is left, report entries lost, give stdout back. */
void proc_journal_close(struct proc_state *st);

/* proc_journal_fields.c */
/* The native entry for one JSON line of cnctl's (without its newline):
 * fields named after its keys, MESSAGE, PRIORITY. 0, or -ENOMEM. */
int proc_journal_entry(struct proc_journal_entry *e, const char *json, size_t len);

/* proc_metrics.c */
/* Write --metrics's file when its interval has passed (and at start). */
void proc_metrics_tick(struct proc_state *st);
/* The last write, at exit: the summary's numbers. */
void proc_metrics_final(struct proc_state *st);

#endif /* CNCTL_PROC_H */
