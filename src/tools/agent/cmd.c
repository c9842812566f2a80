/* SPDX-License-Identifier: MIT */
/*
 * busypoll agent --stdio | --listen ADDR:PORT --key-file FILE   [--cpus LIST] [--state-dir DIR]
 * busypoll agent --new-key FILE | --restore | --path DEV [--format table|json]
 *
 * The remote host's side of a two-host run (agent.h). Before it serves anything it
 * plays back the journals of an agent that died here (SIGKILL, a crash), so a
 * host is never left with a previous session's settings.
 *
 * Exit: 0; 1 when the run fails (cannot listen, a setting not restored); 2 for bad
 * input found before any work (options, a key file refused), like every busypoll
 * subcommand.
 */
#include <errno.h>
#include <getopt.h>
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
#include "tools/common/emit.h"
#include "tools/common/options.h"

#define SUB "agent"

volatile sig_atomic_t agent_stop;

enum agent_action { ACT_NONE, ACT_STDIO, ACT_LISTEN, ACT_NEW_KEY, ACT_RESTORE, ACT_PATH };

struct agent_cli {
	enum agent_action act;
	struct agent_cfg cfg;
	const char *key_file;
	const char *new_key;
	const char *path_dev;
	bool json;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll agent --stdio [options]\n"
		"       busypoll agent --listen ADDR:PORT --key-file FILE [options]\n"
		"       busypoll agent --new-key FILE\n"
		"       busypoll agent --restore [--state-dir DIR]\n"
		"       busypoll agent --path DEV [--format table|json]\n"
		"\n"
		"The remote host's side of a two-host run. Everything it changes on this host\n"
		"(per-NAPI settings, device knobs, coalescing, channels) it records first and\n"
		"restores when the session ends, when the client vanishes, and at its next start\n"
		"after it was killed.\n"
		"\n"
		"  --stdio              one session on stdin/stdout, as ssh starts it:\n"
		"                       ssh HOST busypoll agent --stdio (ssh authenticates)\n"
		"  --listen ADDR:PORT   a standing agent on TCP; a client must prove it holds\n"
		"                       the key before anything else (--key-file)\n"
		"  --key-file FILE      the shared key (mode 0600, yours; see --new-key)\n"
		"  --new-key FILE       write a new random key to FILE (never over a file)\n"
		"  --restore            put back what a killed agent changed, then exit\n"
		"  --path DEV           the path report of DEV: driver, channels, coalescing,\n"
		"                       queues, NAPIs, IRQs and their CPUs; then exit\n"
		"  --cpus LIST          the CPUs the servers it starts may use (default any)\n"
		"  --state-dir DIR      where journals are kept (default " JOURNAL_DEFAULT_DIR ")\n"
		"  --auth-timeout S     a connection's handshake, at most (default 10)\n"
		"  --max-pending N      connections waiting to authenticate at once; one more\n"
		"                       drops the oldest (default 1024)\n"
		"  --format table|json  for --path (default table)\n"
		"  -h, --help           this text\n");
}

/* Set the one action; a second is refused. */
static int pick(struct agent_cli *c, enum agent_action act, const char *name, char *err, size_t errlen)
{
	static const char *const names[] = { "", "--stdio", "--listen", "--new-key", "--restore", "--path" };

	if (c->act == act)
		return tool_fail(err, errlen, "%s is given twice", name);
	if (c->act != ACT_NONE)
		return tool_fail(err, errlen, "%s and %s: give one of --stdio, --listen, --new-key, "
				 "--restore, --path", names[c->act], name);
	c->act = act;
	return 0;
}

/* Returns 0, 1 after --help, or -EINVAL with one line in err. */
static int parse_cli(int argc, char **argv, struct agent_cli *c, char *err, size_t errlen)
{
	enum { O_STDIO = 256, O_LISTEN, O_KEY_FILE, O_NEW_KEY, O_RESTORE, O_PATH, O_CPUS,
	       O_STATE_DIR, O_AUTH_TIMEOUT, O_MAX_PENDING, O_FORMAT };
	static const struct option opts[] = {
		{ "stdio", no_argument, NULL, O_STDIO },
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "key-file", required_argument, NULL, O_KEY_FILE },
		{ "new-key", required_argument, NULL, O_NEW_KEY },
		{ "restore", no_argument, NULL, O_RESTORE },
		{ "path", required_argument, NULL, O_PATH },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "state-dir", required_argument, NULL, O_STATE_DIR },
		{ "auth-timeout", required_argument, NULL, O_AUTH_TIMEOUT },
		{ "max-pending", required_argument, NULL, O_MAX_PENDING },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool seen[O_FORMAT + 1] = { false };
	long long n;
	int opt, rc;

	memset(c, 0, sizeof(*c));
	c->cfg.state_dir = JOURNAL_DEFAULT_DIR;
	c->cfg.auth_timeout_s = 10;
	c->cfg.max_pending = 1024;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		char name[64];

		if (opt >= O_STDIO && opt <= O_FORMAT) {
			if (seen[opt])
				return tool_fail(err, errlen, "--%s is given twice", opts[opt - O_STDIO].name);
			seen[opt] = true;
		}
		switch (opt) {
		case 'h':
			usage(stdout);
			return 1;
		case O_STDIO:
			if ((rc = pick(c, ACT_STDIO, "--stdio", err, errlen)))
				return rc;
			break;
		case O_LISTEN:
			if ((rc = pick(c, ACT_LISTEN, "--listen", err, errlen)))
				return rc;
			if (!strchr(optarg, ':'))
				return tool_fail(err, errlen, "--listen %s: give ADDR:PORT (e.g. 0.0.0.0:7100)",
						 optarg);
			c->cfg.listen = optarg;
			break;
		case O_KEY_FILE:
			c->key_file = optarg;
			break;
		case O_NEW_KEY:
			if ((rc = pick(c, ACT_NEW_KEY, "--new-key", err, errlen)))
				return rc;
			c->new_key = optarg;
			break;
		case O_RESTORE:
			if ((rc = pick(c, ACT_RESTORE, "--restore", err, errlen)))
				return rc;
			break;
		case O_PATH:
			if ((rc = pick(c, ACT_PATH, "--path", err, errlen)))
				return rc;
			if (!*optarg || strlen(optarg) >= IFNAMSIZ || strchr(optarg, '/'))
				return tool_fail(err, errlen, "--path '%s' is not a device name", optarg);
			c->path_dev = optarg;
			break;
		case O_CPUS:
			if ((rc = tool_opt_cpus("--cpus", optarg, c->cfg.cpus, AGENT_MAX_CPUS, &c->cfg.ncpus,
						err, errlen)))
				return rc;
			snprintf(c->cfg.cpus_text, sizeof(c->cfg.cpus_text), "%s", optarg);
			break;
		case O_STATE_DIR:
			if (!*optarg)
				return tool_fail(err, errlen, "--state-dir needs a directory");
			c->cfg.state_dir = optarg;
			break;
		case O_AUTH_TIMEOUT:
			if ((rc = tool_opt_seconds("--auth-timeout", optarg, false, 3600,
						   &c->cfg.auth_timeout_s, err, errlen)))
				return rc;
			break;
		case O_MAX_PENDING:
			if ((rc = tool_opt_int("--max-pending", optarg, 1, 1000000, &n, err, errlen)))
				return rc;
			c->cfg.max_pending = (int)n;
			break;
		case O_FORMAT: {
			static const char *const formats[] = { "table", "json", NULL };
			int f = tool_opt_choice("--format", optarg, formats, err, errlen);

			if (f < 0)
				return f;
			c->json = f == 1;
			break;
		}
		case ':':
			tool_bad_option_name(argc, argv, opts, name, sizeof(name));
			return tool_fail(err, errlen, "%s needs a value", name);
		default:
			return tool_option_refused(SUB, argc, argv, opts, err, errlen);
		}
	}
	if (optind < argc)
		return tool_fail(err, errlen, "unexpected argument '%s'", argv[optind]);
	if (c->act == ACT_NONE)
		return tool_fail(err, errlen, "give one of --stdio, --listen, --new-key, --restore, --path "
				 "(busypoll agent --help)");
	if (c->act == ACT_LISTEN && !c->key_file)
		return tool_fail(err, errlen, "--listen needs --key-file FILE (busypoll agent --new-key "
				 "FILE writes one)");
	if (c->act != ACT_LISTEN && c->key_file)
		return tool_fail(err, errlen, "--key-file goes with --listen");
	if (c->act != ACT_PATH && seen[O_FORMAT])
		return tool_fail(err, errlen, "--format goes with --path");
	if ((seen[O_AUTH_TIMEOUT] || seen[O_MAX_PENDING]) && c->act != ACT_LISTEN)
		return tool_fail(err, errlen, "--auth-timeout and --max-pending go with --listen");
	if (seen[O_CPUS] && c->act != ACT_LISTEN && c->act != ACT_STDIO)
		return tool_fail(err, errlen, "--cpus goes with --stdio or --listen");
	if (seen[O_STATE_DIR] && (c->act == ACT_NEW_KEY || c->act == ACT_PATH))
		return tool_fail(err, errlen, "--state-dir goes with --stdio, --listen or --restore");
	return 0;
}

/* ---- logging ---- */

void agent_log(const char *peer, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	int n = snprintf(line, sizeof(line), "busypoll agent: %s%s", peer ? peer : "", peer ? ": " : "");

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line); /* one write per line: lines of agents never mix */
}

void agent_log_journal(void *arg, const char *line)
{
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
		return rc == -EINVAL ? BP_EXIT_USAGE : BP_EXIT_FAIL;
	}
	if (c->json) {
		em_begin(&e, NULL, false);
		path_emit(&e, &r);
		em_end(&e);
		fputc('\n', stdout);
	} else {
		path_print(stdout, &r);
	}
	return BP_EXIT_OK;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_cli c;
	char err[512];
	int rc = parse_cli(argc, argv, &c, err, sizeof(err));

	if (rc == 1)
		return BP_EXIT_OK;
	if (rc) {
		bp_tool_error(SUB, "%s", err);
		return BP_EXIT_USAGE;
	}
	switch (c.act) {
	case ACT_NEW_KEY:
		if ((rc = auth_key_new(c.new_key, err, sizeof(err)))) {
			bp_tool_error(SUB, "%s", err);
			return rc == -EEXIST ? BP_EXIT_USAGE : BP_EXIT_FAIL;
		}
		printf("wrote a new key to %s (mode 0600): copy it to the other host the same way\n",
		       c.new_key);
		return BP_EXIT_OK;
	case ACT_PATH:
		return run_path(&c);
	case ACT_RESTORE:
		return agent_restore_all(c.cfg.state_dir) ? BP_EXIT_FAIL : BP_EXIT_OK;
	case ACT_LISTEN:
		if ((rc = auth_key_load(c.key_file, &c.cfg.key, err, sizeof(err)))) {
			bp_tool_error(SUB, "%s", err);
			return BP_EXIT_USAGE;
		}
		agent_restore_all(c.cfg.state_dir);
		rc = agent_serve_listen(&c.cfg);
		auth_key_wipe(&c.cfg.key);
		return rc ? BP_EXIT_FAIL : BP_EXIT_OK;
	case ACT_STDIO:
		agent_restore_all(c.cfg.state_dir);
		return agent_serve_stdio(&c.cfg) ? BP_EXIT_FAIL : BP_EXIT_OK;
	case ACT_NONE:
		break;
	}
	return BP_EXIT_USAGE;
}
