/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare --remote: the same matrix between two hosts. This host is the
 * client end (its device: the route to the other host); the other host's agent
 * (tools/remote/agent_client.h) starts each mode's rr server there, on the CPUs
 * asked for, and stops it after (its NAPI settings put back, so each mode starts
 * from the original). Both ends are described as their hosts report them: device,
 * driver, coalescing, channels, NAPI settings, sysctls, the NAPIs that served the
 * flows. --coalesce sets both ends' interrupt coalescing for the run;
 * --coalesce-matrix runs the table at the NIC's setting and at rx-usecs 0. Every
 * change on either end goes through an agent, which journals it first and
 * restores it at the end however the run ends (this end's through an agent of
 * our own, as a child: it restores even when compare is SIGKILLed). A device that
 * cannot report or change coalescing (veth) is said so, and the run goes on.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/napi.h>
#include <busypoll/net.h>
#include <busypoll/nic.h>

#include "tools/common/cmd.h"
#include "tools/common/emit.h"
#include "tools/link/netdev.h"
#include "tools/common/nic_text.h"
#include "tools/common/values.h"
#include "tools/harness/devfeat.h"
#include "tools/compare/compare.h"

#define ZERO_COALESCE "rx-usecs=0"

/* ---- options ---- */

/* --coalesce LIST: ethtool's names, checked now, kept in canonical form. */
static int parse_coalesce(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			  size_t errlen)
{
	struct cmp_opts *o = base;
	struct bp_nic_coalesce c;
	char why[200];

	if (nic_parse_coalesce(v, &c, why, sizeof(why)))
		return tool_fail(err, errlen, "%s %s: %s", name, v, why);
	nic_format_coalesce(&c, o->coalesce, sizeof(o->coalesce));
	return 0;
}

#define RF(m) OPT_FIELD(struct cmp_opts, m)

static const struct opt_spec remote_specs[] = {
	{ .name = "server-addr", .kind = OPT_HOST, RF(server_addr), .arg = "ADDR",
	  .help = "with --remote: the server's data address there (default:\nthe --remote host)" },
	{ .name = "coalesce", .kind = OPT_CUSTOM, .parse = parse_coalesce, .arg = "LIST",
	  .help = "with --remote: both ends' interrupt coalescing for the run,\ne.g. rx-usecs=0,rx-frames=1 "
		  "(restored after)" },
	{ .name = "coalesce-matrix", .kind = OPT_FLAG, RF(coalesce_matrix),
	  .help = "with --remote: the table at the NICs' coalescing and at\nrx-usecs 0, side by side" },
};

int cmp_remote_resolve(const struct agent_remote_opts *remote, const char *server_addr, char *ip, size_t iplen,
		       char *err, size_t errlen)
{
	const char *host = server_addr[0] ? server_addr : remote->host;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &ai);

	if (rc || !ai) {
		if (server_addr[0])
			return tool_fail(err, errlen, "--server-addr %s: does not resolve here: %s", host, gai_strerror(rc));
		return tool_fail(err, errlen, "--remote %s: %s does not resolve here (%s): name the agent's host as "
				 "this host resolves it", remote->remote, host, gai_strerror(rc));
	}
	bp_format_addr(ai->ai_addr, ip, iplen);
	freeaddrinfo(ai);
	/* bp_format_addr writes a port: the address alone is what the agent is asked for */
	if (ip[0] == '[') {
		char *end = strchr(ip, ']');

		if (end)
			*end = 0;
		memmove(ip, ip + 1, strlen(ip));
	} else if (strrchr(ip, ':')) {
		*strrchr(ip, ':') = 0;
	}
	return 0;
}

static int remote_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct cmp_opts *o = base;
	static const char *const with_remote[] = { "server-addr", "coalesce", "coalesce-matrix" };

	if (!o->remote.remote[0]) {
		for (size_t i = 0; i < sizeof(with_remote) / sizeof(with_remote[0]); i++)
			if (opt_given(seen, with_remote[i]))
				return tool_fail(err, errlen, "--%s goes with --remote HOST (the test bed's veth has no "
						 "NIC settings)", with_remote[i]);
		return 0;
	}
	if (o->loopback)
		return tool_fail(err, errlen, "--loopback and --remote exclude each other: the client runs here, the "
				 "server on the remote host");
	if (o->coalesce[0] && o->coalesce_matrix)
		return tool_fail(err, errlen, "--coalesce and --coalesce-matrix exclude each other (the matrix runs "
				 "the NICs' own setting and rx-usecs 0)");
	if ((o->coalesce[0] || o->coalesce_matrix) && geteuid() != 0)
		return tool_fail(err, errlen, "--%s changes this host's NIC too: run as root",
				 o->coalesce[0] ? "coalesce" : "coalesce-matrix");
	return cmp_remote_resolve(&o->remote, o->server_addr, o->server_ip, sizeof(o->server_ip), err, errlen);
}

const struct opt_table cmp_remote_table = OPT_TABLE(remote_specs, remote_check);

/* ---- the ends ---- */

/* fill_end - what a path report says of an end's device. */
static void fill_end(struct cmp_end *e, const struct bp_path_report *p)
{
	e->valid = true;
	snprintf(e->dev, sizeof(e->dev), "%s", p->dev);
	snprintf(e->driver, sizeof(e->driver), "%s", p->err[BP_PATH_DRIVER] ? "?" : p->driver.driver);
	snprintf(e->driver_version, sizeof(e->driver_version), "%s", p->driver.version);
	snprintf(e->bus, sizeof(e->bus), "%s", p->driver.bus);
	nic_format_channels(&p->channels, e->channels, sizeof(e->channels));
	e->coal_err = p->err[BP_PATH_COALESCE];
	if (!e->coal_err)
		nic_format_coalesce(&p->coalesce, e->coal_found, sizeof(e->coal_found));
	snprintf(e->coal_why, sizeof(e->coal_why), "%s", p->why[BP_PATH_COALESCE]);
	e->nnapi = 0;
	for (size_t i = 0; i < p->n_napi && i < BP_PATH_MAX && e->nnapi < CMP_MAX_NAPI; i++)
		e->napi[e->nnapi++] = p->napi[i];
}

/* local_end - this host's end: the device of the route to the server. */
static int local_end(struct cmp_report *r, char *err, size_t errlen)
{
	static struct bp_path_report p;
	struct cmp_end *e = &r->ends[0];
	struct sockaddr_storage dst, src;
	struct bp_host host;
	socklen_t len;
	char dev[IFNAMSIZ];
	int rc;

	snprintf(e->role, sizeof(e->role), "client");
	bp_host_read(&host);
	snprintf(e->host, sizeof(e->host), "%s", host.hostname[0] ? host.hostname : "?");
	snprintf(e->kernel, sizeof(e->kernel), "%s", host.kernel);
	e->busy_poll = host.busy_poll;
	e->busy_read = host.busy_read;
	snprintf(e->sysctl_why, sizeof(e->sysctl_why), "%s", host.sysctl_why);
	if (bp_parse_addr(r->opts.server_ip, 9, &dst, &len)) {
		snprintf(err, errlen, "%s: %s", r->opts.server_ip, bp_last_error());
		return -EINVAL;
	}
	if ((rc = netdev_route(&dst, len, &src, dev, err, errlen)))
		return rc;
	bp_format_addr((struct sockaddr *)&src, e->addr, sizeof(e->addr));
	if (strrchr(e->addr, ':'))
		*strrchr(e->addr, ':') = 0;
	if ((rc = bp_path_report(dev, &p))) {
		snprintf(err, errlen, "this host's device %s: %s", dev, bp_last_error());
		return rc;
	}
	fill_end(e, &p);
	devfeat_read(dev, &e->gro, &e->tso);
	return 0;
}

/* remote_end - the agent's end: the device that has the server's address there. */
static int remote_end(struct cmp_report *r, struct agent_conn *a, char *err, size_t errlen)
{
	static struct bp_path_report p;
	struct cmp_end *e = &r->ends[1];
	struct aw_features feat;
	int rc;

	snprintf(e->role, sizeof(e->role), "server");
	e->gro = e->tso = DIAG_UNKNOWN;
	snprintf(e->host, sizeof(e->host), "%s", a->hello.hostname);
	snprintf(e->kernel, sizeof(e->kernel), "%s", a->hello.kernel);
	e->busy_poll = a->hello.busy_poll;
	e->busy_read = a->hello.busy_read;
	snprintf(e->sysctl_why, sizeof(e->sysctl_why), "%s", a->hello.sysctl_why);
	snprintf(e->addr, sizeof(e->addr), "%s", r->opts.server_ip);
	if ((rc = agent_path(a, NULL, r->opts.server_ip, &p, &feat, err, errlen)))
		return rc;
	fill_end(e, &p);
	e->gro = feat.gro;
	e->tso = feat.tso;
	return 0;
}

/*
 * path_facts - each end's path for the diagnosis: its device (veth by its driver),
 * NAPIs, threaded NAPI, GRO and TSO as its host reports them (the agent reads the
 * remote device's; one that predates that leaves them not known).
 */
static void path_facts(struct cmp_report *r)
{
	for (int i = 0; i < 2; i++) {
		const struct cmp_end *e = &r->ends[i];
		struct cmp_path *p = &r->pathf[i];

		*p = (struct cmp_path){ .where = i ? "remote host" : "local host", .veth = !strcmp(e->driver, "veth"),
					.napis = e->valid ? e->nnapi : -1, .gro = e->gro, .tso = e->tso,
					.threaded = e->nnapi ? DIAG_OFF : DIAG_UNKNOWN };
		memcpy(p->dev, e->dev, sizeof(p->dev)); /* both IFNAMSIZ, terminated */
		p->dev[sizeof(p->dev) - 1] = '\0';
		for (int k = 0; k < e->nnapi; k++)
			if (e->napi[k].threaded)
				p->threaded = DIAG_ON;
	}
}

/* ---- the run ---- */

struct remote_side {
	struct cmp_report *r;
	struct agent_conn *a;          /* the server's host */
	struct agent_server srv;
};

static int remote_start(void *ctx, int mi, char *host, size_t hostlen, uint16_t *port, char *err, size_t errlen)
{
	struct remote_side *rs = ctx;
	const struct cmp_opts *o = &rs->r->opts;
	const struct agent_server_req req = {
		.tool = "rr", .mode = o->server_modes[mi], .addr = o->server_ip, .port = 0,
		.cpus = o->server_cpus, .ncpus = o->nserver_cpus, .threads = o->threads, .priority = -1,
	};
	int ret = agent_server_start(rs->a, &req, &rs->srv, err, errlen);

	if (ret)
		return ret;
	snprintf(host, hostlen, "%s", o->server_ip);
	*port = rs->srv.port;
	return 0;
}

static void remote_stop(void *ctx, int mi)
{
	struct remote_side *rs = ctx;
	const struct cmp_end *e = &rs->r->ends[0];
	char err[512];

	/* the agent puts its end's NAPI settings back; ours (a client mode may set its own) here */
	if (agent_server_stop(rs->a, &rs->srv, err, sizeof(err)) && !rs->r->opts.quiet)
		fprintf(stderr, "busypoll compare: %s\n", err);
	if (netdev_napi_put_back(e->napi, e->nnapi, err, sizeof(err)) && !rs->r->opts.quiet && geteuid() == 0)
		fprintf(stderr, "busypoll compare: this host's %s\n", err);
}

/* remote_napi_now - both ends' NAPI settings now, the cell's server still up (this end read here, B's from its agent). */
static void remote_napi_now(void *ctx, struct cmp_cell *cell)
{
	struct remote_side *rs = ctx;

	cell->nnapi_at = 0;
	cell->napi_at_read = true;
	for (int end = 0; end < 2; end++) {
		const struct cmp_end *e = &rs->r->ends[end];

		for (int i = 0; i < e->nnapi && cell->nnapi_at < CMP_MAX_NAPI; i++) {
			struct bp_napi_info now;
			char err[300];

			if (end ? agent_napi(rs->a, e->napi[i].id, NULL, &now, err, sizeof(err)) :
				  bp_napi_get(e->napi[i].id, &now)) {
				cell->napi_at_read = false;
				continue;
			}
			cell->napi_at[cell->nnapi_at++] = (struct cmp_napi_at){
				.id = e->napi[i].id, .side = end ? 's' : 'c', .defer_hard_irqs = now.defer_hard_irqs,
				.gro_flush_timeout_ns = now.gro_flush_timeout_ns,
				.irq_suspend_timeout_ns = now.irq_suspend_timeout_ns,
			};
		}
	}
}

/*
 * set_coalesce - setting k's coalescing on one end through its agent (NULL: none
 * here). Not supported there: said, and the run goes on. 0, or -errno (refused).
 */
static int set_coalesce(struct cmp_report *r, int end, struct agent_conn *a, const char *set, int k, char *err,
			size_t errlen)
{
	struct cmp_end *e = &r->ends[end];
	struct bp_nic_coalesce now;
	char why[400];
	int rc;

	if (e->coal_err || !a) {
		snprintf(e->coal_run[k], sizeof(e->coal_run[k]), "not applied: %s",
			 e->coal_err ? e->coal_why : "no agent on this host (not root)");
		return 0;
	}
	rc = agent_coalesce(a, e->dev, set, &now, why, sizeof(why));
	if (rc == -EOPNOTSUPP) {
		snprintf(e->coal_run[k], sizeof(e->coal_run[k]), "not applied: %.240s", why);
		return 0;
	}
	if (rc) {
		snprintf(err, errlen, "%s coalescing %s on the %s end (%s): %s", set, e->dev, e->role, e->host, why);
		return rc;
	}
	nic_format_coalesce(&now, e->coal_run[k], sizeof(e->coal_run[k]));
	e->coal_applied[k] = true;
	return 0;
}

/*
 * hold_end - end's NAPIs journalled by its agent a (set to what they are), which takes
 * that host's change lock for the session: restored however we end, and a host another
 * session holds is found now, before any cell. 0, or -EBUSY with the line naming the
 * holder in err; any other refusal is said for this end (not quiet), and the run goes on.
 */
static int hold_end(struct cmp_report *r, int end, struct agent_conn *a, char *err, size_t errlen)
{
	const struct cmp_end *e = &r->ends[end];

	for (int i = 0; i < e->nnapi; i++) {
		bp_napi_settings s = e->napi[i];
		struct bp_napi_info now;
		char text[256], why[400];
		int rc;

		s.has &= BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND;
		nic_format_napi(&s, text, sizeof(text));
		if (!text[0] || !(rc = agent_napi(a, s.id, text, &now, why, sizeof(why))))
			continue;
		if (rc == -EBUSY) {
			snprintf(err, errlen, "%s (%s) is busy: %.300s; no cell was run", end ? "the server's host" : "this host",
				 e->host, why);
			return -EBUSY;
		}
		/* the server's host may refuse a change to this user: its cells say so if they need one */
		if (!end && !r->opts.quiet)
			fprintf(stderr, "busypoll compare: this host's NAPI %u is not journalled: %s\n", s.id, why);
	}
	return 0;
}

/* The two hosts held for a session: the server's agent, this end's own (as root). */
struct cmp_remote_run {
	struct cmp_report *r;
	struct agent_conn a, la;
	bool local_agent;
	struct remote_side rs;
	struct cmp_side side;
};

int cmp_remote_coalesce(struct cmp_remote_run *rr, const char *set, int k, char *err, size_t errlen)
{
	struct cmp_report *r = rr->r;
	int rc;

	r->coal_now = k;
	snprintf(r->coal_label[k], sizeof(r->coal_label[k]), "%s", set ? set : "as found");
	if (set && ((rc = set_coalesce(r, 0, rr->local_agent ? &rr->la : NULL, set, k, err, errlen)) ||
		    (rc = set_coalesce(r, 1, &rr->a, set, k, err, errlen))))
		return rc;
	return 0;
}

int cmp_remote_coalesce_found(struct cmp_remote_run *rr, char *err, size_t errlen)
{
	struct cmp_report *r = rr->r;
	struct agent_conn *a[2] = { rr->local_agent ? &rr->la : NULL, &rr->a };
	int rc;

	for (int end = 0; end < 2; end++) {
		struct cmp_end *e = &r->ends[end];
		bool changed = false;

		for (int k = 0; k < CMP_MAX_COAL; k++)
			changed |= e->coal_applied[k];
		if (!changed || !e->coal_found[0])
			continue;
		if ((rc = set_coalesce(r, end, a[end], e->coal_found, 0, err, errlen)))
			return rc;
	}
	return 0;
}

/* block - setting k: coalescing on both ends, then the matrix. */
static int block(struct cmp_remote_run *rr, const char *set, int k, char *err, size_t errlen)
{
	struct cmp_report *r = rr->r;
	int rc;

	if ((rc = cmp_remote_coalesce(rr, set, k, err, errlen)))
		return rc;
	if (set && !r->ends[0].coal_applied[k] && !r->ends[1].coal_applied[k] && r->opts.coalesce_matrix) {
		/* the same setting twice would only repeat the table */
		r->ncoal = k;
		return 0;
	}
	return cmp_run_matrix(r, &rr->side);
}

int cmp_remote_open(struct cmp_report *r, struct cmp_remote_run **out, const struct cmp_side **side, char *err,
		    size_t errlen)
{
	struct cmp_remote_run *rr = calloc(1, sizeof(*rr));
	const struct cmp_opts *o = &r->opts;
	int rc;

	*out = NULL;
	if (!rr)
		return tool_fail(err, errlen, "out of memory") ? -ENOMEM : -ENOMEM;
	rr->r = r;
	rr->la.r.rfd = rr->la.r.wfd = -1;
	rr->a.r.rfd = rr->a.r.wfd = -1;
	rr->local_agent = geteuid() == 0;
	rr->rs = (struct remote_side){ .r = r, .a = &rr->a };
	rr->side = (struct cmp_side){ .start = remote_start, .stop = remote_stop, .napi_now = remote_napi_now,
				      .ctx = &rr->rs };
	*out = rr;
	*side = &rr->side;
	r->remote = true;
	r->opts.remote.quiet = o->quiet;
	if ((rc = agent_open(&rr->a, &o->remote, err, errlen)))
		return rc;
	snprintf(r->agent, sizeof(r->agent), "%s", rr->a.where);
	r->agent_pid = rr->a.hello.pid;
	/*
	 * this end's agent first: at its start it restores what a killed session left, so
	 * the ends are read after every restore, as the first cell finds them
	 */
	if (rr->local_agent && (rc = agent_local(&rr->la, NULL, err, errlen)))
		return rc;
	if ((rc = local_end(r, err, errlen)) || (rc = remote_end(r, &rr->a, err, errlen)))
		return rc;
	snprintf(r->path, sizeof(r->path), "two hosts: %.30s (%s, %.40s) -> %.30s (%s, %.40s)", r->ends[0].host, r->ends[0].dev,
		 r->ends[0].addr, r->ends[1].host, r->ends[1].dev, r->ends[1].addr);
	snprintf(r->kernel, sizeof(r->kernel), "%s", r->ends[0].kernel);
	path_facts(r);
	r->sysctl_busy_poll = r->ends[0].busy_poll;
	r->sysctl_busy_read = r->ends[0].busy_read;
	snprintf(r->sysctl_why, sizeof(r->sysctl_why), "%s", r->ends[0].sysctl_why);
	/*
	 * both hosts held for the session before any cell (the server's first): a host
	 * another session changes is refused with the line naming it, and this end's
	 * changes go through an agent too: journalled, restored if we are killed
	 */
	if ((rc = hold_end(r, 1, &rr->a, err, errlen)) || (rr->local_agent && (rc = hold_end(r, 0, &rr->la, err, errlen))))
		return rc;
	return 0;
}

int cmp_remote_close(struct cmp_remote_run *rr, char *err, size_t errlen)
{
	char e2[512];
	int rc = 0;

	if (!rr)
		return 0;
	if (agent_close(&rr->a, &rr->r->restored[1], e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		rc = -EIO;
	}
	if (agent_close(&rr->la, &rr->r->restored[0], e2, sizeof(e2)) && !rc) {
		snprintf(err, errlen, "%s", e2);
		rc = -EIO;
	}
	free(rr);
	return rc;
}

int cmp_remote_run(struct cmp_report *r, volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	struct cmp_remote_run *rr;
	const struct cmp_side *side;
	const struct cmp_opts *o = &r->opts;
	char e2[512];
	int rc;

	r->ncoal = o->coalesce_matrix ? 2 : 1;
	rc = cmp_remote_open(r, &rr, &side, err, errlen);
	if (!rc && o->coalesce_matrix && r->ends[0].coal_err && r->ends[1].coal_err)
		r->ncoal = 1; /* neither end can change it (veth): one table, and the progress counts one */
	if (!rc)
		rc = block(rr, o->coalesce[0] ? o->coalesce : NULL, 0, err, errlen);
	if (!rc && o->coalesce_matrix && !*stop)
		rc = block(rr, ZERO_COALESCE, 1, err, errlen);
	if (cmp_remote_close(rr, e2, sizeof(e2)) && !rc) {
		snprintf(err, errlen, "%s", e2);
		rc = -EIO;
	}
	if (rc && r->ncells) {
		/* what was measured stays: printed, with what went wrong */
		snprintf(r->remote_error, sizeof(r->remote_error), "%s", err);
		rc = 0;
	}
	return rc;
}

/* ---- output ---- */

const char *cmp_coal_text(const struct cmp_report *r, const struct cmp_cell *c)
{
	if (!r->remote || (r->ncoal < 2 && !r->opts.coalesce[0]))
		return NULL;
	return r->coal_label[c->coal_idx];
}

/* napi_line - one NAPI's settings, as the local header words them. */
static void napi_line(FILE *out, const char *role, const struct bp_napi_info *n, bool served)
{
	fprintf(out, "  NAPI %u (%s end%s): defer-hard-irqs %u, gro-flush-timeout %llu ns, irq-suspend-timeout %llu ns, "
		     "threaded %u\n",
		n->id, role, served ? ", served the flows" : "", n->defer_hard_irqs,
		(unsigned long long)n->gro_flush_timeout_ns, (unsigned long long)n->irq_suspend_timeout_ns, n->threaded);
}

static bool was_served(const struct cmp_end *e, uint32_t id)
{
	for (int i = 0; i < e->nserved; i++)
		if (e->served[i] == id)
			return true;
	return false;
}

void cmp_print_ends(FILE *out, const struct cmp_report *r)
{
	fprintf(out, "  agent: %s (pid %u); what it changed there is restored at the end\n", r->agent, r->agent_pid);
	for (int k = 0; k < 2; k++) {
		const struct cmp_end *e = &r->ends[k];
		char bp[16], br[16];

		if (!e->valid)
			continue;
		fprintf(out, "  %s end: %s, kernel %s; device %s (%s%s%s%s%s), %s; channels %s\n", e->role, e->host,
			e->kernel, e->dev, e->driver, e->driver_version[0] ? " " : "", e->driver_version,
			e->bus[0] ? ", bus " : "", e->bus, e->addr, e->channels[0] ? e->channels : "-");
		if (e->coal_err)
			fprintf(out, "  %s coalescing: not supported (%s)\n", e->role, e->coal_why);
		else
			fprintf(out, "  %s coalescing: %s\n", e->role, e->coal_found[0] ? e->coal_found : "(none reported)");
		for (int c = 0; c < r->ncoal; c++)
			if (e->coal_run[c][0])
				fprintf(out, "  %s coalescing for the run%s%s: %s\n", e->role, r->ncoal > 1 ? " at " : "",
					r->ncoal > 1 ? r->coal_label[c] : "", e->coal_run[c]);
		fprintf(out, "  %s %s: GRO %s, TSO %s\n", e->role, e->dev, devfeat_text(e->gro), devfeat_text(e->tso));
		fprintf(out, "  %s net.core.busy_poll %s, net.core.busy_read %s%s%s%s\n", e->role,
			bp_known_text(e->busy_poll, bp, sizeof(bp)), bp_known_text(e->busy_read, br, sizeof(br)),
			e->sysctl_why[0] ? " (" : "", e->sysctl_why, e->sysctl_why[0] ? ")" : "");
		for (int i = 0; i < e->nnapi; i++)
			napi_line(out, e->role, &e->napi[i], was_served(e, e->napi[i].id));
		if (!e->nnapi)
			fprintf(out, "  %s end: %s has no NAPI instances\n", e->role, e->dev);
	}
	if (r->opts.coalesce_matrix && r->ncoal < 2)
		fprintf(out, "  not run at " ZERO_COALESCE ": neither end can change its coalescing\n");
	if (r->remote_error[0])
		fprintf(out, "  failed: %s\n", r->remote_error);
}

void cmp_print_coalesce(FILE *out, const struct cmp_report *r)
{
	if (r->ncoal < 2)
		return;
	fprintf(out, "\n%s against the NICs' own coalescing (%s), same mode and flows:\n", r->coal_label[1],
		r->coal_label[0]);
	fprintf(out, "%-40s %5s %10s %10s %8s %10s %10s %8s\n", "mode", "flows", "P50 found", "P50 0", "change",
		"P99 found", "P99 0", "change");
	for (int i = 0; i < r->ncells; i++) {
		const struct cmp_cell *a = &r->cells[i];

		if (a->coal_idx != 0 || a->failed)
			continue;
		for (int j = 0; j < r->ncells; j++) {
			const struct cmp_cell *b = &r->cells[j];

			if (b->coal_idx != 1 || b->mode_idx != a->mode_idx || b->flows != a->flows || b->failed ||
			    !a->lat_us[2] || !a->lat_us[4])
				continue;
			fprintf(out, "%-40s %5d %10.1f %10.1f %+7.0f%% %10.1f %10.1f %+7.0f%%\n", r->opts.labels[a->mode_idx],
				a->flows, a->lat_us[2], b->lat_us[2], (b->lat_us[2] / a->lat_us[2] - 1) * 100, a->lat_us[4],
				b->lat_us[4], (b->lat_us[4] / a->lat_us[4] - 1) * 100);
		}
	}
}

void cmp_emit_ends(struct emit *e, const struct cmp_report *r)
{
	em_begin(e, "remote", !r->remote);
	em_string(e, "agent", r->agent, sizeof(r->agent));
	em_u64(e, "agent_pid", r->agent_pid);
	em_u64(e, "restored_client", r->restored[0]);
	em_u64(e, "restored_server", r->restored[1]);
	if (r->remote_error[0])
		em_string(e, "error", r->remote_error, sizeof(r->remote_error));
	else
		em_null(e, "error");
	em_end(e);
	em_array_begin(e, "ends");
	for (int k = 0; k < 2 && r->remote; k++) {
		const struct cmp_end *x = &r->ends[k];
		int64_t ids[EV_MAX_NAPI];

		em_begin(e, NULL, false);
		em_string(e, "end", x->role, sizeof(x->role));
		em_string(e, "host", x->host, sizeof(x->host));
		em_known_string(e, "kernel", x->kernel, sizeof(x->kernel));
		em_string(e, "address", x->addr, sizeof(x->addr));
		em_string(e, "device", x->dev, sizeof(x->dev));
		em_string(e, "driver", x->driver, sizeof(x->driver));
		em_string(e, "driver_version", x->driver_version, sizeof(x->driver_version));
		em_string(e, "bus", x->bus, sizeof(x->bus));
		em_string(e, "channels", x->channels, sizeof(x->channels));
		em_begin(e, "coalesce", false);
		em_bool(e, "supported", !x->coal_err);
		if (x->coal_err) {
			em_null(e, "found");
			em_string(e, "note", x->coal_why, sizeof(x->coal_why));
		} else {
			em_string(e, "found", x->coal_found, sizeof(x->coal_found));
			em_null(e, "note");
		}
		em_array_begin(e, "for_run");
		for (int c = 0; c < r->ncoal; c++) {
			em_begin(e, NULL, false);
			em_string(e, "setting", r->coal_label[c], sizeof(r->coal_label[c]));
			em_bool(e, "applied", x->coal_applied[c]);
			em_string(e, "result", x->coal_run[c], sizeof(x->coal_run[c]));
			em_end(e);
		}
		em_array_end(e);
		em_end(e);
		devfeat_emit(e, "gro", x->gro);
		devfeat_emit(e, "tso", x->tso);
		em_known_int(e, "sysctl_busy_poll", x->busy_poll);
		em_known_int(e, "sysctl_busy_read", x->busy_read);
		em_known_string(e, "sysctl_note", x->sysctl_why, sizeof(x->sysctl_why)); /* why one is null */
		em_array_begin(e, "napi");
		for (int i = 0; i < x->nnapi; i++) {
			em_begin(e, NULL, false);
			em_u64(e, "id", x->napi[i].id);
			em_u64(e, "defer_hard_irqs", x->napi[i].defer_hard_irqs);
			em_u64(e, "gro_flush_timeout_ns", x->napi[i].gro_flush_timeout_ns);
			em_u64(e, "irq_suspend_timeout_ns", x->napi[i].irq_suspend_timeout_ns);
			em_u64(e, "threaded", x->napi[i].threaded);
			em_end(e);
		}
		em_array_end(e);
		for (int i = 0; i < x->nserved; i++)
			ids[i] = x->served[i];
		em_list(e, "served_napi_ids", ids, (size_t)x->nserved);
		em_end(e);
	}
	em_array_end(e);
}
