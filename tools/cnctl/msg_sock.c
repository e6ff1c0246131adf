/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * msg_sock.c - the socket of cnctl's message subcommands: opened on the
 * netlink unit asked for (--unit), the kernel's connector, or the one kmod
 * reports (--kmod), with its receive buffer, and the errors of finding kmod.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libcn.h>
#include <libcn/kmod.h>

#include "common.h"

int cnctl_kmod_err(int r)
{
	switch (-r) {
	case ENOENT:
		/* cnbus.ko is not shipped with the kernel: say where it comes from. */
		cnctl_err(
		    "kmod is not loaded (no generic netlink family 'cnbus'): cnbus.ko is "
		    "not part of the kernel; build it from libcn's source tree with 'make -C "
		    "kmod' and insmod kmod/cnbus.ko, or install it with DKMS (kmod/README.md)");
		return CNCTL_EXIT_NOCONN;
	case EPERM:
	case EACCES:
		cnctl_err("permission denied: querying kmod: %s", strerror(-r));
		return CNCTL_EXIT_PERM;
	default:
		cnctl_err("querying kmod: %s", strerror(-r));
		return CNCTL_EXIT_ERROR;
	}
}

int cnctl_open(const struct cnctl_opts *o, uint32_t batch, struct cn_sock **out)
{
	struct cn_open_opts oo = { .sz = sizeof(oo), .rcvbuf = o->rcvbuf, .batch = batch };
	int unit = o->unit;
	char what[64];

	if (unit < 0 && o->kmod) {
		struct cn_bus_info *info;
		int r = cn_bus_query(&info);

		if (r < 0)
			return cnctl_kmod_err(r);
		unit = (int)info->unit;
		cn_bus_info_free(info);
	} else if (unit < 0) {
		unit = NETLINK_CONNECTOR;
	}
	*out = cn_open(unit, &oo);
	if (!*out && unit != NETLINK_CONNECTOR &&
	    (errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT || errno == ECONNREFUSED)) {
		cnctl_err("%s: no netlink unit %d in the kernel (%s)%s", o->cmd, unit,
			  strerror(errno), o->kmod ? "" : "; for kmod's unit use --kmod");
		return CNCTL_EXIT_NOCONN;
	}
	if (!*out) {
		snprintf(what, sizeof(what), "%s: opening a socket on netlink unit %d", o->cmd,
			 unit);
		return cnctl_unit_err(what, unit, errno);
	}
	cnctl_set_rcvbuf(*out, o->rcvbuf);
	return 0;
}

void cnctl_set_rcvbuf(struct cn_sock *s, int bytes)
{
	int r;

	if (!bytes)
		return;
	/* Less than asked means net.core.rmem_max capped us (no
	 * CAP_NET_ADMIN). */
	r = cn_set_rcvbuf(s, bytes);
	if (r >= 0 && r < bytes)
		cnctl_err("warning: receive buffer capped at %d bytes (net.core.rmem_max)", r);
}
