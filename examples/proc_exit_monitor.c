/* proc_exit_monitor.c - print every process exit as its parent's wait(2)
 * tells it (an exit status, or the signal that killed it and whether it
 * dumped core), and every loss (the README's example). */
#include <errno.h>
#include <libcn.h>
#include <stdio.h>
#include <sys/wait.h>

int main(void)
{
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, NULL);
	struct cn_proc_event ev;
	int r;

	if (!s || cn_proc_listen(s, CN_PROC_EXIT, 1000) < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it comes, into a pipe too */
	while ((r = cn_proc_recv(s, &ev, 0)) == 0 || r == -ENOBUFS) {
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
	cn_close(s);
	return 0;
}
