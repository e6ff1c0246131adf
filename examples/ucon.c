/*
 * ucon.c - send and listen, like the kernel's old samples/connector/ucon.c.
 *
 *   ucon [-u UNIT] IDX VAL [COUNT]
 *
 * Joins group IDX, sends COUNT (default 3) text messages to id IDX.VAL and
 * prints every message that arrives, with its genealogy. Without -u it uses
 * the unit kmod reports (cn_bus_open).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/kmod.h>

int main(int argc, char **argv)
{
	union {
		struct cn_msg m;
		char b[CN_MSG_SIZE(64)];
	} u;
	struct cn_sock *s;
	struct cn_message in;
	int opt, unit = -1, count = 3;
	uint32_t idx, val;

	while ((opt = getopt(argc, argv, "u:")) != -1)
		unit = opt == 'u' ? atoi(optarg) : -1;
	if (argc - optind < 2) {
		fprintf(stderr, "usage: %s [-u UNIT] IDX VAL [COUNT]\n", argv[0]);
		return 2;
	}
	idx = (uint32_t)strtoul(argv[optind], NULL, 0);
	val = (uint32_t)strtoul(argv[optind + 1], NULL, 0);
	if (argc - optind > 2)
		count = atoi(argv[optind + 2]);

	s = unit >= 0 ? cn_open(unit, NULL) : cn_bus_open(NULL);
	if (!s) {
		fprintf(stderr, "ucon: open: %s\n", strerror(errno));
		return 1;
	}
	if (cn_join(s, idx) < 0)
		fprintf(stderr, "ucon: join %u: %s\n", idx, strerror(errno));

	for (int i = 0; i < count; i++) {
		char text[64];
		int n = snprintf(text, sizeof(text), "get test %d", i);
		struct cn_msg *m = cn_msg_init(&u, sizeof(u), idx, val, text, (size_t)n + 1);

		if (cn_send(s, m, 0) < 0) {
			fprintf(stderr, "ucon: send: %s\n", strerror(errno));
			break;
		}
		printf("sent %u.%u seq=%u ack=%u \"%s\"\n", idx, val, m->seq, m->ack, text);
	}
	/* Print what arrives for a while (2 s of quiet ends it). */
	cn_set_nonblocking(s, 1);
	for (int quiet = 0; quiet < 20;) {
		int r = cn_recv(s, &in, 0);

		if (r == -EAGAIN) {
			usleep(100000);
			quiet++;
			continue;
		}
		if (r == -ENOBUFS) {
			fprintf(stderr, "ucon: overrun, messages lost\n");
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "ucon: recv: %s\n", strerror(-r));
			break;
		}
		quiet = 0;
		printf("recv %u.%u seq=%u ack=%u len=%u group=%u \"%.*s\"\n", in.msg->id.idx,
		       in.msg->id.val, in.msg->seq, in.msg->ack, in.msg->len, in.group,
		       (int)strnlen((const char *)in.msg->data, in.msg->len), in.msg->data);
	}
	cn_close(s);
	return 0;
}
