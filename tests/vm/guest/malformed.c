// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * malformed.c - kmod against malformed input: a blaster of bad datagrams,
 * and a seeded random one from several processes, as root and as nobody,
 * while the modules are unloaded and loaded; everything counted.
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

int t_malformed_blaster(void)
{
	enum { ROUNDS = 300 };
	uint64_t want[CNBUS_REFUSED_A_MAX + 1] = { 0 };
	char raw[32768];
	struct kstat k0, k1;
	struct nlmsghdr *h = (struct nlmsghdr *)raw;
	struct cn_msg *m = NLMSG_DATA(h);
	struct cn_ctl_msg *ctl = (struct cn_ctl_msg *)m->data;
	uint64_t garbage = 0, sent = 0;
	unsigned int i, j, seed = 12345;
	int rc = 0, fd = raw_open(), r;
	size_t len;

	CHECK(fd >= 0, "raw_open");
	CHECK(kstat_get(&k0) == 0, "kstat");
	for (i = 0; i < ROUNDS; i++) {
		/* shorter than a netlink header */
		memset(raw, 0, 8);
		CHECK(raw_send(fd, raw, 8) == 0, "send");
		want[CNBUS_REFUSED_A_SHORT]++;
		/* header only */
		h->nlmsg_len = NLMSG_HDRLEN;
		h->nlmsg_type = NLMSG_DONE;
		CHECK(raw_send(fd, raw, NLMSG_HDRLEN) == 0, "send");
		want[CNBUS_REFUSED_A_SHORT]++;
		/* part of a cn_msg */
		h->nlmsg_len = NLMSG_LENGTH(10);
		CHECK(raw_send(fd, raw, NLMSG_LENGTH(10)) == 0, "send");
		want[CNBUS_REFUSED_A_SHORT]++;
		/* cn_msg.len larger than the payload */
		len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 100, 10, 0, i);
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_BAD_LEN]++;
		/* cn_msg.len smaller than the payload */
		len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 4, 64, 0, i);
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_BAD_LEN]++;
		/* oversized */
		len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 20000, 20000 & 0xfff, 0, i);
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_OVERSIZE]++;
		/* nlmsg_len beyond the datagram */
		len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 8, 8, 0, i);
		h->nlmsg_len = 4000;
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_TRUNCATED]++;
		/* unknown id */
		len = raw_build(raw, 0xdead, i, 0, 0, 0, i);
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_NO_CALLBACK]++;
		/* notify: garbage counts */
		len = raw_build(raw, CN_NOTIFY_IDX, CN_NOTIFY_VAL, sizeof(*ctl) + 16,
				sizeof(*ctl) + 16, 0, i);
		ctl->idx_notify_num = 0x40000000u + i;
		ctl->val_notify_num = 0xc0000000u;
		ctl->group = 5;
		ctl->len = 16;
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_NOTIFY_INVAL]++;
		/* notify: len disagrees with the counts */
		len = raw_build(raw, CN_NOTIFY_IDX, CN_NOTIFY_VAL, sizeof(*ctl) + 16,
				sizeof(*ctl) + 16, 0, i);
		ctl->idx_notify_num = 1;
		ctl->val_notify_num = 1;
		ctl->group = 5;
		ctl->len = 24;
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_NOTIFY_INVAL]++;
		/* notify: shorter than cn_ctl_msg */
		len = raw_build(raw, CN_NOTIFY_IDX, CN_NOTIFY_VAL, 6, 6, 0, i);
		CHECK(raw_send(fd, raw, len) == 0, "send");
		want[CNBUS_REFUSED_A_NOTIFY_INVAL]++;
		sent += 11;
		/* random garbage, random length */
		for (j = 0; j < 5; j++) {
			size_t glen = 1 + rand_r(&seed) % 600; /* 0 bytes: -ENODATA */
			size_t k;

			for (k = 0; k < glen; k++)
				raw[k] = (char)rand_r(&seed);
			if (glen >= sizeof(struct nlmsghdr) + sizeof(struct cn_msg)) {
				/* never a valid id or a control message */
				m->id.idx = 0xbad0000u | (m->id.idx & 0xffff);
			}
			r = raw_send(fd, raw, glen);
			CHECK(r == 0, "garbage send %d", r);
			if (!r)
				garbage++;
		}
	}
	CHECK(kstat_get(&k1) == 0, "kstat");
	for (i = CNBUS_REFUSED_A_SHORT; i <= CNBUS_REFUSED_A_MAX; i++)
		info("refused[%u] %" PRIu64 " -> %" PRIu64, i, k0.refused[i], k1.refused[i]);
	info("%" PRIu64 " malformed + %" PRIu64 " garbage datagrams; received %" PRIu64
	     " dispatched %" PRIu64,
	     sent, garbage, k1.received - k0.received, k1.dispatched - k0.dispatched);
	CHECK(k1.dispatched == k0.dispatched, "garbage was dispatched");
	CHECK(kstat_refused_total(&k1) - kstat_refused_total(&k0) == k1.received - k0.received,
	      "every received message refused");
	CHECK(k1.received - k0.received >= sent + garbage, "received count");
	/* Exact counts for everything but the garbage, whose class is random. */
	for (i = CNBUS_REFUSED_A_SHORT; i <= CNBUS_REFUSED_A_MAX; i++)
		CHECK(k1.refused[i] - k0.refused[i] >= want[i],
		      "refused[%u] %" PRIu64 " < %" PRIu64, i, k1.refused[i] - k0.refused[i],
		      want[i]);
	CHECK(k1.refused[CNBUS_REFUSED_A_NOTIFY_INVAL] - k0.refused[CNBUS_REFUSED_A_NOTIFY_INVAL] ==
		  want[CNBUS_REFUSED_A_NOTIFY_INVAL],
	      "notify_inval");
	close(fd);
	fd = -1;
	/* Still working. */
	{
		struct cn_sock *s = open_sock(0, 0);

		CHECK(s, "cn_open");
		rc = echo_round_trips(s, CNBUS_TEST_ECHO_A, 100);
		cn_close(s);
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * Seeded random blaster from several processes (the fault test):
 * FAULT_N datagrams in all, each one of: an echo request (sometimes with
 * NLM_F_ACK), an unknown id, shorter than a netlink header, a cut cn_msg,
 * nlmsg_len beyond the datagram, cn_msg.len disagreeing with the payload,
 * an oversized cn_msg.len, a garbage notification request (made invalid
 * when it happens to be well formed), random bytes. While it runs,
 * cnbus_test is unloaded (the echo ids then count as unknown), unloading
 * cnbus is refused (the blasters' sockets hold it) and cnbus_test comes
 * back. Afterwards: received = refused + dispatched, every class counted at
 * least as often as it was sent, and the echo works.
 */
enum {
	FK_ECHO,
	FK_UNKNOWN,
	FK_SHORT,
	FK_CUT,
	FK_TRUNC,
	FK_BADLEN,
	FK_OVERSIZE,
	FK_NOTIFY,
	FK_GARBAGE,
	FK_KINDS
};

static const char *const fault_kind[FK_KINDS] = { "echo",   "unknown",	"short",  "cut",    "trunc",
						  "badlen", "oversize", "notify", "garbage" };

#define FAULT_KIDS 4

struct fault_shared {
	uint64_t sent[FAULT_KIDS][FK_KINDS];
	uint64_t send_errors[FAULT_KIDS];
};

static int fault_nobody; /* the blasters run as nobody (uid 65534) */

/* Read and discard whatever came back (echo replies, acks). */
static void drain_fd(int fd)
{
	char buf[32768];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int fault_child(int k, unsigned int n, struct fault_shared *sh, int ready)
{
	static char raw[65536] __attribute__((aligned(8)));
	struct nlmsghdr *h = (struct nlmsghdr *)raw;
	struct cn_msg *m = NLMSG_DATA(h);
	unsigned int seed = fault_seed + (unsigned int)k * 7919u, i;
	size_t len, plen, j;
	int kind, fd;

	if (fault_nobody && become_nobody())
		return 3;
	fd = raw_open();
	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++) {
		kind = rand_r(&seed) % FK_KINDS;
		plen = (size_t)(rand_r(&seed) % 512);
		switch (kind) {
		case FK_ECHO:
			len = raw_build(raw, CNBUS_TEST_IDX,
					rand_r(&seed) & 1 ? CNBUS_TEST_ECHO_A : CNBUS_TEST_ECHO_B,
					(uint16_t)plen, plen,
					rand_r(&seed) & 1 ? NLM_F_REQUEST | NLM_F_ACK : 0, i);
			break;
		case FK_UNKNOWN:
			len = raw_build(raw, 0x1000u + (uint32_t)rand_r(&seed) % 0x10000u,
					(uint32_t)rand_r(&seed), (uint16_t)plen, plen, 0, i);
			break;
		case FK_SHORT: /* 1 .. NLMSG_HDRLEN - 1 bytes */
			len = 1 + (size_t)rand_r(&seed) % (NLMSG_HDRLEN - 1);
			for (j = 0; j < len; j++)
				raw[j] = (char)rand_r(&seed);
			break;
		case FK_CUT: /* a header and part of a cn_msg */
			len = NLMSG_HDRLEN + (size_t)rand_r(&seed) % sizeof(struct cn_msg);
			memset(raw, 0, len);
			h->nlmsg_len = (uint32_t)len;
			h->nlmsg_type = NLMSG_DONE;
			break;
		case FK_TRUNC: /* nlmsg_len beyond the datagram */
			len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, (uint16_t)plen,
					plen, 0, i);
			h->nlmsg_len = (uint32_t)len + 4 + (uint32_t)rand_r(&seed) % 60000;
			break;
		case FK_BADLEN: /* cn_msg.len larger than the payload */
			len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A,
					(uint16_t)(plen + 1 + (size_t)rand_r(&seed) % 100), plen, 0,
					i);
			break;
		case FK_OVERSIZE:
			plen = (size_t)rand_r(&seed) % 20000;
			len = raw_build(raw, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A,
					(uint16_t)(16385 + rand_r(&seed) % (65536 - 16385)), plen,
					0, i);
			break;
		case FK_NOTIFY: {
			struct cn_ctl_msg *ctl = (struct cn_ctl_msg *)m->data;

			plen = (size_t)rand_r(&seed) % 200;
			len = raw_build(raw, CN_NOTIFY_IDX, CN_NOTIFY_VAL, (uint16_t)plen, plen, 0,
					i);
			for (j = 0; j < plen; j++)
				m->data[j] = (unsigned char)rand_r(&seed);
			if (plen >= sizeof(*ctl) && rand_r(&seed) % 2) {
				/* plausible counts, so the deeper checks run */
				ctl->idx_notify_num = (uint32_t)rand_r(&seed) % 4;
				ctl->val_notify_num = (uint32_t)rand_r(&seed) % 4;
				ctl->len = (uint32_t)(ctl->idx_notify_num + ctl->val_notify_num) *
					   sizeof(struct cn_notify_req);
				ctl->group = (uint32_t)rand_r(&seed) % 4096;
			}
			/* Never a valid request: it would be kept or remove others. */
			if (cn_notify_validate(m->data, plen) == 0)
				ctl->len++;
			break;
		}
		default: /* random bytes, never a valid id or a control message */
			len = 1 + (size_t)rand_r(&seed) % 600;
			for (j = 0; j < len; j++)
				raw[j] = (char)rand_r(&seed);
			if (len >= NLMSG_HDRLEN + sizeof(struct cn_msg))
				m->id.idx = 0xbad0000u | (m->id.idx & 0xffff);
			kind = FK_GARBAGE;
			break;
		}
		if (raw_send(fd, raw, len))
			sh->send_errors[k]++;
		else
			sh->sent[k][kind]++;
		drain_fd(fd);
		if (i == n / 4 && write(ready, "r", 1) != 1)
			return 2;
	}
	close(fd);
	return 0;
}

int t_fault_blaster(void)
{
	struct fault_shared *sh;
	struct cn_sock *hold = NULL;
	uint64_t sent[FK_KINDS] = { 0 }, total = 0, errors = 0;
	uint64_t dref[CNBUS_REFUSED_A_MAX + 1], drecv, ddisp;
	struct kstat k0, k1;
	pid_t kids[FAULT_KIDS];
	int ready[2] = { -1, -1 }, rc = 0, r, i, j, status, bad = 0, nkids = 0;
	char c;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED, "mmap");
	memset(sh, 0, sizeof(*sh));
	CHECK(pipe(ready) == 0, "pipe");
	CHECK(kstat_wait_drained(&k0, 60) == 0, "kstat");
	for (i = 0; i < FAULT_KIDS; i++) {
		kids[i] = fork();
		CHECK(kids[i] >= 0, "fork");
		if (!kids[i]) {
			close(ready[0]);
			_exit(fault_child(i, fault_n / FAULT_KIDS, sh, ready[1]));
		}
		nkids++;
	}
	close(ready[1]);
	ready[1] = -1;
	for (i = 0; i < FAULT_KIDS; i++)
		CHECK(read(ready[0], &c, 1) == 1, "blaster %d not ready", i);
	/* In the middle of the blast: unload the test module, try cnbus, reload. */
	r = mod_unload("cnbus_test");
	CHECK(r == 0, "unload cnbus_test while blasting: %d", r);
	/* A socket of our own keeps cnbus in use even if the blasters are done. */
	hold = open_sock(0, 0);
	CHECK(hold, "cn_open");
	r = mod_unload("cnbus");
	info("unloading cnbus while its sockets are open: %d (%s)", r, strerror(-r));
	CHECK(r == -EAGAIN || r == -EBUSY, "unload cnbus while in use: %d", r);
	cn_close(hold);
	hold = NULL;
	r = mod_load("period_ms=0");
	CHECK(r == 0, "reload cnbus_test while blasting: %d", r);
	for (i = 0; i < nkids; i++) {
		CHECK(waitpid(kids[i], &status, 0) == kids[i], "waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	nkids = 0;
	CHECK(bad == 0, "%d blasters failed", bad);
	CHECK(kstat_get(&k1) == 0, "kstat");
	for (i = 0; i < FAULT_KIDS; i++) {
		errors += sh->send_errors[i];
		for (j = 0; j < FK_KINDS; j++)
			sent[j] += sh->sent[i][j];
	}
	for (j = 0; j < FK_KINDS; j++) {
		total += sent[j];
		info("%-8s %" PRIu64, fault_kind[j], sent[j]);
	}
	for (j = 0; j <= CNBUS_REFUSED_A_MAX; j++)
		dref[j] = k1.refused[j] - k0.refused[j];
	drecv = k1.received - k0.received;
	ddisp = k1.dispatched - k0.dispatched;
	info("seed %u: %" PRIu64 " datagrams sent (%" PRIu64 " send errors); received %" PRIu64
	     " dispatched %" PRIu64 " refused %" PRIu64,
	     fault_seed, total, errors, drecv, ddisp,
	     kstat_refused_total(&k1) - kstat_refused_total(&k0));
	info("refused: short %" PRIu64 " truncated %" PRIu64 " bad_len %" PRIu64
	     " oversize %" PRIu64 " no_callback %" PRIu64 " notify_inval %" PRIu64,
	     dref[CNBUS_REFUSED_A_SHORT], dref[CNBUS_REFUSED_A_TRUNCATED],
	     dref[CNBUS_REFUSED_A_BAD_LEN], dref[CNBUS_REFUSED_A_OVERSIZE],
	     dref[CNBUS_REFUSED_A_NO_CALLBACK], dref[CNBUS_REFUSED_A_NOTIFY_INVAL]);
	CHECK(errors == 0, "%" PRIu64 " sends failed", errors);
	CHECK(total == fault_n / FAULT_KIDS * FAULT_KIDS, "sent %" PRIu64, total);
	CHECK(drecv >= total, "received %" PRIu64 " < sent %" PRIu64, drecv, total);
	CHECK(drecv == kstat_refused_total(&k1) - kstat_refused_total(&k0) + ddisp,
	      "received != refused + dispatched");
	CHECK(ddisp <= sent[FK_ECHO] && ddisp > 0, "dispatched %" PRIu64 " of %" PRIu64 " echoes",
	      ddisp, sent[FK_ECHO]);
	CHECK(dref[CNBUS_REFUSED_A_SHORT] >= sent[FK_SHORT] + sent[FK_CUT], "short");
	CHECK(dref[CNBUS_REFUSED_A_TRUNCATED] >= sent[FK_TRUNC], "truncated");
	CHECK(dref[CNBUS_REFUSED_A_BAD_LEN] >= sent[FK_BADLEN], "bad_len");
	CHECK(dref[CNBUS_REFUSED_A_OVERSIZE] >= sent[FK_OVERSIZE], "oversize");
	CHECK(dref[CNBUS_REFUSED_A_NO_CALLBACK] >= sent[FK_UNKNOWN] + (sent[FK_ECHO] - ddisp),
	      "no_callback");
	CHECK(dref[CNBUS_REFUSED_A_NOTIFY_INVAL] == sent[FK_NOTIFY],
	      "notify_inval %" PRIu64 " of %" PRIu64, dref[CNBUS_REFUSED_A_NOTIFY_INVAL],
	      sent[FK_NOTIFY]);
	CHECK(k1.notify_count == k0.notify_count, "notification requests %u -> %u", k0.notify_count,
	      k1.notify_count);
	/* Still working. */
	{
		struct cn_sock *s = open_sock(0, 0);

		CHECK(s, "cn_open");
		r = echo_round_trips(s, CNBUS_TEST_ECHO_A, 100);
		cn_close(s);
		CHECK(r == 0, "echo after the blast");
	}
out:
	cn_close(hold);
	for (i = 0; i < nkids; i++)
		waitpid(kids[i], &status, 0);
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	if (sh != MAP_FAILED)
		munmap(sh, sizeof(*sh));
	return rc;
}

/* The same blast from unprivileged processes. */
int t_fault_blaster_nobody(void)
{
	int r;

	fault_nobody = 1;
	r = t_fault_blaster();
	fault_nobody = 0;
	return r;
}
