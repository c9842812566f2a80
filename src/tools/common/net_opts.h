/* SPDX-License-Identifier: MIT */
/*
 * The transport layer of the network benchmarks' options (rr, pingpong): the role
 * (--server, --client HOST), where (--bind ADDR, --port N), the transport
 * (--tcp/--udp), SO_PRIORITY, the wait mode and the CPUs of this side's loop
 * threads. A command's options struct carries them as TOOL_NET (o->server,
 * o->host, ...), the shared table fills o->net.
 */
#ifndef BP_TOOLS_COMMON_NET_OPTS_H
#define BP_TOOLS_COMMON_NET_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include <busypoll/mode.h>

#include "tools/common/opt.h"

#define TOOL_MAX_CPUS 64
#define TOOL_MAX_PRIORITY 15
#define TOOL_HOST_LEN 256

#define TOOL_NET_FIELDS                                                                      \
	bool server;                                                                         \
	char host[TOOL_HOST_LEN];   /* client: the server; server: the address to bind ("" = all) */ \
	char client_host[TOOL_HOST_LEN]; /* --client as given */                             \
	char bind_host[TOOL_HOST_LEN];   /* --bind as given */                               \
	uint16_t port;                                                                       \
	bool tcp, udp;              /* --tcp / --udp (exclusive; the command picks its default) */ \
	int priority;               /* SO_PRIORITY, -1 = leave */                            \
	struct bp_mode mode;                                                                 \
	char mode_text[OPT_MODE_TEXT]; /* canonical */                                       \
	int cpus[TOOL_MAX_CPUS];    /* loop thread i on cpus[i]; ncpus 0: not pinned */      \
	int ncpus;
struct tool_net {
	TOOL_NET_FIELDS
};
#define TOOL_NET                                                                             \
	union {                                                                              \
		struct tool_net net;                                                         \
		struct {                                                                     \
			TOOL_NET_FIELDS                                                      \
		};                                                                           \
	}

/* tool_net_defaults - no role, no host, port, TCP/UDP unset, priority -1, epoll:block, no pinning. */
void tool_net_defaults(struct tool_net *n, uint16_t port);

/*
 * The transport layer (base: struct tool_net). Its check picks the role (exactly
 * one of --server and --client HOST), refuses every option of the other role,
 * refuses --tcp with --udp, and sets host from --client or --bind.
 */
extern const struct opt_table tool_net_table;

#endif
