// SPDX-License-Identifier: GPL-2.0
/*
 * Module init and exit: the netlink unit and the layers of cnbus.ko
 * (cnbus_internal.h), brought up bottom to top and down in reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "cnbus_internal.h"

#define CNBUS_GROUPS_MIN 32
#define CNBUS_GROUPS_MAX 65536

module_param_named(unit, cnbus_dev.unit, int, 0444);
MODULE_PARM_DESC(unit, "netlink unit (protocol) of the bus (default 5)");

module_param_named(groups, cnbus_dev.groups, uint, 0444);
MODULE_PARM_DESC(groups, "multicast groups, i.e. the highest usable idx, 32..65536 (default 1024)");

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
		.input = cnbus_core_rx,
	};
	int err;

	if (cnbus_dev.unit < 0 || cnbus_dev.unit >= MAX_LINKS) {
		pr_err("unit %d out of range\n", cnbus_dev.unit);
		return -EINVAL;
	}
	if (cnbus_dev.groups < CNBUS_GROUPS_MIN || cnbus_dev.groups > CNBUS_GROUPS_MAX) {
		pr_err("groups %u out of range [%u, %u]\n", cnbus_dev.groups, CNBUS_GROUPS_MIN,
		       CNBUS_GROUPS_MAX);
		return -EINVAL;
	}
	cfg.groups = cnbus_dev.groups;

	err = cnbus_unit_free(cnbus_dev.unit);
	if (err) {
		pr_err("netlink unit %d is in use (%d): choose a free one with unit=\n",
		       cnbus_dev.unit, err);
		return err;
	}

	err = cnbus_cbus_init();
	if (err)
		return err;

	cnbus_dev.nls = netlink_kernel_create(&init_net, cnbus_dev.unit, &cfg);
	if (!cnbus_dev.nls) {
		pr_err("cannot create netlink unit %d (in use?)\n", cnbus_dev.unit);
		err = -EBUSY;
		goto out_cbus_exit;
	}

	err = cnbus_genl_init();
	if (err)
		goto out_release_nls;

	err = cnbus_core_init();
	if (err)
		goto out_genl_exit;

	pr_info("version %s on netlink unit %d, %u groups\n", CNBUS_VERSION, cnbus_dev.unit,
		cnbus_dev.groups);
	return 0;

out_genl_exit:
	cnbus_genl_exit();
out_release_nls:
	netlink_kernel_release(cnbus_dev.nls);
	cnbus_dev.nls = NULL;
out_cbus_exit:
	cnbus_cbus_exit();
	return err;
}

static void __exit cnbus_exit(void)
{
	cnbus_core_exit();
	cnbus_genl_exit();
	cnbus_cbus_exit(); /* drains the queues through cnbus_dev.nls */
	netlink_kernel_release(cnbus_dev.nls);
	cnbus_notify_exit();
	pr_info("unloaded\n");
}

module_init(cnbus_init);
module_exit(cnbus_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("libcn project");
MODULE_DESCRIPTION("Kernel connector and CBUS on a private netlink unit");
MODULE_VERSION(CNBUS_VERSION);
