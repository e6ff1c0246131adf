// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proc_listeners.c - the kernel's proc connector as several programs share
 * it (guest tests, run by cnbus_vmtest; they need no kmod). On kernels
 * before 6.6 (Debian's 6.1) one listener count serves the whole machine
 * (proc_event_num_listeners in drivers/connector/cn_proc.c): each LISTEN
 * adds one, each IGNORE takes one, and at 0 no proc event is sent to
 * anyone. 6.6 and later count each socket once.
 *
 *  proc_ignore_unlistened  sockets that never listened call cn_proc_ignore
 *                          (a program's cleanup): another program's
 *                          listener keeps receiving events.
 *  proc_listener_exit      a listener process exits without IGNORE, and
 *                          another one after cn_proc_ignore: the remaining
 *                          listener keeps receiving events.
 *  proc_unprivileged       what this kernel lets uid 65534 do (a raw probe,
 *                          printed), and libcn and cnctl following it:
 *                          events, or EPERM and cnctl's exit status 3
 *                          naming CAP_NET_ADMIN; CAP_NET_ADMIN alone listens.
 *  proc_events             a listener sees a child's fork and its exit,
 *                          with its exit code.
 *
 * Nothing else in the guest listens to proc events while these run, so on
 * 6.1 the count is exactly what the suite left: the first run starts at 0,
 * the second at 2 (proc_listener_exit and proc_events each leave one, a
 * listener that exits without IGNORE). proc_ignore_unlistened's
 * IGNORE_SOCKS sockets would take more than that from the count if the
 * library sent the IGNOREs they owe nobody.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <libcn.h>

#include "vmtest.h"

#define NOBODY	     65534
#define EVENT_MS     5000
#define IGNORE_SOCKS 4 /* more than the counts the suite leaves on 6.1 */

/* Fork a child that exits at once and reap it; its pid, or -1. */
static pid_t short_child(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return -1;
	return pid;
}

/* Wait for the exit event of pid on s: 0, or -ETIMEDOUT / -errno. */
static int exit_seen(struct cn_sock *s, pid_t pid)
{
	struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
	double end = now_s() + EVENT_MS / 1000.0;
	struct cn_proc_event ev;
	int r;

	for (;;) {
		r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT);
		if (r == 0 && ev.what == CN_PROC_EXIT && ev.pid == pid)
			return 0;
		if (r == 0 || r == -ENOBUFS)
			continue;
		if (r != -EAGAIN)
			return r;
		if (now_s() >= end)
			return -ETIMEDOUT;
		poll(&p, 1, 100);
	}
}

/* A fresh listener that has seen an event. */
static struct cn_sock *listener(void)
{
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, NULL);

	if (!s)
		return NULL;
	if (cn_proc_listen(s, 0, EVENT_MS) < 0 || exit_seen(s, short_child()) < 0) {
		cn_close(s);
		return NULL;
	}
	return s;
}

int t_proc_ignore_unlistened(void)
{
	struct cn_sock *b = listener(), *a;
	int rc = 0, i;

	CHECK(b, "a listener that sees events: %s", strerror(errno));
	for (i = 0; i < IGNORE_SOCKS; i++) {
		a = cn_open(NETLINK_CONNECTOR, NULL);
		CHECK(a, "cn_open: %s", strerror(errno));
		CHECK(cn_proc_ignore(a) == 0, "cn_proc_ignore on a socket that never listened");
		cn_close(a);
	}
	CHECK(exit_seen(b, short_child()) == 0,
	      "no more events after %d sockets that never listened called cn_proc_ignore",
	      IGNORE_SOCKS);
out:
	if (b) {
		cn_proc_ignore(b); /* its own LISTEN: the count as it was */
		cn_close(b);
	}
	return rc;
}

/* Child: listen, tell the parent, then exit, after cn_proc_ignore if asked. */
static int listen_and_exit(int ready, int ignore)
{
	struct cn_sock *s = listener();

	if (!s)
		return 1;
	if (ignore && cn_proc_ignore(s) < 0)
		return 2;
	if (write(ready, "x", 1) != 1)
		return 3;
	return 0; /* exits with the socket open: no IGNORE */
}

int t_proc_listener_exit(void)
{
	struct cn_sock *b = listener();
	int rc = 0, ignore, status, fds[2] = { -1, -1 };
	pid_t pid;
	char c;

	CHECK(b, "a listener that sees events: %s", strerror(errno));
	for (ignore = 0; ignore <= 1; ignore++) {
		CHECK(pipe(fds) == 0, "pipe");
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0)
			_exit(listen_and_exit(fds[1], ignore));
		close(fds[1]);
		CHECK(read(fds[0], &c, 1) == 1, "the %s listener did not listen",
		      ignore ? "second" : "first");
		close(fds[0]);
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			  WEXITSTATUS(status) == 0,
		      "listener status %#x", status);
		CHECK(exit_seen(b, short_child()) == 0, "no more events after a listener exited %s",
		      ignore ? "after cn_proc_ignore" : "without IGNORE");
	}
out:
	if (b) {
		cn_proc_ignore(b);
		cn_close(b);
	}
	return rc;
}

/* Become uid/gid 65534 keeping only caps (1 << CAP_*) permitted and
 * effective (as tests/host/host_util.c). 0 or -1. */
static int become_nobody_with(uint64_t caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (caps && prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0)
		return -1;
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = (uint32_t)caps;
	d[1].permitted = d[1].effective = (uint32_t)(caps >> 32);
	if (caps && syscall(SYS_capset, &h, d) < 0)
		return -1;
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0 ||
	    (d[0].effective | (uint64_t)d[1].effective << 32) != caps)
		return -1;
	return 0;
}

/* Child of the probe: 0 the join is allowed, 1 refused with EPERM (the
 * option and bind() with the group must agree), else 2. */
static int join_probe(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1u << (CN_IDX_PROC - 1) };
	int group = CN_IDX_PROC, fd1, fd2, r1, e1, r2, e2;

	if (become_nobody_with(0) < 0)
		return 2;
	fd1 = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	fd2 = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	if (fd1 < 0 || fd2 < 0)
		return 2;
	r1 = setsockopt(fd1, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group));
	e1 = errno;
	r2 = bind(fd2, (struct sockaddr *)&a, sizeof(a));
	e2 = errno;
	if (!r1 && !r2)
		return 0;
	if (r1 && r2 && e1 == EPERM && e2 == EPERM)
		return 1;
	return 2;
}

/* Child: listen as nobody with caps; 0 when the outcome is the expected. */
static int listen_as_nobody(uint64_t caps, int may)
{
	struct cn_sock *s;
	int r;

	if (become_nobody_with(caps) < 0)
		return 10;
	s = cn_open(NETLINK_CONNECTOR, NULL);
	if (!s)
		return 11;
	errno = 0;
	r = cn_proc_listen(s, 0, EVENT_MS);
	if (!may)
		return r == -EPERM && errno == EPERM ? 0 : 12;
	if (r < 0)
		return 13;
	if (exit_seen(s, short_child()) < 0)
		return 14;
	return cn_proc_ignore(s) < 0 ? 15 : 0; /* the count as it was */
}

/* Child: exec /bin/cnctl proc as nobody, stderr to fd err. */
static void cnctl_as_nobody(int err)
{
	if (become_nobody_with(0) < 0 || dup2(err, 2) < 0)
		_exit(120);
	execl("/bin/cnctl", "cnctl", "proc", "--timeout", "1", "--color", "never", (char *)NULL);
	_exit(121);
}

static int run_child(int (*fn)(uint64_t, int), uint64_t caps, int may)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(caps, may));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int t_proc_unprivileged(void)
{
	struct utsname u;
	int rc = 0, may, status, r, fds[2];
	char msg[1024];
	size_t len;
	ssize_t n;
	pid_t pid;

	uname(&u);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(join_probe());
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) <= 1,
	      "join probe status %#x", status);
	may = WEXITSTATUS(status) == 0;
	info("kernel %s: uid 65534 without capabilities joining CN_IDX_PROC: %s", u.release,
	     may ? "allowed" : "refused (EPERM)");
	r = run_child(listen_as_nobody, 0, may);
	CHECK(r == 0, "cn_proc_listen as nobody: child %d (want %s)", r, may ? "events" : "-EPERM");
	r = run_child(listen_as_nobody, 1ull << CAP_NET_ADMIN, 1);
	CHECK(r == 0, "cn_proc_listen as nobody with CAP_NET_ADMIN: child %d", r);

	if (access("/bin/cnctl", X_OK) != 0) {
		info("no /bin/cnctl: cnctl proc as nobody not run");
		goto out;
	}
	CHECK(pipe(fds) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		cnctl_as_nobody(fds[1]);
	close(fds[1]);
	len = 0;
	while (len < sizeof(msg) - 1 && (n = read(fds[0], msg + len, sizeof(msg) - 1 - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	msg[len] = 0;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "cnctl status %#x", status);
	info("cnctl proc as nobody: exit %d: %.*s", WEXITSTATUS(status), (int)strcspn(msg, "\n"),
	     msg);
	if (may)
		CHECK(WEXITSTATUS(status) == 0, "cnctl proc --timeout 1 exit %d",
		      WEXITSTATUS(status));
	else
		CHECK(WEXITSTATUS(status) == 3 && strstr(msg, "CAP_NET_ADMIN"),
		      "cnctl proc refused: exit %d, message without CAP_NET_ADMIN",
		      WEXITSTATUS(status));
out:
	return rc;
}

int t_proc_events(void)
{
	struct cn_proc_event ev;
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, NULL);
	struct pollfd p;
	int rc = 0, r, fork_seen = 0, exit_seen = 0, status;
	double end;
	pid_t pid;

	CHECK(s, "cn_open(NETLINK_CONNECTOR): %s", strerror(errno));
	r = cn_proc_listen(s, 0, 5000);
	CHECK(r >= 0, "cn_proc_listen %d", r);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid)
		_exit(3);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	p.fd = cn_fd(s);
	p.events = POLLIN;
	end = now_s() + 10;
	while (!exit_seen && now_s() < end) {
		r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT);
		if (r == -EAGAIN) {
			poll(&p, 1, 200);
			continue;
		}
		CHECK(r == 0, "cn_proc_recv %d", r);
		if (ev.what == CN_PROC_FORK && ev.pid == pid)
			fork_seen = 1;
		if (ev.what == CN_PROC_EXIT && ev.pid == pid) {
			exit_seen = 1;
			CHECK(ev.exit_code == (3u << 8), "exit code %#x", ev.exit_code);
		}
	}
	CHECK(fork_seen && exit_seen, "fork %d exit %d", fork_seen, exit_seen);
out:
	cn_close(s);
	return rc;
}
