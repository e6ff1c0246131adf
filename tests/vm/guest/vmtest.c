// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vmtest.c - what the guest tests share (vmtest.h): output, time, loading
 * and unloading modules, libcn and raw netlink sockets on kmod's unit, echo
 * round trips, the CPU count, becoming nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>
#include <libcn/kmod.h>

#include "kstat.h"
#include "vmtest.h"

__attribute__((format(printf, 1, 2))) void info(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Load the module file at path; 0 or -errno. */
static int ko_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = syscall(SYS_finit_module, fd, params, 0);
	r = r ? -errno : 0;
	close(fd);
	return r;
}

int mod_load(const char *params)
{
	return ko_load(test_ko, params);
}

int mod_load_beside(const char *name, const char *params)
{
	const char *slash = strrchr(test_ko, '/');
	char path[512];

	snprintf(path, sizeof(path), "%.*s%s.ko", slash ? (int)(slash - test_ko + 1) : 0, test_ko,
		 name);
	return ko_load(path, params);
}

int mod_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

int module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

struct cn_sock *open_sock(int flags, int rcvbuf)
{
	struct cn_open_opts o = { .sz = sizeof(o), .flags = (uint32_t)flags, .rcvbuf = rcvbuf };

	return cn_open(unit, &o);
}

/*
 * Receive the next message with id {idx, val} from the kernel, skipping
 * others. Waits at most timeout_ms. Returns 0, -ETIMEDOUT or a cn_recv error.
 */
int recv_id(struct cn_sock *s, uint32_t idx, uint32_t val, int timeout_ms, struct cn_message *out)
{
	double end = now_s() + timeout_ms / 1000.0;
	struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
	int r;

	for (;;) {
		r = cn_recv(s, out, CN_RECV_DONTWAIT);
		if (r == 0) {
			if (out->msg->id.idx == idx && out->msg->id.val == val && out->port == 0)
				return 0;
			continue;
		}
		if (r != -EAGAIN)
			return r;
		int left = (int)((end - now_s()) * 1000);

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left) == 0)
			return -ETIMEDOUT;
	}
}

int echo_round_trips(struct cn_sock *s, uint32_t val, unsigned int n)
{
	unsigned char buf[CN_MSG_SIZE(64)];
	char text[64];
	struct cn_message rep;
	struct cn_msg *m;
	uint32_t last_seq = 0;
	unsigned int i;
	int rc = 0, r, len;

	for (i = 0; i < n; i++) {
		len = snprintf(text, sizeof(text), "echo %u via %#x", i, val) + 1;
		m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, val, text, (size_t)len);
		CHECK(m, "cn_msg_init");
		r = cn_request(s, m, 0, CN_MATCH_STRICT, 5000, &rep);
		CHECK(r == 0, "request %u: %d", i, r);
		CHECK(rep.port == 0, "reply from port %u", rep.port);
		CHECK(rep.msg->seq == m->seq && rep.msg->ack == m->ack + 1,
		      "genealogy: req seq %u ack %u, reply seq %u ack %u", m->seq, m->ack,
		      rep.msg->seq, rep.msg->ack);
		CHECK(rep.msg->id.idx == CNBUS_TEST_IDX && rep.msg->id.val == val, "reply id");
		CHECK(rep.msg->len == (uint16_t)len && !memcmp(rep.msg->data, text, (size_t)len),
		      "payload differs");
		if (i)
			CHECK(m->seq == last_seq + 1, "seq %u after %u", m->seq, last_seq);
		last_seq = m->seq;
	}
out:
	return rc;
}

int raw_open(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, unit);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		close(fd);
		return -1;
	}
	return fd;
}

int raw_send(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl d = { .nl_family = AF_NETLINK };

	return sendto(fd, buf, len, 0, (struct sockaddr *)&d, sizeof(d)) < 0 ? -errno : 0;
}

/* Wait for the NLMSG_ERROR answering seq; returns its error (0 = ack). */
int raw_wait_ack(int fd, uint32_t seq)
{
	char buf[8192];
	ssize_t n;

	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno == -EAGAIN ? -ETIMEDOUT : -errno;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_seq == seq)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	}
}

/* Build nlmsghdr + cn_msg(id, len field) + plen payload bytes. */
size_t raw_build(void *buf, uint32_t idx, uint32_t val, uint16_t len_field, size_t plen,
		 uint16_t nlflags, uint32_t seq)
{
	struct nlmsghdr *h = buf;
	struct cn_msg *m = NLMSG_DATA(h);

	memset(buf, 0, NLMSG_SPACE(sizeof(*m) + plen));
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*m) + plen);
	h->nlmsg_type = NLMSG_DONE;
	h->nlmsg_flags = nlflags;
	h->nlmsg_seq = seq;
	m->id.idx = idx;
	m->id.val = val;
	m->seq = seq;
	m->len = len_field;
	return h->nlmsg_len;
}

/*
 * The highest possible CPU number + 1 (/sys/devices/system/cpu/possible,
 * "0-239" or "0,2-5"): CPU numbers in messages are below it.
 */
int possible_cpu_ids(void)
{
	char buf[4096], *p;
	unsigned long max = 0;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");

	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return (int)sysconf(_SC_NPROCESSORS_CONF);
	}
	fclose(f);
	for (p = buf; *p;) {
		unsigned long v = strtoul(p, &p, 10);

		if (v > max)
			max = v;
		if (*p != '-' && *p != ',')
			break;
		p++;
	}
	return (int)max + 1;
}

/* Reload cnbus_test with the given parameters. */
int reload_test_module(const char *params)
{
	int r;

	if (module_loaded("cnbus_test")) {
		r = mod_unload("cnbus_test");
		if (r)
			return r;
	}
	return mod_load(params);
}

/* Drop root for nobody (uid and gid 65534, no supplementary group and so
 * no capability): what an unprivileged user may do. 0, or -1 and errno. */
int become_nobody(void)
{
	return setgroups(0, NULL) || setgid(NOBODY_ID) || setuid(NOBODY_ID) ? -1 : 0;
}

/* fork(), and in the child become nobody, or end it with status
 * FORK_NOBODY_FAILED: the child's checks start as an unprivileged user. */
pid_t fork_as_nobody(void)
{
	pid_t pid = fork();

	if (pid == 0 && become_nobody())
		_exit(FORK_NOBODY_FAILED);
	return pid;
}
