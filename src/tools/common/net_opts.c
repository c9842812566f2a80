/* SPDX-License-Identifier: MIT */
/* The network benchmarks' transport options (contract in tools/common/net_opts.h). */
#include <string.h>

#include <busypoll/net.h>

#include "tools/common/net_opts.h"
#include "tools/common/values.h"

#define CAP_NET_ADMIN_BIT 12

#define STR_(x) #x
#define STR(x) STR_(x)

void tool_net_defaults(struct tool_net *n, uint16_t port)
{
	memset(n, 0, sizeof(*n));
	n->port = port;
	n->priority = -1;
	n->mode = opt_mode_default;
	memcpy(n->mode_text, opt_mode_default_text, sizeof(n->mode_text));
}

static const struct opt_spec net_specs[] = {
	{ .name = "server", .kind = OPT_FLAG, OPT_FIELD(struct tool_net, server),
	  .help = "serve (TCP and UDP) until interrupted" },
	{ .name = "client", .kind = OPT_HOST, OPT_FIELD(struct tool_net, client_host), .arg = "HOST",
	  .help = "run against the server on HOST" },
	{ .name = "bind", .kind = OPT_HOST, .role = OPT_ROLE_SERVER, OPT_FIELD(struct tool_net, bind_host),
	  .arg = "ADDR", .help = "server: the address to listen on (default: all)" },
	{ .name = "port", .kind = OPT_INT, OPT_FIELD(struct tool_net, port), .lo = 0, .hi = 65535, .arg = "N",
	  .help = "TCP and UDP port (server: 0 takes any free one and says which)", .dflt = OPT_DFLT_FIELD },
	{ .name = "tcp", .kind = OPT_FLAG, .role = OPT_ROLE_CLIENT, OPT_FIELD(struct tool_net, tcp),
	  .help = "client: TCP flows", .role_why = "the server always serves UDP and TCP" },
	{ .name = "udp", .kind = OPT_FLAG, .role = OPT_ROLE_CLIENT, OPT_FIELD(struct tool_net, udp),
	  .help = "client: UDP flows", .role_why = "the server always serves TCP and UDP" },
	{ .name = "priority", .kind = OPT_INT, OPT_FIELD(struct tool_net, priority), .lo = 0,
	  .hi = TOOL_MAX_PRIORITY, .arg = "N",
	  .help = "SO_PRIORITY 0.." STR(TOOL_MAX_PRIORITY) " on every socket (7+: CAP_NET_ADMIN)" },
	{ .name = "mode", .kind = OPT_MODE, OPT_MODE_FIELD(struct tool_net, mode, mode_text), .arg = "MODE",
	  .help = "this side's wait mode (see `busypoll modes`)", .dflt = OPT_DFLT_FIELD },
	{ .name = "cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct tool_net, cpus, ncpus), .arg = "LIST",
	  .help = "loop thread i on the i-th CPU of LIST (e.g. 0,2-3)" },
};

static int net_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct tool_net *n = base;
	bool client = opt_given(seen, "client") > 0;
	int r = tool_pick_role(n->server, client, err, errlen);

	if (r)
		return r;
	r = opt_check_role(seen, n->server ? OPT_ROLE_SERVER : OPT_ROLE_CLIENT, err, errlen);
	if (r)
		return r;
	if (n->tcp && n->udp)
		return tool_fail(err, errlen, "--tcp and --udp are exclusive: pick one");
	if (client && !n->port)
		return tool_fail(err, errlen, "--port 0: must be between 1 and 65535 (the server's port)");
	/* the kernel would refuse it on the first socket: say so before any work */
	if (n->priority >= 7 && !bp_have_cap(CAP_NET_ADMIN_BIT))
		return tool_fail(err, errlen, "--priority %d: 7 and above need CAP_NET_ADMIN (run it as root)",
				 n->priority);
	/* --client and --bind share host; each side keeps only its own. */
	memcpy(n->host, n->server ? n->bind_host : n->client_host, sizeof(n->host));
	return 0;
}

const struct opt_table tool_net_table = OPT_TABLE(net_specs, net_check);
