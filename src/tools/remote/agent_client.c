/* SPDX-License-Identifier: MIT */
/* A client's end of the two-host agent (contract in tools/remote/agent_client.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/remote/agent_client.h"
#include "tools/link/auth.h"
#include "tools/common/nic_text.h"
#include "tools/common/values.h"
#include "tools/harness/spawn.h"

#define MAX_WORDS 64

/* ---- the option layer ---- */

void agent_remote_defaults(struct agent_remote_opts *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->ssh, sizeof(o->ssh), "%s", AGENT_DEFAULT_SSH);
	snprintf(o->agent_cmd, sizeof(o->agent_cmd), "%s", AGENT_DEFAULT_CMD);
}

#define RF(m) OPT_FIELD(struct agent_remote_opts, m)

static const struct opt_spec remote_specs[] = {
	{ .name = "remote", .kind = OPT_HOST, RF(remote), .arg = "HOST",
	  .help = "the server side on another host, through its agent:\n[user@]HOST runs `busypoll agent --stdio` there "
		  "over ssh;\nHOST:PORT with --key-file reaches a standing agent" },
	{ .name = "key-file", .kind = OPT_TEXT, RF(key_file), .arg = "FILE",
	  .help = "the standing agent's key (mode 0600; busypoll agent --new-key)" },
	{ .name = "ssh", .kind = OPT_TEXT, .flags = OPT_F_DASH_OK, RF(ssh), .arg = "CMD",
	  .help = "the command that reaches HOST", .dflt = OPT_DFLT_FIELD },
	{ .name = "agent-cmd", .kind = OPT_TEXT, .flags = OPT_F_DASH_OK, RF(agent_cmd), .arg = "CMD",
	  .help = "what it runs there", .dflt = OPT_DFLT_FIELD },
};

/* user_ok - a user name for ssh: [A-Za-z0-9._-], not starting with '-'. */
static bool user_ok(const char *u, size_t len)
{
	if (!len || u[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)u[i]) && !strchr("._-", u[i]))
			return false;
	return true;
}

/* host_ok - a DNS name (labels of letters, digits and inner '-'), an IPv4 address, or [IPv6] (or bare IPv6). */
static bool host_ok(const char *h)
{
	char v6[INET6_ADDRSTRLEN + 2];
	struct in6_addr a6;
	size_t len = strlen(h), label = 0;

	if (h[0] == '[' && len > 2 && h[len - 1] == ']' && len - 2 < sizeof(v6)) {
		snprintf(v6, sizeof(v6), "%.*s", (int)(len - 2), h + 1);
		return inet_pton(AF_INET6, v6, &a6) == 1;
	}
	if (strchr(h, ':'))
		return inet_pton(AF_INET6, h, &a6) == 1;
	if (!len || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (h[i] == '.' || h[i] == 0) {
			if (!label || h[i - 1] == '-' || label > 63)
				return false;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)h[i]) && (h[i] != '-' || !label))
			return false;
		label++;
	}
	return true;
}

/*
 * has_port - does --remote name a port: "HOST:PORT" or "[IPv6]:PORT" (a bare IPv6
 * address, with its colons, names none).
 */
static bool has_port(const char *r)
{
	const char *h = strrchr(r, '@') ? strrchr(r, '@') + 1 : r, *colon = strrchr(h, ':');

	if (!colon || !colon[1] || colon[1 + strspn(colon + 1, "0123456789")])
		return false;
	if (h[0] == '[')
		return colon > h && colon[-1] == ']';
	return strchr(h, ':') == colon;
}

/* resolves - does the agent's host resolve here; if not, the one line that says so. */
static int resolves(const struct agent_remote_opts *o, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int rc = getaddrinfo(o->host, NULL, &hints, &ai);

	if (rc || !ai)
		return tool_fail(err, errlen, "--remote %s: the agent host %s does not resolve here (%s)", o->remote,
				 o->host, gai_strerror(rc));
	freeaddrinfo(ai);
	return 0;
}

/* remote_check - the options that go together; the key file read (and refused) before any work. */
static int remote_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct agent_remote_opts *o = base;
	const char *at;

	if (!o->remote[0]) {
		static const char *const alone[] = { "key-file", "ssh", "agent-cmd" };

		for (size_t i = 0; i < sizeof(alone) / sizeof(alone[0]); i++)
			if (opt_given(seen, alone[i]))
				return tool_fail(err, errlen, "--%s goes with --remote HOST", alone[i]);
		return 0;
	}
	if (o->key_file[0]) {
		struct auth_key k;

		if (opt_given(seen, "ssh") || opt_given(seen, "agent-cmd"))
			return tool_fail(err, errlen, "--key-file reaches a standing agent over TCP: --%s is for ssh",
					 opt_given(seen, "ssh") ? "ssh" : "agent-cmd");
		if (tool_opt_hostport("--remote", o->remote, err, errlen))
			return -EINVAL;
		if (!strrchr(o->remote, ':') || strrchr(o->remote, ']') > strrchr(o->remote, ':'))
			return tool_fail(err, errlen, "--remote %s: a standing agent is HOST:PORT (its --listen)", o->remote);
		if (auth_key_load(o->key_file, &k, err, errlen))
			return -EINVAL;
		auth_key_wipe(&k);
		snprintf(o->host, sizeof(o->host), "%.*s", (int)(strrchr(o->remote, ':') - o->remote), o->remote);
	} else {
		if (has_port(o->remote))
			return tool_fail(err, errlen, "--remote %s: HOST:PORT needs --key-file FILE (the standing agent's "
					 "key; [USER@]HOST alone reaches an agent over ssh)", o->remote);
		at = strrchr(o->remote, '@');
		snprintf(o->host, sizeof(o->host), "%s", at ? at + 1 : o->remote);
		if (!o->host[0])
			return tool_fail(err, errlen, "--remote %s: no host after the '@'", o->remote);
		/* it goes on ssh's command line: a name, never an option or anything a shell reads */
		if ((at && !user_ok(o->remote, (size_t)(at - o->remote))) || !host_ok(o->host))
			return tool_fail(err, errlen, "--remote %s: give [USER@]HOST, HOST a DNS name, an IPv4 address or "
					 "[IPv6], USER of letters, digits, '.', '_' and '-'", o->remote);
	}
	/* "[::1]" as a data address is "::1" */
	if (o->host[0] == '[' && o->host[strlen(o->host) - 1] == ']') {
		memmove(o->host, o->host + 1, strlen(o->host));
		o->host[strlen(o->host) - 1] = 0;
	}
	/* a standing agent is reached by this host's resolver; ssh may know names it does not */
	return o->key_file[0] ? resolves(o, err, errlen) : 0;
}

const struct opt_table agent_remote_table = {
	.title = "the remote host (busypoll agent):",
	.specs = remote_specs,
	.n = sizeof(remote_specs) / sizeof(remote_specs[0]),
	.check = remote_check,
};

/* ---- reaching it ---- */

/* hello - HELLO on a fresh connection, the agent's HELLO_OK read. */
static int hello(struct agent_conn *a, char *err, size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int ret;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ctl_session_transport(&a->ctl, &remote_transport, &a->r, a->where, AGENT_TIMEOUT_MS);
	ctl_msg_init(&m[0], CTL_HELLO);
	ctl_put_text(&m[0], CTL_T_TOOL, "agent");
	ret = ctl_call(&a->ctl, &m[0], CTL_HELLO_OK, &m[1], err, errlen);
	if (!ret && aw_hello_get(&m[1], &a->hello)) {
		snprintf(err, errlen, "%s answered, but not as a busypoll agent", a->where);
		ret = -EPROTO;
	}
	free(m);
	return ret;
}

/* spawn_agent - the agent through a command whose stdin and stdout become the channel. */
static int spawn_agent(struct agent_conn *a, char *const argv[], char *err, size_t errlen)
{
	int ret = remote_spawn(&a->r, argv, a->where, AGENT_TIMEOUT_MS, err, errlen);

	if (ret)
		return ret;
	a->open = true;
	ret = hello(a, err, errlen);
	if (ret == -ECONNRESET || ret == -EPIPE)
		snprintf(err, errlen, "%s: the command ended before the agent answered (its own message is above); is "
			 "busypoll installed there (--agent-cmd CMD names it)?", a->where);
	return ret;
}

/* is_ssh - the command is OpenSSH's client (by its name): it takes "--" before the destination. */
static bool is_ssh(const char *cmd)
{
	const char *base = strrchr(cmd, '/');

	return !strcmp(base ? base + 1 : cmd, "ssh");
}

int agent_open(struct agent_conn *a, const struct agent_remote_opts *o, char *err, size_t errlen)
{
	static char words[4096];
	char *argv[2 * MAX_WORDS + 4];
	int n1, n2, ret;

	memset(a, 0, sizeof(*a));
	a->r.rfd = a->r.wfd = -1;
	if (o->key_file[0]) {
		snprintf(a->where, sizeof(a->where), "the agent at %s", o->remote);
		ret = remote_connect(&a->r, o->remote, o->key_file, AGENT_TIMEOUT_MS, err, errlen);
		if (ret)
			return ret;
		a->open = true;
		ret = hello(a, err, errlen);
	} else {
		snprintf(a->where, sizeof(a->where), "the agent on %s (%.40s)", o->remote, o->ssh);
		n1 = spawn_split_args(o->ssh, words, argv, MAX_WORDS);
		if (n1 <= 0) {
			snprintf(err, errlen, "--ssh '%s': not a command (empty, or unbalanced quotes)", o->ssh);
			return -EINVAL;
		}
		/* ssh's options end before the destination (another --ssh command takes what it takes) */
		if (is_ssh(argv[0]))
			argv[n1++] = "--";
		argv[n1] = (char *)o->remote;
		n2 = spawn_split_args(o->agent_cmd, words + strlen(o->ssh) + 1, argv + n1 + 1, MAX_WORDS);
		if (n2 <= 0) {
			snprintf(err, errlen, "--agent-cmd '%s': not a command (empty, or unbalanced quotes)", o->agent_cmd);
			return -EINVAL;
		}
		if (o->quiet)
			argv[n1 + 1 + n2++] = "-q";
		argv[n1 + 1 + n2] = NULL;
		ret = spawn_agent(a, argv, err, errlen);
	}
	if (ret)
		agent_close(a, NULL, NULL, 0);
	return ret;
}

int agent_local(struct agent_conn *a, const char *state_dir, char *err, size_t errlen)
{
	static char exe[4096];
	char *argv[10];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int argc = 0;

	memset(a, 0, sizeof(*a));
	a->r.rfd = a->r.wfd = -1;
	if (n <= 0) {
		snprintf(err, errlen, "cannot find our own program (/proc/self/exe): %s", strerror(errno));
		return -errno;
	}
	exe[n] = 0;
	snprintf(a->where, sizeof(a->where), "the agent on this host");
	argv[argc++] = exe;
	argv[argc++] = "agent";
	argv[argc++] = "--stdio";
	argv[argc++] = "-q";
	if (state_dir) {
		argv[argc++] = "--state-dir";
		argv[argc++] = (char *)state_dir;
	}
	argv[argc] = NULL;
	n = spawn_agent(a, argv, err, errlen);
	if (n)
		agent_close(a, NULL, NULL, 0);
	return (int)n;
}

int agent_fd(struct agent_conn *a, int fd, const char *where, char *err, size_t errlen)
{
	int ret;

	memset(a, 0, sizeof(*a));
	snprintf(a->where, sizeof(a->where), "%s", where);
	if ((ret = remote_fd(&a->r, fd, where, AGENT_TIMEOUT_MS))) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	a->open = true;
	ret = hello(a, err, errlen);
	if (ret)
		agent_close(a, NULL, NULL, 0);
	return ret;
}

int agent_call(struct agent_conn *a, struct ctl_msg *req, uint16_t want, struct ctl_msg *reply, char *err,
	       size_t errlen)
{
	char why[CTL_MAX_TEXT + 400];
	int ret;

	if (!a->open) {
		snprintf(err, errlen, "%s: not connected", a->where);
		return -ENOTCONN;
	}
	ret = ctl_call(&a->ctl, req, want, reply, why, sizeof(why));
	if (ret) {
		/* ctl_call says "server X: reason": here the server is the agent */
		const char *p = !strncmp(why, "server ", 7) ? why + 7 : why;

		snprintf(err, errlen, "%s", p);
	}
	return ret;
}

/* call - one request to the agent itself (m[0]) and its answer (m[1]) of type want. */
static int call(struct agent_conn *a, struct ctl_msg *m, uint16_t want, char *err, size_t errlen)
{
	return agent_call(a, &m[0], want, &m[1], err, errlen);
}

/* msgs - two messages on the heap (64 KiB each), m[0] of type t. */
static struct ctl_msg *msgs(uint16_t t, char *err, size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));

	if (m)
		ctl_msg_init(&m[0], t);
	else
		snprintf(err, errlen, "out of memory");
	return m;
}

int agent_close(struct agent_conn *a, unsigned *restored, char *err, size_t errlen)
{
	struct ctl_msg *m;
	char e2[300];
	int ret = 0;

	if (restored)
		*restored = 0;
	if (a->open && (m = msgs(CTL_BYE, e2, sizeof(e2)))) {
		uint64_t n = 0;

		ret = call(a, m, CTL_BYE, e2, sizeof(e2));
		if (!ret && !ctl_get_u64(&m[1], CTL_T_RESTORED, &n) && restored)
			*restored = (unsigned)n;
		if (ret && err)
			snprintf(err, errlen, "%s", e2);
		free(m);
	}
	a->open = false;
	if (a->r.buf || a->r.rfd >= 0 || a->r.child > 0)
		a->exit_status = remote_close(&a->r);
	a->r.rfd = a->r.wfd = -1;
	return ret;
}

/* ---- servers ---- */

static void server_from(struct agent_server *s, const struct ctl_msg *m)
{
	uint64_t v = 0;
	int64_t st = -1;

	memset(s, 0, sizeof(*s));
	ctl_get_u64(m, CTL_T_SERVER, &s->id);
	if (!ctl_get_u64(m, CTL_T_PID, &v))
		s->pid = (uint32_t)v;
	ctl_get_text(m, CTL_T_MODE, s->mode, sizeof(s->mode));
	if (!ctl_get_u64(m, CTL_T_PORT, &v) && v <= 65535)
		s->port = (uint16_t)v;
	ctl_get_text(m, CTL_T_ADDR, s->addr, sizeof(s->addr));
	if (!ctl_get_u64(m, CTL_T_THREADS, &v) && v <= 64)
		s->threads = (int)v;
	s->ncpus = aw_cpus(m->body, m->len, s->cpus, 64);
	ctl_get_i64(m, CTL_T_STATUS, &st);
	s->status = st >= -1 && st < 512 ? (int)st : -1;
}

int agent_server_start(struct agent_conn *a, const struct agent_server_req *req, struct agent_server *out, char *err,
		       size_t errlen)
{
	struct ctl_msg *m = msgs(CTL_SERVER_START, err, errlen);
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_put_text(&m[0], CTL_T_TOOL, req->tool);
	if (req->mode && req->mode[0])
		ctl_put_text(&m[0], CTL_T_MODE, req->mode);
	if (req->addr && req->addr[0])
		ctl_put_text(&m[0], CTL_T_ADDR, req->addr);
	ctl_put_u64(&m[0], CTL_T_PORT, req->port);
	for (int i = 0; i < req->ncpus; i++)
		ctl_put_i64(&m[0], CTL_T_CPU, req->cpus[i]);
	if (req->threads)
		ctl_put_u64(&m[0], CTL_T_THREADS, (uint64_t)req->threads);
	ctl_put_i64(&m[0], CTL_T_PRIORITY, req->priority);
	if (req->delay_us)
		ctl_put_u64(&m[0], CTL_T_PP_DELAY_US, req->delay_us);
	if (req->args && req->args[0])
		ctl_put_text(&m[0], CTL_T_ARGS, req->args);
	ret = call(a, m, CTL_SERVER_INFO, err, errlen);
	if (!ret)
		server_from(out, &m[1]);
	free(m);
	return ret;
}

int agent_server_stop(struct agent_conn *a, struct agent_server *srv, char *err, size_t errlen)
{
	struct ctl_msg *m = msgs(CTL_SERVER_STOP, err, errlen);
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_put_u64(&m[0], CTL_T_SERVER, srv->id);
	ret = call(a, m, CTL_SERVER_INFO, err, errlen);
	if (!ret) {
		uint64_t id = srv->id;

		server_from(srv, &m[1]);
		srv->id = id;
	}
	free(m);
	return ret;
}

/* The relay: the agent's remote, every message addressed to the server and numbered on the agent's session. */
static int relay_send(void *ctx, struct ctl_msg *m)
{
	struct agent_relay *rl = ctx;

	ctl_put_u64(m, CTL_T_SERVER, rl->id);
	m->seq = ++rl->a->ctl.seq; /* one numbering for everything on this connection */
	return remote_transport.send(&rl->a->r, m);
}

static int relay_recv(void *ctx, struct ctl_msg *m, int timeout_ms)
{
	struct agent_relay *rl = ctx;

	return remote_transport.recv(&rl->a->r, m, timeout_ms);
}

static const struct ctl_transport relay_transport = { .send = relay_send, .recv = relay_recv };

void agent_server_session(struct agent_conn *a, uint64_t id, struct agent_relay *rl, struct ctl_session *s)
{
	char peer[400];

	rl->a = a;
	rl->id = id;
	snprintf(peer, sizeof(peer), "%s, server %llu", a->where, (unsigned long long)id);
	ctl_session_transport(s, &relay_transport, rl, peer, AGENT_TIMEOUT_MS);
}

/* ---- reading and changing ---- */

int agent_path(struct agent_conn *a, const char *dev, const char *addr, struct bp_path_report *r,
	       struct aw_features *feat, char *err, size_t errlen)
{
	struct ctl_msg *m = msgs(CTL_PATH_REPORT, err, errlen);
	int ret;

	if (!m)
		return -ENOMEM;
	if (dev)
		ctl_put_text(&m[0], CTL_T_DEV, dev);
	else
		ctl_put_text(&m[0], CTL_T_ADDR, addr);
	ret = call(a, m, CTL_PATH, err, errlen);
	if (!ret && (aw_path_get(&m[1], r) || (feat && aw_features_get(&m[1], feat)))) {
		snprintf(err, errlen, "%s: a path report that does not decode", a->where);
		ret = -EPROTO;
	}
	free(m);
	return ret;
}

int agent_coalesce(struct agent_conn *a, const char *dev, const char *set, struct bp_nic_coalesce *now, char *err,
		   size_t errlen)
{
	struct ctl_msg *m = msgs(CTL_COALESCE, err, errlen);
	char text[CTL_MAX_TEXT + 1], e2[200];
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_put_text(&m[0], CTL_T_DEV, dev);
	if (set) {
		ctl_put_u64(&m[0], CTL_T_FLAGS, CTL_F_SET);
		ctl_put_text(&m[0], CTL_T_SETTINGS, set);
	}
	ret = call(a, m, CTL_COALESCE, err, errlen);
	memset(now, 0, sizeof(*now));
	if (!ret && (ctl_get_text(&m[1], CTL_T_SETTINGS, text, sizeof(text)) ||
		     (text[0] && nic_parse_coalesce(text, now, e2, sizeof(e2))))) {
		snprintf(err, errlen, "%s: coalescing that does not decode", a->where);
		ret = -EPROTO;
	}
	free(m);
	return ret;
}

int agent_napi(struct agent_conn *a, uint32_t id, const char *set, struct bp_napi_info *now, char *err, size_t errlen)
{
	struct ctl_msg *m = msgs(CTL_NAPI, err, errlen);
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_put_u64(&m[0], CTL_T_NAPI_ID, id);
	if (set) {
		ctl_put_u64(&m[0], CTL_T_FLAGS, CTL_F_SET);
		ctl_put_text(&m[0], CTL_T_SETTINGS, set);
	}
	ret = call(a, m, CTL_NAPI, err, errlen);
	if (!ret && aw_napi_get(m[1].body, m[1].len, now)) {
		snprintf(err, errlen, "%s: NAPI settings that do not decode", a->where);
		ret = -EPROTO;
	}
	free(m);
	return ret;
}

int agent_sample(struct agent_conn *a, struct evidence *ev, char *err, size_t errlen)
{
	struct ctl_msg *m = msgs(CTL_SAMPLE, err, errlen);
	int ret;

	if (!m)
		return -ENOMEM;
	ret = call(a, m, CTL_EVIDENCE, err, errlen);
	if (!ret && ev_decode(&m[1], ev)) {
		snprintf(err, errlen, "%s: evidence that does not decode", a->where);
		ret = -EPROTO;
	}
	free(m);
	return ret;
}
