// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * callbacks.c - kmod's registered callbacks through libcn: kmod's own
 * report, cnbus_test's echo (one process and several at once), a module
 * of another tree using kmod's API (examples/kernel/cn_hello.ko), an id
 * without a callback refused, acked sends, several messages in one
 * datagram.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int t_kmod_info(void)
{
	struct cn_sock *s = NULL;
	struct kstat ks;
	int rc = 0, r;
	unsigned int i, found = 0;

	r = kstat_get_lists(&ks);
	CHECK(r == 0, "kstat_get %d", r);
	info("cnbus %s unit %u groups %u max_notify %u cbus_qlen %u cpus %u callbacks %u",
	     ks.version, ks.unit, ks.groups, ks.max_notify, ks.cbus_qlen, ks.ncpus, ks.ncbs);
	CHECK(ks.unit == (uint32_t)unit, "unit %u", ks.unit);
	CHECK(ks.version[0], "no version");
	CHECK(ks.ncpus >= (unsigned int)ncpus, "cpus %u < %d", ks.ncpus, ncpus);
	CHECK(ks.ncpus == ks.possible_cpus, "cpus %u listed, %u possible", ks.ncpus,
	      ks.possible_cpus);
	for (i = 0; i < ks.ncbs; i++) {
		info("callback %s %u.%u", ks.cb[i].name, ks.cb[i].idx, ks.cb[i].val);
		if (ks.cb[i].idx == CNBUS_TEST_IDX && ks.cb[i].val >= CNBUS_TEST_ECHO_A &&
		    ks.cb[i].val <= CNBUS_TEST_MCAST)
			found++;
	}
	CHECK(found == 4, "found %u of the 4 test callbacks", found);
	/* A socket on the unit kmod reports, found by libcn itself. */
	s = cn_bus_open(NULL);
	CHECK(s, "cn_bus_open: %s", strerror(errno));
	CHECK(cn_unit(s) == unit, "cn_bus_open unit %d", cn_unit(s));
	r = echo_round_trips(s, CNBUS_TEST_ECHO_B, 10);
	CHECK(r == 0, "echo over cn_bus_open");
out:
	kstat_free(&ks);
	cn_close(s);
	return rc;
}

int t_echo(void)
{
	struct cn_sock *s = open_sock(0, 0);
	int rc = 0;

	CHECK(s, "cn_open: %s", strerror(errno));
	rc = echo_round_trips(s, CNBUS_TEST_ECHO_A, echo_n);
	if (!rc)
		rc = echo_round_trips(s, CNBUS_TEST_ECHO_B, echo_n / 10);
	if (!rc)
		info("%u + %u round trips", echo_n, echo_n / 10);
out:
	cn_close(s);
	return rc;
}

/* examples/kernel/cn_hello.ko (kmod's API from another module), next to
 * cnbus_test.ko: loaded, asked through libcn, unloaded. */
#define HELLO_IDX 0x124
#define HELLO_VAL 0x1

int t_example_module(void)
{
	char path[512], text[64];
	const char *slash = strrchr(test_ko, '/');
	unsigned char buf[CN_MSG_SIZE(64)];
	struct cn_sock *s = NULL;
	struct cn_message rep;
	struct kstat k = { 0 };
	struct cn_msg *m;
	unsigned int i, found = 0;
	int rc = 0, r, fd, loaded = 0;

	snprintf(path, sizeof(path), "%.*scn_hello.ko", slash ? (int)(slash - test_ko + 1) : 0,
		 test_ko);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	r = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	CHECK(r == 0, "load %s: %d", path, r);
	loaded = 1;
	CHECK(kstat_get_lists(&k) == 0, "kstat");
	for (i = 0; i < k.ncbs; i++)
		if (k.cb[i].idx == HELLO_IDX && k.cb[i].val == HELLO_VAL &&
		    !strcmp(k.cb[i].name, "cn_hello"))
			found++;
	kstat_free(&k);
	CHECK(found == 1, "cn_hello callback listed %u times", found);
	s = cn_bus_open(NULL);
	CHECK(s, "cn_bus_open: %s", strerror(errno));
	for (i = 0; i < 100; i++) {
		int len = snprintf(text, sizeof(text), "world %u", i);

		/* Every other request without its NUL: the answer is text anyway. */
		m = cn_msg_init(buf, sizeof(buf), HELLO_IDX, HELLO_VAL, text,
				(size_t)len + (i & 1));
		CHECK(m, "cn_msg_init");
		r = cn_request(s, m, 0, CN_MATCH_STRICT, 5000, &rep);
		CHECK(r == 0, "request %u: %d", i, r);
		CHECK(rep.msg->seq == m->seq && rep.msg->ack == m->ack + 1,
		      "genealogy: seq %u ack %u -> seq %u ack %u", m->seq, m->ack, rep.msg->seq,
		      rep.msg->ack);
		CHECK(rep.msg->len == (uint16_t)(len + 8) && rep.msg->data[len + 7] == '\0' &&
			  !memcmp(rep.msg->data, "hello, ", 7) &&
			  !memcmp(rep.msg->data + 7, text, (size_t)len),
		      "reply %u: len %u '%.*s'", i, rep.msg->len, (int)rep.msg->len,
		      (const char *)rep.msg->data);
		if (!i)
			info("%s -> %s", text, (const char *)rep.msg->data);
	}
	cn_close(s);
	s = NULL;
	r = mod_unload("cn_hello");
	CHECK(r == 0, "unload cn_hello: %d", r);
	loaded = 0;
	CHECK(kstat_get_lists(&k) == 0, "kstat");
	for (i = 0; i < k.ncbs; i++)
		CHECK(k.cb[i].idx != HELLO_IDX, "callback left after unload");
out:
	kstat_free(&k);
	cn_close(s);
	if (loaded)
		mod_unload("cn_hello");
	return rc;
}

int t_unknown_id_refused(void)
{
	struct cn_sock *s = open_sock(0, 0);
	unsigned char buf[CN_MSG_SIZE(8)];
	char raw[256];
	struct kstat k0, k1;
	struct cn_msg *m;
	int rc = 0, r, fd = raw_open();
	size_t len;

	CHECK(s && fd >= 0, "open");
	CHECK(kstat_get(&k0) == 0, "kstat");
	m = cn_msg_init(buf, sizeof(buf), 0x999, 0x1, "x", 2);
	r = cn_send(s, m, 0);
	CHECK(r == 0, "cn_send %d", r);
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.refused[CNBUS_REFUSED_A_NO_CALLBACK] ==
		  k0.refused[CNBUS_REFUSED_A_NO_CALLBACK] + 1,
	      "no_callback %" PRIu64 " -> %" PRIu64, k0.refused[CNBUS_REFUSED_A_NO_CALLBACK],
	      k1.refused[CNBUS_REFUSED_A_NO_CALLBACK]);
	/* With NLM_F_ACK the refusal comes back as an NLMSG_ERROR. */
	len = raw_build(raw, 0x999, 0x2, 0, 0, NLM_F_REQUEST | NLM_F_ACK, 77);
	CHECK(raw_send(fd, raw, len) == 0, "raw send");
	r = raw_wait_ack(fd, 77);
	CHECK(r == -ENODEV, "ack error %d, want -ENODEV", r);
	len =
	    raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 0, 0, NLM_F_REQUEST | NLM_F_ACK, 78);
	CHECK(raw_send(fd, raw, len) == 0, "raw send");
	r = raw_wait_ack(fd, 78);
	CHECK(r == 0, "ack of a good message %d", r);
out:
	if (fd >= 0)
		close(fd);
	cn_close(s);
	return rc;
}

/*
 * libcn's acked sends against kmod (CN_SEND_ACK): each answer reaches its
 * caller, matched to its own request while other traffic arrives; a
 * request to an id without callback ends cn_request at once with -ENODEV.
 */
int t_send_ack(void)
{
	char buf[CN_MSG_SIZE(64)] __attribute__((aligned(8)));
	struct cn_sock *s = open_sock(0, 0);
	struct cn_message rep, m;
	struct cn_msg *q;
	int rc = 0, r, echoes = 0;

	CHECK(s, "cn_open");
	q = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, "acked", 6);
	/* The echo callback replies during the send, before kmod's answer:
	 * the reply is kept, the answer taken. */
	r = cn_send(s, q, CN_SEND_ACK);
	CHECK(r == 0, "cn_send(echo, ACK) %d", r);
	CHECK(cn_pending(s) == 1, "kept %zu", cn_pending(s));
	r = cn_recv(s, &m, CN_RECV_DONTWAIT);
	CHECK(r == 0 && m.msg->seq == q->seq && m.msg->ack == q->ack + 1, "echo kept: %d", r);
	echoes++;
	q = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_UNKNOWN, 0x4, "x", 2);
	r = cn_send(s, q, CN_SEND_ACK);
	CHECK(r == -ENODEV && errno == ENODEV, "cn_send(no callback, ACK) %d", r);
	q = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_ECHO_B, "req", 4);
	r = cn_request(s, q, CN_SEND_ACK, CN_MATCH_STRICT, 5000, &rep);
	CHECK(r == 0 && rep.msg->len == 4, "cn_request(echo, ACK) %d", r);
	q = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_UNKNOWN, 0x5, "x", 2);
	r = cn_request(s, q, CN_SEND_ACK, CN_MATCH_STRICT, 60000, &rep);
	CHECK(r == -ENODEV, "cn_request(no callback, ACK) %d, want -ENODEV (not a timeout)", r);
	r = cn_recv(s, &m, CN_RECV_DONTWAIT);
	CHECK(r == -EAGAIN, "left over: %d", r);
	info("echoes kept %d", echoes);
out:
	cn_close(s);
	return rc;
}

/* Several messages in one datagram: every one is handled. */
int t_multi_message_datagram(void)
{
	char raw[1024];
	struct kstat k0, k1;
	size_t off = 0, len;
	char buf[8192];
	ssize_t n;
	int rc = 0, fd = raw_open(), replies = 0, acks = 0;

	CHECK(fd >= 0, "raw_open");
	CHECK(kstat_get(&k0) == 0, "kstat");
	/* echo, unknown id, echo; each NLM_F_ACK */
	off += raw_build(raw + off, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 0, 0,
			 NLM_F_REQUEST | NLM_F_ACK, 201);
	off += raw_build(raw + off, 0x999, 0x3, 0, 0, NLM_F_REQUEST | NLM_F_ACK, 202);
	off += raw_build(raw + off, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_B, 0, 0,
			 NLM_F_REQUEST | NLM_F_ACK, 203);
	CHECK(raw_send(fd, raw, off) == 0, "send");
	CHECK(kstat_get(&k1) == 0, "kstat");
	CHECK(k1.received - k0.received == 3, "received %" PRIu64, k1.received - k0.received);
	CHECK(k1.dispatched - k0.dispatched == 2, "dispatched %" PRIu64,
	      k1.dispatched - k0.dispatched);
	CHECK(k1.refused[CNBUS_REFUSED_A_NO_CALLBACK] - k0.refused[CNBUS_REFUSED_A_NO_CALLBACK] ==
		  1,
	      "no_callback");
	/* Two echo replies and three acks (0, -ENODEV, 0), in order. */
	while (replies + acks < 5) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		n = recv(fd, buf, sizeof(buf), 0);
		CHECK(n > 0, "recv: %s", strerror(errno));
		for (len = (size_t)n; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;

				CHECK(h->nlmsg_seq == 201u + (unsigned int)acks, "ack seq %u",
				      h->nlmsg_seq);
				CHECK(err == (acks == 1 ? -ENODEV : 0), "ack %d error %d", acks,
				      err);
				acks++;
			} else {
				struct cn_msg *m = NLMSG_DATA(h);

				CHECK(m->seq == (replies ? 203u : 201u), "reply seq %u", m->seq);
				CHECK(m->ack == 1, "reply ack %u", m->ack);
				replies++;
			}
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Echo from several processes at once: every request gets its reply. */
int t_echo_concurrent(void)
{
	enum { KIDS = 4, N = 1000 };
	pid_t kids[KIDS];
	int rc = 0, i, status, bad = 0;

	for (i = 0; i < KIDS; i++) {
		kids[i] = fork();
		CHECK(kids[i] >= 0, "fork");
		if (!kids[i]) {
			struct cn_sock *s = open_sock(0, 0);

			_exit(s && !echo_round_trips(
				       s, i & 1 ? CNBUS_TEST_ECHO_B : CNBUS_TEST_ECHO_A, N)
				  ? 0
				  : 1);
		}
	}
	for (i = 0; i < KIDS; i++) {
		CHECK(waitpid(kids[i], &status, 0) == kids[i], "waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	CHECK(bad == 0, "%d of %d processes failed", bad, KIDS);
	info("%d processes x %d round trips", KIDS, N);
out:
	return rc;
}
