/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_metrics.c - `cnctl proc --metrics FILE`: cnctl's counters of events
 * read and lost in Prometheus's text format, for node_exporter's textfile
 * collector (a FILE ending in .prom in its --collector.textfile.directory),
 * so that a fleet alerts on loss as it does on other agents' drop counters.
 *
 * The file is written whole to a temporary name in its directory and renamed
 * over FILE: a scrape reads the old file or the new one, never half of one
 * (the collector's documented way). Written at start, every
 * PROC_METRICS_INTERVAL_MS while cnctl runs (the file's mtime, which
 * node_exporter exports, says cnctl is alive), and at exit with the
 * summary's numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

#define PROC_METRICS_INTERVAL_MS 5000

/* A counter's HELP and TYPE lines. */
static void counter(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
}

static void put_metrics(FILE *f, struct proc_state *st, uint64_t drops, int have_drops)
{
	const struct proc_loss *l = &st->loss;

	counter(f, "cnctl_proc_events_read_total",
		"Events cnctl read from the kernel's proc connector.");
	fprintf(f, "cnctl_proc_events_read_total %llu\n", (unsigned long long)st->events_read);
	counter(f, "cnctl_proc_events_written_total",
		"Events cnctl wrote out (those its filters let through).");
	fprintf(f, "cnctl_proc_events_written_total %llu\n", (unsigned long long)st->printed);
	counter(f, "cnctl_proc_events_lost_total",
		"Events known lost, by where: sequence_gap, missing from the kernel's per-CPU "
		"sequences (before cnctl read them); journal, entries journald did not take.");
	if (!st->kernel_filter) /* a kernel filter's gaps say nothing */
		fprintf(f, "cnctl_proc_events_lost_total{source=\"sequence_gap\"} %llu\n",
			(unsigned long long)l->gaps);
	fprintf(f, "cnctl_proc_events_lost_total{source=\"journal\"} %llu\n",
		(unsigned long long)st->journal.lost);
	counter(f, "cnctl_proc_receive_overruns_total",
		"Receive buffer overruns (ENOBUFS), each of an unknown number of events.");
	fprintf(f, "cnctl_proc_receive_overruns_total %llu\n", (unsigned long long)l->overruns);
	if (have_drops) {
		counter(f, "cnctl_proc_kernel_drops_total",
			"Events the kernel dropped for cnctl's socket (SO_MEMINFO); the same loss "
			"as sequence gaps, counted by the kernel: never add the two.");
		fprintf(f, "cnctl_proc_kernel_drops_total %llu\n", (unsigned long long)drops);
	}
	counter(f, "cnctl_proc_resyncs_total", "Rescans of /proc after loss.");
	fprintf(f, "cnctl_proc_resyncs_total %llu\n", (unsigned long long)l->resyncs);
}

/* Write the file now (drops: the kernel's count, read by the caller). */
static int write_file(struct proc_state *st, uint64_t drops, int have_drops)
{
	const char *path = st->o->metrics;
	char tmp[PATH_MAX];
	FILE *f;
	int fd, r = 0;

	/* Not ending in .prom: the collector skips it while it is written. */
	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	put_metrics(f, st, drops, have_drops);
	if (fflush(f) != 0 || ferror(f))
		r = -(errno ? errno : EIO);
	if (fclose(f) != 0 && !r)
		r = -(errno ? errno : EIO);
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

static void write_now(struct proc_state *st, uint64_t drops, int have_drops)
{
	int r = write_file(st, drops, have_drops);

	st->metrics_last_ms = cnctl_now_ms();
	/* Said once per failure that starts, not at every interval. */
	if (r < 0 && !st->metrics_failed)
		proc_message(st, "error", "writing --metrics %s: %s", st->o->metrics, strerror(-r));
	st->metrics_failed = r < 0;
}

void proc_metrics_tick(struct proc_state *st)
{
	uint64_t drops = 0;
	int have_drops;

	if (!st->o->metrics || cnctl_now_ms() - st->metrics_last_ms < PROC_METRICS_INTERVAL_MS)
		return;
	have_drops = cn_drops(st->s, &drops) == 0;
	write_now(st, drops, have_drops);
}

void proc_metrics_final(struct proc_state *st)
{
	/* Nothing written yet: cnctl never ran (an error at start). */
	if (!st->o->metrics || !st->metrics_last_ms)
		return;
	/* The summary's count of the kernel's drops, else read now. */
	if (st->o->common.quiet)
		st->have_final_drops = cn_drops(st->s, &st->final_drops) == 0;
	write_now(st, st->final_drops, st->have_final_drops);
}
