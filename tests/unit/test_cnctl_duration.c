/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cnctl_duration.c - cnctl's one duration grammar (tools/cnctl/util.c,
 * cnctl_parse_duration), which every subcommand's --timeout uses: units ms,
 * s, m, h, d; a bare number is seconds; a fraction rounds to the nearest
 * millisecond; 0, signs, exponents, spaces and out-of-bound values refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common.h"

static void accepts(const char *s, int64_t want)
{
	int64_t ms = -7;

	if (cnctl_parse_duration(s, &ms) != 0)
		fail_msg("'%s' refused, expected %lld ms", s, (long long)want);
	if (ms != want)
		fail_msg("'%s' gave %lld ms, expected %lld", s, (long long)ms, (long long)want);
}

static void refuses(const char *s)
{
	int64_t ms = -7;

	if (cnctl_parse_duration(s, &ms) == 0)
		fail_msg("'%s' accepted as %lld ms", s, (long long)ms);
}

static void test_units(void **state)
{
	(void)state;
	accepts("500ms", 500);
	accepts("5s", 5000);
	accepts("2m", 120000);
	accepts("1h", 3600000);
	accepts("1d", 86400000);
	accepts("5", 5000); /* bare: seconds, in every subcommand */
	accepts("1.5", 1500);
	accepts("1.5m", 90000);
	accepts("0.25h", 900000);
	accepts("007s", 7000);
}

static void test_rounding(void **state)
{
	(void)state;
	accepts("1.4ms", 1);
	accepts("1.5ms", 2);
	accepts("0.0015", 2);
	accepts("2.0000001s", 2000); /* digits past the sixth are read, not counted */
}

static void test_bounds(void **state)
{
	(void)state;
	accepts("1ms", CNCTL_DURATION_MIN_MS);
	accepts("24d", CNCTL_DURATION_MAX_MS);
	accepts("576h", CNCTL_DURATION_MAX_MS);
	refuses("0");
	refuses("0s");
	refuses("0.4ms"); /* rounds to 0 */
	refuses("0.0001");
	refuses("25d");
	refuses("24.0001d");
	refuses("2073600001ms");
	refuses("999999999999999999999");
}

static void test_nonsense(void **state)
{
	(void)state;
	refuses("");
	refuses("1e3");
	refuses("-1");
	refuses("+1");
	refuses(" 1");
	refuses("1 ");
	refuses("5 s");
	refuses(".5");
	refuses("1.");
	refuses("1.5.2");
	refuses("2sec");
	refuses("1S");
	refuses("ms");
	refuses("0x10");
	refuses("inf");
	refuses("nan");
	refuses("1w");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_nonsense),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
