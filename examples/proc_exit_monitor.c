/* proc_exit_monitor.c - print every process exit, and every loss (the README's example). */
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
	while ((r = cn_proc_recv(s, &ev, 0)) == 0 || r == -ENOBUFS) {
		if (r == -ENOBUFS) {
			fprintf(stderr, "overrun: events lost\n");
			continue;
		}
		if (ev.lost_before)
			fprintf(stderr, "%u events lost on cpu %u\n", ev.lost_before, ev.cpu);
		printf("pid %d exited with status %d\n", ev.tgid, WEXITSTATUS(ev.exit_code));
	}
	cn_close(s);
	return 0;
}
