/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong client: rows x runs (contract in tools/pingpong/pingpong.h).
 *
 * --matrix is the reference table in one command: no busy polling, client only,
 * both ends. The server's mode is switched per row over the control session
 * (SET_MODE: the server restarts its data loop in that mode). A server on another
 * host takes that only from its agent: with --remote the agent starts the server
 * there and the control session goes through it (tools/remote/agent_client.h);
 * without, the server must be on this host. The rows use the same backend and
 * ring setup, so the only difference between them is busy polling.
 *
 * Every run is bracketed by RUN_START/RUN_STOP, so the server's counters cover the
 * same round trips as the client's (warm-up included). Control traffic only ever
 * happens between runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/cmd.h"
#include "tools/pingpong/pingpong.h"

int pp_matrix_modes(const struct bp_mode *m, char client[PP_MAX_ROWS][PP_MODE_LEN],
		    char server[PP_MAX_ROWS][PP_MODE_LEN], char *err, size_t errlen)
{
	struct bp_mode base;
	char busy_text[PP_MODE_LEN], base_text[PP_MODE_LEN], perr[200];

	if (bp_mode_parse(m->backend == BP_BACKEND_URING ? "uring:block" : "epoll:block", &base, perr,
			  sizeof(perr))) {
		snprintf(err, errlen, "baseline mode: %s", perr);
		return -EINVAL;
	}
	/* Same ring set-up as the busy mode when it names one: compare polling, nothing else. */
	if (m->backend == BP_BACKEND_URING && (m->keys_set & BP_KEY_SETUP)) {
		base.setup = m->setup;
		base.keys_set |= BP_KEY_SETUP;
	}
	bp_mode_format(m, busy_text, sizeof(busy_text));
	bp_mode_format(&base, base_text, sizeof(base_text));
	snprintf(client[0], PP_MODE_LEN, "%s", base_text);
	snprintf(server[0], PP_MODE_LEN, "%s", base_text);
	snprintf(client[1], PP_MODE_LEN, "%s", busy_text);
	snprintf(server[1], PP_MODE_LEN, "%s", base_text);
	snprintf(client[2], PP_MODE_LEN, "%s", busy_text);
	snprintf(server[2], PP_MODE_LEN, "%s", busy_text);
	return 0;
}

void pp_result_free(struct pp_result *res)
{
	for (int i = 0; i < PP_MAX_ROWS; i++) {
		free(res->rows[i].runs);
		free(res->rows[i].all);
		free(res->rows[i].bd);
		res->rows[i].runs = NULL;
		res->rows[i].all = NULL;
		res->rows[i].bd = NULL;
	}
}

static int row_alloc(struct pp_row *row, const struct pp_opts *o)
{
	row->runs = calloc((size_t)o->runs, sizeof(*row->runs));
	row->all = malloc(sizeof(*row->all));
	if (o->breakdown)
		row->bd = malloc(sizeof(*row->bd));
	if (!row->runs || !row->all || (o->breakdown && !row->bd))
		return -ENOMEM;
	bp_hist_init(row->all);
	if (row->bd)
		pp_bd_init(row->bd);
	return 0;
}

/*
 * needs_switch - does a row in server mode want ("": the server's own) ask the server
 * for a change, it running now in mode now? Timestamps (--breakdown) are one.
 */
static bool needs_switch(const struct pp_opts *o, const char *want, const char *now)
{
	return o->breakdown || (want[0] && strcmp(want, now));
}

/* One row: the server's mode, then --runs runs. */
static int run_row(const struct pp_opts *o, const struct pp_target *t, struct ctl_session *ctl,
		   struct pp_row *row, const char *server_mode, char server_now[PP_MODE_LEN], volatile sig_atomic_t *stop,
		   struct bp_hist *hist, struct pp_result *res, char *err, size_t errlen)
{
	struct bp_mode cm;
	char perr[200];
	int ret;

	if (bp_mode_parse(row->client_mode, &cm, perr, sizeof(perr)) ||
	    bp_mode_check(&cm, perr, sizeof(perr))) {
		snprintf(err, errlen, "client mode %s: %s", row->client_mode, perr);
		return -EINVAL;
	}
	/* a switch only when it changes something: a standalone server on another host takes none */
	if (needs_switch(o, server_mode, server_now)) {
		ret = pp_ctl_set_mode(ctl, server_mode, o->breakdown, row->server_mode, err, errlen);
		if (ret)
			return ret;
		snprintf(server_now, PP_MODE_LEN, "%s", row->server_mode);
	} else {
		snprintf(row->server_mode, sizeof(row->server_mode), "%s", server_now); /* as the server said */
	}

	for (int i = 0; i < o->runs; i++) {
		struct pp_run *run = &row->runs[i];

		if (stop && *stop) {
			res->interrupted = true;
			return 0;
		}
		ret = pp_ctl_start(ctl, err, errlen);
		if (ret)
			return ret;
		bp_hist_init(hist);
		ret = pp_client_run(o, t, &cm, stop, hist, row->bd, run, err, errlen);
		if (ret == -ECONNREFUSED && (i > 0 || row != &res->rows[0]))
			/* it answered the runs before: not "is it running?" but gone mid-way */
			snprintf(err, errlen, "server %s went away during run %d%s%s: its %s port refused the traffic "
				 "(the runs before it are kept)", t->text, i + 1, res->nrows > 1 ? " of row " : "",
				 res->nrows > 1 ? row->label : "", o->tcp ? "TCP" : "UDP");
		if (ret)
			return ret;
		pp_run_figures(hist, run);
		ret = pp_ctl_stop(ctl, &run->server, &row->server_napi_id, err, errlen);
		if (ret)
			return ret;
		bp_hist_merge(row->all, hist);
		ev_add(&row->client, &run->client);
		ev_add(&row->server, &run->server);
		row->nruns = i + 1;
		pp_runs_aggregate(row->runs, row->nruns, &row->agg);
		if (run->interrupted) {
			res->interrupted = true;
			return 0;
		}
	}
	return 0;
}

/* A server started on another host by its agent (--remote). */
struct remote_state {
	struct agent_conn a;
	struct agent_server srv;
	struct agent_relay rl;
	bool started;
};

/*
 * remote_server - the agent on --remote starts the server (its own mode, CPU,
 * port) and the control session goes to it through the agent; t gets its port.
 */
static int remote_server(const struct pp_opts *o, struct pp_target *t, struct remote_state *rs, struct ctl_session *ctl,
			 struct pp_server_info *info, struct pp_result *res, char *err, size_t errlen)
{
	struct agent_remote_opts ro = o->remote;
	struct agent_server_req req = {
		.tool = "pingpong", .mode = o->server_mode_text, .port = o->port_given ? o->port : 0,
		.cpus = &o->server_cpu, .ncpus = o->server_cpu >= 0, .priority = o->priority,
	};
	char ip[INET6_ADDRSTRLEN] = "";
	int ret;

	/* An xsk mode (its own, or one a matrix row switches to) serves a socket bound to
	 * the address its device has: the one this client reaches. */
	if (o->mode.backend == BP_BACKEND_XSK || o->server_mode.backend == BP_BACKEND_XSK) {
		inet_ntop(t->addr.ss_family,
			  t->addr.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&t->addr)->sin6_addr
							: (const void *)&((struct sockaddr_in *)&t->addr)->sin_addr,
			  ip, sizeof(ip));
		req.addr = ip;
	}

	ro.quiet = o->quiet;
	if ((ret = agent_open(&rs->a, &ro, err, errlen)))
		return ret;
	if ((ret = agent_server_start(&rs->a, &req, &rs->srv, err, errlen)))
		return ret;
	rs->started = true;
	snprintf(res->agent, sizeof(res->agent), "%s", rs->a.where);
	res->server_pid = rs->srv.pid;
	if (t->addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&t->addr)->sin6_port = htons(rs->srv.port);
	else
		((struct sockaddr_in *)&t->addr)->sin_port = htons(rs->srv.port);
	bp_format_addr((struct sockaddr *)&t->addr, t->text, sizeof(t->text));
	snprintf(res->server_addr, sizeof(res->server_addr), "%s", t->text);
	agent_server_session(&rs->a, rs->srv.id, &rs->rl, ctl);
	return pp_ctl_hello(ctl, info, err, errlen);
}

/* remote_end - the server stopped and the agent told the session is over (what it changed, back). */
static void remote_end(struct remote_state *rs, int ret, char *err, size_t errlen)
{
	char e2[512];

	if (rs->started && agent_server_stop(&rs->a, &rs->srv, e2, sizeof(e2)) && !ret)
		fprintf(stderr, "busypoll pingpong: %s\n", e2);
	if (agent_close(&rs->a, NULL, e2, sizeof(e2)) && !ret)
		fprintf(stderr, "busypoll pingpong: %s\n", e2);
}

bool pp_measured(const struct pp_result *res)
{
	for (int i = 0; i < res->nrows; i++)
		if (res->rows[i].nruns)
			return true;
	return false;
}

int pp_measure(const struct pp_opts *o, volatile sig_atomic_t *stop, struct pp_result *res,
	       char *err, size_t errlen)
{
	char cmodes[PP_MAX_ROWS][PP_MODE_LEN], smodes[PP_MAX_ROWS][PP_MODE_LEN];
	static const char *const labels[PP_MAX_ROWS] = { "no busy polling", "client only", "both ends" };
	struct pp_target t;
	struct ctl_session ctl = { .fd = -1 };
	struct remote_state rs = { .a = { .r = { .rfd = -1, .wfd = -1 } } };
	struct pp_server_info info;
	struct bp_hist *hist = NULL;
	struct bp_host host;
	char now[PP_MODE_LEN];
	bool probe = false;
	int ret, timeout_ms;

	memset(res, 0, sizeof(*res));
	res->opts = *o;
	res->server_cpu = -1;
	bp_host_read(&host);
	snprintf(res->kernel, sizeof(res->kernel), "%s", host.kernel);
	ret = bp_parse_addr(o->host, o->port, &t.addr, &t.addrlen);
	if (ret) {
		snprintf(err, errlen, "--client %s: %s", o->host, bp_last_error());
		return -EINVAL;
	}
	bp_format_addr((struct sockaddr *)&t.addr, t.text, sizeof(t.text));
	snprintf(res->server_addr, sizeof(res->server_addr), "%s", t.text);

	if (o->matrix) {
		ret = pp_matrix_modes(&o->mode, cmodes, smodes, err, errlen);
		if (ret)
			return ret;
		res->nrows = PP_MAX_ROWS;
	} else {
		snprintf(cmodes[0], PP_MODE_LEN, "%s", o->mode_text);
		smodes[0][0] = 0; /* the server's own mode */
		res->nrows = 1;
	}
	for (int i = 0; i < res->nrows; i++) {
		struct pp_row *row = &res->rows[i];

		snprintf(row->label, sizeof(row->label), "%s", o->matrix ? labels[i] : "run");
		snprintf(row->client_mode, sizeof(row->client_mode), "%s", cmodes[i]);
		if (row_alloc(row, o)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	hist = malloc(sizeof(*hist));
	if (!hist) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}

	/* A mode switch restarts a loop thread and a SET_MODE waits for it: allow for that. */
	timeout_ms = (int)(o->timeout_s * 1000) + 5000;
	if (o->remote.remote[0])
		ret = remote_server(o, &t, &rs, &ctl, &info, res, err, errlen);
	else
		ret = pp_ctl_open(&ctl, (struct sockaddr *)&t.addr, t.addrlen, timeout_ms, &info, err, errlen);
	if (ret)
		goto out;
	snprintf(res->server_mode, sizeof(res->server_mode), "%s", info.mode);
	res->server_cpu = info.cpu;
	res->server_delay_us = info.delay_us;

	if (o->breakdown) {
		char cerr[200];

		/* Not fatal: the breakdown stands without the cost of an empty poll. */
		if (pp_calibrate(o->cpu, &res->calib, cerr, sizeof(cerr)) && !o->quiet)
			fprintf(stderr, "busypoll pingpong: %s\n", cerr);
	}

	/*
	 * A row that needs a switch: asked first for the mode the server runs (no change),
	 * so a server that takes no switch from us refuses before anything is measured.
	 */
	snprintf(now, sizeof(now), "%s", info.mode);
	for (int i = 0; i < res->nrows && !probe; i++)
		probe = needs_switch(o, smodes[i], now);
	if (probe && (ret = pp_ctl_set_mode(&ctl, now, false, now, err, errlen)))
		goto out;
	for (int i = 0; i < res->nrows && !res->interrupted; i++) {
		ret = run_row(o, &t, &ctl, &res->rows[i], smodes[i], now, stop, hist, res, err, errlen);
		if (ret)
			break;
	}
out:
	if (ret && pp_measured(res))
		snprintf(res->failed, sizeof(res->failed), "%s", err);
	ctl_session_close(&ctl);
	if (o->remote.remote[0])
		remote_end(&rs, ret, err, errlen);
	free(hist);
	return ret;
}
