/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cnctl_proc_journal_fields.c - `cnctl proc --journal`'s entries
 * (tools/cnctl/proc_journal_fields.c): a JSON line's keys as fields in upper
 * case, read back from the native protocol's two forms (NAME=value, and
 * NAME, a 64-bit little-endian length and the bytes for a value with a
 * newline); MESSAGE and PRIORITY by the line's type; JSON's escapes undone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proc.h"

/* An entry's fields, as journald reads the datagram. */
struct field {
	char name[72];
	char value[256];
	size_t len;
};

static int parse(const struct proc_journal_entry *e, struct field *f, int max)
{
	size_t i = 0;
	int n = 0;

	while (i < e->len && n < max) {
		size_t k = 0;

		while (i < e->len && e->buf[i] != '=' && e->buf[i] != '\n')
			f[n].name[k++] = e->buf[i++];
		f[n].name[k] = '\0';
		assert_true(i < e->len);
		if (e->buf[i++] == '=') {
			const char *nl = memchr(e->buf + i, '\n', e->len - i);

			assert_non_null(nl);
			f[n].len = (size_t)(nl - (e->buf + i));
		} else {
			uint64_t len = 0;

			for (int b = 0; b < 8; b++)
				len |= (uint64_t)(unsigned char)e->buf[i + b] << (8 * b);
			i += 8;
			f[n].len = (size_t)len;
		}
		assert_true(f[n].len < sizeof(f[n].value) && i + f[n].len < e->len);
		memcpy(f[n].value, e->buf + i, f[n].len);
		f[n].value[f[n].len] = '\0';
		i += f[n].len;
		assert_int_equal(e->buf[i++], '\n');
		n++;
	}
	return n;
}

static struct field fields[32];
static int n_fields;

static void entry(const char *json)
{
	struct proc_journal_entry e = { 0 };

	assert_int_equal(proc_journal_entry(&e, json, strlen(json)), 0);
	n_fields = parse(&e, fields, 32);
	free(e.buf);
}

static const char *get(const char *name)
{
	for (int i = 0; i < n_fields; i++)
		if (!strcmp(fields[i].name, name))
			return fields[i].value;
	return NULL;
}

static void test_event_fields(void **state)
{
	(void)state;
	entry("{\"type\":\"event\",\"schema\":3,\"action\":\"exec\",\"pid\":42,\"thread\":true,"
	      "\"argv\":[\"sh\",\"-c\",\"echo \\\"a]\\\"\"],\"message\":\"exec 42 1 sh -c\"}");
	assert_string_equal(get("TYPE"), "event");
	assert_string_equal(get("ACTION"), "exec");
	assert_string_equal(get("PID"), "42");
	assert_string_equal(get("THREAD"), "true");
	/* The array as JSON has it, brackets in its strings and all. */
	assert_string_equal(get("ARGV"), "[\"sh\",\"-c\",\"echo \\\"a]\\\"\"]");
	assert_string_equal(get("MESSAGE"), "exec 42 1 sh -c");
	assert_string_equal(get("PRIORITY"), "6");
	assert_string_equal(get("SYSLOG_IDENTIFIER"), "cnctl");
	assert_null(get("message"));
}

static void test_newline_binary_form(void **state)
{
	(void)state;
	/* A comm may hold a newline: the binary form, the bytes unchanged. */
	entry("{\"type\":\"event\",\"comm\":\"a\\nb\",\"message\":\"x\"}");
	assert_string_equal(get("COMM"), "a\nb");
	assert_int_equal(fields[1].len, 3);
}

static void test_escapes(void **state)
{
	(void)state;
	entry(
	    "{\"type\":\"event\",\"comm\":\"\\u00e9\\ud83d\\ude00\\t\\\\\\/\",\"message\":\"m\"}");
	assert_string_equal(get("COMM"), "\xc3\xa9\xf0\x9f\x98\x80\t\\/");
}

static void test_nested_keys(void **state)
{
	(void)state;
	entry("{\"type\":\"event\",\"process\":{\"pid\":7,\"parent\":{\"pid\":1}},\"message\":"
	      "\"m\"}");
	assert_string_equal(get("PROCESS_PID"), "7");
	assert_string_equal(get("PROCESS_PARENT_PID"), "1");
}

static void test_priority_by_type(void **state)
{
	(void)state;
	entry("{\"type\":\"loss\",\"schema\":2,\"missing\":3,\"overruns\":1}");
	assert_string_equal(get("PRIORITY"), "4");
	/* No message: the type and the keys, the schema left out. */
	assert_string_equal(get("MESSAGE"), "loss: missing=3 overruns=1");
	entry("{\"type\":\"summary\",\"printed\":5,\"missing\":0,\"overruns\":0}");
	assert_string_equal(get("PRIORITY"), "6");
	entry(
	    "{\"type\":\"summary\",\"printed\":5,\"missing\":0,\"overruns\":0,\"kernel_drops\":9}");
	assert_string_equal(get("PRIORITY"), "4");
	entry("{\"type\":\"error\",\"message\":\"reading /proc: EACCES\"}");
	assert_string_equal(get("PRIORITY"), "3");
	entry("{\"type\":\"resync\",\"message\":\"m\"}");
	assert_string_equal(get("PRIORITY"), "5");
}

static void test_not_json_kept_whole(void **state)
{
	(void)state;
	entry("cnctl: not an object");
	assert_string_equal(get("MESSAGE"), "cnctl: not an object");
	assert_string_equal(get("PRIORITY"), "5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_fields),	 cmocka_unit_test(test_newline_binary_form),
		cmocka_unit_test(test_escapes),		 cmocka_unit_test(test_nested_keys),
		cmocka_unit_test(test_priority_by_type), cmocka_unit_test(test_not_json_kept_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
