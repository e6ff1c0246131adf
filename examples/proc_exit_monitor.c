/* proc_exit_monitor.c - print every process exit once, when the process is
 * gone, as its parent's wait(2) tells it (an exit status, or the signal that
 * killed it and whether it dumped core), and every loss (the README's
 * example). A process ends with its last thread, which need not be its main
 * one, and an exec by any thread is the process's: the tracker follows
 * forks, execs and exits to tell (cn_proc_tracker(3)). */
#include <errno.h>
#include <libcn.h>
#include <stdio.h>

int main(void)
{
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, NULL);
	struct cn_proc_tracker *t = cn_proc_tracker_new(NULL);
	const struct cn_proc_entry *e;
	struct cn_proc_event ev;
	char status[48];
	int r;

	if (!s || !t || cn_proc_listen(s, CN_PROC_FORK | CN_PROC_EXEC | CN_PROC_EXIT, 1000) < 0 ||
	    cn_proc_tracker_sync(t, NULL, NULL) < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it comes, into a pipe too */
	while ((r = cn_proc_recv(s, &ev, 0)) == 0 || r == -ENOBUFS) {
		if (r == -ENOBUFS)
			cn_proc_tracker_lost(t);
		if (r == -ENOBUFS || ev.lost_before)
			fprintf(stderr, "events lost: exits among them are not printed\n");
		if (cn_proc_tracker_sync_timeout(t) == 0)
			cn_proc_tracker_sync(t, NULL, NULL); /* the table right again */
		if (r == -ENOBUFS || !(e = cn_proc_tracker_event(t, &ev)) ||
		    !(e->flags & CN_PROC_ENTRY_EXITED))
			continue; /* not an exit, or a thread's only */
		cn_proc_status_text(e->status, status, sizeof(status));
		printf("pid %d %s\n", e->pid, status); /* "exited with status 3" */
	}
	cn_proc_tracker_free(t);
	cn_close(s);
	return 0;
}
