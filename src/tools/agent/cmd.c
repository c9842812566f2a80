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
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/loop.h>
#include <busypoll/nic.h>

#include "tools/agent/agent.h"
#include "tools/agent/journal.h"
#include "tools/common/commands.h"
#include "tools/common/common_opts.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/opt.h"
#include "tools/common/options.h"

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
	{ .name = "state-dir", .kind = OPT_TEXT, AF(state_dir), .arg = "DIR",
	  .help = "where journals are kept", .dflt = OPT_DFLT_FIELD },
	{ .name = "auth-timeout", .kind = OPT_SECONDS, AF(cfg.auth_timeout_s), .max_s = 3600, .arg = "S",
	  .help = "a connection's handshake, at most", .dflt = OPT_DFLT_FIELD },
	{ .name = "max-pending", .kind = OPT_INT, AF(cfg.max_pending), .lo = 1, .hi = 1000000, .arg = "N",
	  .help = "connections waiting to authenticate at once; one more\ndrops the oldest", .dflt = OPT_DFLT_FIELD },
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
	if ((opt_given(seen, "auth-timeout") || opt_given(seen, "max-pending")) && c->act != ACT_LISTEN)
		return tool_fail(err, errlen, "--auth-timeout and --max-pending go with --listen");
	if (opt_given(seen, "cpus") && c->act != ACT_LISTEN && c->act != ACT_STDIO)
		return tool_fail(err, errlen, "--cpus goes with --stdio or --listen");
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
	c->cfg.max_pending = 1024;
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

/* vlog - one line "busypoll agent: PEER: ..." on stderr, in one write: lines of agents never mix. */
static void vlog(const char *peer, const char *fmt, va_list ap)
{
	char line[768];
	int n = snprintf(line, sizeof(line), "busypoll agent: %s%s", peer ? peer : "", peer ? ": " : "");

	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
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
	if (!strncmp(line, "restored ", 9) || strstr(line, "is gone; restoring what it changed"))
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

/* ---- the one-shot actions ---- */

static int run_path(const struct agent_cli *c)
{
	static struct bp_path_report r;
	struct emit e = { .kind = EMIT_JSON, .out = stdout };
	int rc = bp_path_report(c->path_dev, &r);

	if (rc) {
		bp_tool_error(SUB, "%s", bp_last_error());
		return bp_exit_for(rc);
	}
	if (c->format == TOOL_FORMAT_JSON) {
		em_begin(&e, NULL, false);
		path_emit(&e, &r);
		em_end(&e);
		fputc('\n', stdout);
	} else if (c->format == TOOL_FORMAT_CSV) {
		path_csv(stdout, &r);
	} else {
		path_print(stdout, &r);
	}
	return BP_EXIT_OK;
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
	int rc = auth_key_load(c->key_file, &c->cfg.key, err, sizeof(err));

	if (rc) {
		bp_tool_error(SUB, "%s", err);
		return BP_EXIT_USAGE;
	}
	agent_restore_all(c->cfg.state_dir);
	rc = agent_serve_listen(&c->cfg);
	auth_key_wipe(&c->cfg.key);
	return rc ? BP_EXIT_FAIL : BP_EXIT_OK;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_cli c;
	char err[512];
	int rc = parse_cli(argc, argv, &c, err, sizeof(err));

	if (rc)
		return bp_opts_exit(SUB, rc, err);
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
		return agent_serve_stdio(&c.cfg) ? BP_EXIT_FAIL : BP_EXIT_OK;
	case ACT_NONE:
		break;
	}
	return BP_EXIT_USAGE;
}
