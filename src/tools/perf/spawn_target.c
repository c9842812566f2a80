/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf --spawn-target: our own target as a child process, and its
 * counters (contract in tools/perf/perf.h).
 *
 * The child is `busypoll target` from our own binary, started the way every
 * busypoll server is started as a child (tools/harness/spawn.h: its own process
 * group, killed if perf dies, a control session on a socketpair, its stderr kept
 * for the reason it exits early): its HELLO_OK says it listens, a SAMPLE brings
 * its evidence and one record per queue, matched to our queues by peer address.
 * With --remote the agent there starts it the same way (tools/agent/servers.h),
 * and the same messages go through the agent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/harness/control.h"
#include "tools/harness/evidence.h"
#include "tools/harness/spawn.h"
#include "tools/perf/perf.h"

#define MAX_WORDS 128
#define START_TIMEOUT_MS 10000
#define SAMPLE_TIMEOUT_MS 3000
#define STOP_TIMEOUT_MS 5000

struct perf_spawn {
	bool remote;
	struct spawn child;      /* here: the target and our end of its control session (tools/harness/spawn.h) */
	struct agent_conn a;     /* --remote: the agent that started it there */
	struct agent_server srv;
	struct agent_relay rl;
	struct ctl_session ctl;  /* --remote: its control session, through the agent */
};

static bool has_option(char **words, int n, const char *opt)
{
	size_t len = strlen(opt);

	for (int i = 0; i < n; i++)
		if (!strncmp(words[i], opt, len) && (words[i][len] == 0 || words[i][len] == '='))
			return true;
	return false;
}

int perf_target_argv(const struct perf_opts *o, const char *config, char *buf, size_t buflen, char **argv,
		     int max, char *err, size_t errlen)
{
	size_t need = strlen(o->spawn_args) + strlen(config ? config : "") + 2;
	int n1, n2, argc;

	if (need > buflen || max < 2 * MAX_WORDS + 8) {
		snprintf(err, errlen, "--spawn-target and --target-config: too long");
		return -EINVAL;
	}
	argv[0] = "target";
	n1 = spawn_split_args(o->spawn_args, buf, argv + 1, MAX_WORDS);
	if (n1 < 0) {
		snprintf(err, errlen, "--spawn-target '%s': unbalanced quotes or more than %d words", o->spawn_args,
			 MAX_WORDS);
		return -EINVAL;
	}
	n2 = spawn_split_args(config ? config : "", buf + strlen(o->spawn_args) + 1, argv + 1 + n1, MAX_WORDS);
	if (n2 < 0) {
		snprintf(err, errlen, "--target-config '%s': unbalanced quotes or more than %d words", config, MAX_WORDS);
		return -EINVAL;
	}
	argc = 1 + n1 + n2;
	if (!has_option(argv + 1, n1 + n2, "--listen")) {
		argv[argc++] = "--listen";
		argv[argc++] = (char *)o->target;
	}
	if (!has_option(argv + 1, n1 + n2, "--nqn")) {
		argv[argc++] = "--nqn";
		argv[argc++] = (char *)o->nqn;
	}
	/* an agent starts a target only for the hosts it names: ours, as run.c connects */
	if (o->remote.remote[0] && o->hostnqn[0] && !has_option(argv + 1, n1 + n2, "--allow-host")) {
		argv[argc++] = "--allow-host";
		argv[argc++] = (char *)o->hostnqn;
	}
	argv[argc] = NULL;
	return argc;
}

/* quote - words as one argument text the agent splits back the same way (spawn_split_args). */
static int quote(char *const *words, char *out, size_t len)
{
	size_t used = 0;

	for (int i = 0; words[i]; i++) {
		if (used + 4 > len)
			return -E2BIG;
		out[used++] = i ? ' ' : '"';
		if (i)
			out[used++] = '"';
		for (const char *p = words[i]; *p; p++) {
			if (used + 4 > len)
				return -E2BIG;
			if (*p == '"' || *p == '\\')
				out[used++] = '\\';
			out[used++] = *p;
		}
		out[used++] = '"';
	}
	out[used] = 0;
	return 0;
}

/* start_remote - the agent on --remote starts the target there; its SAMPLEs go through the agent. */
static int start_remote(const struct perf_opts *o, char *const *argv, struct perf_spawn *sp, char *err, size_t errlen)
{
	struct agent_remote_opts ro = o->remote;
	struct agent_server_req req = { .tool = "target", .priority = -1 };
	char args[CTL_MAX_TEXT];
	int ret;

	if (quote(argv + 1, args, sizeof(args))) {
		snprintf(err, errlen, "--spawn-target and --target-config: more than %d characters for the agent",
			 CTL_MAX_TEXT - 1);
		return -EINVAL;
	}
	req.args = args;
	ro.quiet = o->quiet;
	sp->remote = true;
	if ((ret = agent_open(&sp->a, &ro, err, errlen)))
		return ret;
	if ((ret = agent_server_start(&sp->a, &req, &sp->srv, err, errlen))) {
		agent_close(&sp->a, NULL, NULL, 0);
		return ret;
	}
	agent_server_session(&sp->a, sp->srv.id, &sp->rl, &sp->ctl);
	sp->ctl.timeout_ms = SAMPLE_TIMEOUT_MS;
	return 0;
}

int perf_spawn_start(const struct perf_opts *o, const char *config, struct perf_spawn **spp, char *err,
		     size_t errlen)
{
	size_t buflen = strlen(o->spawn_args) + strlen(config ? config : "") + 2;
	char *buf = malloc(buflen), *argv[2 * MAX_WORDS + 8];
	struct perf_spawn *sp = calloc(1, sizeof(*sp));
	struct ctl_msg *m = malloc(sizeof(*m));
	int ret;

	*spp = NULL;
	if (!sp || !buf || !m) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ret = perf_target_argv(o, config, buf, buflen, argv, (int)(sizeof(argv) / sizeof(argv[0])), err, errlen);
	if (ret < 0)
		goto out;
	if (o->remote.remote[0]) {
		ret = start_remote(o, argv, sp, err, errlen);
		if (ret)
			goto out;
		*spp = sp;
		sp = NULL;
		goto out;
	}
	ret = spawn_start(&sp->child, argv, "target", "perf", START_TIMEOUT_MS, m, err, errlen);
	if (ret)
		goto out;
	sp->child.ctl.timeout_ms = SAMPLE_TIMEOUT_MS;
	*spp = sp;
	sp = NULL;
out:
	free(sp);
	free(buf);
	free(m);
	return ret;
}

int perf_target_add_queues(const struct ctl_msg *m, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	struct ctl_iter it;
	const uint8_t *val;
	uint16_t tag;
	size_t len;
	int added = 0;

	ctl_iter_body(&it, m);
	while (ctl_next(&it, &tag, &val, &len)) {
		char peer[64];
		uint64_t v[11] = { 0 };
		static const uint16_t tags[11] = { CTL_T_Q_COMMANDS, CTL_T_Q_READS, CTL_T_Q_WRITES, CTL_T_Q_R2TS,
						   CTL_T_Q_BYTES_IN, CTL_T_Q_BYTES_OUT, CTL_T_Q_ERRORS,
						   CTL_T_Q_POLL_PASSES, CTL_T_Q_IDLE_EXITS, CTL_T_Q_FLUSHES,
						   CTL_T_Q_POLLS };

		if (tag != CTL_T_Q || ctl_rec_text(val, len, CTL_T_Q_PEER, peer, sizeof(peer)))
			continue;
		for (size_t i = 0; i < npeers; i++) {
			if (strcmp(peer, peers[i]))
				continue;
			for (int k = 0; k < 11; k++)
				ctl_rec_u64(val, len, tags[k], &v[k]);
			st->commands += v[0];
			st->reads += v[1];
			st->writes += v[2];
			st->r2ts += v[3];
			st->bytes_in += v[4];
			st->bytes_out += v[5];
			st->errors += v[6];
			st->poll_passes += v[7];
			st->idle_exits += v[8];
			st->polls += v[10];
			st->queues++;
			added++;
			break;
		}
	}
	return added;
}

int perf_target_sample(struct ctl_session *ctl, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	struct evidence ev;
	uint64_t pid = 0, poll_us = 0;
	struct bp_mode mode;
	char err[256];
	int ret;

	memset(st, 0, sizeof(*st));
	if (!m)
		return -ENOMEM;
	ctl_msg_init(&m[0], CTL_SAMPLE);
	ret = ctl_call(ctl, &m[0], CTL_EVIDENCE, &m[1], err, sizeof(err));
	if (!ret && ev_decode(&m[1], &ev))
		ret = -EPROTO;
	if (!ret) {
		st->cpu_us = ev_cpu_us(&ev);
		st->busy_poll_rx = ev.busy_poll_rx;
		snprintf(st->mode, sizeof(st->mode), "%s", ev.mode);
		st->busy_poll_mode = bp_mode_parse(ev.mode, &mode, err, sizeof(err)) == 0 && bp_mode_is_busy_poll(&mode);
		perf_target_add_queues(&m[1], peers, npeers, st);
		ctl_get_u64(&m[1], CTL_T_PID, &pid);
		st->pid = (pid_t)pid;
		st->poll_known = ctl_get_u64(&m[1], CTL_T_POLL_PERIOD_US, &poll_us) == 0;
		st->poll_period_us = (uint32_t)poll_us;
		st->valid = true;
	}
	free(m);
	return ret;
}

int perf_spawn_sample(struct perf_spawn *sp, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (sp->remote)
		return perf_target_sample(&sp->ctl, peers, npeers, st);
	if (!spawn_alive(&sp->child))
		return -ECHILD;
	return perf_target_sample(&sp->child.ctl, peers, npeers, st);
}

void perf_spawn_stop(struct perf_spawn *sp)
{
	char err[512];

	if (!sp)
		return;
	if (sp->remote) {
		if (agent_server_stop(&sp->a, &sp->srv, err, sizeof(err)))
			fprintf(stderr, "busypoll perf: %s\n", err);
		if (agent_close(&sp->a, NULL, err, sizeof(err)))
			fprintf(stderr, "busypoll perf: %s\n", err);
	} else {
		spawn_stop(&sp->child, STOP_TIMEOUT_MS);
	}
	free(sp);
}
