/* SPDX-License-Identifier: MIT */
/* The servers an agent session runs on its host (contract in tools/agent/servers.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/napi.h>
#include <busypoll/net.h>

#include "net/xdp_prog.h"

#include "tools/agent/limits.h"
#include "tools/agent/session.h"
#include "tools/link/agent_wire.h"
#include "tools/link/netdev.h"

#define START_TIMEOUT_MS 15000
#define CALL_TIMEOUT_MS 15000   /* a relayed SET_MODE restarts a loop thread */
#define STOP_TIMEOUT_MS 5000
#define MAX_WORDS 128
#define NAPI_RESTORED (BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND)

static struct ctl_msg relay_msg; /* one request at a time */
static int running;              /* servers running, all sessions of this agent (--max-servers) */

/* ---- the request ---- */

/* What a SERVER_START asks for, read and checked. */
struct start_req {
	char tool[16];
	char mode[CTL_MAX_TEXT + 1];
	char addr[128];
	char args[CTL_MAX_TEXT + 1];
	uint64_t port, threads, delay_us;
	int64_t priority;
	int cpus[AGENT_SERVER_CPUS];
	int ncpus;
};

/* cpu_allowed - is cpu one of the agent's --cpus (any when it has none)? */
static bool cpu_allowed(const struct agent_cfg *cfg, int cpu)
{
	if (!cfg->ncpus)
		return true;
	for (int i = 0; i < cfg->ncpus; i++)
		if (cfg->cpus[i] == cpu)
			return true;
	return false;
}

/* has_word - does the word list name option opt ("--ns", also as "--ns=...")? Its value, or NULL. */
static const char *has_word(char **w, int n, const char *opt)
{
	size_t len = strlen(opt);

	for (int i = 0; i < n; i++) {
		if (!strcmp(w[i], opt))
			return i + 1 < n ? w[i + 1] : "";
		if (!strncmp(w[i], opt, len) && w[i][len] == '=')
			return w[i] + len + 1;
	}
	return NULL;
}

/* file_namespace - a target configuration that serves a file of this host (--ns file:...). */
static bool file_namespace(char **w, int n)
{
	for (int i = 0; i < n; i++) {
		const char *v = !strcmp(w[i], "--ns") && i + 1 < n ? w[i + 1] : !strncmp(w[i], "--ns=", 5) ? w[i] + 5 : NULL;

		if (v && strncmp(v, "ram:", 4))
			return true;
	}
	return false;
}

static int read_req(const struct session *ses, const struct ctl_msg *in, struct start_req *r, struct ctl_msg *out)
{
	memset(r, 0, sizeof(*r));
	r->priority = -1;
	if (ctl_get_text(in, CTL_T_TOOL, r->tool, sizeof(r->tool)) ||
	    (strcmp(r->tool, "rr") && strcmp(r->tool, "pingpong") && strcmp(r->tool, "target"))) {
		ctl_error_msg(out, EINVAL, "SERVER_START: which server (CTL_T_TOOL: rr, pingpong or target)");
		return -EINVAL;
	}
	ctl_get_text(in, CTL_T_MODE, r->mode, sizeof(r->mode));
	ctl_get_text(in, CTL_T_ADDR, r->addr, sizeof(r->addr));
	ctl_get_text(in, CTL_T_ARGS, r->args, sizeof(r->args));
	ctl_get_u64(in, CTL_T_PORT, &r->port);
	ctl_get_u64(in, CTL_T_THREADS, &r->threads);
	ctl_get_u64(in, CTL_T_PP_DELAY_US, &r->delay_us);
	ctl_get_i64(in, CTL_T_PRIORITY, &r->priority);
	r->ncpus = aw_cpus(in->body, in->len, r->cpus, AGENT_SERVER_CPUS);
	if (r->port > 65535 || r->threads > AGENT_SERVER_CPUS || r->delay_us > 1000000 || r->priority < -1 ||
	    r->priority > 15 || (r->args[0] && strcmp(r->tool, "target"))) {
		ctl_error_msg(out, EINVAL, "SERVER_START %s: a port, thread count, delay, priority or argument out of range",
			      r->tool);
		return -EINVAL;
	}
	for (int i = 0; i < r->ncpus; i++)
		if (r->cpus[i] < 0 || !cpu_allowed(ses->cfg, r->cpus[i])) {
			ctl_error_msg(out, EINVAL, "SERVER_START: CPU %d is not one the agent may use (its --cpus %s)",
				      r->cpus[i], ses->cfg->cpus_text[0] ? ses->cfg->cpus_text : "any");
			return -EINVAL;
		}
	return 0;
}

/* The command line for a request: words into w (pointing into buf or string literals). */
struct argv_buf {
	char *w[2 * MAX_WORDS];
	int n;
	char nums[8][32];
	int nn;
	char cpus[AGENT_SERVER_CPUS * 8];
	char split[CTL_MAX_TEXT + 1];
};

static void add(struct argv_buf *a, const char *w)
{
	if (a->n < 2 * MAX_WORDS - 1)
		a->w[a->n++] = (char *)w;
}

static void add_num(struct argv_buf *a, const char *opt, long long v)
{
	if (a->nn == 8)
		return;
	snprintf(a->nums[a->nn], sizeof(a->nums[0]), "%lld", v);
	add(a, opt);
	add(a, a->nums[a->nn++]);
}

static const char *cpu_text(const struct start_req *r, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < r->ncpus && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "", r->cpus[i]);
	return buf;
}

/* check_target - the target's command line so far against the operator's limits (limits.h). */
static int check_target(const struct session *ses, const struct argv_buf *a, int own, struct ctl_msg *out)
{
	static char *copy[2 * MAX_WORDS + 1]; /* the parser permutes its argv */
	struct sockaddr_storage reached;
	char err[600];
	int rc;

	memcpy(copy, a->w, sizeof(char *) * (size_t)a->n);
	copy[a->n] = NULL;
	rc = limits_check_target(ses->cfg, limits_reached(ses->peer, &reached) ? NULL : &reached, copy, a->n, own,
				 err, sizeof(err));
	if (rc)
		ctl_error_msg(out, -rc, "%s", err);
	return rc;
}

static int build_argv(const struct session *ses, const struct start_req *r, struct argv_buf *a, struct ctl_msg *out)
{
	char **targs = a->w + 1; /* the target's own words follow "target" */
	int nt = 0;

	a->n = a->nn = 0;
	add(a, r->tool);
	if (!strcmp(r->tool, "target")) {
		nt = spawn_split_args(r->args, a->split, targs, MAX_WORDS);
		if (nt < 0) {
			ctl_error_msg(out, EINVAL, "SERVER_START target: its arguments have unbalanced quotes or more "
				      "than %d words", MAX_WORDS);
			return -EINVAL;
		}
		a->n += nt;
		/* a key holder is not a user of this host: it gets no file of it served to the network */
		if (ses->cfg->listen && file_namespace(targs, nt)) {
			ctl_error_msg(out, EACCES, "SERVER_START target: a standing agent serves RAM namespaces only "
				      "(--ns ram:SIZE): a file namespace would give the key's holder a file of this "
				      "host; run the agent through ssh (the user's own rights) to serve files");
			return -EACCES;
		}
		if (r->mode[0] && !has_word(targs, nt, "--mode")) {
			add(a, "--mode");
			add(a, r->mode);
		}
		if (r->ncpus && !has_word(targs, nt, "--cpus")) {
			add(a, "--cpus");
			add(a, cpu_text(r, a->cpus, sizeof(a->cpus)));
		}
		if (r->threads && !has_word(targs, nt, "--threads"))
			add_num(a, "--threads", (long long)r->threads);
		if (r->priority >= 0 && !has_word(targs, nt, "--priority"))
			add_num(a, "--priority", r->priority);
		if (check_target(ses, a, nt, out))
			return -EINVAL;
	} else {
		add(a, "--server");
		if (r->addr[0]) {
			add(a, "--bind");
			add(a, r->addr);
		}
		add_num(a, "--port", (long long)r->port);
		if (r->mode[0]) {
			add(a, "--mode");
			add(a, r->mode);
		}
		if (r->ncpus) {
			add(a, "--cpus");
			add(a, cpu_text(r, a->cpus, sizeof(a->cpus)));
		}
		if (r->threads && !strcmp(r->tool, "rr"))
			add_num(a, "--threads", (long long)r->threads);
		if (r->delay_us && !strcmp(r->tool, "pingpong"))
			add_num(a, "--server-delay-us", (long long)r->delay_us);
		if (r->priority >= 0)
			add_num(a, "--priority", r->priority);
	}
	add(a, "-q");
	a->w[a->n] = NULL;
	return 0;
}

/* ---- NAPI settings around a server ---- */

/*
 * keep_napis - every NAPI of this namespace as it is now into srv (restored when it
 * stops), and into the session's journal the first time (restored at the end).
 */
static int keep_napis(struct session *ses, struct agent_server *srv, char *err, size_t errlen)
{
	struct agent_servers *ss = &ses->servers;
	int n = bp_napi_list(0, srv->napi, BP_PATH_MAX), rc;

	if (n < 0) {
		srv->nnapi = 0;
		return 0; /* no netdev netlink: no NAPI settings to keep */
	}
	srv->nnapi = n < BP_PATH_MAX ? n : BP_PATH_MAX;
	for (int i = 0; i < srv->nnapi; i++) {
		struct jentry e = { .kind = J_NAPI, .napi_id = srv->napi[i].id, .napi = srv->napi[i] };
		bool done = false;

		for (int k = 0; k < ss->njournalled; k++)
			done |= ss->journalled[k] == srv->napi[i].id;
		e.napi.has &= NAPI_RESTORED;
		if (done || !e.napi.has || ss->njournalled == BP_PATH_MAX)
			continue;
		if ((rc = journal_record(&ses->journal, &e, err, errlen)))
			return rc;
		ss->journalled[ss->njournalled++] = srv->napi[i].id;
	}
	return 0;
}

/*
 * sweep_xdp - an xsk server's XDP program off its device, should it have died
 * without removing it (SIGKILL); its NAPI settings come back with it (net/xdp_prog.h).
 */
static void sweep_xdp(struct session *ses, const struct agent_server *srv)
{
	struct sockaddr_storage a;
	socklen_t len;
	char dev[IFNAMSIZ];
	unsigned ifindex;

	if (strncmp(srv->mode, "xsk:", 4) || bp_parse_addr(srv->addr, 0, &a, &len) ||
	    netdev_of_addr(&a, dev) || !(ifindex = if_nametoindex(dev)))
		return;
	if (bp_xdp_sweep((int)ifindex) > 0)
		agent_log(ses->peer, "server %" PRIu64 " left its XDP program on %s: removed", srv->id, dev);
}

/* put_napis_back - the NAPI settings as they were when srv started (a mode may have set its own). */
static void put_napis_back(struct session *ses, const struct agent_server *srv)
{
	char err[300];

	if (netdev_napi_put_back(srv->napi, srv->nnapi, err, sizeof(err)))
		agent_log(ses->peer, "cannot put back NAPI settings after server %" PRIu64 ": %s", srv->id, err);
}

/* ---- start, stop, relay ---- */

static struct agent_server **slot_of(struct session *ses, uint64_t id)
{
	for (int i = 0; i < AGENT_MAX_SERVERS; i++)
		if (ses->servers.s[i] && ses->servers.s[i]->id == id)
			return &ses->servers.s[i];
	return NULL;
}

/* info - srv as a SERVER_INFO (status: its exit status, -1 while it runs). */
static void info(const struct agent_server *srv, int status, struct ctl_msg *out)
{
	ctl_msg_init(out, CTL_SERVER_INFO);
	ctl_put_u64(out, CTL_T_SERVER, srv->id);
	ctl_put_text(out, CTL_T_TOOL, srv->tool);
	ctl_put_u64(out, CTL_T_PID, (uint64_t)srv->child.pid);
	ctl_put_text(out, CTL_T_MODE, srv->mode);
	ctl_put_u64(out, CTL_T_PORT, srv->port);
	ctl_put_text(out, CTL_T_ADDR, srv->addr);
	ctl_put_u64(out, CTL_T_THREADS, (uint64_t)srv->threads);
	for (int i = 0; i < srv->ncpus; i++)
		ctl_put_i64(out, CTL_T_CPU, srv->cpus[i]);
	ctl_put_i64(out, CTL_T_STATUS, status);
}

/* from_hello - what the server says of itself in its HELLO_OK. */
static void from_hello(struct agent_server *srv, const struct ctl_msg *ok)
{
	uint64_t v = 0;

	ctl_get_text(ok, CTL_T_MODE, srv->mode, sizeof(srv->mode));
	if (!ctl_get_u64(ok, CTL_T_PORT, &v) && v <= 65535)
		srv->port = (uint16_t)v;
	ctl_get_text(ok, CTL_T_ADDR, srv->addr, sizeof(srv->addr));
	if (!srv->port && srv->addr[0] && strrchr(srv->addr, ':'))
		srv->port = (uint16_t)atoi(strrchr(srv->addr, ':') + 1);
	v = 0;
	ctl_get_u64(ok, CTL_T_THREADS, &v);
	srv->threads = v <= AGENT_SERVER_CPUS ? (int)v : 0;
	srv->ncpus = aw_cpus(ok->body, ok->len, srv->cpus, AGENT_SERVER_CPUS);
}

void servers_start(struct session *ses, const struct ctl_msg *in, struct ctl_msg *out)
{
	static struct argv_buf a;
	static struct start_req r;
	struct agent_server **slot = NULL, *srv;
	cpu_set_t allowed;
	char err[700];
	int rc;

	if (read_req(ses, in, &r, out) || build_argv(ses, &r, &a, out))
		return;
	for (int i = 0; i < AGENT_MAX_SERVERS && !slot; i++)
		if (!ses->servers.s[i])
			slot = &ses->servers.s[i];
	if (!slot || running >= ses->cfg->max_servers) {
		ctl_error_msg(out, EBUSY, "SERVER_START: %d servers run already, the most the agent allows "
			      "(--max-servers %d): stop one first", running, ses->cfg->max_servers);
		return;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		ctl_error_msg(out, ENOMEM, "out of memory");
		return;
	}
	/* a change of the host: its lock, and its NAPI settings kept, before anything runs */
	if ((rc = session_journal(ses, err, sizeof(err))) || (rc = keep_napis(ses, srv, err, sizeof(err)))) {
		ctl_error_msg(out, rc, "%s", err);
		free(srv);
		return;
	}
	srv->id = ses->servers.next_id;
	snprintf(srv->tool, sizeof(srv->tool), "%s", r.tool);
	/* its affinity the allowed set: a server asked for without CPUs stays on them too */
	rc = spawn_start_on(&srv->child, a.w, limits_affinity(ses->cfg, &allowed) ? &allowed : NULL, r.tool, "agent",
			    START_TIMEOUT_MS, &relay_msg, err, sizeof(err));
	if (rc) {
		agent_log(ses->peer, "server %s not started: %s", r.tool, err);
		ctl_error_msg(out, rc, "%s", err);
		put_napis_back(ses, srv);
		free(srv);
		return;
	}
	srv->child.ctl.timeout_ms = CALL_TIMEOUT_MS;
	from_hello(srv, &relay_msg);
	ses->servers.next_id++;
	running++;
	*slot = srv;
	agent_info(ses->peer, "server %" PRIu64 " started: %s, pid %d, port %u, mode %s", srv->id, srv->tool,
		  (int)srv->child.pid, srv->port, srv->mode);
	info(srv, -1, out);
}

/* stop_one - srv stopped and freed, its NAPI settings back; its exit status. */
static int stop_one(struct session *ses, struct agent_server **slot, const char *why)
{
	struct agent_server *srv = *slot;
	char line[300];
	int status;

	spawn_last_line(&srv->child, line, sizeof(line));
	status = spawn_stop(&srv->child, STOP_TIMEOUT_MS);
	sweep_xdp(ses, srv);
	put_napis_back(ses, srv);
	running--;
	agent_info(ses->peer, "server %" PRIu64 " (%s, pid %d) stopped (%s): exit status %d%s%s", srv->id, srv->tool,
		  (int)srv->child.pid, why, status, status > 0 && status != 128 + 15 && line[0] ? ": " : "",
		  status > 0 && status != 128 + 15 ? line : "");
	*slot = NULL;
	return status;
}

void servers_stop(struct session *ses, const struct ctl_msg *in, struct ctl_msg *out)
{
	struct agent_server **slot, *srv;
	uint64_t id = 0;
	int status;

	if (ctl_get_u64(in, CTL_T_SERVER, &id) || !(slot = slot_of(ses, id))) {
		ctl_error_msg(out, ENOENT, "SERVER_STOP: no server %" PRIu64 " in this session", id);
		return;
	}
	srv = *slot;
	status = stop_one(ses, slot, "the client asked");
	info(srv, status, out);
	free(srv);
}

void servers_relay(struct session *ses, const struct ctl_msg *in, struct ctl_msg *out)
{
	struct agent_server **slot;
	char err[400], line[300];
	uint64_t id = 0;
	int rc;

	ctl_get_u64(in, CTL_T_SERVER, &id);
	if (!(slot = slot_of(ses, id))) {
		ctl_error_msg(out, ENOENT, "%s for server %" PRIu64 ": no such server in this session", ctl_type_name(in->type),
			      id);
		return;
	}
	if (!spawn_alive(&(*slot)->child)) {
		spawn_last_line(&(*slot)->child, line, sizeof(line));
		ctl_error_msg(out, ECHILD, "server %" PRIu64 " (%s, pid %d) exited (status %d): %s", id, (*slot)->tool,
			      (int)(*slot)->child.pid, spawn_exit_status(&(*slot)->child), line[0] ? line : "(no message)");
		return;
	}
	relay_msg = *in;
	rc = ctl_exchange(&(*slot)->child.ctl, &relay_msg, out, err, sizeof(err));
	if (rc)
		ctl_error_msg(out, rc, "server %" PRIu64 " (%s): %s", id, (*slot)->tool, err);
}

int servers_evidence(struct session *ses, struct evidence *ev)
{
	int n = 0;

	for (int i = 0; i < AGENT_MAX_SERVERS; i++)
		if (ses->servers.s[i] && !spawn_threads(&ses->servers.s[i]->child, ev))
			n++;
	return n;
}

void servers_stop_all(struct session *ses, const char *why)
{
	for (int i = AGENT_MAX_SERVERS - 1; i >= 0; i--)
		if (ses->servers.s[i]) {
			struct agent_server *srv = ses->servers.s[i];

			stop_one(ses, &ses->servers.s[i], why);
			free(srv);
		}
}
