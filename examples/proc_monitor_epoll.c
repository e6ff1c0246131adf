/*
 * proc_monitor_epoll.c - process events in an epoll loop, the way a daemon
 * integrates libcn: a non-blocking socket, batch receive, a signalfd for a
 * clean exit, loss reported instead of hidden, and a process tracker that
 * tells a process's exit from a thread's (cn_proc_tracker(3)).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <libcn.h>

/* One line per event. pid != tgid: the event is about a thread (pid) of
 * process tgid, not about the process. A process's exit is told once, when
 * the tracker says it is gone (its last thread, not always its main one,
 * has exited), as the parent's wait(2) tells it (a status, or the signal
 * and a core dump); e is the tracker's entry for the event. */
static void print_event(const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	int thread = ev->pid != ev->tgid;
	char status[48];

	switch (ev->what) {
	case CN_PROC_FORK:
		if (thread)
			printf("thread %d of pid %d started\n", ev->pid, ev->tgid);
		else
			printf("pid %d forked by pid %d\n", ev->pid, ev->parent_tgid);
		break;
	case CN_PROC_EXIT:
		if (thread)
			printf("thread %d of pid %d ended\n", ev->pid, ev->tgid);
		if (!e || !(e->flags & CN_PROC_ENTRY_EXITED))
			break; /* the process runs on */
		cn_proc_status_text(e->status, status, sizeof(status));
		printf("pid %d %s\n", e->pid, status);
		break;
	default:
		if (thread)
			printf("thread %d of pid %d: %s\n", ev->pid, ev->tgid,
			       cn_proc_what_name(ev->what));
		else
			printf("pid %d: %s\n", ev->pid, cn_proc_what_name(ev->what));
		break;
	}
}

/* Handle everything queued; EAGAIN (the socket is non-blocking) means done.
 * cn_proc_recv_batch reads up to 64 events per system call and decodes
 * them where they were read; a gap before an event it skipped (an ack) is
 * added to the next event's lost_before, so nothing lost goes unreported. */
static void drain(struct cn_sock *s, struct cn_proc_tracker *t)
{
	struct cn_proc_event ev[64];

	for (;;) {
		int got = cn_proc_recv_batch(s, ev, 64, 0);

		if (got == -ENOBUFS) {
			fprintf(stderr, "overrun: events lost\n");
			cn_proc_tracker_lost(t);
			continue;
		}
		if (got < 0)
			break;
		for (int k = 0; k < got; k++) {
			if (ev[k].lost_before)
				fprintf(stderr, "%u events lost before this one\n",
					ev[k].lost_before);
			print_event(&ev[k], cn_proc_tracker_event(t, &ev[k]));
		}
	}
	fflush(stdout);
}

int main(void)
{
	struct cn_open_opts o = { .sz = sizeof(o), .flags = CN_OPEN_NONBLOCK, .rcvbuf = 4 << 20 };
	struct epoll_event e, ready[2];
	struct cn_proc_tracker *t = cn_proc_tracker_new(NULL);
	struct cn_proc_stats st;
	struct cn_sock *s;
	sigset_t sigs;
	int ep, sfd, running = 1;

	s = cn_open(NETLINK_CONNECTOR, &o);
	if (!s || !t || cn_proc_listen(s, 0, 1000) < 0 || cn_proc_tracker_sync(t, NULL, NULL) < 0) {
		fprintf(stderr, "proc_monitor_epoll: %s\n", strerror(errno));
		return 1;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	e = (struct epoll_event){ .events = EPOLLIN, .data.fd = cn_fd(s) };
	epoll_ctl(ep, EPOLL_CTL_ADD, cn_fd(s), &e);
	e = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);

	while (running) {
		/* After loss, the tracker's rescan of /proc once losses stop. */
		int due = cn_proc_tracker_sync_timeout(t), n;

		if (due == 0) {
			cn_proc_tracker_sync(t, NULL, NULL);
			due = -1;
		}
		n = epoll_wait(ep, ready, 2, due);
		for (int i = 0; i < n; i++) {
			if (ready[i].data.fd == sfd) {
				running = 0;
				continue;
			}
			drain(s, t);
		}
	}
	cn_proc_stats(s, &st);
	fprintf(stderr, "%llu events, %llu lost, %llu overruns\n", (unsigned long long)st.events,
		(unsigned long long)st.lost, (unsigned long long)st.overruns);
	cn_proc_tracker_free(t);
	cn_close(s);
	close(ep);
	close(sfd);
	return 0;
}
