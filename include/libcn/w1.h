/* SPDX-License-Identifier: LGPL-2.1-or-later WITH Linux-syscall-note */
/*
 * libcn/w1.h - the w1 (1-Wire) netlink protocol and builders of w1 requests.
 *
 * The kernel's w1 core (drivers/w1/w1_netlink.c, connector id {CN_W1_IDX,
 * CN_W1_VAL}) takes requests from userspace and answers them; its wire
 * format (drivers/w1/w1_netlink.h) is not in the kernel's uapi headers, so
 * libcn carries it here, field for field, under its own names. A request
 * is one struct cn_msg whose payload holds struct cn_w1_msg messages back
 * to back, each followed by its commands (struct cn_w1_cmd, each followed
 * by its data). Build one with cn_w1_init, cn_w1_add_msg and cn_w1_add_cmd,
 * and send it with cn_request_all(..., CN_REPLY_W1, ...) (libcn.h), which
 * hands each answer to a callback and returns when the kernel has answered
 * every command: cn_request_all(3).
 */
#ifndef LIBCN_W1_H
#define LIBCN_W1_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include <libcn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cn_msg.flags of a request (enum w1_cn_msg_flags): answer in fewer
 * netlink messages, several records back to back in one (W1_CN_BUNDLE;
 * the receive calls split them, see cn_parse_next). The flag came with
 * the kernel's check of flags (an unknown one: -EINVAL) and w1's present
 * acks (commit 8a0427d192e6, "w1: optional bundling of netlink kernel
 * replies"); an older w1 ignored cn_msg.flags and answered with other
 * acks, which cn_request_all does not follow. */
#define CN_W1_BUNDLE 0x1u

/* struct cn_w1_msg.type (enum w1_netlink_message_types). The first four
 * are notifications the kernel multicasts to group CN_W1_IDX; the last
 * three are requests. */
#define CN_W1_SLAVE_ADD	    0
#define CN_W1_SLAVE_REMOVE  1
#define CN_W1_MASTER_ADD    2
#define CN_W1_MASTER_REMOVE 3
#define CN_W1_MASTER_CMD    4 /* commands on a bus master, by its id */
#define CN_W1_SLAVE_CMD	    5 /* reset, select the slave (by its ROM id), then its commands */
#define CN_W1_LIST_MASTERS  6 /* the ids of every bus master */

/* struct cn_w1_cmd.cmd (enum w1_commands). */
#define CN_W1_CMD_READ	       0 /* read len bytes (the request carries len bytes of room) */
#define CN_W1_CMD_WRITE	       1 /* write len bytes */
#define CN_W1_CMD_SEARCH       2 /* master: search the bus; answers the ROM ids found */
#define CN_W1_CMD_ALARM_SEARCH 3 /* master: search the slaves in alarm */
#define CN_W1_CMD_TOUCH	       4 /* write len bytes bit by bit, answering the bits read */
#define CN_W1_CMD_RESET	       5 /* master: reset the bus */
#define CN_W1_CMD_SLAVE_ADD    6 /* master: attach the slave whose 8-byte ROM id is the data */
#define CN_W1_CMD_SLAVE_REMOVE 7 /* master: detach it */
#define CN_W1_CMD_LIST_SLAVES  8 /* master: the ROM ids of the slaves the kernel knows */

/* One w1 message (struct w1_netlink_msg): a request's target, or an
 * answer's. A slave's ROM id is the 64-bit number the bus sends (family
 * code in the low byte, the CRC in the high byte) as a __u64 in host byte
 * order, as the kernel stores it (struct w1_reg_num); a master is named by
 * mst.id. */
struct cn_w1_msg {
	__u8 type;   /* CN_W1_* */
	__u8 status; /* answers: 0, or the error as a positive errno (a u8) */
	__u16 len;   /* bytes of data that follow */
	union {
		__u8 id[8];
		struct {
			__u32 id;
			__u32 res;
		} mst;
	} id;
	__u8 data[];
};

/* One command of a CN_W1_MASTER_CMD or CN_W1_SLAVE_CMD message (struct
 * w1_netlink_cmd), followed by len bytes of data. */
struct cn_w1_cmd {
	__u8 cmd; /* CN_W1_CMD_* */
	__u8 res;
	__u16 len;
	__u8 data[];
};

/*
 * Start a w1 request in `buf` (bufsize bytes, aligned for struct cn_msg):
 * id {CN_W1_IDX, CN_W1_VAL}, cn_msg.flags = `flags` (0 or CN_W1_BUNDLE),
 * no payload yet. Returns the message, or NULL with errno EINVAL (NULL buf,
 * unknown flags) or EMSGSIZE (bufsize below sizeof(struct cn_msg)).
 */
CN_EXPORT struct cn_msg *cn_w1_init(void *buf, size_t bufsize, unsigned int flags);

/*
 * Append a w1 message of `type` to request `req` (built in bufsize bytes by
 * cn_w1_init): CN_W1_SLAVE_CMD with the slave's 64-bit ROM id,
 * CN_W1_MASTER_CMD with the master's id (as CN_W1_LIST_MASTERS answers
 * it), CN_W1_LIST_MASTERS (id ignored). Commands follow with
 * cn_w1_add_cmd. Returns 0, or -EINVAL (a NULL or non-w1 request, a type
 * other than those three, a master's id above UINT32_MAX), -EMSGSIZE (no room in bufsize, or the request
 * would pass CN_MSG_MAX_LEN, which the kernel's connector drops).
 */
CN_EXPORT int cn_w1_add_msg(struct cn_msg *req, size_t bufsize, unsigned int type, uint64_t id);

/*
 * Append command `cmd` with `len` bytes of `data` to the last w1 message of
 * `req` (a CN_W1_SLAVE_CMD or CN_W1_MASTER_CMD). data NULL puts len zero
 * bytes: the room a CN_W1_CMD_READ needs for what it reads. A command the
 * kernel does not know is sent as it is (the kernel answers it -EINVAL).
 * Returns 0, -EINVAL (NULL req, no message to add to, a
 * CN_W1_LIST_MASTERS message, cmd above 255), -EMSGSIZE as cn_w1_add_msg.
 */
CN_EXPORT int cn_w1_add_cmd(struct cn_msg *req, size_t bufsize, unsigned int cmd, const void *data,
			    size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LIBCN_W1_H */
