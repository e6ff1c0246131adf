// SPDX-License-Identifier: GPL-2.0
/*
 * cn_hello.c - a kernel module that answers messages through cnbus.ko
 * (kmod/cnbus.h): it registers a callback on its own id and replies to each
 * message's sender with the connector's genealogy (same seq, ack + 1) and
 * the payload "hello, <payload>".
 *
 *   make KDIR=/lib/modules/$(uname -r)/build    (needs kmod built first)
 *   insmod kmod/cnbus.ko && insmod examples/kernel/cn_hello.ko
 *   cnctl request --kmod 0x124.0x1 world        ->  "hello, world"
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "cnbus.h"

static unsigned int idx = 0x124;
module_param(idx, uint, 0444);
MODULE_PARM_DESC(idx, "idx of the id answered, also its multicast group (default 0x124)");

static unsigned int val = 0x1;
module_param(val, uint, 0444);
MODULE_PARM_DESC(val, "val of the id answered (default 0x1)");

static struct cb_id cn_hello_id;
static atomic_t cn_hello_answered = ATOMIC_INIT(0);

/* Runs in the sender's context for each message sent to our id. */
static void cn_hello_callback(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	static const char prefix[] = "hello, ";
	size_t plen = sizeof(prefix) - 1;
	size_t n = min_t(size_t, msg->len, CONNECTOR_MAX_MSG_SIZE - plen - 1);
	struct cn_msg *reply;
	int err;

	reply = kzalloc(sizeof(*reply) + plen + n + 1, GFP_KERNEL);
	if (!reply)
		return;
	/* Genealogy: the answer keeps the request's id and seq, ack + 1. */
	reply->id = msg->id;
	reply->seq = msg->seq;
	reply->ack = msg->ack + 1;
	memcpy(reply->data, prefix, plen);
	memcpy(reply->data + plen, msg->data, n);
	/* Text: end with exactly one NUL, whether or not the request had one. */
	if (n && reply->data[plen + n - 1] == '\0')
		n--;
	reply->len = plen + n + 1;

	err = cnbus_reply(reply, nsp->portid, GFP_KERNEL);
	if (err)
		pr_debug("reply to port %u: %d\n", nsp->portid, err);
	else
		atomic_inc(&cn_hello_answered);
	kfree(reply);
}

static int __init cn_hello_init(void)
{
	int err;

	cn_hello_id.idx = idx;
	cn_hello_id.val = val;
	err = cnbus_add_callback(&cn_hello_id, "cn_hello", cn_hello_callback);
	if (err) {
		pr_err("cannot register %#x.%#x: %d\n", idx, val, err);
		return err;
	}
	pr_info("answering on %#x.%#x\n", idx, val);
	return 0;
}

static void __exit cn_hello_exit(void)
{
	/* Waits for callbacks still running: nothing of ours is used after. */
	cnbus_del_callback(&cn_hello_id);
	pr_info("answered %d messages\n", atomic_read(&cn_hello_answered));
}

module_init(cn_hello_init);
module_exit(cn_hello_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("libcn project");
MODULE_DESCRIPTION("Example: answer connector messages through cnbus");
