/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.c - error reporting, number parsing and the final flush shared by cnctl's subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

void cnctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cnctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int cnctl_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "cnctl %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (try 'cnctl %s --help')\n", cmd);
	va_end(ap);
	return CNCTL_EXIT_USAGE;
}

int cnctl_connector_err(const char *what, int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		cnctl_err("permission denied: %s: %s (needs root or CAP_NET_ADMIN in the "
			  "initial namespaces)",
			  what, strerror(err));
		return CNCTL_EXIT_PERM;
	case EPROTONOSUPPORT:
	case EAFNOSUPPORT:
		cnctl_err("no kernel connector (NETLINK_CONNECTOR unsupported): %s: %s", what,
			  strerror(err));
		return CNCTL_EXIT_NOCONN;
	case ECONNREFUSED:
		/* Nobody at the kernel's port: the connector lives in the
		 * initial network namespace only. */
		cnctl_err("no kernel connector (NETLINK_CONNECTOR unsupported in this network "
			  "namespace): %s: %s",
			  what, strerror(err));
		return CNCTL_EXIT_NOCONN;
	default:
		cnctl_err("%s: %s", what, strerror(err));
		return CNCTL_EXIT_ERROR;
	}
}

int cnctl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cnctl_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[32];
	size_t n = s ? strlen(s) : 0;
	unsigned int shift = 0;
	uint64_t v;

	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift)
		num[n - 1] = '\0';
	if (cnctl_parse_uint(num, 0, UINT64_MAX >> shift, &v) < 0)
		return -1;
	v <<= shift;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cnctl_finish_output(void)
{
	if (fflush(stdout) != 0) {
		cnctl_err("write to stdout: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	return CNCTL_EXIT_OK;
}
