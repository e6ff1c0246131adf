/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.c - JSON string output for cnctl. Kernel strings (comm) are arbitrary
 * bytes: escape what JSON requires, and never emit invalid UTF-8.
 */
#include <stdio.h>

#include "common.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned int cp;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void json_string_body(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n && s[i]) {
		unsigned char c = s[i];
		size_t len;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			putc_unlocked(c, f);
			i++;
			continue;
		}
		switch (c) {
		case '"':
			fputs_unlocked("\\\"", f);
			break;
		case '\\':
			fputs_unlocked("\\\\", f);
			break;
		case '\n':
			fputs_unlocked("\\n", f);
			break;
		case '\t':
			fputs_unlocked("\\t", f);
			break;
		case '\r':
			fputs_unlocked("\\r", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(f, "\\u%04x", c);
				break;
			}
			len = utf8_len(s + i, n - i);
			if (len == 0) {
				fputs_unlocked("\\ufffd", f);
				break;
			}
			/* A NUL inside the sequence failed the continuation test. */
			fwrite_unlocked(s + i, 1, len, f);
			i += len;
			continue;
		}
		i++;
	}
}

void json_string(FILE *f, const char *s, size_t n)
{
	putc_unlocked('"', f);
	json_string_body(f, s, n);
	putc_unlocked('"', f);
}
