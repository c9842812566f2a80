/* SPDX-License-Identifier: MIT */
/*
 * busypoll target: its option table (contract in tools/target/target.h). Every
 * error is one line naming the option as typed, from the shared parser; the
 * command exits 2 on any of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>

#include "tools/common/values.h"
#include "tools/target/target.h"

#define MAX_PRIORITY 15
#define MAX_POLL_US 10000000u
#define CAP_NET_ADMIN_BIT 12

#define STR_(x) #x
#define STR(x) STR_(x)

/* parse_listen - ADDR:PORT or [V6]:PORT (port default 4420). */
static int parse_listen(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	struct target_opts *o = base;
	int r;

	if (!*v || *v == '-')
		return tool_fail(err, errlen, "%s needs ADDR:PORT (got '%s')", name, v);
	if (tool_opt_hostport(name, v, err, errlen))
		return -EINVAL;
	r = bp_parse_addr(v, BP_NVMET_DEFAULT_PORT, &o->cfg.listen, &o->cfg.listen_len);
	if (r)
		return tool_fail(err, errlen, "%s %s: %s", name, v,
				 r == -ENOENT ? "no such host" : "not an address (ADDR:PORT, [V6]:PORT)");
	snprintf(o->listen_text, sizeof(o->listen_text), "%s", v);
	o->listen_given = true;
	return 0;
}

/* nqn_copy - 1..223 bytes, no control characters. */
static int nqn_copy(const char *name, const char *s, char *dst, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (!n || n > 223)
		return tool_fail(err, errlen, "%s '%s': an NQN is 1 to 223 bytes", name, s);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return tool_fail(err, errlen, "%s: control characters in the NQN", name);
	memcpy(dst, s, n + 1);
	return 0;
}

static int parse_nqn(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		     size_t errlen)
{
	struct target_opts *o = base;
	int r = nqn_copy(name, v, o->cfg.nqn, err, errlen);

	if (!r && !strcmp(o->cfg.nqn, BP_NVME_DISC_NQN))
		r = tool_fail(err, errlen, "%s %s: that is the discovery subsystem's name", name, v);
	return r;
}

static int parse_allow(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	struct bp_nvmet_cfg *cfg = &((struct target_opts *)base)->cfg;
	int r;

	if (cfg->n_allow == BP_NVMET_MAX_HOSTS)
		return tool_fail(err, errlen, "%s: at most %d hosts", name, BP_NVMET_MAX_HOSTS);
	r = nqn_copy(name, v, cfg->allow_hosts[cfg->n_allow], err, errlen);
	for (int i = 0; !r && i < cfg->n_allow; i++)
		if (!strcmp(cfg->allow_hosts[i], v))
			r = tool_fail(err, errlen, "%s %s: that host is allowed already (given twice)", name, v);
	if (!r)
		cfg->n_allow++;
	return r;
}

static int parse_ns(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		    size_t errlen)
{
	struct bp_nvmet_cfg *cfg = &((struct target_opts *)base)->cfg;
	char nerr[256];

	if (cfg->n_ns == BP_NVMET_MAX_NS)
		return tool_fail(err, errlen, "%s %s: at most %d namespaces", name, v, BP_NVMET_MAX_NS);
	if (tool_check_list(name, v, ',', err, errlen))
		return -EINVAL;
	if (bp_nvmet_ns_parse(v, &cfg->ns[cfg->n_ns], nerr, sizeof(nerr)))
		return tool_fail(err, errlen, "%s", nerr);
	cfg->n_ns++;
	return 0;
}

/* parse_bytes - --max-transfer (a power of two, 4K..32M) and --inline-data (a multiple of 16, 4K..64K). */
static int parse_bytes(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	uint32_t *out = (uint32_t *)((char *)base + sp->off);
	uint64_t b;

	if (bp_nvmet_parse_size(v, &b))
		return tool_fail(err, errlen, "%s %s: not a size (like 8K or 1M)", name, v);
	if (b < (uint64_t)sp->lo || b > (uint64_t)sp->hi)
		return tool_fail(err, errlen, "%s %s: must be between %lld and %lld bytes", name, v, sp->lo, sp->hi);
	*out = (uint32_t)b;
	if (!strcmp(sp->name, "max-transfer") && (b & (b - 1)))
		return tool_fail(err, errlen, "%s %s: must be a power of two", name, v);
	if (!strcmp(sp->name, "inline-data") && b % 16)
		return tool_fail(err, errlen, "%s %s: must be a multiple of 16", name, v);
	return 0;
}

static int parse_log(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		     size_t errlen)
{
	struct bp_nvmet_cfg *cfg = &((struct target_opts *)base)->cfg;

	if (!strcmp(v, "error"))
		cfg->log_level = BP_NVMET_LOG_ERROR;
	else if (!strcmp(v, "warn") || !strcmp(v, "warning"))
		cfg->log_level = BP_NVMET_LOG_WARN;
	else if (!strcmp(v, "info"))
		cfg->log_level = BP_NVMET_LOG_INFO;
	else if (!strcmp(v, "debug"))
		cfg->log_level = BP_NVMET_LOG_DEBUG;
	else
		return tool_fail(err, errlen, "%s %s: error, warn, info or debug", name, v);
	return 0;
}

#define TF(m) OPT_FIELD(struct target_opts, m)

static const struct opt_spec target_specs[] = {
	{ .name = "listen", .kind = OPT_CUSTOM, .parse = parse_listen, .arg = "ADDR:PORT",
	  .help = "where to listen (default 127.0.0.1:4420; any other\naddress is reachable from elsewhere: your choice)" },
	{ .name = "nqn", .kind = OPT_CUSTOM, .parse = parse_nqn, .arg = "NQN",
	  .help = "subsystem NQN (default nqn.2024-01.io.busypoll:target)" },
	{ .name = "ns", .kind = OPT_CUSTOM, .flags = OPT_F_REPEAT, .parse = parse_ns, .arg = "SPEC",
	  .help = "a namespace, repeatable (nsid 1, 2, ... in order):\n  ram:SIZE[,bs=N]        e.g. ram:64M\n"
		  "  file:PATH[,size=SIZE][,bs=N][,buffered][,ro]\n"
		  "  a regular file or a block device, O_DIRECT with\n  asynchronous I/O (buffered: the page cache); size=\n"
		  "  creates or grows a file; bs= 512..4096 (default: what\n  the device needs); ro: read-only (also when it is not\n"
		  "  writable); Flush = fdatasync" },
	{ .name = "io-depth", .kind = OPT_INT, TF(cfg.io_depth), .lo = 1, .hi = BP_AIO_MAX_DEPTH, .arg = "N",
	  .help = "storage I/Os in flight per namespace per thread,\n1..4096; more wait in order", .dflt = OPT_DFLT_FIELD },
	{ .name = "allow-host", .kind = OPT_CUSTOM, .flags = OPT_F_REPEAT, .parse = parse_allow, .arg = "HOSTNQN",
	  .help = "only these hosts may connect (repeatable; default any)" },
	{ .name = "threads", .kind = OPT_INT, TF(cfg.threads), .lo = 1, .hi = BP_NVMET_MAX_THREADS, .arg = "N",
	  .help = "loop threads, 1.." STR(BP_NVMET_MAX_THREADS) "; queues are placed on them by NAPI id",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct target_opts, cfg.cpus, cfg.ncpus), .arg = "LIST",
	  .help = "thread i on the i-th CPU of LIST (e.g. 0,2-3)" },
	{ .name = "mode", .kind = OPT_MODE, OPT_MODE_FIELD(struct target_opts, cfg.mode, mode_text), .arg = "MODE",
	  .help = "engine wait mode (see `busypoll modes`)", .dflt = OPT_DFLT_FIELD },
	{ .name = "poll-period-us", .kind = OPT_INT, TF(cfg.poll_period_us), .lo = 0, .hi = MAX_POLL_US, .arg = "N",
	  .help = "poll mode: keep a queue polling until N us pass with no\noperation (0 = off, the default)" },
	{ .name = "priority", .kind = OPT_INT, TF(cfg.so_priority), .lo = 0, .hi = MAX_PRIORITY, .arg = "N",
	  .help = "SO_PRIORITY 0.." STR(MAX_PRIORITY) " on every accepted socket (7+: CAP_NET_ADMIN)" },
	/* the name every other command uses is --priority; this was the target's */
	{ .name = "so-priority", .kind = OPT_INT, .flags = OPT_F_HIDDEN, TF(cfg.so_priority), .lo = 0,
	  .hi = MAX_PRIORITY, .alias_of = "priority" },
	{ .name = "max-queues", .kind = OPT_INT, TF(cfg.max_queues), .lo = 1, .hi = 1024, .arg = "N",
	  .help = "I/O queues per controller, 1..1024", .dflt = OPT_DFLT_FIELD },
	{ .name = "queue-depth", .kind = OPT_INT, TF(cfg.queue_depth), .lo = 32, .hi = 1024, .arg = "N",
	  .help = "entries per I/O queue, 32..1024", .dflt = OPT_DFLT_FIELD },
	{ .name = "max-conns", .kind = OPT_INT, TF(cfg.max_conns), .lo = 1, .hi = 1000000, .arg = "N",
	  .help = "TCP connections at once", .dflt = OPT_DFLT_FIELD },
	{ .name = "connect-timeout-ms", .kind = OPT_INT, TF(cfg.connect_timeout_ms), .lo = 0, .hi = 3600000,
	  .arg = "N", .help = "close a connection that has not sent its ICReq and\nConnect within N ms (0 = never)",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "max-transfer", .kind = OPT_CUSTOM, TF(cfg.max_transfer), .lo = 4096, .hi = 32u << 20,
	  .parse = parse_bytes, .arg = "SIZE", .help = "bytes per command (MDTS), 4K..32M power of two (default 1M)" },
	{ .name = "inline-data", .kind = OPT_CUSTOM, TF(cfg.inline_data), .lo = 4096, .hi = 65536,
	  .parse = parse_bytes, .arg = "SIZE", .help = "in-capsule write bytes on I/O queues, 4K..64K (default 8K)" },
	{ .name = "log-level", .kind = OPT_CUSTOM, .parse = parse_log, .arg = "LEVEL",
	  .help = "error, warn, info (default) or debug" },
	{ .name = "ram-beyond-memory", .kind = OPT_FLAG, TF(ram_beyond_memory),
	  .help = "ram namespaces may add up to more than this machine's\nmemory (pages are allocated on first write)" },
	{ .name = "file-beyond-space", .kind = OPT_FLAG, TF(file_beyond_space),
	  .help = "a file namespace's size= may be more than its file\nsystem's free space (blocks are taken on first write)" },
	/* how busypoll perf --spawn-target talks to the target it starts (tools/harness/control.h) */
	{ .name = "control-fd", .kind = OPT_INT, .flags = OPT_F_HIDDEN, TF(control_fd), .lo = 3, .hi = 65535 },
};

/*
 * check_space - a file that size= grows (or creates) fits its file system's free
 * space (statvfs f_bavail): the growth is sparse, so a size beyond it would start
 * and then fail writes mid-run with ENOSPC. Counted against what the file has not
 * allocated yet. 0, or -EINVAL naming the sizes and --file-beyond-space.
 */
static int check_space(const struct bp_nvmet_ns_spec *ns, const struct stat *st, bool exists, char *err,
		       size_t errlen)
{
	char dir[sizeof(ns->path)], *slash;
	struct statvfs vfs;
	uint64_t have = exists ? (uint64_t)st->st_blocks * 512 : 0, free_bytes;

	if (!ns->size || ns->read_only || (exists && (!S_ISREG(st->st_mode) || (uint64_t)st->st_size >= ns->size)))
		return 0;
	/* a file to be created: its directory's file system */
	snprintf(dir, sizeof(dir), "%s", ns->path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = 0; /* "/f" is in "/" */
	if (statvfs(exists ? ns->path : dir, &vfs) < 0)
		return 0; /* the open says why, in its own words */
	free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (ns->size - have <= free_bytes)
		return 0;
	return tool_fail(err, errlen, "--ns file:%s,size=%llu: needs %llu MiB more, and its file system has %llu MiB free; "
			 "give a smaller size=, or --file-beyond-space if you mean it (blocks are taken on first write)",
			 ns->path, (unsigned long long)ns->size, (unsigned long long)((ns->size - have) >> 20),
			 (unsigned long long)(free_bytes >> 20));
}

/*
 * check_files - what the file namespaces will be, looked at (not opened) before any
 * work: one file once, a size the blocks divide (the library would round a
 * 1000-byte file down to one block, silently), and a size= its file system has the
 * space for (unless beyond_space says it is meant).
 */
static int check_files(const struct bp_nvmet_cfg *cfg, bool beyond_space, char *err, size_t errlen)
{
	for (int i = 0; i < cfg->n_ns; i++) {
		const struct bp_nvmet_ns_spec *ns = &cfg->ns[i];
		struct stat st;
		bool exists;

		/* the block size is the device's when not given: at least 512, known once it is opened */
		uint32_t bs = ns->block_size ? ns->block_size : 512;

		if (ns->kind != BP_NVMET_NS_FILE)
			continue;
		exists = stat(ns->path, &st) == 0;
		for (int j = 0; j < i; j++) {
			struct stat other;

			if (cfg->ns[j].kind != BP_NVMET_NS_FILE)
				continue;
			if (!strcmp(cfg->ns[j].path, ns->path) ||
			    (exists && stat(cfg->ns[j].path, &other) == 0 && other.st_dev == st.st_dev &&
			     other.st_ino == st.st_ino))
				return tool_fail(err, errlen, "--ns file:%s: given twice (nsid %d and %d): a file is one namespace",
						 ns->path, j + 1, i + 1);
		}
		if (ns->size % bs)
			return tool_fail(err, errlen, "--ns file:%s,size=%llu: not a whole number of %u-byte blocks", ns->path,
					 (unsigned long long)ns->size, bs);
		if (exists && S_ISREG(st.st_mode) && !ns->size && (uint64_t)st.st_size % bs)
			return tool_fail(err, errlen,
					 "--ns file:%s: its %llu bytes are not a whole number of %u-byte blocks (the last %llu "
					 "could not be reached); give size= a multiple of %u", ns->path,
					 (unsigned long long)st.st_size, bs, (unsigned long long)st.st_size % bs, bs);
		if (!beyond_space && check_space(ns, &st, exists, err, errlen))
			return -EINVAL;
	}
	return 0;
}

/*
 * check_ram - the ram namespaces together fit in this machine's memory
 * (sysinfo's totalram): more would be written until the OOM killer ends the
 * target mid-run. 0, or -EINVAL naming the sizes and --ram-beyond-memory.
 */
static int check_ram(const struct bp_nvmet_cfg *cfg, char *err, size_t errlen)
{
	struct sysinfo si;
	uint64_t sum = 0, mem;

	for (int i = 0; i < cfg->n_ns; i++)
		if (cfg->ns[i].kind == BP_NVMET_NS_RAM)
			sum += cfg->ns[i].size;
	if (!sum || sysinfo(&si) < 0)
		return 0;
	mem = (uint64_t)si.totalram * si.mem_unit;
	if (sum <= mem)
		return 0;
	return tool_fail(err, errlen, "--ns ram: %llu MiB of ram namespaces, more than this machine's %llu MiB of "
			 "memory; give smaller ones, or --ram-beyond-memory if you mean it (pages are taken on "
			 "first write)", (unsigned long long)(sum >> 20), (unsigned long long)(mem >> 20));
}

static int target_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct target_opts *o = base;

	if (o->cfg.so_priority >= 7 && !bp_have_cap(CAP_NET_ADMIN_BIT))
		return tool_fail(err, errlen, "--priority %d: 7 and above need CAP_NET_ADMIN (run it as root)",
				 o->cfg.so_priority);
	if (o->quiet && o->cfg.log_level > BP_NVMET_LOG_ERROR && !opt_given(seen, "log-level"))
		o->cfg.log_level = BP_NVMET_LOG_ERROR; /* -q: errors only */
	if (!o->cfg.n_ns)
		return tool_fail(err, errlen, "no namespace: give at least one --ns (e.g. --ns ram:64M)");
	if (!o->ram_beyond_memory && check_ram(&o->cfg, err, errlen))
		return -EINVAL;
	return check_files(&o->cfg, o->file_beyond_space, err, errlen);
}

static const struct opt_table target_table = OPT_TABLE(target_specs, target_check);

static const struct opt_cmd target_cmd = {
	.name = "target",
	.usage = "usage: busypoll target --ns ram:SIZE|file:PATH[,options] [options]\n"
		 "\n"
		 "An NVMe/TCP target (like the kernel's nvmet-tcp) on the busypoll engine, with\n"
		 "nvmet's poll mode: a queue that did work keeps polling until a whole period\n"
		 "passes with none. The Linux host (nvme connect) and nvme-cli work against it.\n\n",
	.epilog = "\nStorage and per-queue counters go to stdout (in --format) on SIGUSR1 and at exit (SIGINT,\n"
		  "SIGTERM, SIGHUP).\n"
		  "\nExit status: 0 stopped by a signal, 1 the target failed, 2 bad input (an\n"
		  "option, a namespace that cannot be used, an address it cannot listen on).\n",
};

int target_parse_opts(int argc, char **argv, struct target_opts *o, char *err, size_t errlen)
{
	const struct opt_layer layers[] = { { &tool_common_table, &o->common }, { &target_table, o } };

	memset(o, 0, sizeof(*o));
	o->control_fd = -1;
	bp_nvmet_cfg_defaults(&o->cfg);
	snprintf(o->listen_text, sizeof(o->listen_text), "127.0.0.1:%d", BP_NVMET_DEFAULT_PORT);
	bp_mode_format(&o->cfg.mode, o->mode_text, sizeof(o->mode_text));
	return opt_parse(&target_cmd, layers, 2, argc, argv, NULL, err, errlen);
}
