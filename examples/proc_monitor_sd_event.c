/*
 * proc_monitor_sd_event.c - process exits in a systemd sd-event loop: the
 * socket's fd is an I/O source; each wake-up drains the socket. An exit is
 * told once, when the process is gone (its last thread, not always its main
 * one, has exited), as the parent's wait(2) tells it (a status, or the
 * signal and a core dump): the tracker follows forks, execs and exits to
 * tell (cn_proc_tracker(3)).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-event.h>

#include <libcn.h>

struct monitor {
	struct cn_sock *s;
	struct cn_proc_tracker *t;
};

static int on_readable(sd_event_source *src, int fd, uint32_t revents, void *arg)
{
	struct monitor *m = arg;
	const struct cn_proc_entry *e;
	struct cn_proc_event ev;
	char status[48];
	int r;

	(void)src;
	(void)fd;
	(void)revents;
	while ((r = cn_proc_recv(m->s, &ev, CN_RECV_DONTWAIT)) == 0 || r == -ENOBUFS) {
		if (r == -ENOBUFS) {
			fprintf(stderr, "overrun: events lost\n");
			cn_proc_tracker_lost(m->t);
			continue;
		}
		if (ev.lost_before)
			fprintf(stderr, "%u events lost before this one\n", ev.lost_before);
		e = cn_proc_tracker_event(m->t, &ev);
		if (!e || !(e->flags & CN_PROC_ENTRY_EXITED))
			continue; /* not an exit, or a thread's only */
		cn_proc_status_text(e->status, status, sizeof(status));
		printf("pid %d %s\n", e->pid, status);
	}
	/* Drained: the table right again after loss, once the losses stop
	 * (a loss that is not over yet waits for the next wake-up). */
	if (cn_proc_tracker_sync_timeout(m->t) == 0)
		cn_proc_tracker_sync(m->t, NULL, NULL);
	fflush(stdout);
	return r == -EAGAIN ? 0 : r;
}

int main(void)
{
	struct monitor m = { cn_open(NETLINK_CONNECTOR, NULL), cn_proc_tracker_new(NULL) };
	sd_event *loop = NULL;
	sigset_t sigs;

	if (!m.s || !m.t ||
	    cn_proc_listen(m.s, CN_PROC_FORK | CN_PROC_EXEC | CN_PROC_EXIT, 1000) < 0 ||
	    cn_proc_tracker_sync(m.t, NULL, NULL) < 0) {
		fprintf(stderr, "proc_monitor_sd_event: %s\n", strerror(errno));
		return 1;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (sd_event_default(&loop) < 0 ||
	    sd_event_add_io(loop, NULL, cn_fd(m.s), EPOLLIN, on_readable, &m) < 0 ||
	    sd_event_add_signal(loop, NULL, SIGINT, NULL, NULL) < 0 ||
	    sd_event_add_signal(loop, NULL, SIGTERM, NULL, NULL) < 0)
		return 1;
	sd_event_loop(loop);
	sd_event_unref(loop);
	cn_proc_tracker_free(m.t);
	cn_close(m.s);
	return 0;
}
