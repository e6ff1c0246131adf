/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API of the cnbus connector/CBUS module.
 *
 * cnbus is a connector (the 2005 "kernel connector" design) on its own
 * netlink unit, coexisting with the kernel's built-in connector. Messages
 * are framed as one struct nlmsghdr (type NLMSG_DONE) followed by a
 * struct cn_msg and cn_msg.len bytes of payload.
 *
 * Callbacks are registered by struct cb_id {idx, val}; each registered id
 * owns multicast group idx. Groups are 1..groups (module parameter): a
 * callback with idx 0 or above that has no group, so sends and inserts that
 * look its group up get -EINVAL.
 */
#ifndef CNBUS_H
#define CNBUS_H

#include <linux/connector.h>
#include <linux/gfp.h>
#include <linux/netlink.h>
#include <linux/types.h>

/**
 * typedef cnbus_callback_t - called for every message sent to an id.
 * @msg: the message; valid only for the duration of the call.
 * @nsp: netlink parameters of the sender; nsp->portid is the port to
 *       answer with cnbus_reply(), nsp->sk the sending socket.
 *
 * Runs in the sender's process context (the netlink input path), possibly
 * on several CPUs at once. It may sleep.
 */
typedef void (*cnbus_callback_t)(struct cn_msg *msg, struct netlink_skb_parms *nsp);

/**
 * cnbus_add_callback() - register a callback for an id.
 * @id: the id; {CN_NOTIFY_IDX, CN_NOTIFY_VAL} is reserved.
 * @name: short name shown in /proc/net/cnbus (copied).
 * @callback: the function to run.
 *
 * Sends an "added" notification to matching notification requests.
 * Process context only.
 *
 * Return: 0, -EEXIST if the id is taken, -EINVAL for the reserved id,
 * -ENOMEM.
 */
int cnbus_add_callback(const struct cb_id *id, const char *name, cnbus_callback_t callback);

/**
 * cnbus_del_callback() - remove the callback for an id.
 * @id: the id.
 *
 * Waits until every running invocation of the callback has returned, so
 * the caller may free what the callback uses (or unload) afterwards. Sends a
 * "removed" notification to matching notification requests. Process context
 * only; never call it from the callback itself.
 */
void cnbus_del_callback(const struct cb_id *id);

/**
 * cnbus_send() - send a message to a port or a multicast group.
 * @msg: the message (header and msg->len bytes of payload); copied.
 * @portid: destination port, or 0 to multicast.
 * @group: multicast group when @portid is 0; 0 means the group of the
 *         callback registered for msg->id.
 * @gfp: allocation flags of the caller's context.
 *
 * Return: 0 or a negative errno: -ENODEV (group 0 and no callback for the
 * id), -EINVAL (msg->len too large, or the group is 0 or beyond the unit's
 * groups),
 * -ESRCH (nobody listens on the group), -ENOBUFS (a listener overran),
 * -ENOMEM, or netlink_unicast()'s error for a port.
 */
int cnbus_send(const struct cn_msg *msg, u32 portid, u32 group, gfp_t gfp);

/**
 * cnbus_reply() - send a message to one port (unicast).
 * @msg: the message; copied.
 * @portid: the destination, usually nsp->portid of the message answered.
 * @gfp: allocation flags of the caller's context.
 *
 * Never waits for room in the receiver's buffer: a callback that waited
 * for a receiver that does not read would hold up cnbus_del_callback()
 * (and the unload of its module) for as long. A full receiver loses the
 * message, gets ENOBUFS on its next recv, and kmod counts it
 * (CNBUS_A_REPLY_DROPPED).
 *
 * Return: 0 or a negative errno (-ECONNREFUSED when the port is gone,
 * -ENOBUFS when its buffer is full, -ENOMEM).
 */
int cnbus_reply(const struct cn_msg *msg, u32 portid, gfp_t gfp);

/**
 * cnbus_has_listeners() - does any socket listen to a multicast group?
 * @group: the group (1..groups); 0 or beyond the unit's groups: false.
 *
 * One bit test, usable from any context cnbus_insert() is: a producer
 * calls it first so that it builds nothing for a group nobody reads. The
 * answer can change right after the call (a socket joins or leaves).
 *
 * Return: true when at least one socket has joined @group.
 */
bool cnbus_has_listeners(u32 group);

/**
 * cnbus_insert() - queue a message for asynchronous multicast (CBUS).
 * @msg: the message; copied into the current CPU's queue.
 * @gfp: the caller's context: when it allows blocking (GFP_KERNEL) and
 *       the CPU's queue is full, the call waits for the queue's worker
 *       instead of failing. Nothing is allocated. A task with interrupts
 *       on that passes a blocking gfp must be able to sleep (might_sleep()
 *       checks it at every call); in hard IRQ, softirq or with interrupts
 *       off the gfp is taken as GFP_ATOMIC.
 *
 * Usable from any context except NMI, including hard IRQ and with
 * interrupts off, on PREEMPT_RT too (a raw spinlock and a copy into
 * preallocated memory). The message goes to the group of the callback
 * registered for msg->id and is queued on the current CPU; a per-CPU worker
 * sends it, packed with the messages queued after it for the same group
 * into one datagram (module parameter cbus_batch): at once after a quiet
 * spell, up to cbus_defer_us later (rounded up to jiffies) while the CPU's
 * queue was drained twice in a row that recently. Messages inserted on one
 * CPU are sent in that order, always (nothing is sent from the caller's
 * context); there is no order between CPUs, so carry the CPU id in the
 * payload. The queue holds cbus_qlen small messages plus cbus_budget bytes.
 *
 * Return: 0 when accepted (it then counts as inserted and ends up sent, or
 * dropped if the worker finds no memory), -ENOBUFS (queue full and @gfp does
 * not allow waiting; counted as refused), -EMSGSIZE (larger than the whole
 * queue), -ENODEV (no callback for msg->id), -EINVAL, -ESHUTDOWN (the
 * module is unloading).
 */
int cnbus_insert(const struct cn_msg *msg, gfp_t gfp);

/**
 * cnbus_flush() - wait until the CBUS queues are drained.
 *
 * Every message accepted by cnbus_insert() before the call has been sent
 * (or counted as dropped) when it returns. Process context only; it
 * sleeps. Used by benchmarks and tests to time the drain.
 */
void cnbus_flush(void);

#endif /* CNBUS_H */
