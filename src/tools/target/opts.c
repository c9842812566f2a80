/* SPDX-License-Identifier: MIT */
/*
 * busypoll target: option parsing (contract in tools/target.h). Every error is
 * one line naming the option as typed; the command exits 2 on any of them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/target/target.h"

#define MAX_PRIORITY 15
#define MAX_POLL_US 10000000u

enum {
	OPT_LISTEN = 256, OPT_NQN, OPT_NS, OPT_ALLOW, OPT_THREADS, OPT_CPUS, OPT_MODE, OPT_POLL, OPT_PRIO,
	OPT_MAXQ, OPT_DEPTH, OPT_MAXCONNS, OPT_MAXXFER, OPT_INLINE, OPT_LOG, OPT_CONNTMO, OPT_IODEPTH,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "nqn", required_argument, NULL, OPT_NQN },
	{ "ns", required_argument, NULL, OPT_NS },
	{ "allow-host", required_argument, NULL, OPT_ALLOW },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "poll-period-us", required_argument, NULL, OPT_POLL },
	{ "so-priority", required_argument, NULL, OPT_PRIO },
	{ "max-queues", required_argument, NULL, OPT_MAXQ },
	{ "queue-depth", required_argument, NULL, OPT_DEPTH },
	{ "max-conns", required_argument, NULL, OPT_MAXCONNS },
	{ "max-transfer", required_argument, NULL, OPT_MAXXFER },
	{ "inline-data", required_argument, NULL, OPT_INLINE },
	{ "log-level", required_argument, NULL, OPT_LOG },
	{ "connect-timeout-ms", required_argument, NULL, OPT_CONNTMO },
	{ "io-depth", required_argument, NULL, OPT_IODEPTH },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll target --ns ram:SIZE|file:PATH[,options] [options]\n"
		"\n"
		"An NVMe/TCP target (like the kernel's nvmet-tcp) on the busypoll engine, with\n"
		"nvmet's poll mode: a queue that did work keeps polling until a whole period\n"
		"passes with none. The Linux host (nvme connect) and nvme-cli work against it.\n"
		"\n"
		"  --listen ADDR:PORT       where to listen (default 127.0.0.1:4420; any other\n"
		"                           address is reachable from elsewhere: your choice)\n"
		"  --nqn NQN                subsystem NQN (default nqn.2024-01.io.busypoll:target)\n"
		"  --ns SPEC                a namespace, repeatable (nsid 1, 2, ... in order):\n"
		"                             ram:SIZE[,bs=N]                 e.g. ram:64M\n"
		"                             file:PATH[,size=SIZE][,bs=N][,buffered][,ro]\n"
		"                             a regular file or a block device, O_DIRECT with\n"
		"                             asynchronous I/O (buffered: the page cache); size=\n"
		"                             creates or grows a file; bs= 512..4096 (default: what\n"
		"                             the device needs); ro: read-only (also when it is not\n"
		"                             writable); Flush = fdatasync\n"
		"  --io-depth N             storage I/Os in flight per namespace per thread,\n"
		"                           1..%u (default 128); more wait in order\n"
		"  --allow-host HOSTNQN     only these hosts may connect (repeatable; default any)\n"
		"  --threads N              loop threads, 1..%d (default 1); queues are placed\n"
		"                           on them by NAPI id\n"
		"  --cpus LIST              thread i on the i-th CPU of LIST (e.g. 0,2-3)\n"
		"  --mode MODE              engine wait mode (default epoll:block; busypoll modes)\n"
		"  --poll-period-us N       poll mode: keep a queue polling until N us pass with no\n"
		"                           operation (0 = off, the default)\n"
		"  --so-priority N          SO_PRIORITY 0..%d on every accepted socket (7+:\n"
		"                           CAP_NET_ADMIN)\n"
		"  --max-queues N           I/O queues per controller, 1..1024 (default 64)\n"
		"  --queue-depth N          entries per I/O queue, 32..1024 (default 128)\n"
		"  --max-conns N            TCP connections at once (default 1024)\n"
		"  --connect-timeout-ms N   close a connection that has not sent its ICReq and\n"
		"                           Connect within N ms (default 10000; 0 = never)\n"
		"  --max-transfer SIZE      bytes per command (MDTS), 4K..32M power of two (default 1M)\n"
		"  --inline-data SIZE       in-capsule write bytes on I/O queues, 4K..64K (default 8K)\n"
		"  --log-level LEVEL        error, warn, info (default) or debug\n"
		"  -h, --help               this text\n"
		"\n"
		"Per-queue and storage counters go to stdout on SIGUSR1 and at exit (SIGINT/SIGTERM).\n",
		BP_AIO_MAX_DEPTH, BP_NVMET_MAX_THREADS, MAX_PRIORITY);
}

static int opt_uint(const char *name, const char *s, uint64_t lo, uint64_t hi, uint64_t *out, char *err,
		    size_t errlen)
{
	char *end;
	uint64_t v;

	if (*s < '0' || *s > '9')
		return fail(err, errlen, "%s %s: not a whole number", name, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return fail(err, errlen, "%s %s: not a whole number", name, s);
	if (errno || v < lo || v > hi)
		return fail(err, errlen, "%s %s: must be between %llu and %llu", name, s, (unsigned long long)lo,
			    (unsigned long long)hi);
	*out = v;
	return 0;
}

static int opt_size(const char *name, const char *s, uint64_t lo, uint64_t hi, uint32_t *out, char *err,
		    size_t errlen)
{
	uint64_t v;

	if (bp_nvmet_parse_size(s, &v))
		return fail(err, errlen, "%s %s: not a size (like 8K or 1M)", name, s);
	if (v < lo || v > hi)
		return fail(err, errlen, "%s %s: must be between %llu and %llu bytes", name, s,
			    (unsigned long long)lo, (unsigned long long)hi);
	*out = (uint32_t)v;
	return 0;
}

static int opt_nqn(const char *name, const char *s, char *dst, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (!n || n > 223)
		return fail(err, errlen, "%s '%s': an NQN is 1 to 223 bytes", name, s);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(err, errlen, "%s: control characters in the NQN", name);
	memcpy(dst, s, n + 1);
	return 0;
}

int target_parse_opts(int argc, char **argv, struct target_opts *o, char *err, size_t errlen)
{
	struct bp_nvmet_cfg *cfg = &o->cfg;
	uint64_t v;
	int c, r;

	memset(o, 0, sizeof(*o));
	bp_nvmet_cfg_defaults(cfg);
	snprintf(o->listen_text, sizeof(o->listen_text), "127.0.0.1:%d", BP_NVMET_DEFAULT_PORT);
	bp_mode_format(&cfg->mode, o->mode_text, sizeof(o->mode_text));
	err[0] = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", long_opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case OPT_LISTEN:
			if (!*optarg || *optarg == '-') {
				r = fail(err, errlen, "--listen needs ADDR:PORT (got '%s')", optarg);
				break;
			}
			r = bp_parse_addr(optarg, BP_NVMET_DEFAULT_PORT, &cfg->listen, &cfg->listen_len);
			if (r)
				r = fail(err, errlen, "--listen %s: %s", optarg,
					 r == -ENOENT ? "no such host" : "not an address (ADDR:PORT, [V6]:PORT)");
			snprintf(o->listen_text, sizeof(o->listen_text), "%s", optarg);
			o->listen_given = true;
			break;
		case OPT_NQN:
			r = opt_nqn("--nqn", optarg, cfg->nqn, err, errlen);
			if (!r && !strcmp(cfg->nqn, BP_NVME_DISC_NQN))
				r = fail(err, errlen, "--nqn %s: that is the discovery subsystem's name", optarg);
			break;
		case OPT_NS: {
			char nerr[256];

			if (cfg->n_ns == BP_NVMET_MAX_NS) {
				r = fail(err, errlen, "--ns %s: at most %d namespaces", optarg, BP_NVMET_MAX_NS);
				break;
			}
			r = bp_nvmet_ns_parse(optarg, &cfg->ns[cfg->n_ns], nerr, sizeof(nerr));
			if (r)
				r = fail(err, errlen, "%s", nerr);
			else
				cfg->n_ns++;
			break;
		}
		case OPT_ALLOW:
			if (cfg->n_allow == BP_NVMET_MAX_HOSTS) {
				r = fail(err, errlen, "--allow-host: at most %d hosts", BP_NVMET_MAX_HOSTS);
				break;
			}
			r = opt_nqn("--allow-host", optarg, cfg->allow_hosts[cfg->n_allow], err, errlen);
			if (!r)
				cfg->n_allow++;
			break;
		case OPT_THREADS:
			r = opt_uint("--threads", optarg, 1, BP_NVMET_MAX_THREADS, &v, err, errlen);
			cfg->threads = (int)v;
			break;
		case OPT_CPUS: {
			long ncpu = sysconf(_SC_NPROCESSORS_CONF);
			int n = bp_parse_cpu_list(optarg, cfg->cpus, BP_NVMET_MAX_THREADS);

			if (n <= 0) {
				r = fail(err, errlen, "--cpus %s: not a CPU list (like 0,2-3)", optarg);
				break;
			}
			for (int i = 0; i < n && !r; i++)
				if (cfg->cpus[i] < 0 || (ncpu > 0 && cfg->cpus[i] >= ncpu))
					r = fail(err, errlen, "--cpus %s: CPU %d does not exist (this machine has 0-%ld)",
						 optarg, cfg->cpus[i], ncpu - 1);
			cfg->ncpus = n;
			break;
		}
		case OPT_MODE: {
			char merr[256];

			if (bp_mode_parse(optarg, &cfg->mode, merr, sizeof(merr)) ||
			    bp_mode_check(&cfg->mode, merr, sizeof(merr))) {
				r = fail(err, errlen, "--mode %s: %s", optarg, merr);
				break;
			}
			bp_mode_format(&cfg->mode, o->mode_text, sizeof(o->mode_text));
			break;
		}
		case OPT_POLL:
			r = opt_uint("--poll-period-us", optarg, 0, MAX_POLL_US, &v, err, errlen);
			cfg->poll_period_us = (uint32_t)v;
			break;
		case OPT_PRIO:
			r = opt_uint("--so-priority", optarg, 0, MAX_PRIORITY, &v, err, errlen);
			if (!r && v >= 7 && !bp_have_cap(12))
				r = fail(err, errlen, "--so-priority %s: 7 and above need CAP_NET_ADMIN", optarg);
			cfg->so_priority = (int)v;
			break;
		case OPT_MAXQ:
			r = opt_uint("--max-queues", optarg, 1, 1024, &v, err, errlen);
			cfg->max_queues = (uint32_t)v;
			break;
		case OPT_DEPTH:
			r = opt_uint("--queue-depth", optarg, 32, 1024, &v, err, errlen);
			cfg->queue_depth = (uint32_t)v;
			break;
		case OPT_MAXCONNS:
			r = opt_uint("--max-conns", optarg, 1, 1000000, &v, err, errlen);
			cfg->max_conns = (uint32_t)v;
			break;
		case OPT_MAXXFER:
			r = opt_size("--max-transfer", optarg, 4096, 32u << 20, &cfg->max_transfer, err, errlen);
			if (!r && (cfg->max_transfer & (cfg->max_transfer - 1)))
				r = fail(err, errlen, "--max-transfer %s: must be a power of two", optarg);
			break;
		case OPT_INLINE:
			r = opt_size("--inline-data", optarg, 4096, 65536, &cfg->inline_data, err, errlen);
			if (!r && cfg->inline_data % 16)
				r = fail(err, errlen, "--inline-data %s: must be a multiple of 16", optarg);
			break;
		case OPT_IODEPTH:
			r = opt_uint("--io-depth", optarg, 1, BP_AIO_MAX_DEPTH, &v, err, errlen);
			cfg->io_depth = (uint32_t)v;
			break;
		case OPT_CONNTMO:
			r = opt_uint("--connect-timeout-ms", optarg, 0, 3600000, &v, err, errlen);
			cfg->connect_timeout_ms = (uint32_t)v;
			break;
		case OPT_LOG:
			if (!strcmp(optarg, "error"))
				cfg->log_level = BP_NVMET_LOG_ERROR;
			else if (!strcmp(optarg, "warn") || !strcmp(optarg, "warning"))
				cfg->log_level = BP_NVMET_LOG_WARN;
			else if (!strcmp(optarg, "info"))
				cfg->log_level = BP_NVMET_LOG_INFO;
			else if (!strcmp(optarg, "debug"))
				cfg->log_level = BP_NVMET_LOG_DEBUG;
			else
				r = fail(err, errlen, "--log-level %s: error, warn, info or debug", optarg);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			return fail(err, errlen, "%s needs a value", argv[optind - 1]);
		default:
			return fail(err, errlen, "unknown option '%s'; see busypoll target --help",
				    optind > 0 && optind <= argc ? argv[optind - 1] : "?");
		}
		if (r)
			return r;
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s'; see busypoll target --help", argv[optind]);
	if (!cfg->n_ns)
		return fail(err, errlen, "no namespace: give at least one --ns (e.g. --ns ram:64M)");
	return 0;
}
