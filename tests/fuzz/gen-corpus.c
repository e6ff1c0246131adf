/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gen-corpus.c - writes the fuzz seed corpus (tests/fuzz/corpus/<target>/)
 * from real traffic: a LISTEN ack and fork/exit event datagrams captured
 * from the running kernel's proc connector (needs root), a datagram with
 * several messages, notify control messages built by libcn, and a kmod
 * generic netlink reply built with libnl-genl (kmod's layout).
 *
 *   gen-corpus OUTDIR       (built and run by tests/fuzz/gen-corpus.sh)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <libcn/kmod_genl.h>

#include "libcn.h"

static const char *outdir;

static void put(const char *target, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* A fuzz_recv record: u16 length, u8 port, u8 flags, datagram. */
static size_t record(uint8_t *out, const void *dgram, size_t len, uint8_t port)
{
	out[0] = (uint8_t)len;
	out[1] = (uint8_t)(len >> 8);
	out[2] = port;
	out[3] = 0;
	memcpy(out + 4, dgram, len);
	return len + 4;
}

static uint8_t ack[512], fork_ev[512], exit_ev[512], comm_ev[512];
static ssize_t ack_len, fork_len, exit_len, comm_len;

static void capture(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	unsigned int g = CN_IDX_PROC;
	struct timeval tv = { .tv_sec = 2 };
	struct {
		struct nlmsghdr nlh;
		struct cn_msg cn;
		uint32_t op;
	} __attribute__((packed)) req = { 0 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	pid_t child;

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		perror("proc connector socket (run as root)");
		exit(77);
	}
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = NLMSG_DONE;
	req.cn.id.idx = CN_IDX_PROC;
	req.cn.id.val = CN_VAL_PROC;
	req.cn.seq = 1;
	req.cn.ack = 0x1000;
	req.cn.len = sizeof(req.op);
	req.op = PROC_CN_MCAST_LISTEN;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		perror("send LISTEN");
		exit(1);
	}
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "cn-seed", 0, 0, 0);
		_exit(3);
	}
	waitpid(child, NULL, 0);
	for (int i = 0; i < 10000 && !(ack_len && fork_len && exit_len && comm_len); i++) {
		uint8_t b[512];
		ssize_t n = recv(fd, b, sizeof(b), 0);
		const struct cn_msg *m = NLMSG_DATA((struct nlmsghdr *)b);
		const struct proc_event *pe = (const void *)m->data;

		if (n < 0) {
			perror("recv");
			exit(1);
		}
		if (pe->what == PROC_EVENT_NONE && m->ack == 0x1001 && !ack_len)
			memcpy(ack, b, (size_t)(ack_len = n));
		if (pe->what == PROC_EVENT_FORK && pe->event_data.fork.child_pid == child)
			memcpy(fork_ev, b, (size_t)(fork_len = n));
		if (pe->what == PROC_EVENT_COMM && pe->event_data.comm.process_pid == child)
			memcpy(comm_ev, b, (size_t)(comm_len = n));
		if (pe->what == PROC_EVENT_EXIT && pe->event_data.exit.process_pid == child)
			memcpy(exit_ev, b, (size_t)(exit_len = n));
	}
	if (!(ack_len && fork_len && exit_len && comm_len)) {
		fprintf(stderr, "gen-corpus: did not capture every event\n");
		exit(1);
	}
	req.op = PROC_CN_MCAST_IGNORE;
	send(fd, &req, sizeof(req), 0);
	close(fd);
}

/* Start a message of kmod's CNBUS_CMD_DUMP dump. */
static struct nl_msg *dump_msg(void)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg ||
	    !genlmsg_put(msg, 0, 1, 0x20, 0, NLM_F_MULTI, CNBUS_CMD_DUMP, CNBUS_GENL_VERSION))
		exit(1);
	return msg;
}

/* Append msg (freed) to buf at *len, aligned as in a datagram. */
static void dump_add(char *buf, size_t *len, struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	memcpy(buf + *len, nlh, nlh->nlmsg_len);
	*len += NLMSG_ALIGN(nlh->nlmsg_len);
	nlmsg_free(msg);
}

static void kmod_reply(void)
{
	static char buf[4096];
	struct nl_msg *msg = dump_msg();
	struct nlattr *nest;
	struct nlmsghdr done = { .nlmsg_len = NLMSG_LENGTH(4), .nlmsg_type = NLMSG_DONE };
	size_t len = 0;

	nla_put_u32(msg, CNBUS_A_UNIT, 5);
	nla_put_string(msg, CNBUS_A_VERSION, "0.1.0");
	nla_put_u32(msg, CNBUS_A_GROUPS, 32);
	nla_put_u32(msg, CNBUS_A_MAX_NOTIFY, 64);
	nla_put_u32(msg, CNBUS_A_NOTIFY_COUNT, 1);
	nla_put_u32(msg, CNBUS_A_CBUS_QLEN, 1024);
	nla_put_u32(msg, CNBUS_A_POSSIBLE_CPUS, 1);
	nla_put_u64(msg, CNBUS_A_RECEIVED, 12);
	nla_put_u64(msg, CNBUS_A_DISPATCHED, 11);
	dump_add(buf, &len, msg);
	msg = dump_msg();
	nest = nla_nest_start(msg, CNBUS_A_CALLBACK);
	nla_put_u32(msg, CNBUS_CB_A_IDX, 0x123);
	nla_put_u32(msg, CNBUS_CB_A_VAL, 0x456);
	nla_put_string(msg, CNBUS_CB_A_NAME, "cnbus_test");
	nla_nest_end(msg, nest);
	dump_add(buf, &len, msg);
	msg = dump_msg();
	nest = nla_nest_start(msg, CNBUS_A_CPU);
	nla_put_u32(msg, CNBUS_CPU_A_ID, 0);
	nla_put_u64(msg, CNBUS_CPU_A_INSERTED, 100);
	nla_put_u64(msg, CNBUS_CPU_A_SENT, 99);
	nla_put_u64(msg, CNBUS_CPU_A_DROPPED, 1);
	nla_put_u32(msg, CNBUS_CPU_A_QUEUED, 0);
	nla_nest_end(msg, nest);
	dump_add(buf, &len, msg);
	memcpy(buf + len, &done, sizeof(done));
	len += NLMSG_LENGTH(4);
	put("fuzz_kmod_reply", "dump", buf, len);
	{
		struct {
			struct nlmsghdr h;
			struct nlmsgerr e;
		} err = { .h = { .nlmsg_len = sizeof(err), .nlmsg_type = NLMSG_ERROR },
			  .e = { .error = -EPERM } };

		put("fuzz_kmod_reply", "error-eperm", &err, sizeof(err));
	}
}

int main(int argc, char **argv)
{
	uint8_t multi[2048], rec[4096], ctl[CN_NOTIFY_SIZE(2, 2)];
	size_t n = 0, r = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-corpus OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	capture();

	/* fuzz_parse: whole datagrams. */
	put("fuzz_parse", "listen-ack", ack, (size_t)ack_len);
	put("fuzz_parse", "fork-event", fork_ev, (size_t)fork_len);
	put("fuzz_parse", "exit-event", exit_ev, (size_t)exit_len);
	/* Several messages in one datagram, each at its aligned offset. */
	memcpy(multi, fork_ev, (size_t)fork_len);
	n = NLMSG_ALIGN((size_t)fork_len);
	memcpy(multi + n, comm_ev, (size_t)comm_len);
	n += NLMSG_ALIGN((size_t)comm_len);
	memcpy(multi + n, exit_ev, (size_t)exit_len);
	n += (size_t)exit_len;
	put("fuzz_parse", "multi-message", multi, n);
	{
		struct {
			struct nlmsghdr h;
			struct nlmsgerr e;
		} err = { .h = { .nlmsg_len = sizeof(err), .nlmsg_type = NLMSG_ERROR },
			  .e = { .error = -EINVAL } };
		struct nlmsghdr ov = { .nlmsg_len = sizeof(ov), .nlmsg_type = NLMSG_OVERRUN };

		put("fuzz_parse", "nlmsg-error", &err, sizeof(err));
		put("fuzz_parse", "nlmsg-overrun", &ov, sizeof(ov));
	}

	/* fuzz_proc: cn_msg header + payload, and mask strings. */
	put("fuzz_proc", "fork", fork_ev + NLMSG_HDRLEN, (size_t)fork_len - NLMSG_HDRLEN);
	put("fuzz_proc", "exit", exit_ev + NLMSG_HDRLEN, (size_t)exit_len - NLMSG_HDRLEN);
	put("fuzz_proc", "comm", comm_ev + NLMSG_HDRLEN, (size_t)comm_len - NLMSG_HDRLEN);
	put("fuzz_proc", "ack", ack + NLMSG_HDRLEN, (size_t)ack_len - NLMSG_HDRLEN);
	put("fuzz_proc", "mask-list", "fork,exec,exit", 14);
	put("fuzz_proc", "mask-all", "all,nonzero_exit", 16);

	/* fuzz_notify: a control payload, a notification, ranges. */
	{
		struct cn_range idx[2] = { { 0x123, 1 }, { 0x200, 16 } };
		struct cn_range val[2] = { { 0x456, 2 }, { 0, 0xffffffff } };
		struct cn_msg *m = cn_notify_build(ctl, sizeof(ctl), idx, 2, val, 2, 5);
		struct cn_msg note = { .id = { 0x123, 0x456 }, .ack = CN_NOTIFY_REMOVED };
		uint8_t rt[1 + 4 * sizeof(struct cn_range)];

		if (!m)
			return 1;
		put("fuzz_notify", "ctl-payload", m->data, m->len);
		put("fuzz_notify", "notification", &note, sizeof(note));
		rt[0] = 1;
		memcpy(rt + 1, idx, sizeof(idx));
		memcpy(rt + 1 + sizeof(idx), val, sizeof(val));
		put("fuzz_notify", "ranges", rt, sizeof(rt));
		/* the control message as a datagram for the framing target too */
		struct nlmsghdr h = { .nlmsg_len = (uint32_t)(NLMSG_HDRLEN + CN_MSG_SIZE(m->len)),
				      .nlmsg_type = NLMSG_DONE };
		memcpy(multi, &h, sizeof(h));
		memcpy(multi + NLMSG_HDRLEN, m, CN_MSG_SIZE(m->len));
		put("fuzz_parse", "notify-ctl", multi, h.nlmsg_len);
	}

	/* fuzz_recv: records of datagrams as recvmsg would return them. */
	r = record(rec, ack, (size_t)ack_len, 0);
	put("fuzz_recv", "ack", rec, r);
	r = 0;
	r += record(rec + r, fork_ev, (size_t)fork_len, 0);
	r += record(rec + r, exit_ev, (size_t)exit_len, 0);
	r += record(rec + r, multi,
		    NLMSG_HDRLEN + CN_MSG_SIZE(((struct cn_msg *)(multi + NLMSG_HDRLEN))->len), 7);
	put("fuzz_recv", "events-and-foreign", rec, r);
	memcpy(multi, fork_ev, (size_t)fork_len);
	n = NLMSG_ALIGN((size_t)fork_len);
	memcpy(multi + n, exit_ev, (size_t)exit_len);
	n += (size_t)exit_len;
	r = record(rec, multi, n, 0);
	put("fuzz_recv", "multi-message", rec, r);

	kmod_reply();
	printf("gen-corpus: wrote %s\n", outdir);
	return 0;
}
