// SPDX-License-Identifier: GPL-2.0
/*
 * cnbus_core.c - connector core: netlink unit, callbacks, send, /proc.
 *
 * Every message from userspace is validated and then dispatched
 * synchronously, in the sender's context, to the callback registered for
 * its id: nothing is queued per callback, so no message can overwrite
 * another. Callbacks live on an RCU list; each call holds a reference so a
 * callback can be removed while messages are in flight: removal waits for
 * the running calls.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/capability.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>

#include <libcn/proto.h>

#include "cnbus_internal.h"

int cnbus_unit = 5; /* NETLINK_NFLOG, unused since Linux 3.17 */
module_param_named(unit, cnbus_unit, int, 0444);
MODULE_PARM_DESC(unit, "netlink unit (protocol) of the bus (default 5)");

unsigned int cnbus_groups = 1024;
module_param_named(groups, cnbus_groups, uint, 0444);
MODULE_PARM_DESC(groups, "number of multicast groups, i.e. highest usable idx (default 1024)");

struct sock *cnbus_nls;
struct cnbus_stats cnbus_stats;
LIST_HEAD(cnbus_callbacks);
static DEFINE_MUTEX(cnbus_callbacks_lock); /* writers of cnbus_callbacks */

static bool cnbus_id_eq(const struct cb_id *a, const struct cb_id *b)
{
	return a->idx == b->idx && a->val == b->val;
}

static bool cnbus_id_is_notify(const struct cb_id *id)
{
	return id->idx == CN_NOTIFY_IDX && id->val == CN_NOTIFY_VAL;
}

/* Caller holds rcu_read_lock() or cnbus_callbacks_lock. */
static struct cnbus_callback *cnbus_find(const struct cb_id *id)
{
	struct cnbus_callback *cb;

	list_for_each_entry_rcu(cb, &cnbus_callbacks, list,
				lockdep_is_held(&cnbus_callbacks_lock)) {
		if (cnbus_id_eq(&cb->id, id))
			return cb;
	}
	return NULL;
}

static struct cnbus_callback *cnbus_get(const struct cb_id *id)
{
	struct cnbus_callback *cb;

	rcu_read_lock();
	cb = cnbus_find(id);
	if (cb && !refcount_inc_not_zero(&cb->refcnt))
		cb = NULL;
	rcu_read_unlock();
	return cb;
}

static void cnbus_put(struct cnbus_callback *cb)
{
	if (refcount_dec_and_test(&cb->refcnt))
		complete(&cb->released);
}

int cnbus_group_of(const struct cb_id *id, u32 *group)
{
	struct cnbus_callback *cb;
	int err = -ENODEV;

	rcu_read_lock();
	cb = cnbus_find(id);
	if (cb) {
		*group = cb->id.idx;
		err = 0;
	}
	rcu_read_unlock();
	return err;
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

	mutex_lock(&cnbus_callbacks_lock);
	if (cnbus_find(id)) {
		err = -EEXIST;
		goto out_unlock_free;
	}
	list_add_tail_rcu(&cb->list, &cnbus_callbacks);
	cnbus_notify_event(id, CN_NOTIFY_ADDED);
	mutex_unlock(&cnbus_callbacks_lock);
	pr_debug("added callback %s %u.%u\n", cb->name, id->idx, id->val);
	return 0;

out_unlock_free:
	mutex_unlock(&cnbus_callbacks_lock);
	kfree(cb);
	return err;
}
EXPORT_SYMBOL_GPL(cnbus_add_callback);

void cnbus_del_callback(const struct cb_id *id)
{
	struct cnbus_callback *cb;

	mutex_lock(&cnbus_callbacks_lock);
	cb = cnbus_find(id);
	if (!cb) {
		mutex_unlock(&cnbus_callbacks_lock);
		pr_warn("no callback %u.%u to remove\n", id->idx, id->val);
		return;
	}
	list_del_rcu(&cb->list);
	cnbus_notify_event(id, CN_NOTIFY_REMOVED);
	mutex_unlock(&cnbus_callbacks_lock);

	/* No new lookup can find it after the grace period... */
	synchronize_rcu();
	/* ...and the calls already running hold references. */
	cnbus_put(cb);
	wait_for_completion(&cb->released);
	pr_debug("removed callback %s %u.%u\n", cb->name, id->idx, id->val);
	kfree(cb);
}
EXPORT_SYMBOL_GPL(cnbus_del_callback);

struct sk_buff *cnbus_msg_skb(const struct cn_msg *msg, u32 group, gfp_t gfp)
{
	size_t size = sizeof(*msg) + msg->len;
	struct nlmsghdr *nlh;
	struct sk_buff *skb;

	skb = nlmsg_new(size, gfp);
	if (!skb)
		return NULL;
	nlh = nlmsg_put(skb, 0, msg->seq, NLMSG_DONE, size, 0);
	if (!nlh) {
		kfree_skb(skb);
		return NULL;
	}
	memcpy(nlmsg_data(nlh), msg, size);
	NETLINK_CB(skb).dst_group = group;
	return skb;
}

/* Consumes @skb. */
int cnbus_broadcast(struct sk_buff *skb, u32 group, gfp_t gfp)
{
	if (!group || group > cnbus_groups) {
		kfree_skb(skb);
		return -EINVAL;
	}
	return netlink_broadcast(cnbus_nls, skb, 0, group, gfp);
}

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
	err = netlink_unicast(cnbus_nls, skb, portid, 1);
	if (err == -EAGAIN) {
		atomic64_inc(&cnbus_stats.reply_dropped);
		return -ENOBUFS;
	}
	return min(0, err);
}
EXPORT_SYMBOL_GPL(cnbus_reply);

int cnbus_send(const struct cn_msg *msg, u32 portid, u32 group, gfp_t gfp)
{
	struct sk_buff *skb;
	int err;

	if (!msg || msg->len > CONNECTOR_MAX_MSG_SIZE)
		return -EINVAL;
	if (portid)
		return cnbus_reply(msg, portid, gfp);
	if (!group) {
		err = cnbus_group_of(&msg->id, &group);
		if (err)
			return err;
	}
	if (!group || group > cnbus_groups)
		return -EINVAL;
	if (!netlink_has_listeners(cnbus_nls, group))
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
	atomic64_inc(&cnbus_stats.dispatched);
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
static void cnbus_rx_skb(struct sk_buff *skb)
{
	unsigned int remaining = skb->len;
	struct nlmsghdr *nlh = (struct nlmsghdr *)skb->data;
	int err;

	do {
		atomic64_inc(&cnbus_stats.received);
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
	list_for_each_entry_rcu(cb, &cnbus_callbacks, list)
		seq_printf(m, "%-15s %u:%u\n", cb->name, cb->id.idx, cb->id.val);
	rcu_read_unlock();
	return 0;
}

/*
 * Is @unit free? netlink_kernel_create() accepts a unit that another user
 * registered without a kernel socket at port 0 (NETLINK_USERSOCK, ...):
 * the unit's sockets would then pin that user, not us, and the unit's
 * traffic would run our input function after we are gone. Creating a
 * socket succeeds exactly when the unit is registered (it may first load
 * the module that owns the unit, as any socket() would).
 */
static int cnbus_unit_free(int unit)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, PF_NETLINK, SOCK_RAW, unit, &sock);
	if (err == -EPROTONOSUPPORT)
		return 0;
	if (err)
		return err;
	sock_release(sock);
	return -EBUSY;
}

static int __init cnbus_init(void)
{
	struct netlink_kernel_cfg cfg = {
		.groups = 0,
		.flags = NL_CFG_F_NONROOT_RECV,
		.input = cnbus_rx_skb,
	};
	int err;

	if (cnbus_unit < 0 || cnbus_unit >= MAX_LINKS) {
		pr_err("unit %d out of range\n", cnbus_unit);
		return -EINVAL;
	}
	if (cnbus_groups < 32 || cnbus_groups > 65536) {
		pr_err("groups %u out of range [32, 65536]\n", cnbus_groups);
		return -EINVAL;
	}
	cfg.groups = cnbus_groups;

	err = cnbus_unit_free(cnbus_unit);
	if (err) {
		pr_err("netlink unit %d is in use (%d): choose a free one with unit=\n", cnbus_unit,
		       err);
		return err;
	}

	err = cnbus_cbus_init();
	if (err)
		return err;

	cnbus_nls = netlink_kernel_create(&init_net, cnbus_unit, &cfg);
	if (!cnbus_nls) {
		pr_err("cannot create netlink unit %d (in use?)\n", cnbus_unit);
		err = -EBUSY;
		goto out_cbus_exit;
	}

	err = cnbus_genl_init();
	if (err)
		goto out_release_nls;

	if (!proc_create_single("cnbus", 0444, init_net.proc_net, cnbus_proc_show)) {
		err = -ENOMEM;
		goto out_genl_exit;
	}

	pr_info("version %s on netlink unit %d, %u groups\n", CNBUS_VERSION, cnbus_unit,
		cnbus_groups);
	return 0;

out_genl_exit:
	cnbus_genl_exit();
out_release_nls:
	netlink_kernel_release(cnbus_nls);
	cnbus_nls = NULL;
out_cbus_exit:
	cnbus_cbus_exit();
	return err;
}

static void __exit cnbus_exit(void)
{
	remove_proc_entry("cnbus", init_net.proc_net);
	cnbus_genl_exit();
	cnbus_cbus_exit(); /* drains the queues through cnbus_nls */
	netlink_kernel_release(cnbus_nls);
	cnbus_notify_exit();
	WARN_ON(!list_empty(&cnbus_callbacks));
	pr_info("unloaded\n");
}

module_init(cnbus_init);
module_exit(cnbus_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("libcn project");
MODULE_DESCRIPTION("Kernel connector and CBUS on a private netlink unit");
MODULE_VERSION(CNBUS_VERSION);
