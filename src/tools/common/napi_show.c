/* SPDX-License-Identifier: MIT */
/* NAPI settings: parsing and printing for the tools (contract in tools/common/napi_show.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/values.h"

/* The kernel's limit for defer-hard-irqs (netdev.yaml: max s32-max) and the sysfs knob. */
#define DEFER_MAX INT32_MAX

#define fail tool_fail

/* "key=value" split in place into a copy: key (at most keylen-1 bytes) and value. */
static int split(const char *arg, char *key, size_t keylen, const char **value, const char *example,
		 char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return fail(err, errlen, "'%s': expected key=value (e.g. %s)", arg, example);
	if ((size_t)(eq - arg) >= keylen)
		return fail(err, errlen, "unknown key '%.*s'", (int)(eq - arg), arg);
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	*value = eq + 1;
	return 0;
}

/* A whole number key=value in 0..max; messages repeat what was typed. */
static int parse_value(const char *key, const char *value, uint64_t max, uint64_t *out, char *err,
		       size_t errlen)
{
	uint64_t v;
	bool neg;
	int r = tool_parse_u64(value, &v, &neg);

	if (r == -EINVAL && !neg)
		return fail(err, errlen, "%s=%s: not a whole number", key, value);
	if (neg || r == -ERANGE || v > max)
		return fail(err, errlen, "%s=%s: must be between 0 and %" PRIu64, key, value, max);
	*out = v;
	return 0;
}

static const struct {
	const char *key;
	uint32_t bit;
	uint64_t max;
} settings[] = {
	{ "defer-hard-irqs", BP_NAPI_HAS_DEFER, DEFER_MAX },
	{ "gro-flush-timeout", BP_NAPI_HAS_GRO_FLUSH, UINT64_MAX },
	{ "irq-suspend-timeout", BP_NAPI_HAS_IRQ_SUSPEND, UINT64_MAX },
	/* 0|1 as documented for napi-set; newer kernels may know more modes */
	{ "threaded", BP_NAPI_HAS_THREADED, 1 },
};
#define SETTING_KEYS "defer-hard-irqs, gro-flush-timeout, irq-suspend-timeout, threaded"

int napi_parse_setting(const char *arg, bp_napi_settings *s, char *err, size_t errlen)
{
	static const char *const read_only[] = { "id", "ifindex", "irq", "pid" };
	char key[32];
	const char *value;
	uint64_t v;
	int rc;

	if ((rc = split(arg, key, sizeof(key), &value, "defer-hard-irqs=2", err, errlen)))
		return rc;
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		if (strcmp(key, settings[i].key))
			continue;
		if (s->has & settings[i].bit)
			return fail(err, errlen, "%s is given twice", key);
		if ((rc = parse_value(key, value, settings[i].max, &v, err, errlen)))
			return rc;
		switch (settings[i].bit) {
		case BP_NAPI_HAS_DEFER: s->defer_hard_irqs = (uint32_t)v; break;
		case BP_NAPI_HAS_GRO_FLUSH: s->gro_flush_timeout_ns = v; break;
		case BP_NAPI_HAS_IRQ_SUSPEND: s->irq_suspend_timeout_ns = v; break;
		case BP_NAPI_HAS_THREADED: s->threaded = (uint32_t)v; break;
		}
		s->has |= settings[i].bit;
		return 0;
	}
	for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]); i++)
		if (!strcmp(key, read_only[i]))
			return fail(err, errlen, "%s is read-only; keys: " SETTING_KEYS, key);
	/* the sysfs spelling is an easy slip: point at the option that takes it */
	for (int i = 0; i < NAPI_NKNOBS; i++)
		if (!strcmp(key, napi_knob_names[i]))
			return fail(err, errlen, "unknown key '%s' (a device-wide sysfs knob: use "
				    "--device DEV); keys: " SETTING_KEYS, key);
	return fail(err, errlen, "unknown key '%s'; keys: " SETTING_KEYS, key);
}

const char *const napi_knob_names[NAPI_NKNOBS] = {
	[NAPI_KNOB_DEFER] = "napi_defer_hard_irqs",
	[NAPI_KNOB_GRO_FLUSH] = "gro_flush_timeout",
};

int napi_parse_knob(const char *arg, struct napi_knobs *k, char *err, size_t errlen)
{
	/* napi_defer_hard_irqs: the kernel's sysfs store refuses > S32_MAX */
	static const uint64_t max[NAPI_NKNOBS] = { DEFER_MAX, UINT64_MAX };
	char key[32];
	const char *value;
	int rc;

	if ((rc = split(arg, key, sizeof(key), &value, "gro_flush_timeout=20000", err, errlen)))
		return rc;
	for (int i = 0; i < NAPI_NKNOBS; i++) {
		if (strcmp(key, napi_knob_names[i]))
			continue;
		if (k->has[i])
			return fail(err, errlen, "%s is given twice", key);
		if ((rc = parse_value(key, value, max[i], &k->value[i], err, errlen)))
			return rc;
		k->has[i] = true;
		return 0;
	}
	return fail(err, errlen, "unknown device knob '%s'; knobs: napi_defer_hard_irqs, "
		    "gro_flush_timeout", key);
}

/* ---- output ---- */

#define ROW_FMT "%-10s %-8s %-15s %-5s %-7s %-15s %-17s %-19s %s\n"

void napi_table_header(FILE *out, const char *lead)
{
	if (lead)
		fprintf(out, "%-5s", lead);
	fprintf(out, ROW_FMT, "ID", "IFINDEX", "DEVICE", "IRQ", "PID", "DEFER-HARD-IRQS",
		"GRO-FLUSH-TIMEOUT", "IRQ-SUSPEND-TIMEOUT", "THREADED");
}

/* A value the kernel sent, or "-" when it did not (has_bit missing from n->has). */
static const char *cell(char *buf, size_t len, const struct bp_napi_info *n, uint32_t has_bit,
			uint64_t v)
{
	if (has_bit && !(n->has & has_bit))
		return "-";
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

void napi_table_row(FILE *out, const char *lead, const struct bp_napi_info *n, const char *dev)
{
	char id[24], ifx[24], irq[24], pid[24], defer[24], gro[24], susp[24], thr[24];

	if (lead)
		fprintf(out, "%-5s", lead);
	fprintf(out, ROW_FMT, cell(id, sizeof(id), n, 0, n->id),
		cell(ifx, sizeof(ifx), n, 0, n->ifindex), dev && *dev ? dev : "-",
		n->irq >= 0 ? cell(irq, sizeof(irq), n, BP_NAPI_HAS_IRQ, (uint64_t)n->irq) : "-",
		n->pid >= 0 ? cell(pid, sizeof(pid), n, BP_NAPI_HAS_PID, (uint64_t)n->pid) : "-",
		cell(defer, sizeof(defer), n, BP_NAPI_HAS_DEFER, n->defer_hard_irqs),
		cell(gro, sizeof(gro), n, BP_NAPI_HAS_GRO_FLUSH, n->gro_flush_timeout_ns),
		cell(susp, sizeof(susp), n, BP_NAPI_HAS_IRQ_SUSPEND, n->irq_suspend_timeout_ns),
		cell(thr, sizeof(thr), n, BP_NAPI_HAS_THREADED, n->threaded));
}

/* em_u64_or_null - a value the kernel sent, or null when it did not. */
static void em_u64_or_null(struct emit *e, const char *key, bool have, uint64_t v)
{
	if (have)
		em_u64(e, key, v);
	else
		em_null(e, key);
}

void napi_emit(struct emit *e, const struct bp_napi_info *n, const char *dev)
{
	em_u64(e, "id", n->id);
	em_u64(e, "ifindex", n->ifindex);
	if (dev && *dev)
		em_string(e, "device", dev, 64);
	else if (dev)
		em_null(e, "device");
	em_u64_or_null(e, "irq", (n->has & BP_NAPI_HAS_IRQ) && n->irq >= 0, (uint64_t)n->irq);
	em_u64_or_null(e, "pid", (n->has & BP_NAPI_HAS_PID) && n->pid >= 0, (uint64_t)n->pid);
	em_u64_or_null(e, "defer_hard_irqs", n->has & BP_NAPI_HAS_DEFER, n->defer_hard_irqs);
	em_u64_or_null(e, "gro_flush_timeout_ns", n->has & BP_NAPI_HAS_GRO_FLUSH, n->gro_flush_timeout_ns);
	em_u64_or_null(e, "irq_suspend_timeout_ns", n->has & BP_NAPI_HAS_IRQ_SUSPEND, n->irq_suspend_timeout_ns);
	em_u64_or_null(e, "threaded", n->has & BP_NAPI_HAS_THREADED, n->threaded);
}
