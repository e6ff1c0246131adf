// SPDX-License-Identifier: GPL-2.0
/*
 * Connector core: callback registration, send and reply, the netlink input,
 * /proc/net/cnbus.
 *
 * Every message from userspace is validated and then dispatched
 * synchronously, in the sender's context, to the callback registered for
 * its id: nothing is queued per callback, so no message can overwrite
 * another. Callbacks live on an RCU list; each call holds a reference so a
 * callback can be removed while messages are in flight: removal waits for
 * the running calls, not for an RCU grace period (cnbus_del_callback()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>

#include <libcn/proto.h>

#include "cnbus_internal.h"

static bool cnbus_id_is_notify(const struct cb_id *id)
{
	return id->idx == CN_NOTIFY_IDX && id->val == CN_NOTIFY_VAL;
}

int cnbus_add_callback(const struct cb_id *id, const char *name, cnbus_callback_t callback)
{
	struct cnbus_callback *cb;
	int err;

	if (!id || !name || !callback || cnbus_id_is_notify(id))
		return -EINVAL;

	cb = kzalloc(sizeof(*cb), GFP_KERNEL);
	if (!cb)
		return -ENOMEM;
	cb->id = *id;
	strscpy(cb->name, name, sizeof(cb->name));
	cb->callback = callback;
	refcount_set(&cb->refcnt, 1);
	init_completion(&cb->released);

	mutex_lock(&cnbus_dev.callbacks_lock);
	if (cnbus_find(id)) {
		err = -EEXIST;
		goto out_unlock_free;
	}
	list_add_tail_rcu(&cb->list, &cnbus_dev.callbacks);
	WRITE_ONCE(cnbus_dev.callbacks_gen, cnbus_dev.callbacks_gen + 1);
	cnbus_notify_event(id, CN_NOTIFY_ADDED);
	mutex_unlock(&cnbus_dev.callbacks_lock);
	pr_debug("added callback %s %u.%u\n", cb->name, id->idx, id->val);
	return 0;

out_unlock_free:
	mutex_unlock(&cnbus_dev.callbacks_lock);
	kfree(cb);
	return err;
}
EXPORT_SYMBOL_GPL(cnbus_add_callback);

void cnbus_del_callback(const struct cb_id *id)
{
	struct cnbus_callback *cb;

	mutex_lock(&cnbus_dev.callbacks_lock);
	cb = cnbus_find(id);
	if (!cb) {
		mutex_unlock(&cnbus_dev.callbacks_lock);
		pr_warn("no callback %u.%u to remove\n", id->idx, id->val);
		return;
	}
	list_del_rcu(&cb->list);
	WRITE_ONCE(cnbus_dev.callbacks_gen, cnbus_dev.callbacks_gen + 1);
	cnbus_notify_event(id, CN_NOTIFY_REMOVED);
	mutex_unlock(&cnbus_dev.callbacks_lock);

	/*
	 * Drop the list's reference and wait for the calls that hold one.
	 * Once the count is zero no call can start: a lookup that still
	 * finds @cb (it left the list, but an RCU reader may hold it) fails
	 * to take a reference. So no grace period is waited for here, and
	 * removing N callbacks (a module's unload) costs no N of them; only
	 * the memory waits for one, for those readers, in kfree_rcu().
	 */
	cnbus_put(cb);
	wait_for_completion(&cb->released);
	pr_debug("removed callback %s %u.%u\n", cb->name, id->idx, id->val);
	kfree_rcu(cb, rcu);
}
EXPORT_SYMBOL_GPL(cnbus_del_callback);

int cnbus_reply(const struct cn_msg *msg, u32 portid, gfp_t gfp)
{
	struct sk_buff *skb;
	int err;

	if (!msg || msg->len > CONNECTOR_MAX_MSG_SIZE || !portid)
		return -EINVAL;
	skb = cnbus_msg_skb(msg, 0, gfp);
	if (!skb)
		return -ENOMEM;
	/*
	 * Never wait for room: callbacks run with a reference that
	 * cnbus_del_callback() waits for, so a receiver that never reads would
	 * block the callback, and the unload of its module, for ever. A full
	 * receiver loses the reply and sees ENOBUFS on its next recv.
	 */
	err = netlink_unicast(cnbus_dev.nls, skb, portid, 1);
	if (err == -EAGAIN) {
		atomic64_inc(&cnbus_dev.stats.reply_dropped);
		return -ENOBUFS;
	}
	return min(0, err);
}
EXPORT_SYMBOL_GPL(cnbus_reply);

bool cnbus_has_listeners(u32 group)
{
	struct sock *nls = READ_ONCE(cnbus_dev.nls);

	/* netlink_has_listeners() itself answers false for groups it has not. */
	return nls && netlink_has_listeners(nls, group);
}
EXPORT_SYMBOL_GPL(cnbus_has_listeners);

int cnbus_send(const struct cn_msg *msg, u32 portid, u32 group, gfp_t gfp)
{
	struct sk_buff *skb;
	int err;

	if (!msg || msg->len > CONNECTOR_MAX_MSG_SIZE)
		return -EINVAL;
	if (portid)
		return cnbus_reply(msg, portid, gfp);
	err = cnbus_dest_group(&msg->id, group, &group);
	if (err)
		return err;
	if (!netlink_has_listeners(cnbus_dev.nls, group))
		return -ESRCH;
	skb = cnbus_msg_skb(msg, group, gfp);
	if (!skb)
		return -ENOMEM;
	return cnbus_broadcast(skb, group, gfp);
}
EXPORT_SYMBOL_GPL(cnbus_send);

/* Validate and dispatch one netlink message; returns 0 or -errno. */
static int cnbus_rx_msg(struct sk_buff *skb, struct nlmsghdr *nlh)
{
	struct cnbus_callback *cb;
	struct cn_msg *msg;
	size_t payload;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*msg))) {
		cnbus_refuse(CNBUS_REFUSED_A_SHORT);
		return -EINVAL;
	}
	msg = nlmsg_data(nlh);
	payload = nlmsg_len(nlh) - sizeof(*msg);
	if (msg->len > CONNECTOR_MAX_MSG_SIZE) {
		cnbus_refuse(CNBUS_REFUSED_A_OVERSIZE);
		return -EMSGSIZE;
	}
	/* Exactly cn_msg.len bytes, plus netlink alignment padding at most. */
	if (payload < msg->len || payload > NLMSG_ALIGN(sizeof(*msg) + msg->len) - sizeof(*msg)) {
		cnbus_refuse(CNBUS_REFUSED_A_BAD_LEN);
		return -EINVAL;
	}

	if (cnbus_id_is_notify(&msg->id))
		return cnbus_notify_ctl(skb, msg); /* counts it either way */

	cb = cnbus_get(&msg->id);
	if (!cb) {
		cnbus_refuse(CNBUS_REFUSED_A_NO_CALLBACK);
		return -ENODEV;
	}
	atomic64_inc(&cnbus_dev.stats.dispatched);
	cb->callback(msg, &NETLINK_CB(skb));
	cnbus_put(cb);
	return 0;
}

/*
 * Netlink input: runs in the sender's context for each datagram sent to
 * port 0. A datagram may hold several messages; each is handled. Errors
 * (and successes) are answered with NLMSG_ERROR only when the sender set
 * NLM_F_ACK, so plain connector programs never see unexpected messages.
 * Every message, and any runt after the last one, is received once and
 * then dispatched or refused once: the counters add up.
 */
void cnbus_core_rx(struct sk_buff *skb)
{
	unsigned int remaining = skb->len;
	struct nlmsghdr *nlh = (struct nlmsghdr *)skb->data;
	int err;

	do {
		atomic64_inc(&cnbus_dev.stats.received);
		if (remaining < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN) {
			cnbus_refuse(CNBUS_REFUSED_A_SHORT);
			return;
		}
		if (nlh->nlmsg_len > remaining) {
			cnbus_refuse(CNBUS_REFUSED_A_TRUNCATED);
			return;
		}
		err = cnbus_rx_msg(skb, nlh);
		if (nlh->nlmsg_flags & NLM_F_ACK)
			netlink_ack(skb, nlh, err, NULL);
		if (NLMSG_ALIGN(nlh->nlmsg_len) >= remaining)
			return;
		remaining -= NLMSG_ALIGN(nlh->nlmsg_len);
		nlh = (struct nlmsghdr *)((u8 *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));
	} while (remaining);
}

static int cnbus_proc_show(struct seq_file *m, void *v)
{
	struct cnbus_callback *cb;

	seq_puts(m, "Name            ID\n");
	rcu_read_lock();
	list_for_each_entry_rcu(cb, &cnbus_dev.callbacks, list)
		seq_printf(m, "%-15s %u:%u\n", cb->name, cb->id.idx, cb->id.val);
	rcu_read_unlock();
	return 0;
}

int cnbus_core_init(void)
{
	if (!proc_create_single("cnbus", 0444, init_net.proc_net, cnbus_proc_show))
		return -ENOMEM;
	return 0;
}

void cnbus_core_exit(void)
{
	remove_proc_entry("cnbus", init_net.proc_net);
	WARN_ON(!list_empty(&cnbus_dev.callbacks));
}
