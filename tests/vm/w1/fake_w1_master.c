// SPDX-License-Identifier: GPL-2.0
/*
 * A 1-Wire bus master without hardware, for the vm
 * tier's w1 test (tests/vm/run-w1-test.sh): it registers with the kernel's
 * w1 core (w1_add_master_device, include/linux/w1.h) and answers the two
 * lowest bus operations, reset_bus and touch_bit, as a bus with two slaves
 * would, bit by bit. Everything above (bytes, blocks, the ROM search's
 * triplets, MATCH/SKIP ROM, the netlink interface, w1_therm) is the
 * kernel's own code running on it.
 *
 * The slaves:
 *  - a DS18B20 thermometer, family 0x28, serial 0x00000a1b2c3d: SEARCH ROM,
 *    MATCH ROM, SKIP ROM, READ ROM; CONVERT T (0x44) puts the temperature
 *    of the temp_mc parameter (millidegrees Celsius, 1/16 degree steps,
 *    writable at run time, held to the part's -55..125 degrees) into the
 *    scratchpad and reads back 1s (done);
 *    READ SCRATCHPAD (0xbe, 9 bytes, the last the Dallas CRC-8 of the
 *    others); WRITE SCRATCHPAD (0x4e: TH, TL, config); COPY SCRATCHPAD
 *    (0x48); RECALL E2 (0xb8); READ POWER SUPPLY (0xb4: 1, external power).
 *    Until the first CONVERT T it holds the power-on 85 degrees.
 *  - a DS2401 silicon serial number, family 0x01, serial 0x000012345678:
 *    ROM commands only.
 * ALARM SEARCH finds nobody (neither slave is in alarm); RESUME and
 * overdrive commands are not spoken by these parts: a slave given one
 * waits for the next reset. The present parameter (writable) says which
 * slaves answer a reset (bit 0 the DS18B20, bit 1 the DS2401); the others
 * stay silent until a reset finds them present again, and with none the
 * reset sees no presence pulse.
 */
#include <linux/bits.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/w1.h>

#define FAKE_THERM_ROM(crc) (0x28ULL | 0x00000a1b2c3dULL << 8 | (u64)(crc) << 56)
#define FAKE_ID_ROM(crc)    (0x01ULL | 0x000012345678ULL << 8 | (u64)(crc) << 56)

static int temp_mc = 21375;
module_param(temp_mc, int, 0644);
MODULE_PARM_DESC(temp_mc, "DS18B20 temperature in millidegrees Celsius, read at each CONVERT T");

static uint present = 0x3;
module_param(present, uint, 0644);
MODULE_PARM_DESC(present, "Slaves that answer a reset: bit 0 the DS18B20, bit 1 the DS2401");

/* Where a slave is in a transaction, from the last reset. */
enum fake_state {
	FAKE_IDLE,     /* out of this transaction until the next reset */
	FAKE_ROM_CMD,  /* receiving the ROM command byte */
	FAKE_SEARCH,   /* SEARCH ROM: bit, its complement, the master's choice */
	FAKE_MATCH,    /* MATCH ROM: receiving 64 bits */
	FAKE_READ_ROM, /* READ ROM: sending 64 bits */
	FAKE_FN_CMD,   /* selected: receiving the function command byte */
	FAKE_FN_WRITE, /* WRITE SCRATCHPAD: receiving 3 bytes */
	FAKE_FN_READ,  /* sending out[] (then 1s) */
};

struct fake_slave {
	u64 rom;
	bool therm;
	enum fake_state state;
	u8 byte;	    /* byte being received, LSB first */
	unsigned int nbits; /* bits of it, or of the ROM, so far */
	unsigned int phase; /* SEARCH: 0 bit, 1 complement, 2 choice */
	bool mismatch;	    /* MATCH ROM: a bit differed */
	u8 out[9];
	unsigned int out_bits; /* bits of out[] to send */
	unsigned int out_pos;
	u8 in[3];
	unsigned int in_bytes;
	u8 pad[9];    /* DS18B20 scratchpad */
	u8 eeprom[3]; /* TH, TL, config */
};

struct fake_bus {
	spinlock_t lock; /* the slaves' state: one slot at a time */
	struct fake_slave slave[2];
	struct w1_bus_master master;
};

static struct fake_bus fake_bus;

static unsigned int rom_bit(const struct fake_slave *s, unsigned int i)
{
	return (s->rom >> i) & 1;
}

static void pad_crc(struct fake_slave *s)
{
	s->pad[8] = w1_calc_crc8(s->pad, 8);
}

/* The scratchpad after power-on: 85 degrees, the EEPROM's TH, TL, config. */
static void pad_init(struct fake_slave *s)
{
	static const u8 pad[8] = { 0x50, 0x05, 0x4b, 0x46, 0x7f, 0xff, 0x0c, 0x10 };

	memcpy(s->pad, pad, sizeof(pad));
	memcpy(s->eeprom, &pad[2], sizeof(s->eeprom));
	pad_crc(s);
}

/* Send n bytes of p in the next read slots, then 1s. */
static void send_bytes(struct fake_slave *s, const u8 *p, unsigned int n)
{
	memcpy(s->out, p, n);
	s->out_bits = n * 8;
	s->out_pos = 0;
	s->state = FAKE_FN_READ;
}

/* Read slots answer 1: a conversion or copy is done; external power. */
static void send_ones(struct fake_slave *s)
{
	s->out_bits = 0;
	s->out_pos = 0;
	s->state = FAKE_FN_READ;
}

/* A DS18B20 function command; a DS2401 has none. */
static void function(struct fake_slave *s, u8 cmd)
{
	int raw;

	if (!s->therm) {
		s->state = FAKE_IDLE;
		return;
	}
	switch (cmd) {
	case W1_CONVERT_TEMP:
		/* 12 bits: 1/16 degree, two's complement, within the part's
		 * range (and far from overflowing an int)
		 */
		raw = clamp(READ_ONCE(temp_mc), -55000, 125000) * 16 / 1000;
		s->pad[0] = raw & 0xff;
		s->pad[1] = (raw >> 8) & 0xff;
		pad_crc(s);
		send_ones(s);
		break;
	case W1_READ_SCRATCHPAD:
		send_bytes(s, s->pad, sizeof(s->pad));
		break;
	case W1_WRITE_SCRATCHPAD:
		s->in_bytes = 0;
		s->nbits = 0;
		s->byte = 0;
		s->state = FAKE_FN_WRITE;
		break;
	case W1_COPY_SCRATCHPAD:
		memcpy(s->eeprom, &s->pad[2], sizeof(s->eeprom));
		send_ones(s);
		break;
	case 0xb8: /* RECALL E2 */
		memcpy(&s->pad[2], s->eeprom, sizeof(s->eeprom));
		pad_crc(s);
		send_ones(s);
		break;
	case W1_READ_PSUPPLY:
		send_ones(s);
		break;
	default:
		s->state = FAKE_IDLE;
	}
}

static void rom_command(struct fake_slave *s, u8 cmd)
{
	s->nbits = 0;
	switch (cmd) {
	case W1_SEARCH:
		s->phase = 0;
		s->state = FAKE_SEARCH;
		break;
	case W1_MATCH_ROM:
		s->mismatch = false;
		s->state = FAKE_MATCH;
		break;
	case W1_SKIP_ROM:
		s->byte = 0;
		s->state = FAKE_FN_CMD;
		break;
	case W1_READ_ROM:
		s->state = FAKE_READ_ROM;
		break;
	default: /* ALARM SEARCH (no alarm), RESUME, overdrive */
		s->state = FAKE_IDLE;
	}
}

/* What the slave puts on the line in this slot: 0 pulls it low. */
static unsigned int drive(const struct fake_slave *s)
{
	switch (s->state) {
	case FAKE_SEARCH:
		if (s->phase == 2)
			return 1;
		return rom_bit(s, s->nbits) ^ s->phase;
	case FAKE_READ_ROM:
		return rom_bit(s, s->nbits);
	case FAKE_FN_READ:
		if (s->out_pos >= s->out_bits)
			return 1;
		return (s->out[s->out_pos / 8] >> (s->out_pos % 8)) & 1;
	default:
		return 1;
	}
}

/* Receive one bit of a command byte; true when the byte is complete. */
static bool receive(struct fake_slave *s, unsigned int line)
{
	s->byte |= line << s->nbits;
	if (++s->nbits < 8)
		return false;
	s->nbits = 0;
	return true;
}

/* The slot is over: the line was `line`. */
static void advance(struct fake_slave *s, unsigned int line)
{
	u8 b;

	switch (s->state) {
	case FAKE_ROM_CMD:
		if (receive(s, line)) {
			b = s->byte;
			s->byte = 0;
			rom_command(s, b);
		}
		break;
	case FAKE_FN_CMD:
		if (receive(s, line)) {
			b = s->byte;
			s->byte = 0;
			function(s, b);
		}
		break;
	case FAKE_SEARCH:
		if (s->phase < 2) {
			s->phase++;
			break;
		}
		if (line != rom_bit(s, s->nbits)) {
			s->state = FAKE_IDLE;
			break;
		}
		s->phase = 0;
		if (++s->nbits == 64) {
			s->byte = 0;
			s->nbits = 0;
			s->state = FAKE_FN_CMD;
		}
		break;
	case FAKE_MATCH:
		if (line != rom_bit(s, s->nbits))
			s->mismatch = true;
		if (++s->nbits == 64) {
			s->byte = 0;
			s->nbits = 0;
			s->state = s->mismatch ? FAKE_IDLE : FAKE_FN_CMD;
		}
		break;
	case FAKE_READ_ROM:
		if (++s->nbits == 64) {
			s->byte = 0;
			s->nbits = 0;
			s->state = FAKE_FN_CMD;
		}
		break;
	case FAKE_FN_WRITE:
		if (receive(s, line)) {
			s->in[s->in_bytes++] = s->byte;
			s->byte = 0;
			if (s->in_bytes == sizeof(s->in)) {
				memcpy(&s->pad[2], s->in, sizeof(s->in));
				pad_crc(s);
				s->state = FAKE_IDLE;
			}
		}
		break;
	case FAKE_FN_READ:
		s->out_pos++;
		break;
	case FAKE_IDLE:
		break;
	}
}

/*
 * One time slot: the master writes `bit` (1 is also a read slot) and
 * samples the line, which any slave sending a 0 pulls low.
 */
static u8 fake_touch_bit(void *data, u8 bit)
{
	struct fake_bus *bus = data;
	unsigned int line = bit & 1;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&bus->lock, flags);
	for (i = 0; i < ARRAY_SIZE(bus->slave); i++)
		line &= drive(&bus->slave[i]);
	for (i = 0; i < ARRAY_SIZE(bus->slave); i++)
		advance(&bus->slave[i], line);
	spin_unlock_irqrestore(&bus->lock, flags);
	return line;
}

/*
 * Reset: every slave that is present answers with its presence pulse and
 * waits for a ROM command; the others stay silent. 0: a device is present,
 * 1: none (w1_reset_bus).
 */
static u8 fake_reset_bus(void *data)
{
	struct fake_bus *bus = data;
	unsigned int mask = READ_ONCE(present);
	unsigned long flags;
	unsigned int i;
	u8 none = 1;

	spin_lock_irqsave(&bus->lock, flags);
	for (i = 0; i < ARRAY_SIZE(bus->slave); i++) {
		bus->slave[i].byte = 0;
		bus->slave[i].nbits = 0;
		if (mask & BIT(i)) {
			bus->slave[i].state = FAKE_ROM_CMD;
			none = 0;
		} else {
			bus->slave[i].state = FAKE_IDLE;
		}
	}
	spin_unlock_irqrestore(&bus->lock, flags);
	return none;
}

static u64 with_crc(u64 rom)
{
	u8 b[7];
	int i;

	for (i = 0; i < 7; i++)
		b[i] = (rom >> (8 * i)) & 0xff;
	return rom | (u64)w1_calc_crc8(b, 7) << 56;
}

static int __init fake_w1_init(void)
{
	struct fake_bus *bus = &fake_bus;

	spin_lock_init(&bus->lock);
	bus->slave[0].rom = with_crc(FAKE_THERM_ROM(0));
	bus->slave[0].therm = true;
	pad_init(&bus->slave[0]);
	bus->slave[1].rom = with_crc(FAKE_ID_ROM(0));
	bus->master.data = bus;
	bus->master.touch_bit = fake_touch_bit;
	bus->master.reset_bus = fake_reset_bus;
	bus->master.dev_id = "fake_w1_master";
	pr_info("fake_w1_master: DS18B20 %016llx, DS2401 %016llx, %d mC\n", bus->slave[0].rom,
		bus->slave[1].rom, temp_mc);
	return w1_add_master_device(&bus->master);
}

static void __exit fake_w1_exit(void)
{
	w1_remove_master_device(&fake_bus.master);
}

module_init(fake_w1_init);
module_exit(fake_w1_exit);
MODULE_DESCRIPTION("A 1-Wire bus master emulating a DS18B20 and a DS2401 (libcn's vm tests)");
MODULE_LICENSE("GPL");
