/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_groups.c - cn_message.group from NETLINK_PKTINFO against the running
 * kernel. Its NETLINK_CONNECTOR unit has 32 groups, so the defect itself
 * (a group above 32 reported as 0) is shown in the VM against kmod
 * (tests/vm); here the cmsg path is checked against the real kernel's
 * control data: a multicast to group 5 and a unicast from a raw netlink
 * socket (root may send multicast), and proc events (group 1), on a socket
 * with CN_OPEN_PKTINFO.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <cmocka.h>

#include "host_util.h"

#define WAIT_MS	 5000
#define TEST_IDX 0x7ff0u /* no kernel callback has it: the kernel copy is dropped */

static struct cn_sock *open_flags(uint32_t flags)
{
	struct cn_open_opts o = { .sz = sizeof(o), .flags = flags };
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, &o);

	assert_non_null(s);
	return s;
}

/* Send one connector message from a raw socket to port `port` and the
 * groups in bit mask `groups`. */
static void raw_send(int fd, uint32_t port, uint32_t groups, uint32_t seq)
{
	/* nlmsghdr + cn_msg + 4 bytes, built in place (cn_msg ends in a
	 * flexible array member, so it cannot sit inside a struct). */
	uint32_t pkt[(NLMSG_HDRLEN + sizeof(struct cn_msg) + 4) / 4] = { 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)pkt;
	struct cn_msg *m = NLMSG_DATA(nlh);
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port, .nl_groups = groups };

	nlh->nlmsg_len = sizeof(pkt);
	nlh->nlmsg_type = NLMSG_DONE;
	m->id.idx = TEST_IDX;
	m->id.val = 1;
	m->seq = seq;
	m->len = 4;
	memcpy(m->data, "grp", 4);
	assert_int_equal(sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)sizeof(pkt));
}

static void recv_seq(struct cn_sock *s, uint32_t seq, struct cn_message *m)
{
	for (;;) {
		int r = cn_recv(s, m, 0);

		assert_int_equal(r, 0);
		if (m->msg->id.idx == TEST_IDX && m->msg->seq == seq)
			return;
	}
}

static void test_pktinfo_groups_from_kernel_cmsg(void **state)
{
	struct cn_sock *s = open_flags(CN_OPEN_ANY_SENDER | CN_OPEN_PKTINFO);
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof(me);
	struct cn_message m;
	int fd;

	(void)state;
	assert_int_equal(cn_join(s, 5), 0);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);

	raw_send(fd, 0, 1u << 4, 1); /* multicast to group 5 (and to the kernel) */
	recv_seq(s, 1, &m);
	assert_int_equal(m.group, 5);
	assert_int_equal(m.port, me.nl_pid);
	raw_send(fd, cn_port(s), 0, 2); /* unicast */
	recv_seq(s, 2, &m);
	assert_int_equal(m.group, 0);
	/* the same through cn_recv_batch (recvmmsg, a control buffer per slot) */
	raw_send(fd, 0, 1u << 4, 3);
	raw_send(fd, cn_port(s), 0, 4);
	{
		struct cn_message b[4];
		int n = 0, got3 = 0, got4 = 0;

		while (!(got3 && got4)) {
			n = cn_recv_batch(s, b, 4, 0);
			assert_true(n > 0);
			for (int i = 0; i < n; i++) {
				if (b[i].msg->id.idx != TEST_IDX)
					continue;
				if (b[i].msg->seq == 3) {
					assert_int_equal(b[i].group, 5);
					got3 = 1;
				} else if (b[i].msg->seq == 4) {
					assert_int_equal(b[i].group, 0);
					got4 = 1;
				}
			}
		}
	}
	close(fd);
	cn_close(s);
}

/* This kernel's connector has 32 groups: a group above them is refused
 * (kmod's unit has more; see tests/vm). */
static void test_connector_unit_has_32_groups(void **state)
{
	struct cn_sock *s = open_flags(0);

	(void)state;
	assert_int_equal(cn_join(s, 32), 0);
	assert_int_equal(cn_join(s, 33), -EINVAL);
	cn_close(s);
}

static int exit_zero(void *arg)
{
	(void)arg;
	return 0;
}

/* Proc events on a socket reading with control data: cn_proc_recv (its
 * fast path reads with recvmsg then) and cn_recv's group 1. */
static void test_proc_events_with_pktinfo(void **state)
{
	struct cn_sock *s = open_flags(CN_OPEN_PKTINFO);
	struct cn_proc_event ev;
	struct cn_message m;
	pid_t child;

	(void)state;
	assert_int_equal(cn_set_rcvbuf(s, 1 << 20) > 0, 1);
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	assert_int_equal(host_wait_event(s, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	child = host_spawn(exit_zero, NULL);
	host_reap(child);
	for (;;) {
		assert_int_equal(cn_recv(s, &m, 0), 0);
		if (m.msg->id.idx != CN_IDX_PROC)
			continue;
		assert_int_equal(m.group, CN_IDX_PROC);
		assert_int_equal(cn_proc_decode(m.msg, &ev), 0);
		if (ev.what == CN_PROC_EXIT && ev.pid == child)
			break;
	}
	cn_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pktinfo_groups_from_kernel_cmsg),
		cmocka_unit_test(test_connector_unit_has_32_groups),
		cmocka_unit_test(test_proc_events_with_pktinfo),
	};

	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
