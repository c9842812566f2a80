/* SPDX-License-Identifier: MIT */
/* NIC settings as key=value lists (contract in tools/common/nic_text.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/napi_show.h"
#include "tools/common/nic_text.h"
#include "tools/common/values.h"

#define COALESCE_KEYS "rx-usecs, rx-frames, adaptive-rx, tx-usecs, tx-frames, adaptive-tx"
#define CHANNEL_KEYS "rx, tx, other, combined"
#define ITEM_MAX 96

/* Call one(item, arg, err) for each comma-separated item of list; empty items refused. */
static int each_item(const char *list, int (*one)(const char *, void *, char *, size_t), void *arg,
		     char *err, size_t errlen)
{
	const char *p = list;

	if (!*list)
		return tool_fail(err, errlen, "an empty list: expected key=value[,key=value...]");
	/* messages quote the items: never a control character in them */
	for (size_t i = 0; list[i]; i++)
		if ((unsigned char)list[i] < 0x20 || list[i] == 0x7f)
			return tool_fail(err, errlen, "a control character (0x%02x) at byte %zu of the list",
					 (unsigned char)list[i], i);
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char item[ITEM_MAX];
		int rc;

		if (n == 0)
			return tool_fail(err, errlen, "'%s': an empty item", list);
		if (n >= sizeof(item))
			return tool_fail(err, errlen, "'%.*s...': too long", 24, p);
		memcpy(item, p, n);
		item[n] = '\0';
		if ((rc = one(item, arg, err, errlen)))
			return rc;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* "key=value" into key (keylen) and *value; -EINVAL without '='. */
static int split(const char *item, char *key, size_t keylen, const char **value, char *err,
		 size_t errlen)
{
	const char *eq = strchr(item, '=');

	if (!eq || eq == item || (size_t)(eq - item) >= keylen)
		return tool_fail(err, errlen, "'%s': expected key=value", item);
	memcpy(key, item, (size_t)(eq - item));
	key[eq - item] = '\0';
	*value = eq + 1;
	return 0;
}

static int u32_value(const char *key, const char *value, uint32_t *out, char *err, size_t errlen)
{
	uint64_t v;
	bool neg;

	if (tool_parse_u64(value, &v, &neg) || v > UINT32_MAX)
		return tool_fail(err, errlen, "%s=%s: must be a whole number between 0 and %" PRIu32,
				 key, value, UINT32_MAX);
	*out = (uint32_t)v;
	return 0;
}

/* Append "key=value" (with a comma before all but the first) to buf. */
__attribute__((format(printf, 3, 4)))
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	if (used)
		buf[used++] = ',';
	buf[used] = '\0';
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* ---- coalescing ---- */

static int coalesce_item(const char *item, void *arg, char *err, size_t errlen)
{
	struct bp_nic_coalesce *s = arg;
	const char *value;
	char key[32];
	int rc;

	if ((rc = split(item, key, sizeof(key), &value, err, errlen)))
		return rc;
	for (uint32_t bit = 1; bit & BP_COAL_ALL; bit <<= 1) {
		if (strcmp(key, bp_nic_coalesce_name(bit)))
			continue;
		if (s->has & bit)
			return tool_fail(err, errlen, "%s is given twice", key);
		if (bit == BP_COAL_ADAPTIVE_RX || bit == BP_COAL_ADAPTIVE_TX) {
			bool on = !strcmp(value, "on") || !strcmp(value, "1");

			if (!on && strcmp(value, "off") && strcmp(value, "0"))
				return tool_fail(err, errlen, "%s=%s: must be on or off", key, value);
			*(bit == BP_COAL_ADAPTIVE_RX ? &s->adaptive_rx : &s->adaptive_tx) = on;
		} else {
			uint32_t *field = bit == BP_COAL_RX_USECS ? &s->rx_usecs :
					  bit == BP_COAL_RX_FRAMES ? &s->rx_frames :
					  bit == BP_COAL_TX_USECS ? &s->tx_usecs : &s->tx_frames;

			if ((rc = u32_value(key, value, field, err, errlen)))
				return rc;
		}
		s->has |= bit;
		return 0;
	}
	return tool_fail(err, errlen, "unknown coalescing key '%s'; keys: " COALESCE_KEYS, key);
}

int nic_parse_coalesce(const char *list, struct bp_nic_coalesce *s, char *err, size_t errlen)
{
	*s = (struct bp_nic_coalesce){ 0 };
	return each_item(list, coalesce_item, s, err, errlen);
}

void nic_format_coalesce(const struct bp_nic_coalesce *s, char *buf, size_t len)
{
	const uint32_t vals[] = { s->rx_usecs, s->rx_frames, s->adaptive_rx, s->tx_usecs,
				  s->tx_frames, s->adaptive_tx };

	buf[0] = '\0';
	for (int i = 0; i < 6; i++) {
		uint32_t bit = 1u << i;

		if (!(s->has & bit))
			continue;
		if (bit == BP_COAL_ADAPTIVE_RX || bit == BP_COAL_ADAPTIVE_TX)
			append(buf, len, "%s=%s", bp_nic_coalesce_name(bit), vals[i] ? "on" : "off");
		else
			append(buf, len, "%s=%" PRIu32, bp_nic_coalesce_name(bit), vals[i]);
	}
}

/* ---- channels ---- */

static int channel_item(const char *item, void *arg, char *err, size_t errlen)
{
	struct bp_nic_channels *s = arg;
	const char *value;
	char key[32];
	int rc;

	if ((rc = split(item, key, sizeof(key), &value, err, errlen)))
		return rc;
	for (int k = 0; k < BP_CHAN_KINDS; k++) {
		if (strcmp(key, bp_nic_chan_name(k)))
			continue;
		if (s->has & (1u << k))
			return tool_fail(err, errlen, "%s is given twice", key);
		if ((rc = u32_value(key, value, &s->count[k], err, errlen)))
			return rc;
		s->has |= 1u << k;
		return 0;
	}
	return tool_fail(err, errlen, "unknown channel kind '%s'; kinds: " CHANNEL_KEYS, key);
}

int nic_parse_channels(const char *list, struct bp_nic_channels *s, char *err, size_t errlen)
{
	*s = (struct bp_nic_channels){ 0 };
	return each_item(list, channel_item, s, err, errlen);
}

void nic_format_channels(const struct bp_nic_channels *s, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int k = 0; k < BP_CHAN_KINDS; k++)
		if (s->has & (1u << k))
			append(buf, len, "%s=%" PRIu32, bp_nic_chan_name(k), s->count[k]);
}

/* ---- per-NAPI settings ---- */

static int napi_item(const char *item, void *arg, char *err, size_t errlen)
{
	return napi_parse_setting(item, arg, err, errlen);
}

int nic_parse_napi(const char *list, bp_napi_settings *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	return each_item(list, napi_item, s, err, errlen);
}

void nic_format_napi(const bp_napi_settings *s, char *buf, size_t len)
{
	buf[0] = '\0';
	if (s->has & BP_NAPI_HAS_DEFER)
		append(buf, len, "defer-hard-irqs=%" PRIu32, s->defer_hard_irqs);
	if (s->has & BP_NAPI_HAS_GRO_FLUSH)
		append(buf, len, "gro-flush-timeout=%" PRIu64, s->gro_flush_timeout_ns);
	if (s->has & BP_NAPI_HAS_IRQ_SUSPEND)
		append(buf, len, "irq-suspend-timeout=%" PRIu64, s->irq_suspend_timeout_ns);
	if (s->has & BP_NAPI_HAS_THREADED)
		append(buf, len, "threaded=%" PRIu32, s->threaded);
}
