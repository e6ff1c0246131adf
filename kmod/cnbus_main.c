// SPDX-License-Identifier: GPL-2.0
/*
 * Module init and exit: the netlink unit and the layers of cnbus.ko
 * (cnbus_internal.h) that have something to set up, in this order:
 *
 *   the unit    the netlink kernel socket (and, when it goes, the
 *               notification requests that came in through it)
 *   cbus        the CPU hotplug state: a ring per online CPU, their workers
 *   genl        the generic netlink family
 *   core        /proc/net/cnbus
 *
 * Exit, and a failed init, undo them in the reverse order: CBUS drains its
 * rings through the unit, so the unit comes first and goes last (its
 * workers must be gone before the unit's socket is released).
 * The parameters were checked as they were set (cnbus_params.c).
 *
 * So a later step can fail after the unit exists (a ring allocation,
 * the genl family, /proc). A socket a user opens on the unit in that
 * window holds a reference on this module, which the kernel frees anyway
 * when init fails (as for any interface a failing init had registered).
 * The likely failure, a unit already in use, is found before anything
 * is registered (cnbus_unit_free()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include <libcn/cnbus_proc.h>

#include "cnbus_internal.h"

/*
 * Is @unit free? netlink_kernel_create() accepts a unit that another user
 * registered without a kernel socket at port 0 (NETLINK_USERSOCK, ...):
 * the unit's sockets would then pin that user, not us, and the unit's
 * traffic would run our input function after we are gone. Creating a
 * socket succeeds exactly when the unit is registered (it may first load
 * the module that owns the unit, as any socket() would).
 */
static int cnbus_unit_free(unsigned int unit)
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

/*
 * A socket joins @group (bind() or NETLINK_ADD_MEMBERSHIP; the kernel
 * calls this in the joining task). The process-event group carries argv,
 * which can hold what hidepid hides in /proc: only a task with
 * CAP_NET_ADMIN in the initial user namespace may join it. It is checked
 * whether cnbus_proc.ko is loaded or not, so that no socket can join
 * before the producer loads and keep its membership after.
 *
 * The privilege is the joining task's (capable()), not that of the
 * credentials the socket was opened with, as for the kernel's own groups:
 * netlink_bind() and NETLINK_ADD_MEMBERSHIP test the caller
 * (netlink_allowed()), and so do the connector's and generic netlink's
 * bind hooks; the file's credentials (netlink_capable()) are what the
 * kernel checks for a message a socket sends, where a privileged program
 * could be made to write on a socket someone else opened. A join is the
 * joining program's own act: a daemon that joins, then drops its
 * privileges keeps its membership, and a privileged task may join a
 * socket it was handed. The hook is not given the socket anyway.
 */
static int cnbus_unit_bind(struct net *net, int group)
{
	if (group == CNBUS_PROC_IDX && !capable(CAP_NET_ADMIN))
		return -EPERM;
	return 0;
}

/* Create the unit's kernel socket, cnbus_dev.nls. */
static int cnbus_unit_create(void)
{
	struct netlink_kernel_cfg cfg = {
		.groups = cnbus_dev.groups,
		.flags = NL_CFG_F_NONROOT_RECV,
		.input = cnbus_core_rx,
		.bind = cnbus_unit_bind,
	};
	int err;

	err = cnbus_unit_free(cnbus_dev.unit);
	if (err) {
		pr_err("netlink unit %u is in use (%d): choose a free one with unit=\n",
		       cnbus_dev.unit, err);
		return err;
	}
	cnbus_dev.nls = netlink_kernel_create(&init_net, cnbus_dev.unit, &cfg);
	if (!cnbus_dev.nls) {
		pr_err("cannot create netlink unit %u (in use?)\n", cnbus_dev.unit);
		return -EBUSY;
	}
	return 0;
}

/* Release the unit; the notification requests that came through it go too. */
static void cnbus_unit_release(void)
{
	netlink_kernel_release(cnbus_dev.nls);
	cnbus_dev.nls = NULL;
	cnbus_notify_exit();
}

static int __init cnbus_init(void)
{
	int err;

	err = cnbus_unit_create();
	if (err)
		return err;

	err = cnbus_cbus_init();
	if (err)
		goto out_unit_release;

	err = cnbus_genl_init();
	if (err)
		goto out_cbus_exit;

	err = cnbus_core_init();
	if (err)
		goto out_genl_exit;

	pr_info("version %s on netlink unit %u, %u groups\n", CNBUS_VERSION, cnbus_dev.unit,
		cnbus_dev.groups);
	return 0;

out_genl_exit:
	cnbus_genl_exit();
out_cbus_exit:
	cnbus_cbus_exit();
out_unit_release:
	cnbus_unit_release();
	return err;
}

static void __exit cnbus_exit(void)
{
	cnbus_core_exit();
	cnbus_genl_exit();
	cnbus_cbus_exit(); /* drains the rings through the unit */
	cnbus_unit_release();
	pr_info("unloaded\n");
}

module_init(cnbus_init);
module_exit(cnbus_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("libcn project");
MODULE_DESCRIPTION("Kernel connector and CBUS on a private netlink unit");
MODULE_VERSION(CNBUS_VERSION);
