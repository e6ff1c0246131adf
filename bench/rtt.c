/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtt.c - cnb-rtt: request/reply rates against the proc connector's LISTEN
 * acks, four ways, interleaved round by round in one run so that machine
 * noise hits all of them alike:
 *
 *   raw        naive loop: send one LISTEN, recv until the ack (ack + 1)
 *   libcn      cn_request(CN_MATCH_ACK_ONLY), one at a time
 *   raw-pipe   hand-written pipeline: 64 in flight, sendmmsg + recvmmsg,
 *              replies matched by ack as they arrive, refilled as they do
 *   libcn-async  cn_async_send / cn_async_complete with 64 in flight
 *
 * The ack of a LISTEN is multicast to every member of group 1, so only the
 * socket being measured is a member during its phase (the others leave the
 * group and are drained). Rates count answered requests only.
 *
 * A round is -s sub-rounds; a sub-round runs each method once (a phase of
 * -n requests, -p for the two pipelines, which answer about four times as
 * many per second), in an order that rotates every sub-round. Prints one
 * line per round (each method's rate over the round's phases: methods
 * interleaved finely enough that a busy moment of the machine hits them
 * alike, phases added up so that one preemption does not decide a round)
 * and one line per method over all rounds. Rates are answered requests per
 * second of this thread's CPU time (user + system; "raw=" etc. in the round
 * lines, cpu_rate in the totals) and per second of wall clock ("wall_raw="
 * etc., rate): the kernel handles a request and queues its ack inside the
 * sender's system call, so the thread never waits, and its CPU time leaves
 * out the time other processes of a shared machine held the CPU.
 *
 *   cnb-rtt [-r rounds] [-s sub_rounds] [-n requests_per_phase]
 *           [-p pipelined_requests_per_phase] [-w window]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <poll.h>
#include <sys/time.h>

#include "libcn.h"

#include "bench.h"

#define WMAX 256

enum { RAW, LIBCN, RAW_PIPE, LIBCN_ASYNC, NMETHODS };
static const char *const names[NMETHODS] = { "raw", "libcn", "raw-pipe", "libcn-async" };

struct tally {
	double secs, cpu; /* wall clock; this thread's CPU time (user + system) */
	unsigned long ok, timeouts, errors;
};

static uint32_t rng = 0x12345679;

static void group(int fd, int join)
{
	unsigned int g = CN_IDX_PROC;

	if (setsockopt(fd, SOL_NETLINK, join ? NETLINK_ADD_MEMBERSHIP : NETLINK_DROP_MEMBERSHIP, &g,
		       sizeof(g)) < 0)
		cnb_die("membership");
}

static void drain(int fd)
{
	static uint8_t b[65536];

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0 || errno == ENOBUFS)
		;
}

/* The ack of `ack` in a datagram, as a raw loop would check it. */
static int is_ack(const uint8_t *b, ssize_t n, uint32_t *got_ack)
{
	const struct nlmsghdr *h = (const void *)b;
	const struct cn_msg *m = NLMSG_DATA(h);

	if (n < (ssize_t)NLMSG_LENGTH(sizeof(*m)) || h->nlmsg_type != NLMSG_DONE ||
	    m->id.idx != CN_IDX_PROC || m->id.val != CN_VAL_PROC)
		return 0;
	*got_ack = m->ack;
	return 1;
}

/* ---- raw naive ----------------------------------------------------------- */

CNB_NOINLINE static void run_raw(int fd, unsigned long n, struct tally *t)
{
	static uint8_t b[65536];
	struct cnb_proc_req r;
	static uint32_t seq;

	for (unsigned long i = 0; i < n; i++) {
		uint32_t ack = cnb_rand(&rng), got;

		cnb_proc_req_init(&r, PROC_CN_MCAST_LISTEN, ++seq, ack);
		if (send(fd, &r, sizeof(r), 0) < 0) {
			t->errors++;
			continue;
		}
		for (;;) {
			ssize_t k = recv(fd, b, sizeof(b), 0);

			if (k < 0) {
				if (errno == EAGAIN)
					t->timeouts++;
				else if (errno == ENOBUFS)
					continue;
				else
					t->errors++;
				break;
			}
			if (is_ack(b, k, &got) && got == ack + 1) {
				t->ok++;
				break;
			}
		}
	}
}

/* ---- libcn naive --------------------------------------------------------- */

static void discard(const struct cn_message *m, void *arg)
{
	(void)m;
	(void)arg;
}

CNB_NOINLINE static void run_libcn(struct cn_sock *s, unsigned long n, struct tally *t)
{
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4)];
	} u;
	uint32_t op = PROC_CN_MCAST_LISTEN;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, &op, sizeof(op));
	struct cn_message reply;

	for (unsigned long i = 0; i < n; i++) {
		int r = cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 1000, &reply);

		if (r == 0)
			t->ok++;
		else if (r == -ETIMEDOUT)
			t->timeouts++;
		else
			t->errors++;
	}
}

/* ---- raw pipeline -------------------------------------------------------- */

CNB_NOINLINE static void run_raw_pipe(int fd, unsigned long n, unsigned int w, struct tally *t)
{
	static struct cnb_proc_req reqs[WMAX];
	static uint8_t bufs[WMAX][4096];
	static struct mmsghdr smsg[WMAX], rmsg[WMAX];
	static struct iovec siov[WMAX], riov[WMAX];
	static uint32_t pending[WMAX]; /* expected reply ack per slot */
	static uint8_t busy[WMAX];     /* a request in flight in the slot */
	static uint32_t seq;
	unsigned long sent = 0, done = 0;
	unsigned int inflight = 0;
	uint32_t base = cnb_rand(&rng) | 1;

	memset(busy, 0, sizeof(busy));
	for (unsigned int i = 0; i < w; i++) {
		riov[i].iov_base = bufs[i];
		riov[i].iov_len = sizeof(bufs[i]);
		rmsg[i].msg_hdr.msg_iov = &riov[i];
		rmsg[i].msg_hdr.msg_iovlen = 1;
	}
	while (done < n) {
		/* Refill the window: every free slot gets a new request. */
		unsigned int k = 0;

		for (unsigned int slot = 0; slot < w && sent + k < n && inflight + k < w; slot++) {
			if (busy[slot])
				continue;
			/* ack = base + 2 * serial, so ack + 1 never names another request */
			uint32_t ack = base + 2 * (uint32_t)(sent + k) * WMAX + 2 * slot;

			cnb_proc_req_init(&reqs[k], PROC_CN_MCAST_LISTEN, ++seq, ack);
			pending[slot] = ack + 1;
			busy[slot] = 1;
			siov[k].iov_base = &reqs[k];
			siov[k].iov_len = sizeof(reqs[k]);
			smsg[k].msg_hdr.msg_iov = &siov[k];
			smsg[k].msg_hdr.msg_iovlen = 1;
			k++;
		}
		if (k) {
			int r = sendmmsg(fd, smsg, k, 0);

			if (r < 0)
				cnb_die("sendmmsg");
			if ((unsigned int)r < k)
				cnb_die("sendmmsg short");
			sent += k;
			inflight += k;
		}
		int got = recvmmsg(fd, rmsg, w, MSG_WAITFORONE, NULL);

		if (got < 0) {
			if (errno == ENOBUFS)
				continue;
			/* SO_RCVTIMEO: everything still in flight timed out. */
			t->timeouts += inflight;
			done += inflight;
			inflight = 0;
			memset(busy, 0, sizeof(busy));
			continue;
		}
		for (int i = 0; i < got; i++) {
			uint32_t a;

			if (!is_ack(bufs[i], rmsg[i].msg_len, &a))
				continue;
			unsigned int slot = ((a - 1 - base) / 2) % WMAX;

			/* Proc events (ack 0) reach the group too: a free slot
			 * must not match them. */
			if (slot < w && busy[slot] && pending[slot] == a) {
				busy[slot] = 0;
				inflight--;
				done++;
				t->ok++;
			}
		}
	}
}

/* ---- libcn async --------------------------------------------------------- */

CNB_NOINLINE static void run_libcn_async(struct cn_sock *s, unsigned long n, unsigned int w,
					 struct tally *t)
{
	static union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4)];
	} u[WMAX];
	static struct cn_msg *reqs[WMAX];
	static struct cn_completion c[WMAX];
	uint32_t op = PROC_CN_MCAST_LISTEN;
	unsigned long sent = 0, done = 0;

	for (unsigned int i = 0; i < w; i++)
		reqs[i] =
		    cn_msg_init(&u[i], sizeof(u[i]), CN_IDX_PROC, CN_VAL_PROC, &op, sizeof(op));
	while (done < n) {
		unsigned int room = w - cn_async_inflight(s);

		if (room > n - sent)
			room = (unsigned int)(n - sent);
		if (room) {
			int r = cn_async_send(s, reqs, NULL, room, 0);

			if (r < 0) {
				t->errors++;
				if (r != -EBUSY && r != -EAGAIN)
					break;
			} else {
				sent += (unsigned long)r;
			}
		}
		int got = cn_async_complete(s, c, w, 1000);

		if (got < 0) {
			if (got != -ENOBUFS)
				t->errors++;
			continue;
		}
		for (int i = 0; i < got; i++) {
			if (c[i].status == 0)
				t->ok++;
			else if (c[i].status == -ETIMEDOUT)
				t->timeouts++;
			else
				t->errors++;
		}
		done += (unsigned long)got;
		if (got == 0 && cn_async_inflight(s) == 0 && sent >= n)
			break;
	}
}

int main(int argc, char **argv)
{
	unsigned long rounds = 10, subrounds = 1, n = 2000, np = 0;
	unsigned int w = 64;
	struct tally t[NMETHODS] = { 0 };
	struct timeval tv = { .tv_sec = 1 };
	int opt, rawfd, pipefd;
	struct cn_sock *s, *as;
	struct cn_open_opts o = { .sz = sizeof(o), .rcvbuf = 4 << 20, .batch = 64 };

	while ((opt = getopt(argc, argv, "r:s:n:p:w:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 's':
			subrounds = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			np = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			w = (unsigned int)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: cnb-rtt [-r rounds] [-s sub_rounds] [-n requests] "
					"[-p pipelined_requests] [-w window]\n");
			return 2;
		}
	}
	if (w < 1 || w > WMAX)
		w = 64;
	if (subrounds < 1)
		subrounds = 1;
	if (np < 1)
		np = 4 * n;
	rawfd = cnb_raw_open(4 << 20, 0);
	pipefd = cnb_raw_open(4 << 20, 0);
	if (setsockopt(rawfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(pipefd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		cnb_die("SO_RCVTIMEO");
	s = cn_open(NETLINK_CONNECTOR, &o);
	as = cn_open(NETLINK_CONNECTOR, &o);
	if (!s || !as)
		cnb_die("cn_open");
	cn_set_handler(s, discard, NULL);
	cn_set_handler(as, discard, NULL);
	if (cn_async_init(as, w, CN_MATCH_ACK_ONLY, 1000) < 0)
		cnb_die("cn_async_init");

	for (unsigned long r = 0; r < rounds; r++) {
		struct tally rt[NMETHODS] = { 0 };

		for (unsigned long sr = 0; sr < subrounds; sr++) {
			for (int k = 0; k < NMETHODS; k++) {
				/* Rotate the order every sub-round. */
				int m = (int)((r * subrounds + sr + (unsigned long)k) % NMETHODS);
				int fd = m == RAW	 ? rawfd
					 : m == RAW_PIPE ? pipefd
					 : m == LIBCN	 ? cn_fd(s)
							 : cn_fd(as);
				struct tally ph = { 0 };
				double t0, c0;

				/* libcn's sockets through its API: a membership made
				 * behind its back, cn_request would not know of, and
				 * would join and leave around every request. */
				if (m == LIBCN || m == LIBCN_ASYNC) {
					if (cn_join(m == LIBCN ? s : as, CN_IDX_PROC) < 0)
						cnb_die("cn_join");
				} else {
					group(fd, 1);
				}
				t0 = cnb_now();
				c0 = cnb_thread_cpu();
				switch (m) {
				case RAW:
					run_raw(rawfd, n, &ph);
					break;
				case LIBCN:
					run_libcn(s, n, &ph);
					break;
				case RAW_PIPE:
					run_raw_pipe(pipefd, np, w, &ph);
					break;
				default:
					run_libcn_async(as, np, w, &ph);
					break;
				}
				ph.secs = cnb_now() - t0;
				ph.cpu = cnb_thread_cpu() - c0;
				rt[m].secs += ph.secs;
				rt[m].cpu += ph.cpu;
				t[m].cpu += ph.cpu;
				rt[m].ok += ph.ok;
				t[m].secs += ph.secs;
				t[m].ok += ph.ok;
				t[m].timeouts += ph.timeouts;
				t[m].errors += ph.errors;
				if (m == LIBCN || m == LIBCN_ASYNC) {
					struct cn_message msg;
					struct cn_sock *cs = m == LIBCN ? s : as;

					if (cn_leave(cs, CN_IDX_PROC) < 0)
						cnb_die("cn_leave");
					while (cn_recv(cs, &msg, CN_RECV_DONTWAIT) != -EAGAIN)
						;
				} else {
					group(fd, 0);
					drain(fd);
				}
			}
		}
		printf("rtt-round round=%lu", r + 1);
		for (int m = 0; m < NMETHODS; m++)
			printf(" %s=%.0f", names[m],
			       rt[m].cpu > 0 ? (double)rt[m].ok / rt[m].cpu : 0.0);
		for (int m = 0; m < NMETHODS; m++)
			printf(" wall_%s=%.0f", names[m],
			       rt[m].secs > 0 ? (double)rt[m].ok / rt[m].secs : 0.0);
		printf("\n");
		fflush(stdout);
	}
	/* Leave the kernel's listener count as we found it. */
	cnb_raw_proc_op(rawfd, PROC_CN_MCAST_IGNORE);
	cnb_raw_proc_op(pipefd, PROC_CN_MCAST_IGNORE);
	cn_proc_ignore(s);
	cn_proc_ignore(as);

	for (int m = 0; m < NMETHODS; m++)
		printf("rtt method=%s ok=%lu timeouts=%lu errors=%lu secs=%.3f rate=%.0f "
		       "cpu_secs=%.3f "
		       "cpu_rate=%.0f\n",
		       names[m], t[m].ok, t[m].timeouts, t[m].errors, t[m].secs,
		       t[m].secs > 0 ? (double)t[m].ok / t[m].secs : 0.0, t[m].cpu,
		       t[m].cpu > 0 ? (double)t[m].ok / t[m].cpu : 0.0);
	cn_close(s);
	cn_close(as);
	close(rawfd);
	close(pipefd);
	return 0;
}
