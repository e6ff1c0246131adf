/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_stat.h - the one parser of a /proc/PID/stat line (proc_pid_stat(5)),
 * the process tracker's (proc_scan.c), parsing a buffer the caller read.
 */
#ifndef LIBCN_PROC_STAT_H
#define LIBCN_PROC_STAT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* What the callers use of a stat line. */
struct cn__proc_stat {
	char comm[16];		      /* up to 15 bytes of the name, NUL-terminated */
	char state;		      /* R, S, D, Z (zombie), X (dead), ... */
	int ppid, pgrp;		      /* parent process, process group */
	int threads;		      /* num_threads: its process's live threads */
	unsigned long long starttime; /* clock ticks after boot it started */
};

/* Parse "PID (COMM) S PPID PGRP ... STARTTIME ..." (NUL-terminated; at
 * least up to the 22nd field, starttime: a 1024-byte read holds it). The
 * name may hold spaces and parentheses: it ends at the last ')'. Returns 0
 * with *st filled, or -EBADMSG. */
static inline int cn__proc_stat_parse(const char *buf, struct cn__proc_stat *st)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	size_t n;

	if (!open || !close || close < open)
		return -EBADMSG;
	n = (size_t)(close - open - 1);
	memset(st->comm, 0, sizeof(st->comm));
	memcpy(st->comm, open + 1, n < sizeof(st->comm) - 1 ? n : sizeof(st->comm) - 1);
	/* After ") ": state(3) ppid(4) pgrp(5) ... num_threads(20) ...
	 * starttime(22). */
	if (sscanf(close + 1,
		   " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %d %*d %llu",
		   &st->state, &st->ppid, &st->pgrp, &st->threads, &st->starttime) != 5)
		return -EBADMSG;
	return 0;
}

#endif /* LIBCN_PROC_STAT_H */
