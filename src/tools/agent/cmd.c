/* SPDX-License-Identifier: MIT */
/*
 * busypoll agent --stdio | --listen ADDR:PORT --key-file FILE   [--cpus LIST] [--state-dir DIR]
 * busypoll agent --new-key FILE | --restore | --path DEV [--format table|json|csv]
 *
 * The remote host's side of a two-host run (agent.h); its options are the shared
 * table's (tools/common/opt.h: -q, --format, --help, --version as everywhere).
 * Before it serves anything it
 * plays back the journals of an agent that died here (SIGKILL, a crash), so a
 * host is never left with a previous session's settings.
 *
 * Exit: 0; 1 when the run fails (cannot listen, a setting not restored); 2 for bad
 * input found before any work (options, a key file refused), like every busypoll
 * subcommand.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <busypoll/loop.h>
#include <busypoll/nic.h>
#include <busypoll/nvme/target.h>

#include "tools/agent/agent.h"
#include "tools/agent/journal.h"
#include "tools/agent/limits.h"
#include "tools/agent/servers.h"
#include "tools/common/commands.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/opt.h"
#include "tools/common/values.h"
#include "tools/harness/devfeat.h"

#define SUB "agent"

volatile sig_atomic_t agent_stop;
bool agent_quiet;

enum agent_action { ACT_NONE, ACT_STDIO, ACT_LISTEN, ACT_NEW_KEY, ACT_RESTORE, ACT_PATH };

struct agent_cli {
	TOOL_COMMON;                    /* -q: refusals and failures only; --format: for --path */
	bool stdio, restore;
	char listen[128];
	char key_file[1024];
	char new_key[1024];
	char path_dev[IFNAMSIZ];
	char state_dir[1024];
	struct agent_cfg cfg;
	enum agent_action act;
};

/* --listen ADDR:PORT: an address with a port, as every busypoll listener takes it. */
static int parse_listen(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	struct agent_cli *c = base;

	if (!strchr(v, ':') || strlen(v) >= sizeof(c->listen))
		return tool_fail(err, errlen, "%s %s: give ADDR:PORT (e.g. 0.0.0.0:7100)", name, v);
	if (tool_opt_hostport(name, v, err, errlen))
		return -EINVAL;
	snprintf(c->listen, sizeof(c->listen), "%s", v);
	return 0;
}

/* --path DEV: a device name of this host. */
static int parse_path(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct agent_cli *c = base;

	if (!*v || strlen(v) >= IFNAMSIZ || strchr(v, '/'))
		return tool_fail(err, errlen, "%s '%s' is not a device name", name, v);
	snprintf(c->path_dev, sizeof(c->path_dev), "%s", v);
	return 0;
}

/* --max-startups START:RATE:FULL: OpenSSH's MaxStartups, 1 <= START <= FULL, RATE a percentage. */
static int parse_startups(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			  size_t errlen)
{
	struct agent_cli *c = base;
	int start, rate, full, end = 0;

	if (sscanf(v, "%d:%d:%d%n", &start, &rate, &full, &end) != 3 || v[end] || start < 1 ||
	    full < start || full > 1000000 || rate < 0 || rate > 100)
		return tool_fail(err, errlen, "%s %s: give START:RATE:FULL, 1 <= START <= FULL <= 1000000 "
				 "and RATE 0-100 (e.g. 100:30:1000)", name, v);
	c->cfg.startups_start = start;
	c->cfg.startups_rate = rate;
	c->cfg.startups_full = full;
	return 0;
}

/* --max-target-ram SIZE: bytes (K, M, G, T), at least 1M. */
static int parse_ram(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		     size_t errlen)
{
	struct agent_cli *c = base;
	uint64_t b;

	if (bp_nvmet_parse_size(v, &b) || b < (1u << 20))
		return tool_fail(err, errlen, "%s %s: give a size of at least 1M (like 512M or 4G)", name, v);
	c->cfg.max_target_ram = b;
	return 0;
}

/* --target-listen ADDR[,ADDR...]: where an agent-started target may listen. */
static int parse_tlisten(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			 size_t errlen)
{
	return limits_parse_listen(&((struct agent_cli *)base)->cfg, name, v, err, errlen);
}

#define AF(m) OPT_FIELD(struct agent_cli, m)

static const struct opt_spec agent_specs[] = {
	{ .name = "stdio", .kind = OPT_FLAG, AF(stdio),
	  .help = "one session on stdin/stdout, as ssh starts it:\nssh HOST busypoll agent --stdio (ssh authenticates)" },
	{ .name = "listen", .kind = OPT_CUSTOM, .parse = parse_listen, .arg = "ADDR:PORT",
	  .help = "a standing agent on TCP; a client must prove it holds\nthe key before anything else (--key-file)" },
	{ .name = "key-file", .kind = OPT_TEXT, AF(key_file), .arg = "FILE",
	  .help = "the shared key (mode 0600, yours; see --new-key)" },
	{ .name = "new-key", .kind = OPT_TEXT, AF(new_key), .arg = "FILE",
	  .help = "write a new random key to FILE (never over a file)" },
	{ .name = "restore", .kind = OPT_FLAG, AF(restore),
	  .help = "put back what a killed agent changed, then exit" },
	{ .name = "path", .kind = OPT_CUSTOM, .parse = parse_path, .arg = "DEV",
	  .help = "the path report of DEV: driver, channels, coalescing,\nqueues, NAPIs, IRQs and their CPUs; then exit" },
	{ .name = "cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct agent_cli, cfg.cpus, cfg.ncpus), .arg = "LIST",
	  .help = "the CPUs the servers it starts may use (default any)" },
	{ .name = "max-servers", .kind = OPT_INT, AF(cfg.max_servers), .lo = 1, .hi = AGENT_MAX_SERVERS, .arg = "N",
	  .help = "servers running at once, all sessions together", .dflt = OPT_DFLT_FIELD },
	{ .name = "max-target-ram", .kind = OPT_CUSTOM, .parse = parse_ram, .arg = "SIZE",
	  .help = "RAM a target's namespaces may hold (default MemTotal/4,\nat most 4G)" },
	{ .name = "target-listen", .kind = OPT_CUSTOM, .parse = parse_tlisten, .arg = "ADDR[,ADDR]",
	  .help = "addresses a target may listen on besides loopback\n(default the address the client reached; 0.0.0.0\nonly when given)" },
	{ .name = "state-dir", .kind = OPT_TEXT, AF(state_dir), .arg = "DIR",
	  .help = "where journals are kept", .dflt = OPT_DFLT_FIELD },
	{ .name = "auth-timeout", .kind = OPT_SECONDS, AF(cfg.auth_timeout_s), .max_s = 3600, .arg = "S",
	  .help = "a connection's handshake, at most; then it is closed", .dflt = OPT_DFLT_FIELD },
	{ .name = "max-startups", .kind = OPT_CUSTOM, .parse = parse_startups, .arg = "START:RATE:FULL",
	  .help = "connections waiting to authenticate: from START a new one\nis refused (told busy) with RATE % "
		  "chance, rising to\nall at FULL; one in progress is never dropped", .dflt = "100:30:1000" },
	{ .name = "per-source", .kind = OPT_INT, AF(cfg.per_source), .lo = 1, .hi = 1000000, .arg = "N",
	  .help = "connections waiting to authenticate from one address\n(an IPv6 /64); one more is refused (busy)",
	  .dflt = OPT_DFLT_FIELD },
};

/* agent_check - one action, and the options that go with it. */
static int agent_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	static const char *const names[] = { "", "--stdio", "--listen", "--new-key", "--restore", "--path" };
	struct agent_cli *c = base;
	const bool given[] = { false, c->stdio, c->listen[0], c->new_key[0], c->restore, c->path_dev[0] };

	for (int a = ACT_STDIO; a <= ACT_PATH; a++) {
		if (!given[a])
			continue;
		if (c->act != ACT_NONE)
			return tool_fail(err, errlen, "%s and %s: give one of --stdio, --listen, --new-key, --restore, "
					 "--path", names[c->act], names[a]);
		c->act = (enum agent_action)a;
	}
	if (c->act == ACT_NONE)
		return tool_fail(err, errlen, "give one of --stdio, --listen, --new-key, --restore, --path "
				 "(busypoll agent --help)");
	if (c->act == ACT_LISTEN && !c->key_file[0])
		return tool_fail(err, errlen, "--listen needs --key-file FILE (busypoll agent --new-key FILE writes one)");
	if (c->act != ACT_LISTEN && opt_given(seen, "key-file"))
		return tool_fail(err, errlen, "--key-file goes with --listen");
	if (c->act != ACT_PATH && opt_given(seen, "format"))
		return tool_fail(err, errlen, "--format goes with --path");
	if ((opt_given(seen, "auth-timeout") || opt_given(seen, "max-startups") || opt_given(seen, "per-source")) &&
	    c->act != ACT_LISTEN)
		return tool_fail(err, errlen, "--auth-timeout, --max-startups and --per-source go with --listen");
	if (opt_given(seen, "cpus") && c->act != ACT_LISTEN && c->act != ACT_STDIO)
		return tool_fail(err, errlen, "--cpus goes with --stdio or --listen");
	if ((opt_given(seen, "max-servers") || opt_given(seen, "max-target-ram") || opt_given(seen, "target-listen")) &&
	    c->act != ACT_LISTEN && c->act != ACT_STDIO)
		return tool_fail(err, errlen, "--max-servers, --max-target-ram and --target-listen go with --stdio or --listen");
	if (opt_given(seen, "state-dir") && (c->act == ACT_NEW_KEY || c->act == ACT_PATH))
		return tool_fail(err, errlen, "--state-dir goes with --stdio, --listen or --restore");
	if (opt_given(seen, "cpus"))
		snprintf(c->cfg.cpus_text, sizeof(c->cfg.cpus_text), "%s", opt_text(seen, "cpus"));
	return 0;
}

static const struct opt_table agent_table = OPT_TABLE(agent_specs, agent_check);

static const struct opt_cmd agent_cmd = {
	.name = "agent",
	.usage = "usage: busypoll agent --stdio [options]\n"
		 "       busypoll agent --listen ADDR:PORT --key-file FILE [options]\n"
		 "       busypoll agent --new-key FILE\n"
		 "       busypoll agent --restore [--state-dir DIR]\n"
		 "       busypoll agent --path DEV [--format table|json|csv]\n"
		 "\n"
		 "The remote host's side of a two-host run: it starts the servers a client asks\n"
		 "for (rr, pingpong, an NVMe/TCP target) in a mode, on given CPUs, and reads and\n"
		 "changes this host's per-NAPI settings, device knobs, coalescing and channels.\n"
		 "Everything it changes it records first and restores when the session ends,\n"
		 "when the client vanishes, and at its next start after it was killed.\n\n",
	.epilog = "\nExit status: 0 done, 1 the run failed (cannot listen, a setting not restored),\n"
		  "2 bad input (an option, a key file refused).\n",
};

/* Returns 0, 1 after --help/--version, or -EINVAL with one line in err. */
static int parse_cli(int argc, char **argv, struct agent_cli *c, char *err, size_t errlen)
{
	struct opt_seen seen;
	const struct opt_layer layers[] = {
		{ &tool_common_table, &c->common },
		{ &agent_table, c },
	};
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", JOURNAL_DEFAULT_DIR);
	c->cfg.auth_timeout_s = 10;
	c->cfg.startups_start = 100;
	c->cfg.startups_rate = 30;
	c->cfg.startups_full = 1000;
	c->cfg.per_source = 16;
	limits_defaults(&c->cfg);
	c->format = TOOL_FORMAT_TABLE;
	rc = opt_parse(&agent_cmd, layers, 2, argc, argv, &seen, err, errlen);
	if (rc)
		return rc;
	c->cfg.state_dir = c->state_dir;
	c->cfg.listen = c->act == ACT_LISTEN ? c->listen : NULL;
	agent_quiet = c->quiet;
	return 0;
}

/* ---- logging ---- */

/*
 * The log: stderr, one write per line (lines of agents never mix). A standing agent's
 * log must never stop its loop thread (a stderr pipe nobody reads, a stopped
 * terminal): agent_log_nonblocking gives it a descriptor of its own that does not
 * block, and a line that would block is dropped and counted; the next line that
 * goes says how many went missing. The shared stderr's flags are not changed (the
 * shell's terminal, the servers it starts).
 */
static int log_fd = STDERR_FILENO;
static bool log_sock;                 /* stderr is a socket (systemd's journal): send, MSG_DONTWAIT */
static unsigned long long log_dropped;

void agent_log_nonblocking(void)
{
	struct stat st;
	int fd;

	if (fstat(STDERR_FILENO, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		log_sock = true;
	} else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		/* a new open of the same pipe or terminal: its own O_NONBLOCK */
		fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			log_fd = fd;
	} /* a regular file does not block */
}

/* One line out, or counted as dropped. */
static bool log_write(const char *line, size_t len)
{
	ssize_t n = log_sock ? send(log_fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL) : write(log_fd, line, len);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		log_dropped++;
		return false;
	}
	return true;
}

/* vlog - one line "busypoll agent: PEER: ..." on stderr. */
static void vlog(const char *peer, const char *fmt, va_list ap)
{
	char line[768];
	int n = snprintf(line, sizeof(line), "busypoll agent: %s%s", peer ? peer : "", peer ? ": " : "");

	if (log_dropped) {
		char note[128];
		int k = snprintf(note, sizeof(note), "busypoll agent: %llu log line(s) dropped: the log would "
				 "block (its reader is slow or stopped)\n", log_dropped);
		unsigned long long was = log_dropped;

		log_dropped = 0;
		if (!log_write(note, (size_t)k)) {
			log_dropped = was + 1;
			return;
		}
	}
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	log_write(line, (size_t)n);
}

void agent_log(const char *peer, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(peer, fmt, ap);
	va_end(ap);
}

void agent_info(const char *peer, const char *fmt, ...)
{
	va_list ap;

	if (agent_quiet)
		return;
	va_start(ap, fmt);
	vlog(peer, fmt, ap);
	va_end(ap);
}

void agent_log_journal(void *arg, const char *line)
{
	/* a setting put back is news; one that could not be, or a journal left, is a failure */
	if (!strncmp(line, "restored ", 9) || strstr(line, "is gone; restoring what it changed") ||
	    strstr(line, "is alive and restores it itself"))
		agent_info(arg, "%s", line);
	else
		agent_log(arg, "%s", line);
}

int agent_restore_all(const char *dir)
{
	int left = 0, done = journal_restore_dir(dir, agent_log_journal, NULL, &left);

	if (done < 0) {
		agent_log(NULL, "cannot read state directory %s: %s", dir, strerror(-done));
		return 1;
	}
	return left;
}

/* log_limits - the limits this agent binds every session to, at its start. */
static void log_limits(const struct agent_cfg *cfg)
{
	char line[400];

	limits_describe(cfg, line, sizeof(line));
	agent_info(NULL, "%s", line);
}

/* ---- the one-shot actions ---- */

static int run_path(const struct agent_cli *c)
{
	static struct bp_path_report r;
	struct emit e = { .kind = EMIT_JSON, .out = stdout };
	int rc = bp_path_report(c->path_dev, &r);
	enum diag_tri gro, tso;

	if (rc) {
		bp_tool_error(SUB, "%s", bp_last_error());
		return bp_exit_for(rc);
	}
	devfeat_read(c->path_dev, &gro, &tso); /* as a session's PATH_REPORT sends them */
	if (c->format == TOOL_FORMAT_JSON) {
		em_begin(&e, NULL, false);
		path_emit(&e, &r);
		devfeat_emit(&e, "gro", gro);
		devfeat_emit(&e, "tso", tso);
		em_end(&e);
		fputc('\n', stdout);
	} else if (c->format == TOOL_FORMAT_CSV) {
		path_csv(stdout, &r);
	} else {
		path_print(stdout, &r);
		printf("features  GRO %s, TSO %s\n", devfeat_text(gro), devfeat_text(tso));
	}
	return BP_EXIT_OK;
}

/*
 * check_state_dir - a state directory that is there must be the agent's own (journal_dir_open):
 * it plays back what it finds there. 0, or -errno said in one line.
 */
static int check_state_dir(const char *dir)
{
	char err[400];
	int fd;

	if (access(dir, F_OK) < 0 && errno == ENOENT)
		return 0; /* made 0700 at the first change */
	if ((fd = journal_dir_open(dir, false, err, sizeof(err))) < 0) {
		bp_tool_error(SUB, "%s", err);
		return fd;
	}
	close(fd);
	return 0;
}

/* run_new_key - --new-key FILE: a fresh key, refused when FILE exists. */
static int run_new_key(const struct agent_cli *c)
{
	char err[512];
	int rc = auth_key_new(c->new_key, err, sizeof(err));

	if (rc) {
		bp_tool_error(SUB, "%s", err);
		return bp_exit_for(rc);
	}
	printf("wrote a new key to %s (mode 0600): copy it to the other host the same way\n", c->new_key);
	return BP_EXIT_OK;
}

/* run_listen - --listen: the key loaded (a bad one is bad input), what a crash left restored, then serve. */
static int run_listen(struct agent_cli *c)
{
	char err[512];
	int rc;

	/*
	 * The key stays out of swap (mlock, best effort: RLIMIT_MEMLOCK) and out of a
	 * core dump and /proc/PID/mem of other users: not dumpable from here on
	 * (servers it starts are dumpable again after their exec).
	 */
	(void)sodium_mlock(&c->cfg.key, sizeof(c->cfg.key));
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		bp_tool_error(SUB, "prctl(PR_SET_DUMPABLE): %s: the key would be in a core dump", strerror(errno));
		return BP_EXIT_FAIL;
	}
	if ((rc = auth_key_load(c->key_file, &c->cfg.key, err, sizeof(err)))) {
		sodium_munlock(&c->cfg.key, sizeof(c->cfg.key));
		bp_tool_error(SUB, "%s", err);
		return BP_EXIT_USAGE;
	}
	agent_log_nonblocking();
	agent_restore_all(c->cfg.state_dir);
	log_limits(&c->cfg);
	rc = agent_serve_listen(&c->cfg);
	sodium_munlock(&c->cfg.key, sizeof(c->cfg.key)); /* zeroes it first */
	return rc ? BP_EXIT_FAIL : BP_EXIT_OK;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_cli c;
	char err[512];
	int rc = parse_cli(argc, argv, &c, err, sizeof(err));

	if (rc)
		return bp_opts_exit(SUB, rc, err);
	if ((c.act == ACT_STDIO || c.act == ACT_LISTEN || c.act == ACT_RESTORE) && check_state_dir(c.cfg.state_dir))
		return BP_EXIT_USAGE;
	switch (c.act) {
	case ACT_NEW_KEY:
		return run_new_key(&c);
	case ACT_PATH:
		return run_path(&c);
	case ACT_RESTORE:
		return agent_restore_all(c.cfg.state_dir) ? BP_EXIT_FAIL : BP_EXIT_OK;
	case ACT_LISTEN:
		return run_listen(&c);
	case ACT_STDIO:
		agent_restore_all(c.cfg.state_dir);
		log_limits(&c.cfg);
		return agent_serve_stdio(&c.cfg) ? BP_EXIT_FAIL : BP_EXIT_OK;
	case ACT_NONE:
		break;
	}
	return BP_EXIT_USAGE;
}
