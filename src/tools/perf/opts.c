/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: option parsing (contract in tools/perf.h).
 *
 * fio's vocabulary with fio's meanings: a storage engineer's fio command line
 * should mean the same here. The dashed spellings are ours; fio's underscored
 * ones (--iodepth_batch_complete_min, --ramp_time, --readwrite...) are accepted
 * as aliases, and so are --time_based and --direct=1, which every run here is.
 * Every error is one line naming the option as typed; checks that involve two
 * options run after the whole command line is read.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/nvme/tcp.h>

#include "tools/perf/perf.h"
#include "tools/common/options.h"

#define MAX_SECONDS 604800.0  /* a week: as rr, far from overflowing ns arithmetic */
#define MAX_TIMEOUT_S 3600.0

void perf_opts_defaults(struct perf_opts *o)
{
	char err[128];

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
	o->runtime_s = 10;
	o->ramp_s = 0;
	o->io_timeout_ms = 30000;      /* Linux's nvme_core.io_timeout */
	o->format = PERF_FORMAT_TABLE;
	o->interval_s = 1;
	if (bp_mode_parse("epoll:block", &o->mode, err, sizeof(err)) != 0)
		memset(&o->mode, 0, sizeof(o->mode));
	bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
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
	}
	return "?";
}

bool perf_rw_reads(const struct perf_opts *o)
{
	return o->rw == PERF_RW_READ || o->rw == PERF_RW_RANDREAD || (o->rw == PERF_RW_RANDRW && o->rwmixread > 0);
}

bool perf_rw_writes(const struct perf_opts *o)
{
	return o->rw == PERF_RW_WRITE || o->rw == PERF_RW_RANDWRITE || (o->rw == PERF_RW_RANDRW && o->rwmixread < 100);
}

int perf_split_args(const char *args, char *buf, char **words, int max)
{
	const char *p = args;
	char *w = buf;
	int n = 0;

	for (;;) {
		char quote = 0;
		bool any = false;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (n == max)
			return -EINVAL;
		words[n] = w;
		while (*p && (quote || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (quote && *p == quote) {
				quote = 0;
			} else if (!quote && (*p == '\'' || *p == '"')) {
				quote = *p;
			} else if (*p == '\\' && quote != '\'' && p[1]) {
				*w++ = *++p;
			} else {
				*w++ = *p;
			}
			any = true;
			p++;
		}
		if (quote)
			return -EINVAL;
		(void)any;
		*w++ = 0;
		n++;
	}
	return n;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll perf --target ADDR:PORT --nqn NQN [options]\n"
		"\n"
		"fio for NVMe/TCP on the busypoll engine: a userspace initiator with fio's\n"
		"options and meanings (fio's underscored spellings work too), every engine wait\n"
		"mode on the host side. Each job is one I/O queue connection on its own loop\n"
		"thread. Runs are time based and direct, always.\n"
		"\n"
		"target:\n"
		"  --target ADDR:PORT       the NVMe/TCP target (port default %d)\n"
		"  --nqn NQN                its subsystem NQN\n"
		"  --nsid N                 namespace (default 1)\n"
		"  --hostnqn NQN            our host NQN (default: a random uuid NQN)\n"
		"  --digest LIST            hdr, data, hdr,data or none (default none)\n"
		"  --io-timeout S           a command unanswered S seconds fails the run\n"
		"                           (default 30, as Linux's nvme_core.io_timeout)\n"
		"workload (fio's meanings):\n"
		"  --rw PATTERN             read, write, randread, randwrite, randrw (default read)\n"
		"  --rwmixread PCT          percent reads in randrw (default 50); --rwmixwrite\n"
		"  --bs SIZE                block size, k/M suffixes (default 4k)\n"
		"  --iodepth N              I/Os in flight per job, 1..%d (default 1)\n"
		"  --iodepth-batch N        submit in batches of N (fio iodepth_batch_submit;\n"
		"                           default 1, 0 = iodepth)\n"
		"  --iodepth-batch-complete-min N\n"
		"                           reap at least N completions before submitting again\n"
		"                           (default 1; 0 = at least 1, but poll instead of sleep)\n"
		"  --iodepth-batch-complete-max N\n"
		"                           reap at most N before submitting again (default: min)\n"
		"  --numjobs N              jobs, each its own I/O queue and thread, 1..%d\n"
		"  --cpus LIST              job i on the i-th CPU of LIST (e.g. 0,2-3)\n"
		"  --runtime T              measured seconds (default 10; s, ms, m, h suffixes)\n"
		"  --ramp-time T            seconds of I/O before measuring (default 0)\n"
		"  --offset SIZE            where the region starts (default 0)\n"
		"  --size SIZE              the region (default: to the end of the namespace);\n"
		"                           k M G T suffixes. Offsets are uniformly random\n"
		"                           (fio's norandommap) or sequential, wrapping\n"
		"  --verify                 stamp every block with its LBA, a generation, the run\n"
		"                           and a CRC32C on write, check on read; read patterns\n"
		"                           pre-fill the region, write patterns read it back at\n"
		"                           the end. Jobs get disjoint slices. A mismatch fails\n"
		"                           the run and names the LBA\n"
		"host:\n"
		"  --mode MODE              engine wait mode of every job (default epoll:block;\n"
		"                           see `busypoll modes`)\n"
		"output:\n"
		"  --format F               table, json or csv (default table)\n"
		"  --interval S             a progress line on stderr every S s (default 1, 0 off)\n"
		"  -q, --quiet              no progress lines\n"
		"the reference table:\n"
		"  --sweep numjobs=A..B     one run per job count: threads, IOPS (K), average\n"
		"                           latency, P99.99\n"
		"  --spawn-target ARGS      run our own `busypoll target ARGS` for the runs (its\n"
		"                           --listen and --nqn default to --target and --nqn);\n"
		"                           its counters and CPU join the results\n"
		"  --target-config ARGS     repeatable: one block per configuration, the target\n"
		"                           restarted with ARGS added (needs --spawn-target)\n"
		"  -h, --help               this text\n"
		"\n"
		"Exit: 0 done, 1 the run failed (target down, refused, I/O error, timeout,\n"
		"verify mismatch), 2 bad input, 130 interrupted (partial results printed).\n",
		PERF_DEFAULT_PORT, PERF_MAX_IODEPTH, PERF_MAX_JOBS);
}

enum {
	OPT_TARGET = 256, OPT_NQN, OPT_NSID, OPT_HOSTNQN, OPT_DIGEST, OPT_IO_TIMEOUT, OPT_RW, OPT_MIXREAD,
	OPT_MIXWRITE, OPT_BS, OPT_IODEPTH, OPT_BATCH, OPT_CMIN, OPT_CMAX, OPT_NUMJOBS, OPT_CPUS, OPT_RUNTIME,
	OPT_RAMP, OPT_OFFSET, OPT_SIZE, OPT_VERIFY, OPT_MODE, OPT_FORMAT, OPT_INTERVAL, OPT_SWEEP, OPT_SPAWN,
	OPT_CONFIG, OPT_TIME_BASED, OPT_DIRECT,
};

static const struct option long_opts[] = {
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "nqn", required_argument, NULL, OPT_NQN },
	{ "nsid", required_argument, NULL, OPT_NSID },
	{ "hostnqn", required_argument, NULL, OPT_HOSTNQN },
	{ "digest", required_argument, NULL, OPT_DIGEST },
	{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "readwrite", required_argument, NULL, OPT_RW },
	{ "rwmixread", required_argument, NULL, OPT_MIXREAD },
	{ "rwmixwrite", required_argument, NULL, OPT_MIXWRITE },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "blocksize", required_argument, NULL, OPT_BS },
	{ "iodepth", required_argument, NULL, OPT_IODEPTH },
	{ "iodepth-batch", required_argument, NULL, OPT_BATCH },
	{ "iodepth_batch", required_argument, NULL, OPT_BATCH },
	{ "iodepth-batch-submit", required_argument, NULL, OPT_BATCH },
	{ "iodepth_batch_submit", required_argument, NULL, OPT_BATCH },
	{ "iodepth-batch-complete-min", required_argument, NULL, OPT_CMIN },
	{ "iodepth_batch_complete_min", required_argument, NULL, OPT_CMIN },
	{ "iodepth_batch_complete", required_argument, NULL, OPT_CMIN },
	{ "iodepth-batch-complete-max", required_argument, NULL, OPT_CMAX },
	{ "iodepth_batch_complete_max", required_argument, NULL, OPT_CMAX },
	{ "numjobs", required_argument, NULL, OPT_NUMJOBS },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "ramp-time", required_argument, NULL, OPT_RAMP },
	{ "ramp_time", required_argument, NULL, OPT_RAMP },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "verify", optional_argument, NULL, OPT_VERIFY },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "quiet", no_argument, NULL, 'q' },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "spawn-target", required_argument, NULL, OPT_SPAWN },
	{ "target-config", required_argument, NULL, OPT_CONFIG },
	{ "time_based", no_argument, NULL, OPT_TIME_BASED },
	{ "time-based", no_argument, NULL, OPT_TIME_BASED },
	{ "direct", required_argument, NULL, OPT_DIRECT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
static const char short_opts[] = "+:qh";

/*
 * opt_time - seconds, as fio's time type: a decimal with an optional unit
 * (s, ms, m, h; none = seconds).
 */
static int opt_time(const char *name, const char *s, bool zero_ok, double *out, char *err, size_t errlen)
{
	char num[32];
	size_t len = strlen(s);
	double mult = 1;
	int r;

	if (len >= 2 && !strcmp(s + len - 2, "ms")) {
		mult = 1e-3;
		len -= 2;
	} else if (len && (s[len - 1] == 's' || s[len - 1] == 'm' || s[len - 1] == 'h')) {
		mult = s[len - 1] == 'm' ? 60 : s[len - 1] == 'h' ? 3600 : 1;
		len--;
	}
	if (len == 0 || len >= sizeof(num))
		return tool_fail(err, errlen, "%s %s: not a time (seconds, or with s, ms, m or h)", name, s);
	memcpy(num, s, len);
	num[len] = 0;
	r = tool_opt_seconds(name, num, zero_ok, MAX_SECONDS / mult, out, NULL, 0);
	if (r) {
		if (num[0] == '-')
			return tool_fail(err, errlen, "%s %s: must not be negative", name, s);
		if (strspn(num, "0123456789.") == len && strchr(num, '.') == strrchr(num, '.') && strspn(num, ".") != len) {
			if (strtod(num, NULL) == 0)
				return tool_fail(err, errlen, "%s %s: must be more than 0", name, s);
			return tool_fail(err, errlen, "%s %s: at most a week", name, s);
		}
		return tool_fail(err, errlen, "%s %s: not a time (seconds, or with s, ms, m or h)", name, s);
	}
	*out *= mult;
	return 0;
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

/* opt_sweep - "numjobs=A..B" (or A-B, or one N). */
static int opt_sweep(const char *s, struct perf_opts *o, char *err, size_t errlen)
{
	const char *p;
	char a[16] = "", b[16] = "";
	long long lo, hi;
	size_t n;

	if (strncmp(s, "numjobs=", 8))
		return tool_fail(err, errlen, "--sweep %s: only numjobs=A..B can be swept (e.g. numjobs=1..8)", s);
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

static int opt_digest(const char *s, struct perf_opts *o, char *err, size_t errlen)
{
	char buf[64], *save = NULL, *w;

	o->hdgst = o->ddgst = false;
	if (!strcmp(s, "none"))
		return 0;
	if (strlen(s) >= sizeof(buf) || !*s)
		return tool_fail(err, errlen, "--digest %s: must be hdr, data, hdr,data or none", s);
	snprintf(buf, sizeof(buf), "%s", s);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "hdr") || !strcmp(w, "header"))
			o->hdgst = true;
		else if (!strcmp(w, "data"))
			o->ddgst = true;
		else
			return tool_fail(err, errlen, "--digest %s: '%s' is not hdr or data", s, w);
	}
	return 0;
}

static int opt_text(const char *name, const char *s, char *dst, size_t max, char *err, size_t errlen)
{
	if (!*s || (*s == '-' && strcmp(name, "--spawn-target") && strcmp(name, "--target-config")))
		return tool_fail(err, errlen, "%s needs a value (got '%s')", name, s);
	if (strlen(s) >= max)
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, max - 1);
	snprintf(dst, max, "%s", s);
	return 0;
}

int perf_parse_opts(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen)
{
	bool numjobs_given = false, mixr = false, mixw = false;
	const char *cpus_text = NULL;
	int mixw_val = 0;
	char name[64];
	long long v = 0;
	double d;
	int c, r;

	perf_opts_defaults(o);
	if (err && errlen)
		err[0] = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case OPT_TARGET:
			r = opt_text("--target", optarg, o->target, sizeof(o->target), err, errlen);
			break;
		case OPT_NQN:
			r = opt_text("--nqn", optarg, o->nqn, sizeof(o->nqn), err, errlen);
			if (!r && strlen(o->nqn) > BP_NVMF_NQN_MAX)
				r = tool_fail(err, errlen, "--nqn: an NQN is at most %d bytes", BP_NVMF_NQN_MAX);
			break;
		case OPT_HOSTNQN:
			r = opt_text("--hostnqn", optarg, o->hostnqn, sizeof(o->hostnqn), err, errlen);
			if (!r && strlen(o->hostnqn) > BP_NVMF_NQN_MAX)
				r = tool_fail(err, errlen, "--hostnqn: an NQN is at most %d bytes", BP_NVMF_NQN_MAX);
			break;
		case OPT_NSID:
			r = tool_opt_int("--nsid", optarg, 1, 0xfffffffe, &v, err, errlen);
			o->nsid = (uint32_t)v;
			break;
		case OPT_DIGEST:
			r = opt_digest(optarg, o, err, errlen);
			break;
		case OPT_IO_TIMEOUT:
			r = opt_time("--io-timeout", optarg, false, &d, err, errlen);
			if (!r && (d > MAX_TIMEOUT_S || d < 0.001))
				r = tool_fail(err, errlen, "--io-timeout %s: between 1 ms and an hour", optarg);
			if (!r)
				o->io_timeout_ms = (uint32_t)(d * 1000 + 0.5);
			break;
		case OPT_RW: {
			static const char *const pats[] = { "read", "write", "randread", "randwrite", "randrw", NULL };
			int p = tool_opt_choice("--rw", optarg, pats, err, errlen);

			r = p < 0 ? p : 0;
			if (p >= 0)
				o->rw = (enum perf_rw)p;
			break;
		}
		case OPT_MIXREAD:
			r = tool_opt_int("--rwmixread", optarg, 0, 100, &v, err, errlen);
			o->rwmixread = (int)v;
			mixr = true;
			break;
		case OPT_MIXWRITE:
			r = tool_opt_int("--rwmixwrite", optarg, 0, 100, &v, err, errlen);
			mixw_val = (int)v;
			mixw = true;
			break;
		case OPT_BS:
			r = tool_opt_size("--bs", optarg, PERF_MAX_BS, &o->bs, err, errlen);
			if (!r && o->bs % 512)
				r = tool_fail(err, errlen, "--bs %s: must be a multiple of 512 bytes (an LBA)", optarg);
			break;
		case OPT_IODEPTH:
			r = tool_opt_int("--iodepth", optarg, 1, PERF_MAX_IODEPTH, &v, err, errlen);
			o->iodepth = (int)v;
			break;
		case OPT_BATCH:
			r = tool_opt_int("--iodepth-batch", optarg, 0, PERF_MAX_IODEPTH, &v, err, errlen);
			o->iodepth_batch = (int)v;
			break;
		case OPT_CMIN:
			r = tool_opt_int("--iodepth-batch-complete-min", optarg, 0, PERF_MAX_IODEPTH, &v, err, errlen);
			o->complete_min = (int)v;
			break;
		case OPT_CMAX:
			r = tool_opt_int("--iodepth-batch-complete-max", optarg, 0, PERF_MAX_IODEPTH, &v, err, errlen);
			o->complete_max = (int)v; /* below complete_min: raised to it, as fio does */
			break;
		case OPT_NUMJOBS:
			r = tool_opt_int("--numjobs", optarg, 1, PERF_MAX_JOBS, &v, err, errlen);
			o->numjobs = (int)v;
			numjobs_given = true;
			break;
		case OPT_CPUS:
			cpus_text = optarg;
			r = tool_opt_cpus("--cpus", optarg, o->cpus, PERF_MAX_JOBS, &o->ncpus, err, errlen);
			break;
		case OPT_RUNTIME:
			r = opt_time("--runtime", optarg, false, &o->runtime_s, err, errlen);
			break;
		case OPT_RAMP:
			r = opt_time("--ramp-time", optarg, true, &o->ramp_s, err, errlen);
			break;
		case OPT_OFFSET:
			r = opt_size64("--offset", optarg, 0, &o->offset, err, errlen);
			if (!r && o->offset % 512)
				r = tool_fail(err, errlen, "--offset %s: must be a multiple of 512 bytes (an LBA)", optarg);
			break;
		case OPT_SIZE:
			r = opt_size64("--size", optarg, 512, &o->size, err, errlen);
			break;
		case OPT_VERIFY:
			if (!optarg || !strcmp(optarg, "1") || !strcmp(optarg, "crc32c") || !strcmp(optarg, "crc32c-intel"))
				o->verify = true;
			else if (!strcmp(optarg, "0") || !strcmp(optarg, "none"))
				o->verify = false;
			else
				r = tool_fail(err, errlen, "--verify=%s: the stamp's checksum is crc32c (or 0/none for off)",
					      optarg);
			break;
		case OPT_MODE: {
			char merr[256];

			if (bp_mode_parse(optarg, &o->mode, merr, sizeof(merr)) != 0 ||
			    bp_mode_check(&o->mode, merr, sizeof(merr)) != 0) {
				r = tool_fail(err, errlen, "--mode %s: %s", optarg, merr);
				break;
			}
			bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
			break;
		}
		case OPT_FORMAT: {
			static const char *const formats[] = { "table", "json", "csv", NULL };
			int f = tool_opt_choice("--format", optarg, formats, err, errlen);

			r = f < 0 ? f : 0;
			if (f >= 0)
				o->format = (enum perf_format)f;
			break;
		}
		case OPT_INTERVAL:
			r = opt_time("--interval", optarg, true, &o->interval_s, err, errlen);
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_SWEEP:
			r = opt_sweep(optarg, o, err, errlen);
			break;
		case OPT_SPAWN:
			o->spawn = true;
			r = opt_text("--spawn-target", optarg, o->spawn_args, sizeof(o->spawn_args), err, errlen);
			break;
		case OPT_CONFIG:
			if (o->nconfigs == PERF_MAX_CONFIGS) {
				r = tool_fail(err, errlen, "--target-config: at most %d of them", PERF_MAX_CONFIGS);
				break;
			}
			r = opt_text("--target-config", optarg, o->configs[o->nconfigs], sizeof(o->configs[0]), err,
				     errlen);
			o->nconfigs += !r;
			break;
		case OPT_TIME_BASED:
			break; /* every run is */
		case OPT_DIRECT:
			if (strcmp(optarg, "1"))
				r = tool_fail(err, errlen, "--direct %s: a userspace initiator has no page cache: only 1",
					      optarg);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			tool_bad_option_name(argc, argv, long_opts, name, sizeof(name));
			return tool_fail(err, errlen, "%s needs a value", name);
		case '?':
		default:
			return tool_option_refused("perf", argc, argv, long_opts, err, errlen);
		}
		if (r)
			return r;
	}
	if (optind < argc)
		return tool_fail(err, errlen, "unexpected argument '%s'; see busypoll perf --help", argv[optind]);

	if (!o->target[0])
		return tool_fail(err, errlen, "--target ADDR:PORT is required (the NVMe/TCP target)");
	if (!o->nqn[0])
		return tool_fail(err, errlen, "--nqn NQN is required (the target's subsystem)");
	if (mixw) {
		if (mixr && o->rwmixread + mixw_val != 100)
			return tool_fail(err, errlen, "--rwmixread %d and --rwmixwrite %d do not add up to 100",
					 o->rwmixread, mixw_val);
		o->rwmixread = 100 - mixw_val;
		mixr = true;
	}
	if (mixr && o->rw != PERF_RW_RANDRW)
		return tool_fail(err, errlen, "--rwmix%s applies to --rw randrw only (this is --rw %s)",
				 mixw ? "write" : "read", perf_rw_name(o->rw));
	if (o->sweep && numjobs_given)
		return tool_fail(err, errlen, "--numjobs and --sweep numjobs=A..B are exclusive: the sweep sets it");
	if (o->nconfigs && !o->spawn)
		return tool_fail(err, errlen,
				 "--target-config needs --spawn-target: perf can only reconfigure a target it starts");
	if (o->sweep)
		o->numjobs = o->sweep_hi;
	if (o->ncpus > o->numjobs)
		return tool_fail(err, errlen, "--cpus %s: %d CPUs for %d job%s (one CPU per job)", cpus_text, o->ncpus,
				 o->numjobs, o->numjobs == 1 ? "" : "s");
	if (o->size && o->size < o->bs)
		return tool_fail(err, errlen, "--size %" PRIu64 " is smaller than --bs %u", o->size, o->bs);
	perf_opts_resolve(o);
	return 0;
}
