/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kmod.c - `cnctl kmod`: what kmod (cnbus.ko) reports about itself over its
 * generic netlink family (cn_bus_query): unit, version, bounds, callbacks,
 * message counters, per-CPU CBUS counters and refusal counters.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <libcn.h>

#include "common.h"

/* Names of the refusal counters, in enum cn_bus_refusal order. */
static const char *const refusal_names[CN_BUS_REFUSED_COUNT] = {
	[CN_BUS_REFUSED_SHORT] = "short",
	[CN_BUS_REFUSED_TRUNCATED] = "truncated",
	[CN_BUS_REFUSED_BAD_LEN] = "bad_len",
	[CN_BUS_REFUSED_OVERSIZE] = "oversize",
	[CN_BUS_REFUSED_NO_CALLBACK] = "no_callback",
	[CN_BUS_REFUSED_NOTIFY_INVAL] = "notify_inval",
	[CN_BUS_REFUSED_NOTIFY_PERM] = "notify_perm",
	[CN_BUS_REFUSED_NOTIFY_FULL] = "notify_full",
	[CN_BUS_REFUSED_CBUS_SHUTDOWN] = "cbus_shutdown",
	[CN_BUS_REFUSED_NOTIFY_EXISTS] = "notify_exists",
	[CN_BUS_REFUSED_NOTIFY_NOENT] = "notify_noent",
	[CN_BUS_REFUSED_NOMEM] = "nomem",
};

/* clang-format off */
static void kmod_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl kmod [--json]\n"
		"\n"
		"Print what kmod (cnbus.ko) reports about itself through its generic\n"
		"netlink family \"cnbus\": the netlink unit it serves (what --kmod uses in\n"
		"the other commands), version, groups, bounds, registered callbacks,\n"
		"messages received and dispatched, callback replies dropped because the\n"
		"receiver was full, per-CPU CBUS counters of every possible CPU (queued,\n"
		"inserted, sent by the worker, dropped, refused with ENOBUFS, overflowed\n"
		"beyond the ring) and why messages were refused. Read as one generic\n"
		"netlink dump: any number of callbacks and CPUs.\n"
		"\n"
		"Options:\n"
		"  -j, --json     one JSON object: unit, version, groups, max_notify,\n"
		"                 notify_count, cbus_qlen, cbus_budget, possible_cpus,\n"
		"                 received, dispatched, reply_dropped, refused {short,\n"
		"                 truncated, bad_len, oversize, no_callback,\n"
		"                 notify_inval, notify_perm, notify_full, cbus_shutdown,\n"
		"                 notify_exists, notify_noent, nomem}, callbacks [{idx,\n"
		"                 val, name}], cpus [{cpu, queued, inserted, sent,\n"
		"                 dropped, refused, overflowed}]\n"
		"  -h, --help     this help\n"
		"      --version  cnctl's version\n"
		"\n"
		"Exit status: 0 ok, 1 runtime error, 2 usage error, 3 permission denied,\n"
		"4 kmod not loaded.\n");
}
/* clang-format on */

static void print_json(const struct cn_bus_info *in)
{
	printf("{\"unit\":%u,\"version\":", in->unit);
	json_string(stdout, in->version, sizeof(in->version));
	printf(",\"groups\":%u,\"max_notify\":%u,\"notify_count\":%u,\"cbus_qlen\":%u,"
	       "\"cbus_budget\":%u,\"possible_cpus\":%u,\"received\":%llu,\"dispatched\":%llu,"
	       "\"reply_dropped\":%llu,"
	       "\"refused\":{",
	       in->groups, in->max_notify, in->notify_count, in->cbus_qlen, in->cbus_budget,
	       in->possible_cpus, (unsigned long long)in->received,
	       (unsigned long long)in->dispatched, (unsigned long long)in->reply_dropped);
	for (int i = 0; i < CN_BUS_REFUSED_COUNT; i++)
		printf("%s\"%s\":%llu", i ? "," : "", refusal_names[i],
		       (unsigned long long)in->refused[i]);
	fputs("},\"callbacks\":[", stdout);
	for (uint32_t i = 0; i < in->ncallbacks; i++) {
		const struct cn_bus_callback *cb = &in->callbacks[i];

		printf("%s{\"idx\":%u,\"val\":%u,\"name\":", i ? "," : "", cb->idx, cb->val);
		json_string(stdout, cb->name, sizeof(cb->name));
		putchar('}');
	}
	fputs("],\"cpus\":[", stdout);
	for (uint32_t i = 0; i < in->ncpus; i++) {
		const struct cn_bus_cpu *c = &in->cpus[i];

		printf("%s{\"cpu\":%u,\"queued\":%u,\"inserted\":%llu,\"sent\":%llu,"
		       "\"dropped\":%llu,\"refused\":%llu,\"overflowed\":%llu}",
		       i ? "," : "", c->cpu, c->queued, (unsigned long long)c->inserted,
		       (unsigned long long)c->sent, (unsigned long long)c->dropped,
		       (unsigned long long)c->refused, (unsigned long long)c->overflowed);
	}
	fputs("]}\n", stdout);
}

static void print_text(const struct cn_bus_info *in)
{
	printf("kmod %.*s on netlink unit %u (%u groups)\n", (int)sizeof(in->version), in->version,
	       in->unit, in->groups);
	printf("messages: %llu received, %llu dispatched to callbacks, %llu replies dropped\n",
	       (unsigned long long)in->received, (unsigned long long)in->dispatched,
	       (unsigned long long)in->reply_dropped);
	printf("notification requests: %u of at most %u\n", in->notify_count, in->max_notify);
	printf("callbacks: %u\n", in->ncallbacks);
	for (uint32_t i = 0; i < in->ncallbacks; i++)
		printf("  0x%x.0x%x  %.*s\n", in->callbacks[i].idx, in->callbacks[i].val,
		       (int)sizeof(in->callbacks[i].name), in->callbacks[i].name);
	printf("cbus (ring of %u small messages + %u bytes of overflow per cpu), %u of %u possible "
	       "cpus:\n",
	       in->cbus_qlen, in->cbus_budget, in->ncpus, in->possible_cpus);
	printf("  %4s %8s %12s %12s %10s %10s %12s\n", "CPU", "QUEUED", "INSERTED", "SENT",
	       "DROPPED", "REFUSED", "OVERFLOWED");
	for (uint32_t i = 0; i < in->ncpus; i++) {
		const struct cn_bus_cpu *c = &in->cpus[i];

		printf("  %4u %8u %12llu %12llu %10llu %10llu %12llu\n", c->cpu, c->queued,
		       (unsigned long long)c->inserted, (unsigned long long)c->sent,
		       (unsigned long long)c->dropped, (unsigned long long)c->refused,
		       (unsigned long long)c->overflowed);
	}
	fputs("refused:", stdout);
	for (int i = 0; i < CN_BUS_REFUSED_COUNT; i++)
		printf(" %s=%llu", refusal_names[i], (unsigned long long)in->refused[i]);
	putchar('\n');
}

int cnctl_kmod(int argc, char **argv)
{
	struct cnctl_getopt g;
	struct cn_bus_info *info;
	struct cnctl_opts o = { .cmd = "kmod", .usage = kmod_usage, .unit = -1 };
	int c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_KMOD);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
		r = cnctl_common_opt(c, argv, &o);
		if (r)
			return r < 0 ? cnctl_finish_output() : r;
	}
	if (optind < argc)
		return cnctl_usage_err("kmod", "unexpected argument '%s'", argv[optind]);
	r = cn_bus_query(&info);
	if (r < 0)
		return cnctl_kmod_err(r);
	if (o.json)
		print_json(info);
	else
		print_text(info);
	cn_bus_info_free(info);
	return cnctl_finish_output();
}
