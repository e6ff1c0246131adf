/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_kmod_parse.c - cn_bus_parse_reply on generic netlink replies built
 * with libnl as cnbus.ko builds them: every field decoded, nests, more
 * callbacks and CPUs than any fixed array would hold, NLMSG_ERROR,
 * malformed replies.
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

static struct cn_bus_info *info; /* the last reply parsed */

static struct nl_msg *start(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc_size(256 * 1024);

	assert_non_null(msg);
	assert_non_null(
	    genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0x20, 0, 0, cmd, CNBUS_GENL_VERSION));
	return msg;
}

static void put_u64(struct nl_msg *msg, int type, uint64_t v)
{
	assert_int_equal(nla_put_u64(msg, type, v), 0);
}

static struct nl_msg *full_reply(unsigned ncb, unsigned ncpu)
{
	struct nl_msg *msg = start(CNBUS_CMD_GET);
	struct nlattr *nest, *one;

	assert_int_equal(nla_put_u32(msg, CNBUS_A_UNIT, 5), 0);
	assert_int_equal(nla_put_string(msg, CNBUS_A_VERSION, "0.3.1-test"), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_GROUPS, 32), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_MAX_NOTIFY, 1024), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_NOTIFY_COUNT, 3), 0);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_CBUS_QLEN, 256), 0);
	put_u64(msg, CNBUS_A_RECEIVED, 0x100000000ull + 7);
	put_u64(msg, CNBUS_A_DISPATCHED, 0x200000000ull + 9);
	put_u64(msg, CNBUS_A_REPLY_DROPPED, 0x300000000ull + 11);

	nest = nla_nest_start(msg, CNBUS_A_CALLBACKS);
	for (unsigned i = 0; i < ncb; i++) {
		char name[40];

		snprintf(name, sizeof(name), "cb%u", i);
		one = nla_nest_start(msg, CNBUS_A_CALLBACK);
		assert_int_equal(nla_put_u32(msg, CNBUS_CB_A_IDX, 0x123), 0);
		assert_int_equal(nla_put_u32(msg, CNBUS_CB_A_VAL, 0x456 + i), 0);
		assert_int_equal(nla_put_string(msg, CNBUS_CB_A_NAME, name), 0);
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, nest);

	nest = nla_nest_start(msg, CNBUS_A_CPUS);
	for (unsigned i = 0; i < ncpu; i++) {
		one = nla_nest_start(msg, CNBUS_A_CPU);
		assert_int_equal(nla_put_u32(msg, CNBUS_CPU_A_ID, i), 0);
		put_u64(msg, CNBUS_CPU_A_INSERTED, 1000ull * i + 10);
		put_u64(msg, CNBUS_CPU_A_SENT, 1000ull * i + 6);
		put_u64(msg, CNBUS_CPU_A_SENT_DIRECT, 1000ull * i + 3);
		put_u64(msg, CNBUS_CPU_A_DROPPED, 1);
		assert_int_equal(nla_put_u32(msg, CNBUS_CPU_A_QUEUED, i + 100), 0);
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, nest);

	nest = nla_nest_start(msg, CNBUS_A_REFUSED);
	for (int r = CNBUS_REFUSED_A_SHORT; r <= CNBUS_REFUSED_A_MAX; r++)
		put_u64(msg, r, 0x10ull * (uint64_t)r);
	nla_nest_end(msg, nest);
	return msg;
}

static int parse(struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	cn_bus_info_free(info);
	return cn_bus_parse_reply(nlh, nlh->nlmsg_len, &info);
}

static void full(void **state)
{
	struct nl_msg *msg = full_reply(3, 2);

	(void)state;
	assert_int_equal(parse(msg), 0);
	assert_int_equal(info->unit, 5);
	assert_string_equal(info->version, "0.3.1-test");
	assert_int_equal(info->groups, 32);
	assert_int_equal(info->max_notify, 1024);
	assert_int_equal(info->notify_count, 3);
	assert_int_equal(info->cbus_qlen, 256);
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
		assert_true(info->cpus[i].sent_direct == 1000ull * i + 3);
		assert_true(info->cpus[i].dropped == 1);
		assert_int_equal(info->cpus[i].queued, i + 100);
	}
	for (int r = 0; r < CN_BUS_REFUSED_COUNT; r++)
		assert_true(info->refused[r] == 0x10ull * (uint64_t)(r + CNBUS_REFUSED_A_SHORT));
	assert_int_equal(CN_BUS_REFUSED_COUNT, CNBUS_REFUSED_A_MAX - CNBUS_REFUSED_A_SHORT + 1);
	nlmsg_free(msg);
}

static void minimal_and_long_strings(void **state)
{
	struct nl_msg *msg = start(CNBUS_CMD_GET);
	char longname[100];
	struct nlattr *nest, *one;

	(void)state;
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(nla_put_u32(msg, CNBUS_A_UNIT, 22), 0);
	assert_int_equal(nla_put_string(msg, CNBUS_A_VERSION, longname), 0);
	nest = nla_nest_start(msg, CNBUS_A_CALLBACKS);
	one = nla_nest_start(msg, CNBUS_A_CALLBACK);
	assert_int_equal(nla_put_string(msg, CNBUS_CB_A_NAME, longname), 0);
	nla_nest_end(msg, one);
	nla_nest_end(msg, nest);
	assert_int_equal(parse(msg), 0);
	assert_int_equal(info->unit, 22);
	assert_int_equal(strlen(info->version), sizeof(info->version) - 1);
	assert_int_equal(info->ncallbacks, 1);
	assert_int_equal(strlen(info->callbacks[0].name), CN_BUS_NAME_MAX - 1);
	assert_int_equal(info->callbacks[0].idx, 0); /* absent: 0 */
	assert_int_equal(info->ncpus, 0);
	assert_int_equal(info->groups, 0);
	nlmsg_free(msg);
}

/* No fixed bound: 300 callbacks and 600 CPUs (the old arrays held 128 and
 * 256) all come back. */
static void many_entries(void **state)
{
	struct nl_msg *msg = full_reply(300, 600);

	(void)state;
	assert_int_equal(parse(msg), 0);
	assert_int_equal(info->ncallbacks, 300);
	assert_int_equal(info->callbacks[299].val, 0x456 + 299);
	assert_int_equal(info->ncpus, 600);
	assert_int_equal(info->cpus[599].cpu, 599);
	assert_true(info->cpus[599].inserted == 1000ull * 599 + 10);
	nlmsg_free(msg);
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
	/* NLMSG_ERROR carries the kernel's errno */
	memset(&err, 0, sizeof(err));
	err.h.nlmsg_len = sizeof(err);
	err.h.nlmsg_type = NLMSG_ERROR;
	err.e.error = -EPERM;
	errno = 0;
	assert_int_equal(cn_bus_parse_reply(&err, sizeof(err), &out), -EPERM);
	assert_null(out);
	assert_int_equal(errno, EPERM);
	err.e.error = 12345;
	assert_int_equal(cn_bus_parse_reply(&err, sizeof(err), &out), -EBADMSG);

	/* no unit */
	msg = start(CNBUS_CMD_GET);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_GROUPS, 32), 0);
	errno = 0;
	assert_int_equal(parse(msg), -EBADMSG);
	assert_int_equal(errno, EBADMSG);
	nlmsg_free(msg);

	/* another command */
	msg = start(CNBUS_CMD_GET + 1);
	assert_int_equal(nla_put_u32(msg, CNBUS_A_UNIT, 5), 0);
	assert_int_equal(parse(msg), -EBADMSG);
	nlmsg_free(msg);

	/* nlmsg_len beyond the buffer, or too short */
	msg = full_reply(1, 1);
	nlh = nlmsg_hdr(msg);
	assert_int_equal(cn_bus_parse_reply(nlh, nlh->nlmsg_len - 1, &out), -EBADMSG);
	assert_int_equal(cn_bus_parse_reply(nlh, 10, &out), -EBADMSG);
	nlh->nlmsg_len = NLMSG_HDRLEN + 2;
	assert_int_equal(cn_bus_parse_reply(nlh, 4096, &out), -EBADMSG);
	nlmsg_free(msg);

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
