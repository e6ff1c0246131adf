/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.h - what `cnctl proc`'s files share: options, the state of a run,
 * line output (proc_line.c) and the per-command statistics and loss
 * reports (proc_stats.c).
 */
#ifndef CNCTL_PROC_H
#define CNCTL_PROC_H

#include <stdint.h>
#include <stdio.h>

#include <libcn.h>

#include "common.h"

enum proc_time_fmt {
	PROC_TIME_CLOCK, /* 12:48:52.123456 (local time) */
	PROC_TIME_ISO,	 /* 2026-12-03T12:48:52.123456+00:00 */
	PROC_TIME_MONO,	 /* 12345.678901: CLOCK_MONOTONIC seconds, as timestamp_ns */
};

struct proc_opts {
	struct cnctl_opts common; /* json, quiet, count, rcvbuf */
	uint32_t mask;		  /* types to print; 0: every type */
	const char *events;	  /* as given, for messages */
	int64_t timeout_ms;	  /* --timeout; < 0: none */
	enum proc_time_fmt time_fmt;
	int color; /* decided from --color and the terminal */
	int stats; /* --stats */
};

/* Per-command counters (proc_stats.c). */
struct proc_cmd_stats {
	char comm[16];
	uint64_t forks, clones, execs, exits, failed, lost;
};

struct proc_state {
	const struct proc_opts *o;
	struct cn_sock *s;
	struct cn_proc_tracker *t;
	uint64_t printed;
	int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	int kernel_filter;	    /* the kernel filters: per-CPU gaps not tracked */
	size_t width;		    /* room for an exec's command line on a terminal; 0: all */

	/* loss: exact totals, and what the last stderr report did not say yet */
	uint64_t gaps, overruns, vanished, appeared, resyncs;
	uint64_t unreported_gaps, unreported_overruns;
	int64_t last_loss_report_ms;

	/* per-command table (open addressing on the name) */
	struct proc_cmd_stats *cmds;
	uint32_t cmd_mask, ncmds;
	struct proc_cmd_stats other; /* commands beyond the table's bound */
};

/* proc_line.c */
void proc_print_header(FILE *f, const struct proc_opts *o);
/* Print the event ev about task e (the tracker's entry, may be NULL) and,
 * for a fork, its parent's entry pe (may be NULL). */
void proc_print_event(FILE *f, struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e, const struct cn_proc_entry *pe);

/* proc_stats.c */
int proc_stats_init(struct proc_state *st);
void proc_stats_free(struct proc_state *st);
/* Count ev (about e, may be NULL) for its command. */
void proc_stats_event(struct proc_state *st, const struct cn_proc_event *ev,
		      const struct cn_proc_entry *e);
/* A task the tracker found vanished while blind: a lost exit. */
void proc_stats_vanished(struct proc_state *st, const struct cn_proc_entry *e);
void proc_stats_print(FILE *f, struct proc_state *st);
/* Loss on stderr, at most one line a second (force: print what is pending). */
void proc_loss_report(struct proc_state *st, int force);
/* The one-line summary on stderr. */
void proc_summary(struct proc_state *st);

#endif /* CNCTL_PROC_H */
