// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * params.c - cnbus's writable parameter refuses nonsense (guest test
 * param_write_refused, run by cnbus_vmtest): a write of cbus_batch outside
 * 1..1024, or of something that is not a decimal number ("0x10"), fails
 * with EINVAL and leaves the value as it was; a value inside is taken,
 * as decimal ("010" is 10, not octal 8). (The read-only
 * parameters are refused at load: init.sh loads cnbus with each of them
 * out of range before the tests.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmtest.h"

#define BATCH_PARAM "/sys/module/cnbus/parameters/cbus_batch"

/* Write @val to the parameter: 0 or -errno. */
static int param_write(const char *val)
{
	int fd = open(BATCH_PARAM, O_WRONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* The parameter's value, or -1. */
static long param_read(void)
{
	char buf[32] = "";
	int fd = open(BATCH_PARAM, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

int t_param_write_refused(void)
{
	static const char *const bad[] = { "0", "1025", "4294967297", "-1", "abc", "64x", "0x10" };
	char old[16];
	long was = param_read(), now;
	unsigned int i;
	int rc = 0, r;

	CHECK(was >= 1 && was <= 1024, "cbus_batch reads %ld", was);
	snprintf(old, sizeof(old), "%ld", was);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = param_write(bad[i]);
		now = param_read();
		info("cbus_batch <- '%s': %s, reads %ld", bad[i], r ? strerror(-r) : "taken", now);
		CHECK(r == -EINVAL, "write '%s': %d", bad[i], r);
		CHECK(now == was, "'%s' changed cbus_batch to %ld", bad[i], now);
	}
	r = param_write("1024\n");
	CHECK(r == 0 && param_read() == 1024, "write 1024: %d, reads %ld", r, param_read());
	r = param_write("1");
	CHECK(r == 0 && param_read() == 1, "write 1: %d, reads %ld", r, param_read());
	/* Decimal: a leading zero is not octal. */
	r = param_write("010");
	CHECK(r == 0 && param_read() == 10, "write 010: %d, reads %ld", r, param_read());
out:
	param_write(old);
	if (param_read() != was) {
		info("cannot restore cbus_batch %ld", was);
		rc = 1;
	}
	return rc;
}
