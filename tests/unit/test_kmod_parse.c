/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_kmod_parse.c - cn_bus_parse_reply on CNBUS_CMD_DUMP dumps built with
 * libnl as cnbus.ko builds them (one message for the bus, one per callback,
 * one per CPU): every field decoded, thousands of callbacks and CPUs,
 * NLMSG_ERROR, NLM_F_DUMP_INTR, malformed dumps.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <libcn/kmod.h>
#include <libcn/kmod_genl.h>

static struct cn_bus_info *info; /* the last dump parsed */

/* A dump as cn_bus_query collects it: messages one after the other. */
static char dump[512 * 1024];
static size_t dump_len;

static struct nl_msg *start(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc_size(4096);

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0x20, 0, NLM_F_MULTI, cmd,
				    CNBUS_GENL_VERSION));
	return msg;
}

/* Append msg (freed) to the dump. */
static void add(struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	size_t n = NLMSG_ALIGN(nlh->nlmsg_len);

	assert_true(dump_len + n <= sizeof(dump));
	memset(dump + dump_len, 0, n);
	memcpy(dump + dump_len, nlh, nlh->nlmsg_len);
	dump_len += n;
	nlmsg_free(msg);
}

static void add_done(void)
{
	struct nlmsghdr h = { .nlmsg_len = NLMSG_LENGTH(sizeof(int)), .nlmsg_type = NLMSG_DONE };
	int zero = 0;

	memcpy(dump + dump_len, &h, sizeof(h));
	memcpy(dump + dump_len + NLMSG_HDRLEN, &zero, sizeof(zero));
	dump_len += NLMSG_ALIGN(h.nlmsg_len);
}

static void put_u64(struct nl_msg *msg, int type, uint64_t v)
{
	assert_int_equal(nla_put_u64(msg, type, v), 0);
}

static struct nl_msg *bus_msg(void)
{
	struct nl_msg *msg = start(CNBUS_CMD_DUMP);
	struct nlattr *nest;

	assert_int_equal(nla_put_u32(msg, CNBUS_A_UNIT, 5), 0);
	assert_int_equal(nla_put_string(msg, CNBUS_A_VERSION, "0.3.1-test"), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_GROUPS, 32), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_MAX_NOTIFY, 1024), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_NOTIFY_COUNT, 3), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_CBUS_QLEN, 256), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_CBUS_BUDGET, 4096), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_POSSIBLE_CPUS, 77), 0);
	put_u64(msg, CNBUS_A_RECEIVED, 0x100000000ull + 7);
	put_u64(msg, CNBUS_A_DISPATCHED, 0x200000000ull + 9);
	put_u64(msg, CNBUS_A_REPLY_DROPPED, 0x300000000ull + 11);
	nest = nla_nest_start(msg, CNBUS_A_REFUSED);
	for (int r = CNBUS_REFUSED_A_SHORT; r <= CNBUS_REFUSED_A_MAX; r++)
		put_u64(msg, r, 0x10ull * (uint64_t)r);
	nla_nest_end(msg, nest);
	return msg;
}

static struct nl_msg *callback_msg(unsigned i, const char *name)
{
	struct nl_msg *msg = start(CNBUS_CMD_DUMP);
	struct nlattr *one = nla_nest_start(msg, CNBUS_A_CALLBACK);

	assert_int_equal(nla_put_u32(msg, CNBUS_CB_A_IDX, 0x123), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_CB_A_VAL, 0x456 + i), 0);
	assert_int_equal(nla_put_string(msg, CNBUS_CB_A_NAME, name), 0);
	nla_nest_end(msg, one);
	return msg;
}

static struct nl_msg *cpu_msg(unsigned i)
{
	struct nl_msg *msg = start(CNBUS_CMD_DUMP);
	struct nlattr *one = nla_nest_start(msg, CNBUS_A_CPU);

	assert_int_equal(nla_put_u32(msg, CNBUS_CPU_A_ID, i), 0);
	put_u64(msg, CNBUS_CPU_A_INSERTED, 1000ull * i + 10);
	put_u64(msg, CNBUS_CPU_A_SENT, 1000ull * i + 6);
	put_u64(msg, CNBUS_CPU_A_DROPPED, 1);
	assert_int_equal(nla_put_u32(msg, CNBUS_CPU_A_QUEUED, i + 100), 0);
	put_u64(msg, CNBUS_CPU_A_REFUSED, 1000ull * i + 4);
	put_u64(msg, CNBUS_CPU_A_OVERFLOWED, 1000ull * i + 5);
	nla_nest_end(msg, one);
	return msg;
}

/* The dump kmod sends: the bus, ncb callbacks, ncpu CPUs, NLMSG_DONE. */
static void full_dump(unsigned ncb, unsigned ncpu)
{
	dump_len = 0;
	add(bus_msg());
	for (unsigned i = 0; i < ncb; i++) {
		char name[40];

		snprintf(name, sizeof(name), "cb%u", i);
		add(callback_msg(i, name));
	}
	for (unsigned i = 0; i < ncpu; i++)
		add(cpu_msg(i));
	add_done();
}

static int parse(void)
{
	cn_bus_info_free(info);
	return cn_bus_parse_reply(dump, dump_len, &info);
}

static void full(void **state)
{
	(void)state;
	full_dump(3, 2);
	assert_int_equal(parse(), 0);
	assert_int_equal(info->unit, 5);
	assert_string_equal(info->version, "0.3.1-test");
	assert_int_equal(info->groups, 32);
	assert_int_equal(info->max_notify, 1024);
	assert_int_equal(info->notify_count, 3);
	assert_int_equal(info->cbus_qlen, 256);
	assert_int_equal(info->cbus_budget, 4096);
	assert_int_equal(info->possible_cpus, 77);
	assert_true(info->received == 0x100000000ull + 7);
	assert_true(info->dispatched == 0x200000000ull + 9);
	assert_true(info->reply_dropped == 0x300000000ull + 11);
	assert_int_equal(info->ncallbacks, 3);
	for (unsigned i = 0; i < 3; i++) {
		char name[40];

		snprintf(name, sizeof(name), "cb%u", i);
		assert_int_equal(info->callbacks[i].idx, 0x123);
		assert_int_equal(info->callbacks[i].val, 0x456 + i);
		assert_string_equal(info->callbacks[i].name, name);
	}
	assert_int_equal(info->ncpus, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(info->cpus[i].cpu, i);
		assert_true(info->cpus[i].inserted == 1000ull * i + 10);
		assert_true(info->cpus[i].sent == 1000ull * i + 6);
		assert_true(info->cpus[i].dropped == 1);
		assert_int_equal(info->cpus[i].queued, i + 100);
		assert_true(info->cpus[i].refused == 1000ull * i + 4);
		assert_true(info->cpus[i].overflowed == 1000ull * i + 5);
	}
	for (int r = 0; r < CN_BUS_REFUSED_COUNT; r++)
		assert_true(info->refused[r] == 0x10ull * (uint64_t)(r + CNBUS_REFUSED_A_SHORT));
	assert_int_equal(CN_BUS_REFUSED_COUNT, CNBUS_REFUSED_A_MAX - CNBUS_REFUSED_A_SHORT + 1);
}

static void minimal_and_long_strings(void **state)
{
	struct nl_msg *msg = start(CNBUS_CMD_DUMP);
	struct nlattr *nest;
	char longname[100];

	(void)state;
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	dump_len = 0;
	assert_int_equal(nla_put_u32(msg, CNBUS_A_UNIT, 22), 0);
	assert_int_equal(nla_put_string(msg, CNBUS_A_VERSION, longname), 0);
	add(msg);
	msg = start(CNBUS_CMD_DUMP);
	nest = nla_nest_start(msg, CNBUS_A_CALLBACK); /* a name only */
	assert_int_equal(nla_put_string(msg, CNBUS_CB_A_NAME, "x"), 0);
	nla_nest_end(msg, nest);
	add(msg);
	add(callback_msg(0, longname));
	/* no NLMSG_DONE: the end of the buffer ends the dump too */
	assert_int_equal(parse(), 0);
	assert_int_equal(info->unit, 22);
	assert_int_equal(strlen(info->version), sizeof(info->version) - 1);
	assert_int_equal(info->ncallbacks, 2);
	assert_int_equal(info->callbacks[0].idx, 0); /* absent: 0 */
	assert_int_equal(info->callbacks[0].val, 0);
	assert_string_equal(info->callbacks[0].name, "x");
	assert_int_equal(strlen(info->callbacks[1].name), CN_BUS_NAME_MAX - 1);
	assert_int_equal(info->ncpus, 0);
	assert_int_equal(info->groups, 0);
}

/* No bound: 1000 callbacks and 4096 CPUs, one message each, all come back;
 * what follows NLMSG_DONE is not read. */
static void many_entries(void **state)
{
	(void)state;
	full_dump(1000, 4096);
	add(cpu_msg(5000));
	assert_int_equal(parse(), 0);
	assert_int_equal(info->ncallbacks, 1000);
	assert_int_equal(info->callbacks[999].val, 0x456 + 999);
	assert_string_equal(info->callbacks[999].name, "cb999");
	assert_int_equal(info->ncpus, 4096);
	assert_int_equal(info->cpus[4095].cpu, 4095);
	assert_true(info->cpus[4095].inserted == 1000ull * 4095 + 10);
}

static void errors(void **state)
{
	struct cn_bus_info *out = (struct cn_bus_info *)&out;
	struct nl_msg *msg;
	struct nlmsghdr *nlh;
	struct {
		struct nlmsghdr h;
		struct nlmsgerr e;
	} err;

	(void)state;
	/* NLMSG_ERROR carries the kernel's errno (EOPNOTSUPP: a genl version 1 kmod) */
	memset(&err, 0, sizeof(err));
	err.h.nlmsg_len = sizeof(err);
	err.h.nlmsg_type = NLMSG_ERROR;
	err.e.error = -EOPNOTSUPP;
	errno = 0;
	assert_int_equal(cn_bus_parse_reply(&err, sizeof(err), &out), -EOPNOTSUPP);
	assert_null(out);
	assert_int_equal(errno, EOPNOTSUPP);
	err.e.error = 12345;
	assert_int_equal(cn_bus_parse_reply(&err, sizeof(err), &out), -EBADMSG);

	/* no bus message (no unit) */
	dump_len = 0;
	msg = start(CNBUS_CMD_DUMP);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_GROUPS, 32), 0);
	add(msg);
	add(callback_msg(0, "a"));
	errno = 0;
	assert_int_equal(parse(), -EBADMSG);
	assert_int_equal(errno, EBADMSG);

	/* two bus messages (one after NLMSG_DONE is not read) */
	full_dump(1, 1);
	add(bus_msg());
	assert_int_equal(parse(), 0);
	dump_len = 0;
	add(bus_msg());
	add(bus_msg());
	assert_int_equal(parse(), -EBADMSG);

	/* version 1's reply */
	dump_len = 0;
	msg = start(CNBUS_CMD_GET_V1);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_UNIT, 5), 0);
	add(msg);
	assert_int_equal(parse(), -EBADMSG);

	/* the callbacks changed during the dump */
	full_dump(2, 1);
	((struct nlmsghdr *)dump)->nlmsg_flags |= NLM_F_DUMP_INTR;
	errno = 0;
	assert_int_equal(parse(), -EAGAIN);
	assert_int_equal(errno, EAGAIN);

	/* A last message whose nlmsg_len is not aligned, the buffer ending with
	 * it: read up to its end, not beyond (NLMSG_NEXT's rem wraps around
	 * there; the fuzzer found it). Its last attribute is 5 bytes long. */
	dump_len = 0;
	add(bus_msg());
	msg = callback_msg(7, "last");
	assert_int_equal(nla_put(msg, 100, 1, "x"), 0); /* unknown: ignored */
	nlh = nlmsg_hdr(msg);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) - 3;
	assert_true(nlh->nlmsg_len % 4 != 0);
	memcpy(dump + dump_len, nlh, nlh->nlmsg_len);
	dump_len += nlh->nlmsg_len;
	nlmsg_free(msg);
	assert_int_equal(parse(), 0);
	assert_int_equal(info->ncallbacks, 1);
	assert_string_equal(info->callbacks[0].name, "last");

	/* nlmsg_len beyond the buffer, or too short */
	full_dump(1, 1);
	nlh = (struct nlmsghdr *)dump;
	assert_int_equal(cn_bus_parse_reply(dump, nlh->nlmsg_len - 1, &out), -EBADMSG);
	assert_int_equal(cn_bus_parse_reply(dump, 10, &out), -EBADMSG);
	nlh->nlmsg_len = NLMSG_HDRLEN + 2;
	assert_int_equal(cn_bus_parse_reply(dump, 4096, &out), -EBADMSG);

	errno = 0;
	assert_int_equal(cn_bus_parse_reply(NULL, 100, &out), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_bus_parse_reply(&err, sizeof(err), NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(cn_bus_query(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static int free_info(void **state)
{
	(void)state;
	cn_bus_info_free(info);
	info = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full),
		cmocka_unit_test(minimal_and_long_strings),
		cmocka_unit_test(many_entries),
		cmocka_unit_test(errors),
	};

	return cmocka_run_group_tests(tests, NULL, free_info);
}
