/*
 * kmod_echo_client.c - request/reply with kmod's test module (cnbus_test):
 * finds kmod's unit, sends text to 0x123.0x456 and waits for the echo that
 * carries the same seq and ack + 1.
 *
 *   kmod_echo_client [TEXT]
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libcn.h>
#include <libcn/kmod.h>

int main(int argc, char **argv)
{
	const char *text = argc > 1 ? argv[1] : "hello";
	union {
		struct cn_msg m;
		char b[CN_MSG_SIZE(256)];
	} u;
	struct cn_message reply;
	struct cn_msg *req;
	struct cn_sock *s = cn_bus_open(NULL);
	int r;

	if (!s) {
		fprintf(stderr, "kmod_echo_client: %s%s\n", strerror(errno),
			errno == ENOENT ? " (is cnbus.ko loaded?)" : "");
		return 1;
	}
	req = cn_msg_init(&u, sizeof(u), 0x123, 0x456, text, strlen(text) + 1);
	if (!req) {
		fprintf(stderr, "kmod_echo_client: text too long\n");
		return 2;
	}
	r = cn_request(s, req, 0, CN_MATCH_STRICT, 1000, &reply);
	if (r < 0) {
		fprintf(stderr, "kmod_echo_client: request: %s\n", strerror(-r));
		cn_close(s);
		return r == -ETIMEDOUT ? 3 : 1;
	}
	printf("sent seq=%u ack=%u, reply seq=%u ack=%u \"%.*s\"\n", req->seq, req->ack,
	       reply.msg->seq, reply.msg->ack, (int)reply.msg->len, reply.msg->data);
	cn_close(s);
	return 0;
}
