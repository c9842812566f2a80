/* SPDX-License-Identifier: MIT */
/*
 * Wait modes: the grammar BACKEND:POLICY[,key=value|flag...], its canonical text,
 * and the table of families shown by `busypoll modes`.
 *
 * Everything here is table driven: a family lists the keys it takes (in canonical
 * order, with their ranges) and its defaults, so the parser, the formatter and the
 * table cannot disagree about what a family accepts. What the kernel and process
 * can actually do is probe.c's business, not this file's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/mode.h>

#include "core/internal.h"

/* Longest user token echoed back in a message, so that the message stays one short line. */
#define ECHO_MAX 64

/* io_uring's NAPI busy-poll time is capped at 10 ms by the kernel; we refuse rather than
 * let it silently shorten what the user asked for. */
#define URING_NAPI_MAX_USECS 10000u

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
};

static const char *const tracking_words[] = { "dynamic", "static" };
static const char *const setup_words[] = { "plain", "coop", "defer" };

/* Every key of the grammar, whatever family takes it. */
static const struct key_def key_defs[] = {
	{ "usecs", BP_KEY_USECS, KEY_NUM, NULL, 0 },
	{ "budget", BP_KEY_BUDGET, KEY_NUM, NULL, 0 },
	{ "prefer", BP_KEY_PREFER, KEY_FLAG, NULL, 0 },
	{ "tracking", BP_KEY_TRACKING, KEY_ENUM, tracking_words, 2 },
	{ "period", BP_KEY_PERIOD, KEY_NUM, NULL, 0 },
	{ "idle", BP_KEY_IDLE, KEY_NUM, NULL, 0 },
	{ "napi", BP_KEY_NAPI, KEY_NUM, NULL, 0 },
	{ "defer", BP_KEY_DEFER, KEY_NUM, NULL, 0 },
	{ "gro-flush", BP_KEY_GRO_FLUSH, KEY_NUM, NULL, 0 },
	{ "suspend", BP_KEY_SUSPEND, KEY_NUM, NULL, 0 },
	{ "setup", BP_KEY_SETUP, KEY_ENUM, setup_words, 3 },
};
#define N_KEY_DEFS (sizeof(key_defs) / sizeof(key_defs[0]))

/* A key as one family takes it: numeric keys carry that family's range. */
struct key_spec {
	uint32_t bit;
	uint64_t min, max;
};

struct family {
	enum bp_backend_kind backend;
	enum bp_policy policy;
	const struct key_spec *keys; /* canonical order */
	size_t nkeys;
	struct bp_mode defaults;
};

#define SPEC(bit_) { (bit_), 0, 0 }
#define NUM(bit_, lo, hi) { (bit_), (lo), (hi) }
#define KEYS(a) (a), (sizeof(a) / sizeof((a)[0]))

/* usecs goes into a signed 32-bit field in the kernel (EPIOCSPARAMS refuses > S32_MAX). */
static const struct key_spec epoll_napi_keys[] = {
	NUM(BP_KEY_USECS, 0, INT32_MAX),
	NUM(BP_KEY_BUDGET, 1, UINT16_MAX),
	SPEC(BP_KEY_PREFER),
};
static const struct key_spec epoll_hybrid_keys[] = {
	NUM(BP_KEY_PERIOD, 1, 10000000),
};
/*
 * defer-hard-irqs is limited to S32_MAX by the netdev netlink policy; the two timeouts are
 * ns in a ktime (s64). All three must be non-zero: IRQ suspension does nothing unless
 * defer-hard-irqs and gro-flush-timeout are set too (napi.rst), and suspend=0 turns it off,
 * so a zero would make the mode silently not what it says.
 */
static const struct key_spec epoll_suspend_keys[] = {
	NUM(BP_KEY_USECS, 0, INT32_MAX),
	NUM(BP_KEY_BUDGET, 1, UINT16_MAX),
	NUM(BP_KEY_DEFER, 1, INT32_MAX),
	NUM(BP_KEY_GRO_FLUSH, 1, INT64_MAX),
	NUM(BP_KEY_SUSPEND, 1, INT64_MAX),
};
static const struct key_spec uring_setup_keys[] = {
	SPEC(BP_KEY_SETUP),
};
static const struct key_spec uring_napi_keys[] = {
	NUM(BP_KEY_USECS, 1, URING_NAPI_MAX_USECS),
	SPEC(BP_KEY_PREFER),
	SPEC(BP_KEY_TRACKING),
	SPEC(BP_KEY_SETUP),
};
static const struct key_spec uring_hybrid_keys[] = {
	NUM(BP_KEY_PERIOD, 1, 10000000),
	SPEC(BP_KEY_SETUP),
};
/* idle=0 would make the kernel use its own 1 s default, so 0 is refused rather than
 * meaning something other than what it says. */
static const struct key_spec uring_sqpoll_keys[] = {
	NUM(BP_KEY_IDLE, 1, UINT32_MAX),
	NUM(BP_KEY_NAPI, 0, URING_NAPI_MAX_USECS),
};

/* What `busypoll modes` shows for each family, in the order of families[]. */
static const struct bp_mode_info infos[] = {
	{ "epoll:block", "", "sleep in epoll_wait until an event arrives (the baseline)" },
	{ "epoll:napi", "usecs=64,budget=8[,prefer]",
	  "epoll_wait busy-polls the NAPI for usecs before sleeping (EPIOCSPARAMS, Linux 6.9)" },
	{ "epoll:spin", "", "poll with epoll_wait(0) from userspace, never sleep (burns a CPU)" },
	{ "epoll:hybrid", "period=30",
	  "spin with epoll_wait(0) while work came in the last period us or a timer is due within it, "
	  "then block" },
	{ "epoll:suspend", "usecs=30,budget=64,defer=100,gro-flush=20000,suspend=2000000",
	  "IRQ suspension: prefer busy poll with per-NAPI defer/gro-flush/suspend timeouts "
	  "(Linux 6.13, CAP_NET_ADMIN)" },
	{ "uring:block", "setup=defer", "wait in io_uring_enter for completions (the io_uring baseline)" },
	{ "uring:napi", "usecs=64[,prefer],tracking=dynamic,setup=defer",
	  "io_uring busy-polls the NAPI while waiting for completions (IORING_REGISTER_NAPI, Linux 6.9)" },
	{ "uring:spin", "setup=defer", "poll for completions without sleeping, never block (burns a CPU)" },
	{ "uring:hybrid", "period=30,setup=defer",
	  "peek completions while work came in the last period us or a timer is due within it, then block" },
	{ "uring:sqpoll", "idle=1000,napi=0",
	  "a kernel SQ thread submits (and busy-polls the NAPI when napi>0); sleeps after idle ms" },
};

/* The families, in display order (the same order as infos[] above). */
static const struct family families[] = {
	{ BP_BACKEND_EPOLL, BP_POLICY_BLOCK, NULL, 0,
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_BLOCK } },
	{ BP_BACKEND_EPOLL, BP_POLICY_NAPI, KEYS(epoll_napi_keys),
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_NAPI, .busy_usecs = 64, .budget = 8 } },
	{ BP_BACKEND_EPOLL, BP_POLICY_SPIN, NULL, 0,
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_SPIN } },
	/*
	 * hybrid's period and suspend's usecs: poll about as long as one wake-up costs, then
	 * sleep (the ski-rental rule: never more than twice the better choice). About 30 us
	 * on the veth test bed: half of epoll:block's P50 over epoll:spin's at a moderate
	 * load (docs/rate.md). A longer poll spins at moderate loads, a shorter one sleeps
	 * through the next request; suspend's per-NAPI values follow napi.rst's rule there.
	 */
	{ BP_BACKEND_EPOLL, BP_POLICY_HYBRID, KEYS(epoll_hybrid_keys),
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_HYBRID, .period_us = 30 } },
	{ BP_BACKEND_EPOLL, BP_POLICY_SUSPEND, KEYS(epoll_suspend_keys),
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_SUSPEND, .busy_usecs = 30,
	    .budget = 64, .prefer = true, .defer_hard_irqs = 100, .gro_flush_ns = 20000,
	    .irq_suspend_ns = 2000000 } },
	{ BP_BACKEND_URING, BP_POLICY_BLOCK, KEYS(uring_setup_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_BLOCK, .setup = BP_URING_SETUP_DEFER } },
	{ BP_BACKEND_URING, BP_POLICY_NAPI, KEYS(uring_napi_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_NAPI, .busy_usecs = 64,
	    .tracking = BP_TRACKING_DYNAMIC, .setup = BP_URING_SETUP_DEFER } },
	/* DEFER, measured: a plain ring reaps without entering the kernel, but each
	 * completion is posted by a task-work IPI into the spinning CPU, which on a VM
	 * costs a VM exit (P50 28 us vs 15.6 us over veth here); a DEFER ring pays one
	 * io_uring_enter per spin instead. setup=plain is there to measure the other. */
	{ BP_BACKEND_URING, BP_POLICY_SPIN, KEYS(uring_setup_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_SPIN, .setup = BP_URING_SETUP_DEFER } },
	{ BP_BACKEND_URING, BP_POLICY_HYBRID, KEYS(uring_hybrid_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_HYBRID, .period_us = 30,
	    .setup = BP_URING_SETUP_DEFER } },
	/* setup stays PLAIN (zero): an SQPOLL ring has its own flags, setup= does not apply. */
	{ BP_BACKEND_URING, BP_POLICY_SQPOLL, KEYS(uring_sqpoll_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_SQPOLL, .sq_idle_ms = 1000, .busy_usecs = 0 } },
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))
_Static_assert(sizeof(infos) / sizeof(infos[0]) == N_FAMILIES, "one info per family");

static const char *const backend_names[] = { "epoll", "uring" };
static const char *const policy_names[] = { "block", "napi", "spin", "hybrid", "suspend", "sqpoll" };

/* Keep the error message both in the caller's buffer and as the thread's last error. */
__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return bp_err_set(-EINVAL, "%s", msg);
}

static const char *fam_name(const struct family *f)
{
	return infos[f - families].name;
}

static const struct family *family_find(enum bp_backend_kind backend, enum bp_policy policy)
{
	for (size_t i = 0; i < N_FAMILIES; i++)
		if (families[i].backend == backend && families[i].policy == policy)
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

static const struct key_spec *family_key(const struct family *f, const char *name, size_t len)
{
	for (size_t i = 0; i < f->nkeys; i++) {
		const char *kn = key_def_by_bit(f->keys[i].bit)->name;

		if (strlen(kn) == len && !memcmp(kn, name, len))
			return &f->keys[i];
	}
	return NULL;
}

/* "usecs, budget, prefer": the family's keys, for "unknown key" messages. */
static void family_key_list(const struct family *f, char *buf, size_t len)
{
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

static int parse_num_value(const char *fam, const struct key_def *kd, const struct key_spec *ks,
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
static int parse_value(const char *fam, const struct key_def *kd, const struct key_spec *ks,
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
	const struct key_spec *ks;
	const struct key_def *kd;
	uint64_t v = 0;
	int ret;

	if (klen == 0)
		return fail(err, errlen, "%s: empty key (stray ',' or '=')", fam);
	ks = family_key(f, item, klen);
	if (!ks) {
		char list[128];

		/* Two keys people will try where they do not belong: say why, not just "unknown". */
		if (f->policy == BP_POLICY_SQPOLL && klen == 5 && !memcmp(item, "setup", 5))
			return fail(err, errlen, "%s: setup is not allowed (an SQPOLL ring has its own setup flags)", fam);
		if (f->policy == BP_POLICY_SUSPEND && klen == 6 && !memcmp(item, "prefer", 6))
			return fail(err, errlen, "%s: prefer is always on for suspend; drop the key", fam);
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

/* Rules across keys, after every key has been read. */
static int check_combination(const struct family *f, const struct bp_mode *m, char *err, size_t errlen)
{
	/* The kernel busy-polls for usecs; with 0 only prefer_busy_poll (6.13+) still polls once. */
	if (f->backend == BP_BACKEND_EPOLL && f->policy == BP_POLICY_NAPI && m->busy_usecs == 0 && !m->prefer)
		return fail(err, errlen, "%s: usecs=0 busy polls nothing without prefer "
			    "(use usecs=1..%d or add prefer)", fam_name(f), INT32_MAX);
	return 0;
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
	int backend = -1;

	for (size_t i = 0; i < 2; i++)
		if (strlen(backend_names[i]) == blen && !memcmp(backend_names[i], text, blen))
			backend = (int)i;
	if (backend < 0)
		return fail(err, errlen, "unknown backend '%.*s' (backends: epoll, uring)", bw, text);

	char policies[96];
	size_t off = 0;

	/* The policy list comes from the family table, so it cannot go stale. */
	policies[0] = '\0';
	for (size_t i = 0; i < N_FAMILIES && off < sizeof(policies); i++)
		if (families[i].backend == (enum bp_backend_kind)backend)
			off += (size_t)snprintf(policies + off, sizeof(policies) - off, "%s%s",
						off ? ", " : "", policy_names[families[i].policy]);
	if (!colon || plen == 0)
		return fail(err, errlen, "%s: missing policy (policies: %s)", backend_names[backend], policies);
	for (size_t i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++) {
		if (strlen(policy_names[i]) == plen && !memcmp(policy_names[i], pol, plen)) {
			*out = family_find((enum bp_backend_kind)backend, (enum bp_policy)i);
			if (*out)
				return 0;
		}
	}
	return fail(err, errlen, "%s: unknown policy '%.*s' (policies: %s)", backend_names[backend],
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

	m = f->defaults; /* keys_set starts empty: only explicit keys are recorded */
	if (comma && f->nkeys == 0)
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
	for (size_t i = 0; i < f->nkeys; i++) {
		const struct key_def *kd = key_def_by_bit(f->keys[i].bit);
		uint64_t v = key_get(mode, kd->bit);
		char *at = off < len ? buf + off : NULL;
		size_t room = off < len ? len - off : 0;

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
	if (count)
		*count = N_FAMILIES;
	return infos;
}
