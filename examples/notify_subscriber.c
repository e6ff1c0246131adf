/*
 * notify_subscriber.c - ask kmod to announce callbacks registered or removed
 * with idx in [IDX, IDX+1) (any val), on group GROUP, and print each
 * announcement; the request is removed on exit (after COUNT events).
 *
 *   notify_subscriber [IDX [GROUP [COUNT]]]     (needs CAP_NET_ADMIN)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libcn.h>
#include <libcn/kmod.h>

int main(int argc, char **argv)
{
	uint32_t idx = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 0x123;
	uint32_t group = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 5;
	int count = argc > 3 ? atoi(argv[3]) : 2;
	struct cn_range idxs = { idx, 1 }, vals = { 0, 0xffffffff };
	union {
		struct cn_msg m;
		char b[CN_NOTIFY_SIZE(1, 1)];
	} u;
	struct cn_notification n;
	struct cn_message in;
	struct cn_sock *s = cn_bus_open(NULL);
	struct cn_msg *ctl;

	if (!s) {
		fprintf(stderr, "notify_subscriber: %s\n", strerror(errno));
		return 1;
	}
	ctl = cn_notify_build(&u, sizeof(u), &idxs, 1, &vals, 1, group);
	if (cn_join(s, group) < 0 || !ctl || cn_send(s, ctl, 0) < 0) {
		fprintf(stderr, "notify_subscriber: %s\n", strerror(errno));
		return 1;
	}
	printf("watching idx 0x%x on group %u\n", idx, group);
	fflush(stdout);
	while (count > 0) {
		int r = cn_recv(s, &in, 0);

		if (r == -ENOBUFS) {
			fprintf(stderr, "overrun: notifications lost\n");
			continue;
		}
		if (r < 0)
			break;
		if (in.group != group || cn_notify_decode(in.msg, &n) < 0)
			continue;
		printf("%s 0x%x.0x%x\n", n.added ? "added" : "removed", n.idx, n.val);
		fflush(stdout);
		count--;
	}
	ctl = cn_notify_build_remove(&u, sizeof(u), &idxs, 1, &vals, 1);
	if (ctl)
		cn_send(s, ctl, 0);
	cn_close(s);
	return 0;
}
