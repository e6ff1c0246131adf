/*
 * proc_table.c - a table of the live processes and their parents, kept from
 * proc events by libcn's process tracker: each exit is logged with how long
 * the process lived, and after events are lost (an overrun) the table is
 * made right again from /proc (a line on stderr says each rescan). On
 * SIGINT or SIGTERM it prints the table (PID, PPID, name) and exits.
 *
 *   proc_table [RCVBUF_BYTES]     (a small buffer makes overruns happen)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <libcn.h>

static void on_change(const struct cn_proc_entry *e, enum cn_proc_change change, void *arg)
{
	(void)arg;
	if (change == CN_PROC_APPEARED)
		printf("appeared %d (parent %d) %s: its start was lost\n", e->pid, e->ppid,
		       e->comm);
	else
		printf("vanished %d (parent %d) %s: its exit was lost\n", e->pid, e->ppid, e->comm);
}

static void on_event(struct cn_proc_tracker *t, const struct cn_proc_event *ev)
{
	const struct cn_proc_entry *e = cn_proc_tracker_event(t, ev);

	/* The tracker holds processes only (NO_THREADS), their threads
	 * counted: the exit that ends a process (its last thread's, not
	 * always its main one's) returns its entry flagged EXITED. One
	 * flagged VANISHED was printed as vanished by a rescan already (it
	 * ended while /proc was read, its exit came after): not twice. */
	if (ev->what == CN_PROC_EXIT && e && (e->flags & CN_PROC_ENTRY_EXITED) &&
	    !(e->flags & CN_PROC_ENTRY_VANISHED))
		printf("exit %d (parent %d) %s after %.3f s\n", e->pid, e->ppid, e->comm,
		       (double)(ev->timestamp_ns - e->start_ns) / 1e9);
}

/* Take every queued event; 0 once the socket is drained, -errno on error. */
static int drain(struct cn_sock *s, struct cn_proc_tracker *t)
{
	struct cn_proc_event ev[64];

	for (;;) {
		int n = cn_proc_recv_batch(s, ev, 64, 0);

		if (n == -EAGAIN)
			return 0;
		if (n == -ENOBUFS) {
			/* Events were lost: the table is rescanned once the
			 * losses stop (cn_proc_tracker_sync_timeout). */
			fprintf(stderr, "overrun: events lost\n");
			cn_proc_tracker_lost(t);
			continue;
		}
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			on_event(t, &ev[i]);
	}
}

/* Rescan /proc after loss, reporting what changed while blind. */
static void rescan(struct cn_proc_tracker *t)
{
	int n = cn_proc_tracker_sync(t, on_change, NULL);

	if (n < 0)
		fprintf(stderr, "proc_table: rescanning /proc: %s\n", strerror(-n));
	else
		fprintf(stderr, "proc_table: rescanned /proc: %d changes\n", n);
}

static void print_table(const struct cn_proc_tracker *t)
{
	const struct cn_proc_entry *e = NULL;

	printf("%7s %7s  %s\n", "PID", "PPID", "COMMAND");
	while ((e = cn_proc_tracker_next(t, e)))
		printf("%7d %7d  %s\n", e->pid, e->ppid, e->comm);
}

int main(int argc, char **argv)
{
	struct cn_open_opts o = { .sz = sizeof(o), .flags = CN_OPEN_NONBLOCK };
	struct cn_proc_tracker_opts to = { .sz = sizeof(to), .flags = CN_PROC_TRACKER_NO_THREADS };
	struct cn_proc_tracker_stats ts;
	struct cn_proc_tracker *t;
	struct pollfd pfd[2];
	struct cn_sock *s;
	sigset_t sigs;
	int r = 0;

	if (argc > 1)
		o.rcvbuf = atoi(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it comes, into a pipe too */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	s = cn_open(NETLINK_CONNECTOR, &o);
	t = cn_proc_tracker_new(&to);
	/* Listen first, then read /proc: a process started in between is in
	 * both, and the events that follow apply on top. */
	if (!s || !t || cn_proc_listen(s, 0, 1000) < 0 || cn_proc_tracker_sync(t, NULL, NULL) < 0) {
		fprintf(stderr, "proc_table: %s\n", strerror(errno));
		return 1;
	}
	pfd[0] = (struct pollfd){ .fd = cn_fd(s), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = signalfd(-1, &sigs, SFD_CLOEXEC), .events = POLLIN };
	fprintf(stderr, "proc_table: listening\n");
	while (!(pfd[1].revents & POLLIN)) {
		int due;

		r = drain(s, t);
		if (r < 0)
			break;
		due = cn_proc_tracker_sync_timeout(t);
		if (due == 0) {
			rescan(t);
			continue; /* events came meanwhile */
		}
		poll(pfd, 2, due); /* due < 0: until events or a signal */
	}
	/* Stopped: take what is queued, make the table right, print it. */
	if (r == 0)
		r = drain(s, t);
	if (cn_proc_tracker_sync_timeout(t) >= 0)
		rescan(t);
	print_table(t);
	cn_proc_tracker_stats(t, &ts);
	fprintf(stderr, "proc_table: %llu processes, %llu events, %llu rescans after loss\n",
		(unsigned long long)ts.entries, (unsigned long long)ts.events,
		(unsigned long long)(ts.syncs - 1));
	cn_proc_tracker_free(t);
	cn_close(s);
	return r < 0 ? 1 : 0;
}
