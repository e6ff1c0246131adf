/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_journal.c - `cnctl proc --journal`: every line the JSON mode would
 * print becomes one native journal entry (systemd.io/JOURNAL_NATIVE_PROTOCOL:
 * one datagram to /run/systemd/journal/socket per entry), its keys queryable
 * fields (proc_journal_fields.c). stdout is swapped for a stream that sends
 * each complete line, so the rest of cnctl prints as in the JSON mode.
 *
 * The protocol is spoken here rather than through libsystemd's
 * sd_journal_sendv, which returns success when journald's socket is missing
 * (the entry is gone and nobody is told): cnctl counts every entry it could
 * not hand over, reports the count in the journal once an entry goes
 * through again, on stderr at exit, and in --metrics. The socket blocks: a
 * journald that is behind slows cnctl down (the kernel then drops events
 * for cnctl's socket, which cnctl counts and reports) rather than losing
 * entries cnctl believes written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "proc.h"

#define JOURNAL_SOCKET	    "/run/systemd/journal/socket"
/* Room for the largest entry: an exec's argv (PROC_ARGV_MAX bytes) twice,
 * as ARGV and in MESSAGE, escaped; the kernel caps a datagram at the
 * socket's send buffer, which journald's own clients raise the same way. */
#define JOURNAL_SNDBUF	    (8u << 20)
/* How long an entry may wait for journald once cnctl is stopping. */
#define JOURNAL_STOP_WAIT_S 2

static int send_entry(struct proc_journal *j, const char *buf, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
	struct timeval stop_wait = { .tv_sec = JOURNAL_STOP_WAIT_S };

	/* Unconnected, the address given each time: a restarted journald's
	 * new socket is found by the next entry. */
	for (;;) {
		if (sendto(j->fd, buf, len, MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof(sa)) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
		/* Stopping while journald is behind: its last entries (the
		 * summary) are still worth a wait, a bounded one (a journald
		 * that hangs must not keep cnctl from exiting). */
		if (cnctl_stop && !j->stopping) {
			j->stopping = 1;
			setsockopt(j->fd, SOL_SOCKET, SO_SNDTIMEO, &stop_wait, sizeof(stop_wait));
		}
	}
}

/* Tell the journal what it missed, once an entry went through again. */
static void report_lost(struct proc_journal *j)
{
	char line[256];
	int n;

	if (!j->unreported)
		return;
	n = snprintf(line, sizeof(line),
		     "{\"type\":\"journal_loss\",\"schema\":%d,\"message\":\"%llu entr%s could "
		     "not be handed to journald: %s\",\"lost_entries\":%llu,\"total_lost_entries\":"
		     "%llu}",
		     PROC_JSON_SCHEMA, (unsigned long long)j->unreported,
		     j->unreported == 1 ? "y" : "ies", strerror(j->last_err),
		     (unsigned long long)j->unreported, (unsigned long long)j->lost);
	if (proc_journal_entry(&j->entry, line, (size_t)n) < 0)
		return;
	if (send_entry(j, j->entry.buf, j->entry.len) == 0)
		j->unreported = 0;
}

/* One line of JSON: an entry sent, or counted lost. */
static void put_line(struct proc_journal *j, const char *line, size_t len)
{
	int r;

	if (proc_journal_entry(&j->entry, line, len) < 0)
		r = -ENOMEM;
	else
		r = send_entry(j, j->entry.buf, j->entry.len);
	if (r < 0) {
		j->lost++;
		j->unreported++;
		j->last_err = -r;
		return;
	}
	j->sent++;
	report_lost(j);
}

/* The stream's write: whole lines are sent, the rest kept for the next. */
static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	struct proc_journal *j = cookie;
	size_t done = 0;

	while (done < size) {
		const char *nl = memchr(buf + done, '\n', size - done);
		size_t n = nl ? (size_t)(nl - (buf + done)) : size - done;

		if (j->part_len + n > j->part_cap) {
			size_t cap = (j->part_len + n) * 2;
			char *p = realloc(j->part, cap);

			if (!p) {
				errno = ENOMEM;
				return -1;
			}
			j->part = p;
			j->part_cap = cap;
		}
		memcpy(j->part + j->part_len, buf + done, n);
		j->part_len += n;
		done += n;
		if (!nl)
			break;
		done++; /* the newline */
		put_line(j, j->part, j->part_len);
		j->part_len = 0;
	}
	return (ssize_t)size;
}

int proc_journal_open(struct proc_state *st, char *buf, size_t size)
{
	struct proc_journal *j = &st->journal;
	int sndbuf = JOURNAL_SNDBUF;
	FILE *f;

	j->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (j->fd < 0)
		return -errno;
	/* Forced where cnctl may (CAP_NET_ADMIN), else up to wmem_max. */
	if (setsockopt(j->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		setsockopt(j->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	f = fopencookie(j, "w", (cookie_io_functions_t){ .write = stream_write });
	if (!f) {
		close(j->fd);
		j->fd = -1;
		return -errno;
	}
	setvbuf(f, buf, _IOFBF, size);
	j->real_stdout = stdout;
	stdout = f;
	return 0;
}

void proc_journal_close(struct proc_state *st)
{
	struct proc_journal *j = &st->journal;

	if (!j->real_stdout)
		return;
	fflush(stdout);
	if (j->part_len) /* a last line without its newline */
		put_line(j, j->part, j->part_len);
	report_lost(j);
	fclose(stdout);
	stdout = j->real_stdout;
	j->real_stdout = NULL;
	if (j->lost)
		fprintf(
		    stderr,
		    "cnctl: %llu of %llu journal entries could not be handed to journald (%s)\n",
		    (unsigned long long)j->lost, (unsigned long long)(j->lost + j->sent),
		    strerror(j->last_err));
	close(j->fd);
	j->fd = -1;
	free(j->part);
	free(j->entry.buf);
}
