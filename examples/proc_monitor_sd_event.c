/*
 * proc_monitor_sd_event.c - process exits in a systemd sd-event loop: the
 * socket's fd is an I/O source; each wake-up drains the socket. An exit is
 * told as the parent's wait(2) tells it (a status, or the signal and a core
 * dump); a thread's end is not its process's exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>

#include <libcn.h>

static int on_readable(sd_event_source *src, int fd, uint32_t revents, void *arg)
{
	struct cn_sock *s = arg;
	struct cn_proc_event ev;
	int r;

	(void)src;
	(void)fd;
	(void)revents;
	while ((r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT)) == 0 || r == -ENOBUFS) {
		if (r == -ENOBUFS) {
			fprintf(stderr, "overrun: events lost\n");
			continue;
		}
		if (ev.lost_before)
			fprintf(stderr, "%u events lost before this one\n", ev.lost_before);
		if (ev.pid != ev.tgid)
			continue; /* one thread ended, not its process */
		if (WIFSIGNALED(ev.exit_code))
			printf("pid %d killed by signal %d%s\n", ev.tgid, WTERMSIG(ev.exit_code),
			       WCOREDUMP(ev.exit_code) ? " (core dumped)" : "");
		else
			printf("pid %d exited with status %d\n", ev.tgid,
			       WEXITSTATUS(ev.exit_code));
	}
	fflush(stdout);
	return r == -EAGAIN ? 0 : r;
}

int main(void)
{
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, NULL);
	sd_event *loop = NULL;
	sigset_t sigs;

	if (!s || cn_proc_listen(s, CN_PROC_EXIT, 1000) < 0) {
		fprintf(stderr, "proc_monitor_sd_event: %s\n", strerror(errno));
		return 1;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (sd_event_default(&loop) < 0 ||
	    sd_event_add_io(loop, NULL, cn_fd(s), EPOLLIN, on_readable, s) < 0 ||
	    sd_event_add_signal(loop, NULL, SIGINT, NULL, NULL) < 0 ||
	    sd_event_add_signal(loop, NULL, SIGTERM, NULL, NULL) < 0)
		return 1;
	sd_event_loop(loop);
	sd_event_unref(loop);
	cn_close(s);
	return 0;
}
