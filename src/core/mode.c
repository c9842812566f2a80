/* SPDX-License-Identifier: MIT */
/*
 * Wait modes: the grammar BACKEND:POLICY[,key=value|flag...], its canonical text,
 * the table of families shown by `busypoll modes`, and bp_mode_check.
 *
 * Everything here is table driven: each backend (backends/registry.c) lists its
 * families, each with the keys it takes (in canonical order, with their ranges)
 * and its defaults, so the parser, the formatter and the table cannot disagree
 * about what a family accepts. This file owns the vocabulary every family shares
 * (key names and kinds, policy names, where a key lives in struct bp_mode); what
 * the kernel and process can actually do is each backend's ->check.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/mode.h>

#include "core/internal.h"

/* Longest user token echoed back in a message, so that the message stays one short line. */
#define ECHO_MAX 64

enum key_kind {
	KEY_NUM,  /* key=N, decimal */
	KEY_FLAG, /* key or key=0|1 */
	KEY_ENUM, /* key=word from a fixed list */
};

struct key_def {
	const char *name;
	uint32_t bit;
	enum key_kind kind;
	const char *const *words; /* KEY_ENUM: the values, indexed by the enum */
	size_t nwords;
	bool optional;            /* no default: the canonical form names it only when given */
};

static const char *const tracking_words[] = { "dynamic", "static" };
static const char *const setup_words[] = { "plain", "coop", "defer" };

/* Every key of the grammar, whatever family takes it. */
static const struct key_def key_defs[] = {
	{ "usecs", BP_KEY_USECS, KEY_NUM, NULL, 0, false },
	{ "budget", BP_KEY_BUDGET, KEY_NUM, NULL, 0, false },
	{ "prefer", BP_KEY_PREFER, KEY_FLAG, NULL, 0, false },
	{ "tracking", BP_KEY_TRACKING, KEY_ENUM, tracking_words, 2, false },
	{ "period", BP_KEY_PERIOD, KEY_NUM, NULL, 0, false },
	{ "idle", BP_KEY_IDLE, KEY_NUM, NULL, 0, false },
	{ "napi", BP_KEY_NAPI, KEY_NUM, NULL, 0, false },
	{ "defer", BP_KEY_DEFER, KEY_NUM, NULL, 0, false },
	{ "gro-flush", BP_KEY_GRO_FLUSH, KEY_NUM, NULL, 0, false },
	{ "suspend", BP_KEY_SUSPEND, KEY_NUM, NULL, 0, false },
	{ "setup", BP_KEY_SETUP, KEY_ENUM, setup_words, 3, false },
	{ "spin", BP_KEY_SPIN, KEY_FLAG, NULL, 0, false },
	{ "cpu", BP_KEY_CPU, KEY_NUM, NULL, 0, true },
	{ "direct", BP_KEY_DIRECT, KEY_NUM, NULL, 0, true },
	{ "queue", BP_KEY_QUEUE, KEY_NUM, NULL, 0, true },
};
#define N_KEY_DEFS (sizeof(key_defs) / sizeof(key_defs[0]))

/* Room for every backend's families (10 today); families past it are not offered. */
#define BP_MAX_FAMILIES 32

/* A family and the backend that offers it. */
struct family {
	const struct bp_backend_ops *be;
	const struct bp_mode_family *f;
};

/* Every backend's families, in display order (backends in registry order): built once. */
static struct family families[BP_MAX_FAMILIES];
static struct bp_mode_info infos[BP_MAX_FAMILIES];
static size_t n_families;
static pthread_once_t families_once = PTHREAD_ONCE_INIT;

/* families_collect - every backend's families into families[] and infos[] (once). */
static void families_collect(void)
{
	for (size_t b = 0; b < bp_backend_count(); b++) {
		const struct bp_backend_ops *be = bp_backend_at(b);

		for (const struct bp_mode_family *f = be->families; f && f->info.name; f++) {
			if (n_families == BP_MAX_FAMILIES)
				return; /* raise BP_MAX_FAMILIES: the unit test counts them */
			families[n_families] = (struct family){ be, f };
			infos[n_families++] = f->info;
		}
	}
}

/* families_count - how many families there are, collected on first use. */
static size_t families_count(void)
{
	pthread_once(&families_once, families_collect);
	return n_families;
}

static const char *const policy_names[] = { "block", "napi", "spin", "hybrid", "suspend", "sqpoll" };

/* Keep the error message both in the caller's buffer and as the thread's last error. */
__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = bp_check_vsay(-EINVAL, err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static const char *fam_name(const struct family *f)
{
	return f->f->info.name;
}

static const struct family *family_find(enum bp_backend_kind backend, enum bp_policy policy)
{
	size_t n = families_count();

	for (size_t i = 0; i < n; i++)
		if (families[i].be->kind == backend && families[i].f->defaults.policy == policy)
			return &families[i];
	return NULL;
}

static const struct family *family_of(const struct bp_mode *mode)
{
	return mode ? family_find(mode->backend, mode->policy) : NULL;
}

static const struct key_def *key_def_by_bit(uint32_t bit)
{
	for (size_t i = 0; i < N_KEY_DEFS; i++)
		if (key_defs[i].bit == bit)
			return &key_defs[i];
	return NULL;
}

static const struct bp_key_spec *family_key(const struct family *fam, const char *name, size_t len)
{
	const struct bp_mode_family *f = fam->f;

	for (size_t i = 0; i < f->nkeys; i++) {
		const char *kn = key_def_by_bit(f->keys[i].bit)->name;

		if (strlen(kn) == len && !memcmp(kn, name, len))
			return &f->keys[i];
	}
	return NULL;
}

/* A family's word on a key it does not take but people try (e.g. setup on sqpoll). */
static const char *family_hint(const struct family *fam, const char *name, size_t len)
{
	for (const struct bp_key_hint *h = fam->f->hints; h && h->key; h++)
		if (strlen(h->key) == len && !memcmp(h->key, name, len))
			return h->why;
	return NULL;
}

/* "usecs, budget, prefer": the family's keys, for "unknown key" messages. */
static void family_key_list(const struct family *fam, char *buf, size_t len)
{
	const struct bp_mode_family *f = fam->f;
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < f->nkeys && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				key_def_by_bit(f->keys[i].bit)->name);
}

/* Where a key's value lives in struct bp_mode. */
static uint64_t key_get(const struct bp_mode *m, uint32_t bit)
{
	switch (bit) {
	case BP_KEY_USECS:
	case BP_KEY_NAPI: return m->busy_usecs;
	case BP_KEY_BUDGET: return m->budget;
	case BP_KEY_PREFER: return m->prefer;
	case BP_KEY_TRACKING: return m->tracking;
	case BP_KEY_PERIOD: return m->period_us;
	case BP_KEY_IDLE: return m->sq_idle_ms;
	case BP_KEY_DEFER: return m->defer_hard_irqs;
	case BP_KEY_GRO_FLUSH: return m->gro_flush_ns;
	case BP_KEY_SUSPEND: return m->irq_suspend_ns;
	case BP_KEY_SETUP: return m->setup;
	case BP_KEY_SPIN: return m->spin;
	case BP_KEY_CPU: return m->sq_cpu;
	case BP_KEY_DIRECT: return !m->direct_off;
	case BP_KEY_QUEUE: return m->queue;
	}
	return 0;
}

/* Values were range-checked against the family's key_spec, so the casts cannot truncate. */
static void key_put(struct bp_mode *m, uint32_t bit, uint64_t v)
{
	switch (bit) {
	case BP_KEY_USECS:
	case BP_KEY_NAPI: m->busy_usecs = (uint32_t)v; break;
	case BP_KEY_BUDGET: m->budget = (uint16_t)v; break;
	case BP_KEY_PREFER: m->prefer = v != 0; break;
	case BP_KEY_TRACKING: m->tracking = (enum bp_napi_tracking)v; break;
	case BP_KEY_PERIOD: m->period_us = (uint32_t)v; break;
	case BP_KEY_IDLE: m->sq_idle_ms = (uint32_t)v; break;
	case BP_KEY_DEFER: m->defer_hard_irqs = (uint32_t)v; break;
	case BP_KEY_GRO_FLUSH: m->gro_flush_ns = v; break;
	case BP_KEY_SUSPEND: m->irq_suspend_ns = v; break;
	case BP_KEY_SETUP: m->setup = (enum bp_uring_setup)v; break;
	case BP_KEY_SPIN: m->spin = v != 0; break;
	case BP_KEY_CPU: m->sq_cpu = (uint32_t)v; break;
	case BP_KEY_DIRECT: m->direct_off = v == 0; break;
	case BP_KEY_QUEUE: m->queue = (uint32_t)v; break;
	}
}

enum num_result { NUM_OK, NUM_NOT_A_NUMBER, NUM_OVERFLOW, NUM_NEGATIVE };

/* Decimal only: no sign, no 0x, no trailing junk; overflow detected, never wrapped. */
static enum num_result parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	bool overflow = false;

	if (n >= 2 && s[0] == '-') {
		for (size_t i = 1; i < n; i++)
			if (s[i] < '0' || s[i] > '9')
				return NUM_NOT_A_NUMBER;
		return NUM_NEGATIVE;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return NUM_NOT_A_NUMBER;
		d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			overflow = true; /* keep scanning: "99999999999999999999x" is not a number */
		else
			v = v * 10 + d;
	}
	if (overflow)
		return NUM_OVERFLOW;
	*out = v;
	return NUM_OK;
}

static int parse_num_value(const char *fam, const struct key_def *kd, const struct bp_key_spec *ks,
			   const char *val, size_t vlen, uint64_t *out, char *err, size_t errlen)
{
	int w = vlen > ECHO_MAX ? ECHO_MAX : (int)vlen;

	switch (parse_u64(val, vlen, out)) {
	case NUM_NOT_A_NUMBER:
		return fail(err, errlen, "%s: %s='%.*s' is not a number", fam, kd->name, w, val);
	case NUM_OVERFLOW:
	case NUM_NEGATIVE:
		return fail(err, errlen, "%s: %s=%.*s is out of range (%" PRIu64 "..%" PRIu64 ")",
			    fam, kd->name, w, val, ks->min, ks->max);
	case NUM_OK:
		break;
	}
	if (*out < ks->min || *out > ks->max)
		return fail(err, errlen, "%s: %s=%" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")",
			    fam, kd->name, *out, ks->min, ks->max);
	return 0;
}

/* Parse one value (val == NULL: the key was given bare) for key kd into *out. */
static int parse_value(const char *fam, const struct key_def *kd, const struct bp_key_spec *ks,
		       const char *val, size_t vlen, uint64_t *out, char *err, size_t errlen)
{
	int w = vlen > ECHO_MAX ? ECHO_MAX : (int)vlen;

	if (kd->kind == KEY_FLAG) {
		if (!val) {
			*out = 1;
			return 0;
		}
		if (vlen == 1 && (val[0] == '0' || val[0] == '1')) {
			*out = (uint64_t)(val[0] - '0');
			return 0;
		}
		if (vlen == 0)
			return fail(err, errlen, "%s: missing value for key '%s' (%s or %s=0|1)",
				    fam, kd->name, kd->name, kd->name);
		return fail(err, errlen, "%s: %s='%.*s' must be 0 or 1", fam, kd->name, w, val);
	}
	if (!val || vlen == 0)
		return fail(err, errlen, "%s: missing value for key '%s' (%s=%s)", fam, kd->name,
			    kd->name, kd->kind == KEY_NUM ? "N" : kd->words[0]);
	if (kd->kind == KEY_NUM)
		return parse_num_value(fam, kd, ks, val, vlen, out, err, errlen);
	for (size_t i = 0; i < kd->nwords; i++) {
		if (strlen(kd->words[i]) == vlen && !memcmp(kd->words[i], val, vlen)) {
			*out = i;
			return 0;
		}
	}
	char words[64];
	size_t off = 0;

	for (size_t i = 0; i < kd->nwords && off < sizeof(words); i++)
		off += (size_t)snprintf(words + off, sizeof(words) - off, "%s%s", i ? ", " : "", kd->words[i]);
	return fail(err, errlen, "%s: %s='%.*s' is not one of %s", fam, kd->name, w, val, words);
}

/* One "key[=value]" item of length len. */
static int parse_item(const struct family *f, const char *item, size_t len, struct bp_mode *m,
		      char *err, size_t errlen)
{
	const char *fam = fam_name(f);
	const char *eq = memchr(item, '=', len);
	size_t klen = eq ? (size_t)(eq - item) : len;
	const char *val = eq ? eq + 1 : NULL;
	size_t vlen = eq ? len - klen - 1 : 0;
	int kw = klen > ECHO_MAX ? ECHO_MAX : (int)klen;
	const struct bp_key_spec *ks;
	const struct key_def *kd;
	uint64_t v = 0;
	int ret;

	if (klen == 0)
		return fail(err, errlen, "%s: empty key (stray ',' or '=')", fam);
	ks = family_key(f, item, klen);
	if (!ks) {
		const char *why = family_hint(f, item, klen);
		char list[128];

		/* Keys people will try where they do not belong: say why, not just "unknown". */
		if (why)
			return fail(err, errlen, "%s: %s", fam, why);
		family_key_list(f, list, sizeof(list));
		return fail(err, errlen, "%s: unknown key '%.*s' (keys: %s)", fam, kw, item, list);
	}
	kd = key_def_by_bit(ks->bit);
	if (m->keys_set & ks->bit)
		return fail(err, errlen, "%s: duplicate key '%s'", fam, kd->name);
	ret = parse_value(fam, kd, ks, val, vlen, &v, err, errlen);
	if (ret)
		return ret;
	key_put(m, ks->bit, v);
	m->keys_set |= ks->bit;
	return 0;
}

/* Rules across keys, after every key has been read: the family's own. */
static int check_combination(const struct family *f, const struct bp_mode *m, char *err, size_t errlen)
{
	char msg[200];

	if (!f->f->combination || f->f->combination(m, msg, sizeof(msg)) == 0)
		return 0;
	return fail(err, errlen, "%s: %s", fam_name(f), msg);
}

/* Reject whitespace and control bytes up front: they can only be a typo or quoting slip,
 * and echoing them back would break the one-line message. */
static int check_chars(const char *text, char *err, size_t errlen)
{
	for (size_t i = 0; text[i]; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c <= ' ' || c == 0x7f)
			return fail(err, errlen, "whitespace is not allowed in a mode (at offset %zu)", i);
	}
	return 0;
}

static int parse_head(const char *text, size_t hlen, const struct family **out, char *err, size_t errlen)
{
	const char *colon = memchr(text, ':', hlen);
	size_t blen = colon ? (size_t)(colon - text) : hlen;
	const char *pol = colon ? colon + 1 : NULL;
	size_t plen = colon ? hlen - blen - 1 : 0;
	int bw = blen > ECHO_MAX ? ECHO_MAX : (int)blen;
	int pw = plen > ECHO_MAX ? ECHO_MAX : (int)plen;
	const struct bp_backend_ops *be = NULL;
	char names[64];
	size_t off = 0;
	size_t n = families_count();

	names[0] = '\0';
	for (size_t i = 0; i < bp_backend_count(); i++) {
		const struct bp_backend_ops *b = bp_backend_at(i);

		if (strlen(b->name) == blen && !memcmp(b->name, text, blen))
			be = b;
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "", b->name);
	}
	if (!be)
		return fail(err, errlen, "unknown backend '%.*s' (backends: %s)", bw, text, names);

	char policies[96];

	/* The policy list comes from the backend's families, so it cannot go stale. */
	off = 0;
	policies[0] = '\0';
	for (size_t i = 0; i < n && off < sizeof(policies); i++)
		if (families[i].be == be)
			off += (size_t)snprintf(policies + off, sizeof(policies) - off, "%s%s",
						off ? ", " : "", policy_names[families[i].f->defaults.policy]);
	if (!colon || plen == 0)
		return fail(err, errlen, "%s: missing policy (policies: %s)", be->name, policies);
	for (size_t i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++) {
		if (strlen(policy_names[i]) == plen && !memcmp(policy_names[i], pol, plen)) {
			*out = family_find(be->kind, (enum bp_policy)i);
			if (*out)
				return 0;
		}
	}
	return fail(err, errlen, "%s: unknown policy '%.*s' (policies: %s)", be->name,
		    pw, pol, policies);
}

/*
 * bp_mode_parse - text into *mode with the family's defaults for keys not given.
 * Returns 0, or -EINVAL with one line in err (and bp_last_error); *mode is written only on
 * success. err may be NULL / errlen 0.
 */
int bp_mode_parse(const char *text, struct bp_mode *mode, char *err, size_t errlen)
{
	const struct family *f;
	struct bp_mode m;
	const char *p, *comma;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!text || !mode)
		return fail(err, errlen, "no mode given");
	if (!text[0])
		return fail(err, errlen, "empty mode (expected BACKEND:POLICY, e.g. epoll:napi)");
	ret = check_chars(text, err, errlen);
	if (ret)
		return ret;

	comma = strchr(text, ',');
	ret = parse_head(text, comma ? (size_t)(comma - text) : strlen(text), &f, err, errlen);
	if (ret)
		return ret;

	m = f->f->defaults; /* keys_set starts empty: only explicit keys are recorded */
	if (comma && f->f->nkeys == 0)
		return fail(err, errlen, "%s takes no keys", fam_name(f));
	for (p = comma; p; p = comma) {
		const char *item = p + 1;

		comma = strchr(item, ',');
		ret = parse_item(f, item, comma ? (size_t)(comma - item) : strlen(item), &m, err, errlen);
		if (ret)
			return ret;
	}
	ret = check_combination(f, &m, err, errlen);
	if (ret)
		return ret;
	*mode = m; /* only on success: a failed parse leaves *mode as it was */
	return 0;
}

/*
 * bp_mode_format - canonical text: the family's keys in table order, all spelled out
 * (flags only when on), so that parsing it gives the same mode back.
 * Returns the full length like snprintf (buf may be NULL with len 0), or -EINVAL (and an
 * empty buf) for a backend/policy pair that is no family.
 */
int bp_mode_format(const struct bp_mode *mode, char *buf, size_t len)
{
	const struct family *f = family_of(mode);
	size_t off;
	char dummy;

	/* snprintf-like: with len 0 nothing is written but the length is still returned. */
	if (!buf || !len) {
		buf = &dummy;
		len = 1;
	}
	if (!f) {
		buf[0] = '\0';
		return -EINVAL;
	}
	off = (size_t)snprintf(buf, len, "%s", fam_name(f));
	for (size_t i = 0; i < f->f->nkeys; i++) {
		const struct key_def *kd = key_def_by_bit(f->f->keys[i].bit);
		uint64_t v = key_get(mode, kd->bit);
		char *at = off < len ? buf + off : NULL;
		size_t room = off < len ? len - off : 0;

		if (kd->optional && !(mode->keys_set & kd->bit))
			continue;
		if (kd->kind == KEY_FLAG) {
			if (v)
				off += (size_t)snprintf(at, room, ",%s", kd->name);
		} else if (kd->kind == KEY_ENUM) {
			off += (size_t)snprintf(at, room, ",%s=%s", kd->name,
						v < kd->nwords ? kd->words[v] : "?");
		} else {
			off += (size_t)snprintf(at, room, ",%s=%" PRIu64, kd->name, v);
		}
	}
	return (int)off;
}

/* bp_mode_name - "epoll:napi" etc., or "invalid" for no family (never NULL). */
const char *bp_mode_name(const struct bp_mode *mode)
{
	const struct family *f = family_of(mode);

	return f ? fam_name(f) : "invalid";
}

/* bp_mode_is_busy_poll - true when the kernel is asked to busy poll NAPI: epoll:napi,
 * uring:napi, epoll:suspend, and uring:sqpoll with napi>0. */
bool bp_mode_is_busy_poll(const struct bp_mode *mode)
{
	if (!family_of(mode))
		return false;
	switch (mode->policy) {
	case BP_POLICY_NAPI:
	case BP_POLICY_SUSPEND:
		return true;
	case BP_POLICY_SQPOLL:
		return mode->busy_usecs > 0; /* napi=N */
	default:
		return false;
	}
}

/* bp_mode_table - the families in display order (static storage); *count set if non-NULL. */
const struct bp_mode_info *bp_mode_table(size_t *count)
{
	size_t n = families_count();

	if (count)
		*count = n;
	return infos;
}

/*
 * bp_mode_check - can this kernel and process use mode now? (contract in busypoll/mode.h)
 * Returns 0, -EOPNOTSUPP (kernel lacks a feature), -EPERM (privilege missing), -EINVAL
 * (not a valid family), or the probe's own -errno when a probe could not run at all
 * (e.g. -EMFILE): that is neither "lacks" nor "not allowed", so it is not disguised as one.
 * err (and bp_last_error) get one line naming the key or capability. The family's
 * backend probes what it needs, once per process.
 */
int bp_mode_check(const struct bp_mode *mode, char *err, size_t errlen)
{
	const struct family *f = family_of(mode);

	if (err && errlen)
		err[0] = '\0';
	if (!f)
		return bp_check_say(-EINVAL, err, errlen, "not a valid mode");
	return f->be->check(mode, err, errlen);
}

/* bp_features - every backend's optional features (contract in busypoll/mode.h). */
size_t bp_features(struct bp_feature *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < bp_backend_count(); i++) {
		const struct bp_backend_ops *be = bp_backend_at(i);

		if (be->features)
			n += be->features(n < max ? out + n : NULL, n < max ? max - n : 0);
	}
	return n;
}
