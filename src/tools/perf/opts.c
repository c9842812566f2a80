/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: option parsing (contract in tools/perf/perf.h).
 *
 * fio's vocabulary with fio's meanings: a storage engineer's fio command line
 * should mean the same here. The dashed spellings are ours; fio's underscored
 * ones (--iodepth_batch_complete_min, --ramp_time, --readwrite...) are accepted
 * as aliases, and so are --time_based and --direct=1, which every run here is.
 * Every error is one line naming the option as typed; checks that involve two
 * options run after the whole command line is read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/nvme/host.h>
#include <busypoll/nvme/tcp.h>

#include "tools/perf/perf.h"
#include "tools/common/values.h"

#define MAX_SECONDS 604800.0  /* a week: as rr, far from overflowing ns arithmetic */
#define MAX_TIMEOUT_S 3600.0

void perf_opts_defaults(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nsid = 1;
	o->rw = PERF_RW_READ;          /* fio's default rw */
	o->rwmixread = 50;
	o->bs = 4096;
	o->iodepth = 1;
	o->iodepth_batch = 1;
	o->complete_min = 1;
	o->complete_max = 0;           /* fio: unset, then raised to complete_min */
	o->numjobs = 1;
	agent_remote_defaults(&o->remote);
	o->runtime_s = 10;
	o->ramp_s = 0;
	o->io_timeout_ms = 30000;      /* Linux's nvme_core.io_timeout */
	o->format = TOOL_FORMAT_TABLE;
	o->interval_s = 1;
	o->mode = opt_mode_default;
	memcpy(o->mode_text, opt_mode_default_text, sizeof(o->mode_text));
	perf_opts_resolve(o);
}

void perf_opts_resolve(struct perf_opts *o)
{
	int depth = o->iodepth > 0 ? o->iodepth : 1;

	/* init.c: "If batch number isn't set, default to the same as iodepth". */
	o->batch = (o->iodepth_batch <= 0 || o->iodepth_batch > depth) ? depth : o->iodepth_batch;
	/*
	 * backend.c wait_for_completions: min_evts = min(complete_min, cur_depth),
	 * and at least 1 when the queue is full or complete_min is 0; with 0 the
	 * engine is asked not to wait (io_uring: to_wait 0; libaio: a zero
	 * timeout) and fio loops: a poll. HOWTO: "If this variable is set to 0,
	 * then fio will always check for completed events before queuing more I/O".
	 */
	o->reap_poll = o->complete_min == 0;
	o->reap_min = o->complete_min <= 0 ? 1 : o->complete_min > depth ? depth : o->complete_min;
	/* init.c: complete_max below complete_min is raised to it (so its default is complete_min). */
	o->reap_max = o->complete_max < o->reap_min ? o->reap_min : o->complete_max;
	if (o->reap_max > depth)
		o->reap_max = depth;
}

const char *perf_rw_name(enum perf_rw rw)
{
	switch (rw) {
	case PERF_RW_READ: return "read";
	case PERF_RW_WRITE: return "write";
	case PERF_RW_RANDREAD: return "randread";
	case PERF_RW_RANDWRITE: return "randwrite";
	case PERF_RW_RANDRW: return "randrw";
	case PERF_RW_RW: return "rw";
	case PERF_RW_TRIM: return "trim";
	case PERF_RW_RANDTRIM: return "randtrim";
	}
	return "?";
}

const char *perf_ddir_name(enum perf_ddir d)
{
	return d == PERF_DDIR_READ ? "read" : d == PERF_DDIR_WRITE ? "write" : "trim";
}

bool perf_rw_random(enum perf_rw rw)
{
	return rw == PERF_RW_RANDREAD || rw == PERF_RW_RANDWRITE || rw == PERF_RW_RANDRW || rw == PERF_RW_RANDTRIM;
}

bool perf_rw_mixed(enum perf_rw rw)
{
	return rw == PERF_RW_RANDRW || rw == PERF_RW_RW;
}

bool perf_rw_reads(const struct perf_opts *o)
{
	return o->rw == PERF_RW_READ || o->rw == PERF_RW_RANDREAD || (perf_rw_mixed(o->rw) && o->rwmixread > 0);
}

bool perf_rw_writes(const struct perf_opts *o)
{
	return o->rw == PERF_RW_WRITE || o->rw == PERF_RW_RANDWRITE || (perf_rw_mixed(o->rw) && o->rwmixread < 100);
}

bool perf_rw_trims(const struct perf_opts *o)
{
	return o->rw == PERF_RW_TRIM || o->rw == PERF_RW_RANDTRIM;
}

bool perf_rw_uses(const struct perf_opts *o, enum perf_ddir d)
{
	return d == PERF_DDIR_READ ? perf_rw_reads(o) : d == PERF_DDIR_WRITE ? perf_rw_writes(o) : perf_rw_trims(o);
}

bool perf_open_loop(const struct perf_opts *o)
{
	for (int d = 0; d < PERF_DDIRS; d++)
		if (o->rate_iops[d] > 0 && perf_rw_uses(o, (enum perf_ddir)d))
			return true;
	return false;
}

double perf_offered_iops(const struct perf_opts *o)
{
	double sum = 0;

	for (int d = 0; d < PERF_DDIRS; d++)
		if (perf_rw_uses(o, (enum perf_ddir)d))
			sum += o->rate_iops[d];
	return sum;
}

void perf_rates_text(char *buf, size_t len, const struct perf_opts *o)
{
	const double *r = o->rate_iops;

	if (r[0] == r[1] && r[1] == r[2])
		snprintf(buf, len, "%.10g", r[0]);
	else
		snprintf(buf, len, "%.10g,%.10g,%.10g", r[0], r[1], r[2]);
}

void perf_sweep_rate(struct perf_opts *o, int i)
{
	for (int d = 0; d < PERF_DDIRS; d++) {
		if (o->sweep_pct[i])
			o->rate_iops[d] = o->rate_iops[d] * o->sweep_rate[i] / 100;
		else
			o->rate_iops[d] = perf_rw_uses(o, (enum perf_ddir)d) ? o->sweep_rate[i] : 0;
	}
}

/* opt_time - seconds, as fio's time type (the shared parser takes its units), up to a week. */
static int opt_time(const char *name, const char *s, bool zero_ok, double *out, char *err, size_t errlen)
{
	return tool_opt_seconds(name, s, zero_ok, MAX_SECONDS, out, err, errlen);
}

/* opt_size64 - bytes with an optional k K m M g G t T suffix (powers of 1024), in [lo, 2^60]. */
static int opt_size64(const char *name, const char *s, uint64_t lo, uint64_t *out, char *err, size_t errlen)
{
	static const char units[] = "kmgt";
	char num[32];
	size_t len = strlen(s);
	uint64_t v, mult = 1;
	const char *u;
	bool neg;

	if (len && (u = strchr(units, s[len - 1] | 0x20)) && (s[len - 1] | 0x20) >= 'a') {
		mult = 1ull << (10 * (u - units + 1));
		len--;
	}
	if (len == 0 || len >= sizeof(num))
		return tool_fail(err, errlen, "%s %s: not a size (bytes, or with k, M, G or T)", name, s);
	memcpy(num, s, len);
	num[len] = 0;
	if (tool_parse_u64(num, &v, &neg))
		return tool_fail(err, errlen, neg ? "%s %s: must not be negative" :
						    "%s %s: not a size (bytes, or with k, M, G or T)", name, s);
	if (v > (1ull << 60) / mult || v * mult < lo)
		return tool_fail(err, errlen, "%s %s: must be between %" PRIu64 " bytes and 1024P", name, s, lo);
	*out = v * mult;
	return 0;
}

/* ---- the table's own parsers (opt_parse_fn: field at base + spec->off) ---- */

/* parse_time - a fio time into a double field; OPT_F_ZERO_OK allows 0. */
static int parse_time(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	return opt_time(name, v, sp->flags & OPT_F_ZERO_OK, (double *)((char *)base + sp->off), err, errlen);
}

/* parse_io_timeout - a fio time between 1 ms and an hour, kept in ms. */
static int parse_io_timeout(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			    size_t errlen)
{
	struct perf_opts *o = base;
	double d;
	int r = opt_time(name, v, false, &d, err, errlen);

	if (!r && (d > MAX_TIMEOUT_S || d < 0.001))
		r = tool_fail(err, errlen, "%s %s: between 1 ms and an hour", name, v);
	if (!r)
		o->io_timeout_ms = (uint32_t)(d * 1000 + 0.5);
	return r;
}

/* parse_offset / parse_size - bytes of the region: --offset any multiple of 512, --size at least 512. */
static int parse_offset(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	struct perf_opts *o = base;
	int r = opt_size64(name, v, 0, &o->offset, err, errlen);

	if (!r && o->offset % 512)
		r = tool_fail(err, errlen, "%s %s: must be a multiple of 512 bytes (an LBA)", name, v);
	return r;
}

static int parse_size(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	return opt_size64(name, v, 512, &((struct perf_opts *)base)->size, err, errlen);
}

/* parse_nqn - --nqn and --hostnqn: text of at most BP_NVMF_NQN_MAX bytes. */
static int parse_nqn(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		     size_t errlen)
{
	char *dst = (char *)base + sp->off;

	if (!*v || *v == '-')
		return tool_fail(err, errlen, "%s needs a value (got '%s')", name, v);
	if (strlen(v) > BP_NVMF_NQN_MAX)
		return tool_fail(err, errlen, "%s: an NQN is at most %d bytes", name, BP_NVMF_NQN_MAX);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* parse_verify - --verify, --verify=1|crc32c|crc32c-intel (on), --verify=0|none (off). */
static int parse_verify(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	struct perf_opts *o = base;

	if (!v || !strcmp(v, "1") || !strcmp(v, "crc32c") || !strcmp(v, "crc32c-intel"))
		o->verify = true;
	else if (!strcmp(v, "0") || !strcmp(v, "none"))
		o->verify = false;
	else
		return tool_fail(err, errlen, "%s=%s: the stamp's checksum is crc32c (or 0/none for off)", name, v);
	return 0;
}

/* note_add - "KEY (why)" once in o->notes, for perf to say before it starts. */
static void note_add(struct perf_opts *o, const char *key, const char *why)
{
	char k[64];
	size_t len = strlen(o->notes);

	snprintf(k, sizeof(k), "%s (", key);
	if (!strstr(o->notes, k))
		snprintf(o->notes + len, sizeof(o->notes) - len, "%s%s%s)", len ? "; " : "", k, why);
}

/*
 * parse_noted - a fio option that does not apply to a userspace NVMe/TCP
 * initiator: accepted with any value, and its reason (the row's .help) kept in
 * o->notes once, for perf to say before it starts. Never fails.
 */
static int parse_noted(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	char key[64];

	(void)v, (void)err, (void)errlen;
	snprintf(key, sizeof(key), "--%s", sp->name);
	note_add(base, key, sp->help);
	return 0;
}

/* parse_direct - --direct=1 only: a userspace initiator has no page cache; said once as implied. */
static int parse_direct(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	if (strcmp(v, "1"))
		return tool_fail(err, errlen, "%s %s: a userspace initiator has no page cache: only 1", name, v);
	return parse_noted(sp, name, v, base, err, errlen);
}

/* parse_output_format - fio's --output-format: normal (our table) or json/json+ (fio's json shape). */
static int parse_output_format(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			       size_t errlen)
{
	struct perf_opts *o = base;

	if (!strcmp(v, "normal"))
		o->format = TOOL_FORMAT_TABLE;
	else if (!strcmp(v, "json") || !strcmp(v, "json+"))
		o->format = TOOL_FORMAT_JSON, o->fio_json = true;
	else
		return tool_fail(err, errlen, "%s %s: normal or json (or --format table|json|csv)", name, v);
	return 0;
}

/* parse_allowed_policy - fio's cpus_allowed_policy: shared (every job on the whole set) or split (one CPU each). */
static int parse_allowed_policy(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
				size_t errlen)
{
	struct perf_opts *o = base;

	(void)sp;
	if (strcmp(v, "shared") && strcmp(v, "split"))
		return tool_fail(err, errlen, "%s %s: must be shared or split (fio's cpus_allowed_policy)", name, v);
	o->allowed_split = !strcmp(v, "split");
	return 0;
}

/* parse_config - --target-config, repeatable: one more block. */
static int parse_config(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	struct perf_opts *o = base;

	if (o->nconfigs == PERF_MAX_CONFIGS)
		return tool_fail(err, errlen, "%s: at most %d of them", name, PERF_MAX_CONFIGS);
	if (!*v)
		return tool_fail(err, errlen, "%s needs a value (got '')", name);
	if (strlen(v) >= sizeof(o->configs[0]))
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, sizeof(o->configs[0]) - 1);
	snprintf(o->configs[o->nconfigs++], sizeof(o->configs[0]), "%s", v);
	return 0;
}

/* rate_value - one I/O rate of --rate_iops or a sweep: 0 (not limited), or a rate with an optional k/M. */
static int rate_value(const char *name, const char *s, double *out, char *err, size_t errlen)
{
	if (!strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	return tool_opt_rate(name, s, PERF_MAX_RATE_IOPS, out, err, errlen);
}

/*
 * parse_rate_iops - fio's rate_iops=R[,W[,T]], per job: one value sets every
 * direction; R,W sets reads and writes, and trims as W (fio copies the last value
 * given to the directions after it); an empty field or 0 leaves its direction not
 * limited ("500," reads only, ",500" writes and trims).
 */
static int parse_rate_iops(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			   size_t errlen)
{
	struct perf_opts *o = base;
	char buf[96], *f[PERF_DDIRS];
	int n = 0;

	(void)sp;
	if (!*v || strlen(v) >= sizeof(buf))
		return tool_fail(err, errlen, "%s needs R[,W[,T]]: I/Os per second per job (read, write, trim)", name);
	snprintf(buf, sizeof(buf), "%s", v);
	f[n++] = buf;
	for (char *c = buf; *c; c++) {
		if (*c != ',')
			continue;
		if (n == PERF_DDIRS)
			return tool_fail(err, errlen, "%s %s: at most three rates (read,write,trim)", name, v);
		*c = 0;
		f[n++] = c + 1;
	}
	for (int d = 0; d < PERF_DDIRS; d++) {
		/* one value: every direction; two: the trim rate is the write rate (fio's parser) */
		const char *t = f[d < n ? d : n - 1];

		if (!*t) {
			if (n == 1)
				return tool_fail(err, errlen, "%s needs R[,W[,T]]: I/Os per second per job", name);
			o->rate_iops[d] = 0;
			continue;
		}
		if (rate_value(name, t, &o->rate_iops[d], err, errlen))
			return -EINVAL;
	}
	return 0;
}

/* parse_rate_process - fio's rate_process: linear (fixed gaps, its default) or poisson. */
static int parse_rate_process(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			      size_t errlen)
{
	struct perf_opts *o = base;

	(void)sp;
	if (!strcmp(v, "linear"))
		o->rate_poisson = false;
	else if (!strcmp(v, "poisson"))
		o->rate_poisson = true;
	else
		return tool_fail(err, errlen, "%s %s: must be linear or poisson (fio's rate_process)", name, v);
	return 0;
}

/* sweep_rates - "rate_iops=A,B,..": each a rate (every direction) or P% (of --rate_iops). */
static int sweep_rates(struct perf_opts *o, const char *s, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *w;

	if (o->nrates)
		return tool_fail(err, errlen, "--sweep %s: rate_iops is swept once (one list)", s);
	if (strlen(s) >= sizeof(buf) || !s[10])
		return tool_fail(err, errlen, "--sweep %s: want rate_iops=A,B,.. (I/Os per second per job, or P%% of "
				 "--rate_iops)", s);
	if (tool_check_list("--sweep rate_iops", s + 10, ',', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s + 10);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t len = strlen(w);
		bool pct = len > 1 && w[len - 1] == '%';
		double v;

		if (o->nrates == PERF_MAX_RATES)
			return tool_fail(err, errlen, "--sweep %s: at most %d rates", s, PERF_MAX_RATES);
		if (pct)
			w[len - 1] = 0;
		if (tool_opt_rate("--sweep rate_iops", w, pct ? 1e6 : PERF_MAX_RATE_IOPS, &v, err, errlen))
			return -EINVAL;
		o->sweep_pct[o->nrates] = pct;
		o->sweep_rate[o->nrates++] = v;
	}
	return 0;
}

/* parse_sweep - "numjobs=A..B" (or A-B, or one N), or "rate_iops=A,B,..": each swept once. */
static int parse_sweep(const struct opt_spec *sp, const char *name, const char *s, void *base, char *err,
		       size_t errlen)
{
	struct perf_opts *o = base;
	const char *p;
	char a[16] = "", b[16] = "";
	long long lo, hi;
	size_t n;

	if (!strncmp(s, "rate_iops=", 10))
		return sweep_rates(o, s, err, errlen);
	if (strncmp(s, "numjobs=", 8))
		return tool_fail(err, errlen, "--sweep %s: numjobs=A..B or rate_iops=A,B,.. can be swept (e.g. "
				 "numjobs=1..8, rate_iops=10%%,50%%,100%%)", s);
	if (o->sweep)
		return tool_fail(err, errlen, "--sweep %s: numjobs is swept once (one range)", s);
	p = s + 8;
	n = strspn(p, "0123456789");
	if (!n || n >= sizeof(a))
		return tool_fail(err, errlen, "--sweep %s: want numjobs=A..B with whole numbers", s);
	memcpy(a, p, n);
	p += n;
	if (*p == 0) {
		snprintf(b, sizeof(b), "%s", a);
	} else {
		if (!strncmp(p, "..", 2))
			p += 2;
		else if (*p == '-')
			p++;
		else
			return tool_fail(err, errlen, "--sweep %s: want numjobs=A..B with whole numbers", s);
		n = strspn(p, "0123456789");
		if (!n || n >= sizeof(b) || p[n])
			return tool_fail(err, errlen, "--sweep %s: want numjobs=A..B with whole numbers", s);
		memcpy(b, p, n);
	}
	if (tool_opt_int("--sweep numjobs", a, 1, PERF_MAX_JOBS, &lo, err, errlen) ||
	    tool_opt_int("--sweep numjobs", b, 1, PERF_MAX_JOBS, &hi, err, errlen))
		return -EINVAL;
	if (lo > hi)
		return tool_fail(err, errlen, "--sweep %s: %lld is more than %lld", s, lo, hi);
	o->sweep = true;
	o->sweep_lo = (int)lo;
	o->sweep_hi = (int)hi;
	return 0;
}

/* parse_digest - hdr, data, hdr,data or none. */
static int parse_digest(const struct opt_spec *sp, const char *name, const char *s, void *base, char *err,
			size_t errlen)
{
	struct perf_opts *o = base;
	char buf[64], *save = NULL, *w;

	o->hdgst = o->ddgst = false;
	if (!strcmp(s, "none"))
		return 0;
	if (strlen(s) >= sizeof(buf) || !*s)
		return tool_fail(err, errlen, "--digest %s: must be hdr, data, hdr,data or none", s);
	if (tool_check_list(name, s, ',', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		bool hdr = !strcmp(w, "hdr") || !strcmp(w, "header"), *d = hdr ? &o->hdgst : &o->ddgst;

		if (!hdr && strcmp(w, "data"))
			return tool_fail(err, errlen, "--digest %s: '%s' is not hdr or data", s, w);
		if (*d)
			return tool_fail(err, errlen, "--digest %s: %s given twice", s, hdr ? "hdr" : "data");
		*d = true;
	}
	return 0;
}


#define PF(m) OPT_FIELD(struct perf_opts, m)
#define STR_(x) #x
#define STR(x) STR_(x)

/* --rw's words, fio's: the first five are enum perf_rw; rw and readwrite are PERF_RW_RW; then the trims. */
static const char *const rw_names[] = { "read", "write", "randread", "randwrite", "randrw",
					"rw", "readwrite", "trim", "randtrim", NULL };
enum { RW_GIVEN_RW = 5, RW_GIVEN_READWRITE, RW_GIVEN_TRIM, RW_GIVEN_RANDTRIM };

/* rw_of_given - --rw's word (its index in rw_names) as the pattern. */
static enum perf_rw rw_of_given(int given)
{
	switch (given) {
	case RW_GIVEN_RW:
	case RW_GIVEN_READWRITE: return PERF_RW_RW;
	case RW_GIVEN_TRIM: return PERF_RW_TRIM;
	case RW_GIVEN_RANDTRIM: return PERF_RW_RANDTRIM;
	default: return (enum perf_rw)given;
	}
}

/* A fio option that does not apply: accepted, its reason (help) said once (parse_noted). */
#define NOTED(nm, why) { .name = nm, .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN | OPT_F_REPEAT, \
			 .parse = parse_noted, .help = why }
#define NOTED_BOOL(nm, why) { .name = nm, .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN | OPT_F_REPEAT | OPT_F_OPTIONAL, \
			      .parse = parse_noted, .help = why }

/* fio's options; fio's underscored spellings are hidden aliases of ours. */
static const struct opt_spec perf_specs[] = {
	{ .name = "target", .kind = OPT_TEXT, PF(target), .arg = "ADDR:PORT",
	  .help = "the NVMe/TCP target (port default " STR(PERF_DEFAULT_PORT) ")" },
	{ .name = "nqn", .kind = OPT_CUSTOM, PF(nqn), .parse = parse_nqn, .arg = "NQN", .help = "its subsystem NQN" },
	{ .name = "nsid", .kind = OPT_INT, PF(nsid), .lo = 1, .hi = 0xfffffffe, .arg = "N", .help = "namespace",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "hostnqn", .kind = OPT_CUSTOM, PF(hostnqn), .parse = parse_nqn, .arg = "NQN",
	  .help = "our host NQN (default: a random uuid NQN)" },
	{ .name = "digest", .kind = OPT_CUSTOM, .parse = parse_digest, .arg = "LIST",
	  .help = "hdr, data, hdr,data or none (default none)" },
	{ .name = "io-timeout", .kind = OPT_CUSTOM, .parse = parse_io_timeout, .arg = "S",
	  .help = "a command unanswered S seconds fails the run\n(default 30, as Linux's nvme_core.io_timeout)" },
	{ .name = "rw", .kind = OPT_CHOICE, PF(rw_given), .choices = rw_names, .arg = "PATTERN",
	  .help = "read, write, randread, randwrite, randrw, rw\n(= readwrite: sequential, mixed), trim, randtrim\n"
		  "(Dataset Management deallocate, bs per trim)", .dflt = OPT_DFLT_FIELD },
	{ .name = "readwrite", .kind = OPT_CHOICE, .flags = OPT_F_HIDDEN, PF(rw_given), .choices = rw_names,
	  .alias_of = "rw" },
	{ .name = "rwmixread", .kind = OPT_INT, PF(rwmixread), .lo = 0, .hi = 100, .arg = "PCT",
	  .help = "percent reads in randrw and rw", .dflt = OPT_DFLT_FIELD },
	{ .name = "rwmixwrite", .kind = OPT_INT, PF(rwmixwrite), .lo = 0, .hi = 100, .arg = "PCT",
	  .help = "percent writes in randrw and rw (100 - rwmixread)" },
	{ .name = "bs", .kind = OPT_SIZE, PF(bs), .hi = PERF_MAX_BS, .arg = "SIZE", .help = "block size, k/M suffixes",
	  .dflt = "4k" },
	{ .name = "blocksize", .kind = OPT_SIZE, .flags = OPT_F_HIDDEN, PF(bs), .hi = PERF_MAX_BS, .alias_of = "bs" },
	{ .name = "iodepth", .kind = OPT_INT, PF(iodepth), .lo = 1, .hi = PERF_MAX_IODEPTH, .arg = "N",
	  .help = "I/Os in flight per job, 1.." STR(PERF_MAX_IODEPTH), .dflt = OPT_DFLT_FIELD },
	{ .name = "iodepth-batch", .kind = OPT_INT, PF(iodepth_batch), .lo = 0, .hi = PERF_MAX_IODEPTH, .arg = "N",
	  .help = "submit in batches of N (fio iodepth_batch_submit;\ndefault 1, 0 = iodepth)" },
	{ .name = "iodepth_batch", .kind = OPT_INT, .flags = OPT_F_HIDDEN, PF(iodepth_batch), .lo = 0,
	  .hi = PERF_MAX_IODEPTH, .alias_of = "iodepth-batch" },
	{ .name = "iodepth-batch-submit", .kind = OPT_INT, .flags = OPT_F_HIDDEN, PF(iodepth_batch), .lo = 0,
	  .hi = PERF_MAX_IODEPTH, .alias_of = "iodepth-batch" },
	{ .name = "iodepth_batch_submit", .kind = OPT_INT, .flags = OPT_F_HIDDEN, PF(iodepth_batch), .lo = 0,
	  .hi = PERF_MAX_IODEPTH, .alias_of = "iodepth-batch" },
	{ .name = "iodepth-batch-complete-min", .kind = OPT_INT, PF(complete_min), .lo = 0, .hi = PERF_MAX_IODEPTH,
	  .arg = "N", .help = "reap at least N completions before submitting again\n(default 1; 0 = at least 1, but poll instead of sleep)" },
	{ .name = "iodepth_batch_complete_min", .kind = OPT_INT, .flags = OPT_F_HIDDEN, PF(complete_min), .lo = 0,
	  .hi = PERF_MAX_IODEPTH, .alias_of = "iodepth-batch-complete-min" },
	{ .name = "iodepth_batch_complete", .kind = OPT_INT, .flags = OPT_F_HIDDEN, PF(complete_min), .lo = 0,
	  .hi = PERF_MAX_IODEPTH, .alias_of = "iodepth-batch-complete-min" },
	{ .name = "iodepth-batch-complete-max", .kind = OPT_INT, PF(complete_max), .lo = 0, .hi = PERF_MAX_IODEPTH,
	  .arg = "N", .help = "reap at most N before submitting again (default: min)" },
	{ .name = "iodepth_batch_complete_max", .kind = OPT_INT, .flags = OPT_F_HIDDEN, PF(complete_max), .lo = 0,
	  .hi = PERF_MAX_IODEPTH, .alias_of = "iodepth-batch-complete-max" },
	{ .name = "numjobs", .kind = OPT_INT, PF(numjobs), .lo = 1, .hi = PERF_MAX_JOBS, .arg = "N",
	  .help = "jobs, each its own I/O queue and thread, 1.." STR(PERF_MAX_JOBS), .dflt = OPT_DFLT_FIELD },
	{ .name = "cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct perf_opts, cpus, ncpus), .arg = "LIST",
	  .help = "job i on the i-th CPU of LIST (e.g. 0,2-3)" },
	{ .name = "cpus-allowed", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct perf_opts, allowed, nallowed), .arg = "LIST",
	  .help = "fio's cpus_allowed: every job may run on any CPU of\nLIST (policy split: job i on the i-th, as --cpus)" },
	{ .name = "cpus_allowed", .kind = OPT_CPUS, .flags = OPT_F_HIDDEN, OPT_CPUS_FIELD(struct perf_opts, allowed, nallowed),
	  .alias_of = "cpus-allowed" },
	{ .name = "cpus-allowed-policy", .kind = OPT_CUSTOM, .parse = parse_allowed_policy, .arg = "shared|split",
	  .help = "fio's cpus_allowed_policy: shared (default) or split" },
	{ .name = "cpus_allowed_policy", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = parse_allowed_policy,
	  .alias_of = "cpus-allowed-policy" },
	{ .name = "runtime", .kind = OPT_CUSTOM, PF(runtime_s), .parse = parse_time, .arg = "T",
	  .help = "measured seconds (s, ms, m, h suffixes)", .dflt = OPT_DFLT_FIELD },
	{ .name = "ramp-time", .kind = OPT_CUSTOM, .flags = OPT_F_ZERO_OK, PF(ramp_s), .parse = parse_time, .arg = "T",
	  .help = "seconds of I/O before measuring", .dflt = "0" },
	{ .name = "ramp_time", .kind = OPT_CUSTOM, .flags = OPT_F_ZERO_OK | OPT_F_HIDDEN, PF(ramp_s),
	  .parse = parse_time, .alias_of = "ramp-time" },
	/* the word every other command uses for it */
	{ .name = "warmup", .kind = OPT_CUSTOM, .flags = OPT_F_ZERO_OK, PF(ramp_s), .parse = parse_time, .arg = "T",
	  .help = "the same as --ramp-time", .alias_of = "ramp-time" },
	{ .name = "offset", .kind = OPT_CUSTOM, .parse = parse_offset, .arg = "SIZE",
	  .help = "where the region starts (default 0)" },
	{ .name = "size", .kind = OPT_CUSTOM, .parse = parse_size, .arg = "SIZE",
	  .help = "the region (default: to the end of the namespace);\nk M G T suffixes. Offsets are uniformly random\n"
		  "(fio's norandommap) or sequential, wrapping" },
	{ .name = "verify", .kind = OPT_CUSTOM, .flags = OPT_F_OPTIONAL, .parse = parse_verify,
	  .help = "stamp every block with its LBA, a generation, the run\nand a CRC32C on write, check on read; read patterns\n"
		  "pre-fill the region, write patterns read it back at\nthe end. Jobs get disjoint slices. A mismatch fails\n"
		  "the run and names the LBA" },
	{ .name = "mode", .kind = OPT_MODE, OPT_MODE_FIELD(struct perf_opts, mode, mode_text), .arg = "MODE",
	  .help = "engine wait mode of every job (see `busypoll modes`)", .dflt = OPT_DFLT_FIELD },
	{ .name = "interval", .kind = OPT_CUSTOM, .flags = OPT_F_ZERO_OK, PF(interval_s), .parse = parse_time,
	  .arg = "S", .help = "a progress line on stderr every S s (0 off)", .dflt = OPT_DFLT_FIELD },
	{ .name = "rate-iops", .kind = OPT_CUSTOM, .parse = parse_rate_iops, .arg = "R[,W[,T]]",
	  .help = "the open loop (fio's rate_iops): each job issues R\nreads, W writes, T trims per second on a schedule,\n"
		  "whatever is in flight; latency from each I/O's\nintended issue time (R alone: every direction)" },
	{ .name = "rate_iops", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = parse_rate_iops, .alias_of = "rate-iops" },
	{ .name = "rate-process", .kind = OPT_CUSTOM, .parse = parse_rate_process, .arg = "linear|poisson",
	  .help = "the schedule's gaps: fixed (default) or exponential" },
	{ .name = "rate_process", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = parse_rate_process,
	  .alias_of = "rate-process" },
	{ .name = "sweep", .kind = OPT_CUSTOM, .flags = OPT_F_REPEAT, .parse = parse_sweep,
	  .arg = "numjobs=A..B|rate_iops=A,B,..",
	  .help = "repeatable, each once: one run per job count and/or\nper rate (a rate per job in every direction, or P% of\n"
		  "--rate-iops): threads, offered load, IOPS (K), latency" },
	{ .name = "spawn-target", .kind = OPT_TEXT, .flags = OPT_F_DASH_OK, PF(spawn_args), .arg = "ARGS",
	  .help = "run our own `busypoll target ARGS` for the runs (its\n--listen and --nqn default to --target and --nqn);\n"
		  "its counters and CPU join the results" },
	{ .name = "target-config", .kind = OPT_CUSTOM, .flags = OPT_F_REPEAT, .parse = parse_config, .arg = "ARGS",
	  .help = "repeatable: one block per configuration, the target\nrestarted with ARGS added (needs --spawn-target)" },
	{ .name = "output-format", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = parse_output_format },
	{ .name = "output_format", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = parse_output_format,
	  .alias_of = "output-format" },
	/* fio's options that do not apply here: accepted, and said once why (the help is the reason) */
	NOTED_BOOL("time_based", "implied: every run is time based"),
	NOTED_BOOL("time-based", "implied: every run is time based"),
	{ .name = "direct", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN | OPT_F_REPEAT,
	  .parse = parse_direct, .help = "implied: a userspace initiator has no page cache" },
	NOTED("ioengine", "implied: perf is its own NVMe/TCP engine"),
	NOTED("name", "ignored: jobs are numbered, not named"),
	NOTED("filename", "ignored: the namespace is --target, --nqn and --nsid"),
	NOTED_BOOL("group_reporting", "implied: the jobs are reported together"),
	NOTED_BOOL("norandommap", "implied: random offsets are uniform, with no map"),
	NOTED_BOOL("randrepeat", "ignored: the random offsets are seeded per run"),
	NOTED_BOOL("thread", "implied: every job is a thread"),
	NOTED_BOOL("invalidate", "implied: there is no page cache to invalidate"),
	NOTED("ioscheduler", "ignored: no kernel block layer is involved"),
	NOTED_BOOL("exitall", "ignored: all jobs run for --runtime"),
	NOTED_BOOL("stonewall", "ignored: a job file has one job section here"),
	NOTED_BOOL("wait_for_previous", "ignored: a job file has one job section here"),
};

/*
 * check_rates - --rate_iops against the pattern: every direction the pattern issues
 * has a rate, or none has (an open loop with one direction not limited would be a
 * closed loop in that direction, mixed into the other's schedule).
 */
static int check_rates(struct perf_opts *o, const struct opt_seen *seen, char *err, size_t errlen)
{
	bool any = false, all = true, given = opt_given(seen, "rate-iops") > 0;
	char used[32] = "";

	for (int d = 0; d < PERF_DDIRS; d++) {
		if (!perf_rw_uses(o, (enum perf_ddir)d))
			continue;
		any |= o->rate_iops[d] > 0;
		all &= o->rate_iops[d] > 0;
		snprintf(used + strlen(used), sizeof(used) - strlen(used), "%s%s", used[0] ? " and " : "",
			 perf_ddir_name((enum perf_ddir)d));
	}
	if (given && !any)
		return tool_fail(err, errlen, "--rate_iops %s: no rate for the %s that --rw %s issues (fio's order is "
				 "read,write,trim)", opt_text(seen, "rate-iops"), used, perf_rw_name(o->rw));
	if (any && !all)
		return tool_fail(err, errlen, "--rate_iops %s: --rw %s issues %s: give a rate for each (an open loop in "
				 "one direction only would be a closed loop in the other)", opt_text(seen, "rate-iops"),
				 perf_rw_name(o->rw), used);
	if (!any && opt_given(seen, "rate-process"))
		return tool_fail(err, errlen, "--rate_process %s needs --rate_iops (the schedule it spaces)",
				 opt_text(seen, "rate-process"));
	for (int i = 0; i < o->nrates; i++)
		if (o->sweep_pct[i] && !any)
			return tool_fail(err, errlen, "--sweep rate_iops=..%g%%..: a percentage of --rate_iops, which is "
					 "not given (give --rate_iops N as 100%%)", o->sweep_rate[i]);
	if (any && perf_rw_mixed(o->rw) && (opt_given(seen, "rwmixread") || opt_given(seen, "rwmixwrite")))
		note_add(o, "--rwmix", "no effect with --rate_iops: each direction issues at its own rate, as fio's rate "
			 "does; the mix is the rates' ratio");
	return 0;
}

/* perf_check - the rules between perf's options, then fio's meanings resolved. */
static int perf_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct perf_opts *o = base;
	bool mixr = opt_given(seen, "rwmixread"), mixw = opt_given(seen, "rwmixwrite");

	if (o->bs % 512)
		return tool_fail(err, errlen, "--bs %s: must be a multiple of 512 bytes (an LBA)", opt_text(seen, "bs"));
	if (!o->target[0])
		return tool_fail(err, errlen, "--target ADDR:PORT is required (the NVMe/TCP target)");
	if (tool_opt_hostport("--target", o->target, err, errlen))
		return -EINVAL;
	if (!o->nqn[0])
		return tool_fail(err, errlen, "--nqn NQN is required (the target's subsystem)");
	if (mixw) {
		if (mixr && o->rwmixread + o->rwmixwrite != 100)
			return tool_fail(err, errlen, "--rwmixread %d and --rwmixwrite %d do not add up to 100",
					 o->rwmixread, o->rwmixwrite);
		o->rwmixread = 100 - o->rwmixwrite;
		mixr = true;
	}
	o->rw = rw_of_given(o->rw_given);
	if (mixr && o->rw != PERF_RW_RANDRW && o->rw != PERF_RW_RW)
		return tool_fail(err, errlen, "--rwmix%s applies to --rw randrw and rw only (this is --rw %s)",
				 mixw ? "write" : "read", perf_rw_name(o->rw));
	if (o->verify && perf_rw_trims(o))
		return tool_fail(err, errlen, "--verify with --rw %s: a trim deallocates, and what deallocated blocks "
				 "read back is the target's to say (DLFEAT), not a stamp: nothing to verify",
				 perf_rw_name(o->rw));
	if (check_rates(o, seen, err, errlen))
		return -EINVAL;
	if (o->sweep && opt_given(seen, "numjobs"))
		return tool_fail(err, errlen, "--numjobs and --sweep numjobs=A..B are exclusive: the sweep sets it");
	o->spawn = opt_given(seen, "spawn-target") > 0;
	if (o->remote.remote[0] && !o->hostnqn[0]) {
		/* one host NQN for the target the agent starts (--allow-host) and for connecting to it */
		struct bp_nvmeh_opts h;

		bp_nvmeh_opts_defaults(&h);
		snprintf(o->hostnqn, sizeof(o->hostnqn), "%s", h.hostnqn);
	}
	if (o->remote.remote[0] && !o->spawn)
		return tool_fail(err, errlen, "--remote %s starts the target there: give its arguments with "
				 "--spawn-target ARGS (e.g. --spawn-target '--ns ram:1G')", o->remote.remote);
	if (o->nconfigs && !o->spawn)
		return tool_fail(err, errlen,
				 "--target-config needs --spawn-target: perf can only reconfigure a target it starts");
	if (o->sweep)
		o->numjobs = o->sweep_hi;
	if (o->nallowed && o->ncpus)
		return tool_fail(err, errlen, "--cpus and --cpus_allowed are exclusive: --cpus LIST is "
				 "--cpus_allowed LIST --cpus_allowed_policy split");
	if (opt_given(seen, "cpus-allowed-policy") && !o->nallowed)
		return tool_fail(err, errlen, "--cpus_allowed_policy %s needs --cpus_allowed LIST",
				 opt_text(seen, "cpus-allowed-policy"));
	if (o->nallowed && o->allowed_split) {
		/* fio's split: a CPU of the set per job, round robin; CPUs beyond the jobs stay unused */
		o->ncpus = o->nallowed < o->numjobs ? o->nallowed : o->numjobs;
		memcpy(o->cpus, o->allowed, (size_t)o->ncpus * sizeof(o->cpus[0]));
		o->nallowed = 0;
	}
	if (o->ncpus > o->numjobs)
		return tool_fail(err, errlen, "--cpus %s: %d CPUs for %d job%s (one CPU per job)", opt_text(seen, "cpus"),
				 o->ncpus, o->numjobs, o->numjobs == 1 ? "" : "s");
	if (o->size && o->size < o->bs)
		return tool_fail(err, errlen, "--size %" PRIu64 " is smaller than --bs %u", o->size, o->bs);
	perf_opts_resolve(o);
	return 0;
}

static const struct opt_table perf_table = OPT_TABLE(perf_specs, perf_check);

static const struct opt_cmd perf_cmd = {
	.name = "perf",
	.usage = "usage: busypoll perf --target ADDR:PORT --nqn NQN [options]\n"
		 "       busypoll perf JOBFILE [options]   (fio's job file; options override it)\n"
		 "       busypoll perf --target ADDR:PORT --nqn NQN --remote HOST --spawn-target ARGS\n"
		 "\n"
		 "fio for NVMe/TCP on the busypoll engine: a userspace initiator with fio's\n"
		 "options and meanings (fio's underscored spellings work too), every engine wait\n"
		 "mode on the host side. Each job is one I/O queue connection on its own loop\n"
		 "thread. Runs are time based and direct, always.\n\n",
	.epilog = "\nExit: 0 done, 1 the run failed (target down, refused, I/O error, timeout,\n"
		  "verify mismatch), 2 bad input, 130 interrupted (partial results printed).\n",
};

/*
 * parse_alone - argv read against perf's layers into a scratch struct, without
 * the checks between options: is each option (and its value) good by itself,
 * and which options (seen: their canonical specs) does it give?
 */
static int parse_alone(int argc, char **argv, struct opt_seen *seen, char *err, size_t errlen)
{
	static struct perf_opts scratch;
	struct opt_table t[3] = { tool_common_table, agent_remote_table, perf_table };
	const struct opt_layer layers[] = {
		{ &t[0], &scratch.common },
		{ &t[1], &scratch.remote },
		{ &t[2], &scratch },
	};

	for (int i = 0; i < 3; i++)
		t[i].check = NULL;
	perf_opts_defaults(&scratch);
	return opt_parse(&perf_cmd, layers, 3, argc, argv, seen, err, errlen);
}

/*
 * jobfile_argv - `perf JOBFILE args...` as the command line perf would take:
 * the file's keys as --key=value (each read alone first, so an error names its
 * line), less those the command line gives too, then the command line. The
 * words live in static storage, their count in *nout. Returns 0, 1 for --help,
 * or -EINVAL.
 */
static int jobfile_argv(int argc, char **argv, struct perf_opts *o, char ***out, int *nout, char *err,
			size_t errlen)
{
	static struct perf_jobfile jf;
	static struct opt_seen cl, one;
	static char words[PERF_JOBFILE_MAX_OPTS][sizeof(jf.opt[0].key) + sizeof(jf.opt[0].val) + 4];
	static char *av[PERF_JOBFILE_MAX_OPTS + 258];
	char e1[400];
	int n = 0, r;

	if (argc - 2 > 256)
		return tool_fail(err, errlen, "more than 256 arguments after the job file");
	if (perf_jobfile_read(argv[1], &jf, err, errlen))
		return -EINVAL;
	av[n++] = argv[0];
	for (int i = 2; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	r = parse_alone(n, av, &cl, err, errlen);
	if (r)
		return r;
	n = 1;
	for (int i = 0; i < jf.nopts; i++) {
		const struct perf_jobfile_opt *op = &jf.opt[i];
		char *one_av[] = { argv[0], words[i], NULL };
		int k;

		snprintf(words[i], sizeof(words[i]), "--%s%s%s", op->key, op->has_val ? "=" : "", op->val);
		if (!strcmp(op->key, "help") || !strcmp(op->key, "version"))
			return tool_fail(err, errlen, "%s:%d: %s is not an fio job option", argv[1], op->line, op->key);
		if (parse_alone(2, one_av, &one, e1, sizeof(e1)))
			return tool_fail(err, errlen, "%s:%d: %s", argv[1], op->line, e1);
		for (k = 0; k < one.n && !one.count[k]; k++)
			;
		if (k < one.n && k < cl.n && cl.count[k])
			continue;  /* the command line overrides the file */
		av[n++] = words[i];
	}
	for (int i = 2; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	snprintf(o->jobname, sizeof(o->jobname), "%s", jf.jobname);
	*out = av;
	*nout = n;
	return 0;
}

int perf_parse_opts(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &o->common },
		{ &agent_remote_table, &o->remote },
		{ &perf_table, o },
	};

	perf_opts_defaults(o);
	if (argc > 1 && argv[1][0] != '-') {
		char **av = NULL;
		int n = 0, r = jobfile_argv(argc, argv, o, &av, &n, err, errlen);

		if (r)
			return r;
		return opt_parse(&perf_cmd, layers, 3, n, av, NULL, err, errlen);
	}
	return opt_parse(&perf_cmd, layers, 3, argc, argv, NULL, err, errlen);
}
