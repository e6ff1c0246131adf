/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.c - error reporting, number and duration parsing and the final flush
 * shared by cnctl's subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
	return cnctl_unit_err(what, NETLINK_CONNECTOR, err);
}

int cnctl_unit_err(const char *what, int unit, int err)
{
	/* Another unit than the connector's: name it, and never blame
	 * NETLINK_CONNECTOR for what happened on unit 2. */
	if (unit != NETLINK_CONNECTOR) {
		switch (err) {
		case EPROTONOSUPPORT:
		case EAFNOSUPPORT:
			cnctl_err("no netlink unit %d in the kernel: %s: %s", unit, what,
				  strerror(err));
			return CNCTL_EXIT_NOCONN;
		case ECONNREFUSED:
			/* The unit exists but nothing in the kernel takes
			 * messages on it (NETLINK_USERSOCK, 2, is one). */
			cnctl_err("nothing in the kernel receives on netlink unit %d (not a "
				  "connector; for kmod's unit use --kmod): %s: %s",
				  unit, what, strerror(err));
			return CNCTL_EXIT_NOCONN;
		}
	}
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

/* The units of a duration, longest suffix first ("ms" before "m"). */
static const struct {
	const char *suffix;
	int64_t ms;
} duration_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
};

int cnctl_parse_duration(const char *s, int64_t *ms)
{
	int64_t whole = 0, frac = 0, scale = 1, unit = 1000; /* bare: seconds */
	size_t i;

	if (!s || *s < '0' || *s > '9')
		return -1; /* also "", "-1", "+1", " 1", ".5" */
	/* Whole part: more than 9 digits is beyond the bound in any unit. */
	for (i = 0; *s >= '0' && *s <= '9'; s++, i++) {
		if (i == 9)
			return -1;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -1; /* "1." */
		/* Digits past the sixth cannot change the milliseconds of a
		 * unit of at most a day: read, not counted. */
		for (i = 0; *s >= '0' && *s <= '9'; s++, i++) {
			if (i < 6) {
				frac = frac * 10 + (*s - '0');
				scale *= 10;
			}
		}
	}
	if (*s) {
		for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
			if (strcmp(s, duration_units[i].suffix) == 0)
				break;
		if (i == sizeof(duration_units) / sizeof(duration_units[0]))
			return -1; /* "1e3", "5 s", "2sec", "1.5.2" */
		unit = duration_units[i].ms;
	}
	/* Rounded to the nearest millisecond. */
	*ms = whole * unit + (frac * unit + scale / 2) / scale;
	if (*ms < CNCTL_DURATION_MIN_MS || *ms > CNCTL_DURATION_MAX_MS)
		return -1;
	return 0;
}

int cnctl_finish_output(void)
{
	int err;

	/* ferror: a write the stream already tried (a buffer that filled)
	 * failed, and fflush has nothing left to fail on. */
	if (fflush(stdout) == 0 && !ferror(stdout))
		return CNCTL_EXIT_OK;
	err = errno;
	/* That write's errno is gone by now: an empty write asks again. */
	if (write(STDOUT_FILENO, "", 0) < 0)
		err = errno;
	cnctl_err("write to stdout: %s", strerror(err ? err : EIO));
	return CNCTL_EXIT_ERROR;
}

void cnctl_reserve_stdio(void)
{
	/* The mode no one uses the stream in: a read of a closed stdin and a
	 * write to a closed stdout or stderr fail (EBADF) instead of reaching
	 * a socket that took the number. */
	static const int modes[] = { O_WRONLY, O_RDONLY, O_RDONLY };

	for (int fd = 0; fd < 3; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		got = open("/dev/null", modes[fd] | O_CLOEXEC);
		if (got >= 0 && got != fd)
			close(got); /* a lower number was closed too and took it first */
	}
}
