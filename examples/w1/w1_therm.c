/*
 * w1_therm.c - a w1 (1-Wire) client on libcn: list the bus masters, search
 * a bus, read a DS18B20 thermometer, through the kernel's w1 netlink
 * interface (cn_request_all(3), <libcn/w1.h>).
 *
 *   w1_therm [--bundle] [--wait MS] [--timeout MS] masters
 *   w1_therm [--bundle] [--wait MS] [--timeout MS] search MASTER
 *   w1_therm [--bundle] [--wait MS] [--timeout MS] reset MASTER
 *   w1_therm [--bundle] [--wait MS] [--timeout MS] read ROM...
 *
 * ROM is a slave's name as /sys/bus/w1/devices shows it: the family code
 * and the 48-bit serial in hex, "28-00000a1b2c3d" (the CRC byte of the
 * 64-bit ROM id is computed). `read` starts a conversion (CONVERT T) on each
 * ROM named, in one request (one w1 message each), waits --wait ms (750, a
 * 12-bit conversion), then reads each 9-byte scratchpad, in one request,
 * and checks its CRC. --bundle asks the kernel to bundle its answers
 * (W1_CN_BUNDLE). Output, one line each:
 *
 *   master ID
 *   rom 28-00000a1b2c3d crc ok                            (search)
 *   search status ok                                      (its end)
 *   reset MASTER: presence                                (reset)
 *   28-00000a1b2c3d scratchpad 5e ff 4b 46 7f ff 0c 10 6a crc ok
 *   28-00000a1b2c3d temperature -10125                    (millidegrees C)
 *
 * `search` ends with the status the kernel sends after the ids: the line
 * shows that every id came. `reset` resets a bus and reports a device's
 * presence pulse.
 *
 * Exit: 0, 1 an error, 2 usage, 3 a CRC that does not match, 4 no such
 * master or slave, or nobody answered (-ENODEV from the kernel: a slave not
 * answering its selection, a reset without a presence pulse; the other
 * ROMs are read). w1 takes requests from any user; the kernel needs wire.ko
 * (CONFIG_W1 with CONFIG_W1_CON).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libcn.h>
#include <libcn/w1.h>

#define DS18B20_CONVERT	 0x44
#define DS18B20_READ_PAD 0xbe

union req {
	struct cn_msg m;
	uint8_t b[CN_MSG_SIZE(256)];
};

/* Dallas/Maxim CRC-8 (x^8 + x^5 + x^4 + 1, reflected): the last byte of a
 * ROM id and of a DS18B20 scratchpad is this of the others. */
static uint8_t crc8(const uint8_t *p, size_t n)
{
	uint8_t crc = 0;

	while (n--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc & 1) ? (uint8_t)((crc >> 1) ^ 0x8c) : (uint8_t)(crc >> 1);
	}
	return crc;
}

/* The bytes of a ROM id as the bus sends them: family first, CRC last. */
static void rom_bytes(uint64_t rom, uint8_t b[8])
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(rom >> (8 * i));
}

/* "28-00000a1b2c3d" into the 64-bit ROM id, CRC computed. */
static int parse_rom(const char *s, uint64_t *rom)
{
	unsigned int family;
	unsigned long long serial;
	uint8_t b[8];
	int n = 0;

	if (sscanf(s, "%2x-%12llx%n", &family, &serial, &n) != 2 || s[n] || n != 15)
		return -1;
	*rom = family | (uint64_t)serial << 8;
	rom_bytes(*rom, b);
	*rom |= (uint64_t)crc8(b, 7) << 56;
	return 0;
}

static void print_rom(uint64_t rom)
{
	uint8_t b[8];

	rom_bytes(rom, b);
	printf("rom %02x-%012" PRIx64 " crc %s\n", b[0], (uint64_t)((rom >> 8) & 0xffffffffffffu),
	       crc8(b, 7) == b[7] ? "ok" : "BAD");
}

/* One DS18B20 of a `read`, and what the answers brought for it. */
struct therm {
	const char *name;
	uint64_t rom;
	int err;	/* its first failed status, 0: none */
	uint8_t pad[9]; /* what READ SCRATCHPAD read */
	size_t pad_len;
};

struct therms {
	struct therm *t;
	uint32_t n;
};

static void on_masters(const struct cn_answer *a, void *arg)
{
	(void)arg;
	for (size_t i = 0; a->kind == CN_ANSWER_DATA && i + 4 <= a->len; i += 4) {
		uint32_t id;

		memcpy(&id, (const uint8_t *)a->data + i, 4);
		printf("master %" PRIu32 "\n", id);
	}
}

static void on_search(const struct cn_answer *a, void *arg)
{
	(void)arg;
	if (a->kind == CN_ANSWER_STATUS)
		printf("search status %s\n", a->status ? strerror(-a->status) : "ok");
	for (size_t i = 0; a->kind == CN_ANSWER_DATA && i + 8 <= a->len; i += 8) {
		uint64_t rom;

		memcpy(&rom, (const uint8_t *)a->data + i, 8);
		print_rom(rom);
	}
}

/* The request holds one w1 message per thermometer: part names it. */
static void on_read(const struct cn_answer *a, void *arg)
{
	struct therms *ts = arg;
	struct therm *t;

	if (a->part >= ts->n)
		return;
	t = &ts->t[a->part];
	if (a->kind == CN_ANSWER_STATUS && a->status && !t->err)
		t->err = a->status;
	if (a->kind == CN_ANSWER_DATA && a->len == sizeof(t->pad)) {
		memcpy(t->pad, a->data, a->len);
		t->pad_len = a->len;
	}
}

static int fail(const char *what, int r)
{
	fprintf(stderr, "w1_therm: %s: %s\n", what, strerror(-r));
	return r == -ENODEV ? 4 : 1;
}

static int masters(struct cn_sock *s, unsigned int flags, int timeout)
{
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), flags);
	int r = cn_w1_add_msg(req, sizeof(u), CN_W1_LIST_MASTERS, 0);

	if (r == 0)
		r = cn_request_all(s, req, 0, CN_REPLY_W1, timeout, on_masters, NULL);
	return r < 0 ? fail("list masters", r) : 0;
}

/* One command on bus master `master` (as `masters` prints it). */
static int master_cmd(struct cn_sock *s, unsigned int flags, int timeout, const char *master,
		      unsigned int cmd, cn_answer_fn fn)
{
	union req u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), flags);
	char *end;
	unsigned long long id = strtoull(master, &end, 0);
	int r;

	if (*end || !*master) {
		fprintf(stderr, "w1_therm: MASTER is a number, as `masters` prints it\n");
		return -EDOM;
	}
	r = cn_w1_add_msg(req, sizeof(u), CN_W1_MASTER_CMD, id);
	if (r == 0)
		r = cn_w1_add_cmd(req, sizeof(u), cmd, NULL, 0);
	if (r == 0)
		r = cn_request_all(s, req, 0, CN_REPLY_W1, timeout, fn, NULL);
	return r;
}

static int search(struct cn_sock *s, unsigned int flags, int timeout, const char *master)
{
	int r = master_cmd(s, flags, timeout, master, CN_W1_CMD_SEARCH, on_search);

	if (r == -EDOM)
		return 2;
	return r < 0 ? fail("search", r) : 0;
}

/* A reset that no device answers with its presence pulse is -ENODEV
 * (w1_reset_bus's 1, sent as status 255), as is a master the kernel does
 * not know. */
static int reset(struct cn_sock *s, unsigned int flags, int timeout, const char *master)
{
	int r = master_cmd(s, flags, timeout, master, CN_W1_CMD_RESET, NULL);

	if (r == -EDOM)
		return 2;
	if (r == -ENODEV) {
		fprintf(stderr, "w1_therm: reset %s: no presence pulse (or no such master)\n",
			master);
		return 4;
	}
	if (r < 0)
		return fail("reset", r);
	printf("reset %s: presence\n", master);
	return 0;
}

/* One request for every thermometer: reset, select it, write `cmd`, and
 * read n bytes if n. Returns cn_request_all's result; each one's first
 * failure is in its err. */
static int therms_cmd(struct cn_sock *s, unsigned int flags, int timeout, struct therms *ts,
		      uint8_t cmd, size_t n)
{
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4096)];
	} u;
	struct cn_msg *req = cn_w1_init(&u, sizeof(u), flags);
	int r = 0;

	for (uint32_t i = 0; i < ts->n && r == 0; i++) {
		r = cn_w1_add_msg(req, sizeof(u), CN_W1_SLAVE_CMD, ts->t[i].rom);
		if (r == 0)
			r = cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_WRITE, &cmd, 1);
		if (r == 0 && n)
			r = cn_w1_add_cmd(req, sizeof(u), CN_W1_CMD_READ, NULL, n);
	}
	if (r == 0)
		r = cn_request_all(s, req, 0, CN_REPLY_W1, timeout, on_read, ts);
	return r;
}

/* Read the DS18B20s named in names[0..n): one request converts them all,
 * one reads them all. */
static int read_therms(struct cn_sock *s, unsigned int flags, int timeout, int wait_ms,
		       char **names, int n)
{
	struct therm t[64];
	struct therms ts = { t, (uint32_t)n };
	struct timespec ts_wait = { wait_ms / 1000, (long)(wait_ms % 1000) * 1000000 };
	int r, status = 0;

	if (n > 64) {
		fprintf(stderr, "w1_therm: 64 ROMs at most\n");
		return 2;
	}
	memset(t, 0, sizeof(t));
	for (int i = 0; i < n; i++) {
		t[i].name = names[i];
		if (parse_rom(names[i], &t[i].rom) < 0) {
			fprintf(stderr,
				"w1_therm: ROM is FF-SSSSSSSSSSSS (family, serial in hex)\n");
			return 2;
		}
	}
	r = therms_cmd(s, flags, timeout, &ts, DS18B20_CONVERT, 0);
	if (r < 0 && r != -ENODEV)
		return fail("convert", r);
	nanosleep(&ts_wait, NULL);
	for (int i = 0; i < n; i++)
		t[i].err = 0;
	r = therms_cmd(s, flags, timeout, &ts, DS18B20_READ_PAD, sizeof(t[0].pad));
	if (r < 0 && r != -ENODEV)
		return fail("read", r);
	for (int i = 0; i < n; i++) {
		int16_t raw;

		if (t[i].err || t[i].pad_len != sizeof(t[i].pad)) {
			fprintf(stderr, "w1_therm: %s: %s\n", t[i].name,
				t[i].err ? strerror(-t[i].err) : "no scratchpad in the answers");
			status = t[i].err == -ENODEV ? 4 : 1;
			continue;
		}
		printf("%s scratchpad", t[i].name);
		for (size_t k = 0; k < sizeof(t[i].pad); k++)
			printf(" %02x", t[i].pad[k]);
		if (crc8(t[i].pad, 8) != t[i].pad[8]) {
			printf(" crc BAD (%02x)\n", crc8(t[i].pad, 8));
			status = 3;
			continue;
		}
		printf(" crc ok\n");
		/* 1/16 degree in two's complement, least significant byte first */
		raw = (int16_t)(t[i].pad[0] | t[i].pad[1] << 8);
		printf("%s temperature %d\n", t[i].name, raw * 1000 / 16);
	}
	return status;
}

static int usage(void)
{
	fprintf(stderr, "usage: w1_therm [--bundle] [--wait MS] [--timeout MS] "
			"masters | search MASTER | reset MASTER | read ROM...\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned int flags = 0;
	int timeout = 5000, wait_ms = 750, i = 1, r;
	struct cn_sock *s;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--bundle") == 0)
			flags = CN_W1_BUNDLE;
		else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc)
			wait_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout = atoi(argv[++i]);
		else
			return usage();
	}
	if (i >= argc)
		return usage();
	s = cn_open(NETLINK_CONNECTOR, NULL);
	if (!s) {
		fprintf(stderr, "w1_therm: cn_open: %s\n", strerror(errno));
		return 1;
	}
	if (strcmp(argv[i], "masters") == 0 && i + 1 == argc)
		r = masters(s, flags, timeout);
	else if (strcmp(argv[i], "search") == 0 && i + 2 == argc)
		r = search(s, flags, timeout, argv[i + 1]);
	else if (strcmp(argv[i], "reset") == 0 && i + 2 == argc)
		r = reset(s, flags, timeout, argv[i + 1]);
	else if (strcmp(argv[i], "read") == 0 && i + 2 <= argc)
		r = read_therms(s, flags, timeout, wait_ms, argv + i + 1, argc - i - 1);
	else
		r = usage();
	cn_close(s);
	return r;
}
