/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_journal_fields.c - one JSON line of `cnctl proc` as one native
 * journal entry (systemd.io/JOURNAL_NATIVE_PROTOCOL): each key a field of
 * the same name in upper case (the JSON schema's meanings, cnctl(1); a
 * nested object's keys joined by '_'), so that `journalctl ACTION=exec`
 * finds what `jq 'select(.action == "exec")'` finds, and a rename of a key
 * is a rename of its field. Only what the journal itself gives a meaning is
 * in the tables below: the readable MESSAGE and the PRIORITY, chosen by
 * the object's type.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "proc.h"

/* The priority of each type of line: loss and errors stand out in
 * `journalctl -p warning`, and so does a summary that counts loss; a
 * resync is a notice (a /proc rescan repaired what a loss broke). */
static const struct {
	const char *type;
	int priority;
} priorities[] = {
	{ "event", LOG_INFO },		 { "start", LOG_INFO },	   { "stats", LOG_INFO },
	{ "summary", LOG_INFO },	 { "resync", LOG_NOTICE }, { "loss", LOG_WARNING },
	{ "journal_loss", LOG_WARNING }, { "error", LOG_ERR },
};
#define PRIORITY_OTHER LOG_NOTICE
#define PRIORITY_LOSS  LOG_WARNING

/* Keys that count loss: a summary with any of them above 0 is a warning. */
static const char *const loss_keys[] = { "missing", "overruns", "kernel_drops" };

/* "message" is MESSAGE; "type" leads a MESSAGE made of the other keys,
 * where "schema" says nothing to a reader. */
#define KEY_MESSAGE "message"
#define KEY_TYPE    "type"
#define KEY_SCHEMA  "schema"

/* Journal field names: up to 64 characters of A-Z, 0-9 and '_'. */
#define FIELD_MAX 64

struct walk {
	const char *p, *end;
	struct proc_journal_entry *e;
	char type[32];
	int has_message;
	int loss;   /* a loss key above 0 */
	char *text; /* key=value pairs for a line without a message */
	size_t text_len, text_cap;
	char *str; /* a string value, unescaped */
	size_t str_len, str_cap;
};

static int grow(char **buf, size_t *cap, size_t need)
{
	char *p;
	size_t c = *cap ? *cap : 256;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*buf, c);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}

static int append(char **buf, size_t *len, size_t *cap, const void *s, size_t n)
{
	if (!n)
		return 0;
	if (grow(buf, cap, *len + n))
		return -ENOMEM;
	memcpy(*buf + *len, s, n);
	*len += n;
	return 0;
}

/* NAME=value, or for a value with a newline NAME, its length as 64-bit
 * little-endian and the bytes (the protocol's binary form). */
static int add_field(struct proc_journal_entry *e, const char *name, const char *v, size_t n)
{
	size_t nl = strlen(name);

	if (append(&e->buf, &e->len, &e->cap, name, nl))
		return -ENOMEM;
	if (memchr(v, '\n', n)) {
		unsigned char le[9] = { '\n' };

		for (int i = 0; i < 8; i++)
			le[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
		if (append(&e->buf, &e->len, &e->cap, le, sizeof(le)))
			return -ENOMEM;
	} else if (append(&e->buf, &e->len, &e->cap, "=", 1)) {
		return -ENOMEM;
	}
	if (append(&e->buf, &e->len, &e->cap, v, n) || append(&e->buf, &e->len, &e->cap, "\n", 1))
		return -ENOMEM;
	return 0;
}

static void skip_ws(struct walk *w)
{
	while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\r'))
		w->p++;
}

static int put_utf8(struct walk *w, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3f));
		u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	return append(&w->str, &w->str_len, &w->str_cap, u, n);
}

static int hex4(const char *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			return -EBADMSG;
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

/* A JSON string at w->p into w->str, unescaped. */
static int parse_string(struct walk *w)
{
	w->str_len = 0;
	if (w->p >= w->end || *w->p != '"')
		return -EBADMSG;
	for (w->p++; w->p < w->end && *w->p != '"'; w->p++) {
		char c = *w->p;
		uint32_t u, lo;

		if (c != '\\') {
			if (append(&w->str, &w->str_len, &w->str_cap, &c, 1))
				return -ENOMEM;
			continue;
		}
		if (++w->p >= w->end)
			return -EBADMSG;
		switch (*w->p) {
		case 'n':
			c = '\n';
			break;
		case 't':
			c = '\t';
			break;
		case 'r':
			c = '\r';
			break;
		case 'b':
			c = '\b';
			break;
		case 'f':
			c = '\f';
			break;
		case 'u':
			if (w->end - w->p < 5 || hex4(w->p + 1, &u))
				return -EBADMSG;
			w->p += 4;
			/* A surrogate pair: one code point. */
			if (u >= 0xd800 && u < 0xdc00 && w->end - w->p >= 7 && w->p[1] == '\\' &&
			    w->p[2] == 'u' && !hex4(w->p + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				w->p += 6;
			}
			if (put_utf8(w, u))
				return -ENOMEM;
			continue;
		default:
			c = *w->p;
			break; /* \" \\ \/ */
		}
		if (append(&w->str, &w->str_len, &w->str_cap, &c, 1))
			return -ENOMEM;
	}
	if (w->p >= w->end)
		return -EBADMSG;
	w->p++;
	return 0;
}

/* Past a number, a literal or an array (its strings may hold brackets). */
static int skip_value(struct walk *w)
{
	int depth = 0;

	while (w->p < w->end) {
		char c = *w->p;

		if (c == '"') {
			if (parse_string(w))
				return -EBADMSG;
			continue;
		}
		if (!depth && (c == ',' || c == '}' || c == ']' || c == ' '))
			return 0;
		w->p++;
		if (c == '[' || c == '{')
			depth++;
		else if ((c == ']' || c == '}') && --depth == 0)
			return 0;
	}
	return depth ? -EBADMSG : 0;
}

/* The field's name: the parent's, '_', the key in upper case. */
static void field_name(char *name, const char *parent, const char *key, size_t n)
{
	size_t k = 0;

	if (parent[0]) {
		k = strlen(parent); /* at most FIELD_MAX: made here too */
		memcpy(name, parent, k);
		name[k++] = '_';
	}
	for (size_t i = 0; i < n && k < FIELD_MAX; i++) {
		char c = key[i];

		name[k++] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A')
			    : (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c
									       : '_';
	}
	name[k < FIELD_MAX ? k : FIELD_MAX] = '\0';
}

static int is_loss_key(const char *key, size_t n)
{
	for (size_t i = 0; i < sizeof(loss_keys) / sizeof(loss_keys[0]); i++)
		if (strlen(loss_keys[i]) == n && !memcmp(loss_keys[i], key, n))
			return 1;
	return 0;
}

/* " key=value" for the MESSAGE of a line that has none. */
static int add_text(struct walk *w, const char *key, const char *v, size_t n)
{
	if (append(&w->text, &w->text_len, &w->text_cap, " ", 1) ||
	    append(&w->text, &w->text_len, &w->text_cap, key, strlen(key)) ||
	    append(&w->text, &w->text_len, &w->text_cap, "=", 1) ||
	    append(&w->text, &w->text_len, &w->text_cap, v, n))
		return -ENOMEM;
	return 0;
}

static int walk_object(struct walk *w, const char *parent)
{
	char name[FIELD_MAX + 2], key[FIELD_MAX];
	int r;

	if (w->p >= w->end || *w->p != '{')
		return -EBADMSG;
	w->p++;
	for (;;) {
		const char *v;
		size_t kn;

		skip_ws(w);
		if (w->p < w->end && *w->p == '}') {
			w->p++;
			return 0;
		}
		if ((r = parse_string(w)))
			return r;
		kn = w->str_len < sizeof(key) ? w->str_len : sizeof(key) - 1;
		memcpy(key, w->str, kn);
		key[kn] = '\0';
		field_name(name, parent, key, kn);
		skip_ws(w);
		if (w->p >= w->end || *w->p != ':')
			return -EBADMSG;
		w->p++;
		skip_ws(w);
		if (w->p < w->end && *w->p == '{') {
			if ((r = walk_object(w, name)))
				return r;
		} else if (w->p < w->end && *w->p == '"') {
			if ((r = parse_string(w)))
				return r;
			if (!parent[0] && !strcmp(key, KEY_MESSAGE)) {
				w->has_message = 1;
				r = add_field(w->e, "MESSAGE", w->str, w->str_len);
			} else {
				r = add_field(w->e, name, w->str, w->str_len);
			}
			if (!r && !parent[0] && !strcmp(key, KEY_TYPE))
				snprintf(w->type, sizeof(w->type), "%.*s", (int)w->str_len, w->str);
			else if (!r && !parent[0])
				r = add_text(w, key, w->str, w->str_len);
			if (r)
				return r;
		} else {
			v = w->p;
			if ((r = skip_value(w)))
				return r;
			if ((r = add_field(w->e, name, v, (size_t)(w->p - v))))
				return r;
			if (!parent[0] && is_loss_key(key, kn) && !(w->p - v == 1 && *v == '0'))
				w->loss = 1;
			if (!parent[0] && *v != '[' && strcmp(key, KEY_SCHEMA) &&
			    (r = add_text(w, key, v, (size_t)(w->p - v))))
				return r;
		}
		skip_ws(w);
		if (w->p < w->end && *w->p == ',')
			w->p++;
	}
}

static int priority(const struct walk *w)
{
	for (size_t i = 0; i < sizeof(priorities) / sizeof(priorities[0]); i++)
		if (!strcmp(priorities[i].type, w->type))
			return w->loss && priorities[i].priority > PRIORITY_LOSS
				   ? PRIORITY_LOSS
				   : priorities[i].priority;
	return PRIORITY_OTHER;
}

int proc_journal_entry(struct proc_journal_entry *e, const char *json, size_t len)
{
	struct walk w = { .p = json, .end = json + len, .e = e };
	char prio[2];
	int r;

	e->len = 0;
	r = walk_object(&w, "");
	if (!r && !w.has_message) {
		/* "summary: printed=... missing=...": what the line says. */
		w.str_len = 0;
		if (append(&w.str, &w.str_len, &w.str_cap, w.type, strlen(w.type)) ||
		    append(&w.str, &w.str_len, &w.str_cap, ":", 1) ||
		    append(&w.str, &w.str_len, &w.str_cap, w.text, w.text_len))
			r = -ENOMEM;
		else
			r = add_field(e, "MESSAGE", w.str, w.str_len);
	}
	if (!r) {
		prio[0] = (char)('0' + priority(&w));
		prio[1] = '\0';
		r = add_field(e, "PRIORITY", prio, 1);
	}
	if (!r)
		r = add_field(e, "SYSLOG_IDENTIFIER", "cnctl", 5);
	if (r == -EBADMSG) {
		/* Not an object (never printed by cnctl): kept whole. */
		e->len = 0;
		r = add_field(e, "MESSAGE", json, len);
		if (!r)
			r = add_field(e, "PRIORITY", "5", 1);
	}
	free(w.text);
	free(w.str);
	return r;
}
