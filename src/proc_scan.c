/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_scan.c - reading tasks from procfs for the process tracker: names
 * (comm) and whole scans. Paths are opened relative to the procfs root's
 * descriptor, so a test can point the tracker at a fake tree.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proc_stat.h"
#include "proc_tracker.h"

/* readdir of a 32-bit build without _FILE_OFFSET_BITS=64 (CMakeLists.txt)
 * fails with EOVERFLOW on ext4's 64-bit directory offsets. */
_Static_assert(sizeof(off_t) == 8, "64-bit file offsets for readdir");

/* The next entry of dir, or NULL at the end (*err 0) or on an error (*err
 * -errno: a scan that stopped early must not read as a complete one). */
static struct dirent *next_entry(DIR *dir, int *err)
{
	struct dirent *d;

	errno = 0;
	d = readdir(dir);
	if (!d && errno)
		*err = -errno;
	return d;
}

/* Read up to size - 1 bytes of `path` (relative to dirfd), NUL-terminated.
 * Returns the length or -errno. */
static ssize_t read_small(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int cn__proc_read_comm(int proc_fd, pid_t pid, char comm[16])
{
	char path[32], buf[32];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	n = read_small(proc_fd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	memset(comm, 0, 16);
	memcpy(comm, buf, n < 15 ? (size_t)n : 15);
	return 0;
}

int cn__proc_read_ppid(int proc_fd, pid_t pid, pid_t *ppid)
{
	struct cn__proc_stat st;
	char path[32], buf[1024];
	ssize_t n;
	int r;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	n = read_small(proc_fd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	r = cn__proc_stat_parse(buf, &st);
	if (r < 0)
		return r;
	*ppid = st.ppid;
	return 0;
}

/* CLOCK_MONOTONIC - CLOCK_BOOTTIME in ns (<= 0: time spent suspended), to
 * turn /proc start times (boot-time based) into event timestamps. */
static int64_t mono_minus_boot(void)
{
	struct timespec m, b;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_BOOTTIME, &b);
	return ((int64_t)m.tv_sec - b.tv_sec) * 1000000000 + (m.tv_nsec - b.tv_nsec);
}

/* A task from its stat line; its start time (clock ticks, hz a second,
 * after boot) on CLOCK_MONOTONIC (offset: mono_minus_boot). */
static int parse_stat(const char *buf, struct cn_proc_task *t, long hz, int64_t offset)
{
	struct cn__proc_stat st;
	unsigned long long start;
	int64_t ns;
	int r = cn__proc_stat_parse(buf, &st);

	if (r < 0)
		return r;
	memcpy(t->comm, st.comm, sizeof(t->comm));
	t->ppid = st.ppid;
	t->zombie = st.state == 'Z' || st.state == 'X';
	t->live_threads = st.threads > 1;
	t->threads = st.threads > 0 ? (uint32_t)st.threads : 1;
	start = st.starttime;
	ns = (int64_t)(start / (unsigned long long)hz) * 1000000000 +
	     (int64_t)(start % (unsigned long long)hz) * (1000000000 / hz) + offset;
	t->start_ns = ns > 0 ? (uint64_t)ns : 0;
	return 0;
}

/* A decimal directory name, or 0. */
static pid_t dir_pid(const struct dirent *d)
{
	char *end;
	long v;

	if (d->d_name[0] < '1' || d->d_name[0] > '9')
		return 0;
	v = strtol(d->d_name, &end, 10);
	return *end || v <= 0 || v > INT32_MAX ? 0 : (pid_t)v;
}

static int scan_threads(int proc_fd, pid_t tgid, struct cn_proc_task *t, long hz, int64_t off,
			int (*fn)(const struct cn_proc_task *, void *), void *arg)
{
	char path[48], buf[1024];
	struct dirent *d;
	DIR *dir;
	int fd, r = 0, gone = 0;

	snprintf(path, sizeof(path), "%d/task", (int)tgid);
	fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* gone meanwhile */
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	/* A task directory whose process exited meanwhile reads as ENOENT
	 * (proc_task_readdir): gone meanwhile, as when it cannot be opened. */
	while (r >= 0 && (d = next_entry(dir, &gone))) {
		pid_t tid = dir_pid(d);

		if (!tid || tid == tgid)
			continue;
		snprintf(path, sizeof(path), "%d/stat", (int)tid);
		if (read_small(dirfd(dir), path, buf, sizeof(buf)) <= 0 ||
		    parse_stat(buf, t, hz, off) < 0)
			continue; /* the thread ended meanwhile */
		t->pid = tid;
		t->tgid = tgid;
		r = fn(t, arg);
	}
	closedir(dir);
	return r;
}

int cn__proc_scan(int proc_fd, int no_threads, int (*fn)(const struct cn_proc_task *, void *),
		  void *arg)
{
	long hz = sysconf(_SC_CLK_TCK);
	int64_t off = mono_minus_boot();
	struct dirent *d;
	char path[32], buf[1024];
	DIR *dir;
	int fd, r = 0;

	if (hz <= 0)
		hz = 100;
	fd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r >= 0 && (d = next_entry(dir, &r))) {
		struct cn_proc_task t;
		pid_t pid = dir_pid(d);

		if (!pid)
			continue;
		snprintf(path, sizeof(path), "%d/stat", (int)pid);
		if (read_small(proc_fd, path, buf, sizeof(buf)) <= 0 ||
		    parse_stat(buf, &t, hz, off) < 0)
			continue; /* exited between readdir and open */
		t.pid = t.tgid = pid;
		r = fn(&t, arg);
		if (r >= 0 && !no_threads)
			r = scan_threads(proc_fd, pid, &t, hz, off, fn, arg);
	}
	closedir(dir);
	return r < 0 ? r : 0;
}
