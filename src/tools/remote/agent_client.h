/* SPDX-License-Identifier: MIT */
/*
 * A client's end of the two-host agent (`busypoll agent` on the other machine),
 * for compare, pingpong and perf --remote: reach it (through the user's own ssh,
 * or over TCP to a standing agent with the key; tools/remote/transport.h), say HELLO,
 * then ask it over the control protocol (tools/harness/control.h) to start and stop
 * servers, to read and change settings, for the path report and its host's
 * evidence. A server it started is talked to through it: agent_server_session
 * gives a ctl_session whose messages go to that server (the agent relays them), so
 * a tool's own client code (pingpong's SET_MODE/START/STOP, perf's SAMPLE) runs
 * unchanged over it.
 *
 * The options that name the agent are one shared layer (agent_remote_table):
 *
 *   --remote [user@]HOST     ssh HOST busypoll agent --stdio (the user's keys and
 *                            ssh_config apply; --ssh CMD, --agent-cmd CMD override)
 *   --remote HOST:PORT --key-file FILE   a standing agent, authenticated with the key
 *
 * Everything blocks, each wait bounded; nothing here runs during a measured
 * interval (control traffic only ever comes between runs).
 */
#ifndef BP_TOOLS_REMOTE_AGENT_CLIENT_H
#define BP_TOOLS_REMOTE_AGENT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <busypoll/nic.h>

#include "tools/link/agent_wire.h"
#include "tools/harness/control.h"
#include "tools/harness/evidence.h"
#include "tools/common/opt.h"
#include "tools/remote/transport.h"

#define AGENT_DEFAULT_SSH "ssh"
#define AGENT_DEFAULT_CMD "busypoll agent --stdio"
#define AGENT_TIMEOUT_MS 30000

/* The --remote layer's fields (a command embeds it and gives the table its address). */
struct agent_remote_opts {
	char remote[256];          /* [user@]HOST, or HOST:PORT with key_file; "" none */
	char key_file[1024];
	char ssh[1024];            /* the ssh command (split into words) */
	char agent_cmd[1024];      /* what ssh runs there */
	char host[256];            /* the host part of remote, for the data path's default */
	bool quiet;                /* the command's -q: the agent it starts through ssh gets -q too */
};

/* agent_remote_defaults - no --remote; ssh and the agent command at their defaults. */
void agent_remote_defaults(struct agent_remote_opts *o);
/* The layer: --remote, --key-file, --ssh, --agent-cmd (base: struct agent_remote_opts). */
extern const struct opt_table agent_remote_table;

struct agent_conn {
	struct remote r;
	struct ctl_session ctl;    /* to the agent itself */
	struct aw_hello hello;
	char where[320];           /* "the agent on HOST (ssh)" or "the agent at HOST:PORT" */
	bool open;
	int exit_status;           /* after agent_close: the command's (ssh's: the agent's own), 0 for TCP */
};

/*
 * agent_open - reach the agent o names and say HELLO. 0, or -errno with one line
 * in err (ssh or the agent could not start there; the key refused; no answer).
 */
int agent_open(struct agent_conn *a, const struct agent_remote_opts *o, char *err, size_t errlen);
/* agent_fd - the agent whose --stdio is fd already (a socketpair to a child: the tests); HELLO said. */
int agent_fd(struct agent_conn *a, int fd, const char *where, char *err, size_t errlen);
/*
 * agent_call - one request to the agent itself and its answer of type want, as
 * ctl_call (the agent's refusal in err, as the agent words it).
 */
int agent_call(struct agent_conn *a, struct ctl_msg *req, uint16_t want, struct ctl_msg *reply, char *err,
	       size_t errlen);
/*
 * agent_close - BYE (its servers stopped, its changes restored; *restored counts
 * them, may be NULL), then the connection closed (ssh waited for). 0, or -errno
 * with err (the agent could not restore everything: -EIO). Idempotent.
 */
int agent_close(struct agent_conn *a, unsigned *restored, char *err, size_t errlen);

/* What to start: a tool's server in a mode, on CPUs, where. */
struct agent_server_req {
	const char *tool;          /* "rr", "pingpong", "target" */
	const char *mode;          /* canonical text, NULL: the server's default */
	const char *addr;          /* bind address, NULL or "": every address */
	uint16_t port;             /* 0: any free one */
	const int *cpus;           /* loop thread i on cpus[i] */
	int ncpus;
	int threads;               /* 0: the server's default */
	int priority;              /* -1: none */
	uint32_t delay_us;         /* pingpong's --server-delay-us */
	const char *args;          /* target: its configuration (`busypoll target` arguments) */
};

struct agent_server {
	uint64_t id;
	uint32_t pid;
	char mode[128];
	uint16_t port;
	char addr[80];
	int cpus[64];
	int ncpus;
	int threads;
	int status;                /* after agent_server_stop: its exit status */
};

/* agent_server_start - start one. 0, or -errno with the agent's (or the server's own) refusal in err. */
int agent_server_start(struct agent_conn *a, const struct agent_server_req *req, struct agent_server *out, char *err,
		       size_t errlen);
/* agent_server_stop - stop it; out->status its exit status. 0 or -errno. */
int agent_server_stop(struct agent_conn *a, struct agent_server *srv, char *err, size_t errlen);

/* A session with one server through the agent (agent_server_session). */
struct agent_relay {
	struct agent_conn *a;
	uint64_t id;
};
/*
 * agent_server_session - s talks to server id through the agent: every message
 * carries CTL_T_SERVER and is numbered on the agent's session (rl must outlive s;
 * ctl_session_close(s) leaves the agent's connection open).
 */
void agent_server_session(struct agent_conn *a, uint64_t id, struct agent_relay *rl, struct ctl_session *s);

/*
 * agent_path - the path report of dev, or (dev NULL) of the device that has addr, and
 * (feat not NULL) the device's GRO and TSO as the agent read them (DIAG_UNKNOWN each
 * that it could not, or from an agent that predates them). 0 or -errno.
 */
int agent_path(struct agent_conn *a, const char *dev, const char *addr, struct bp_path_report *r,
	       struct aw_features *feat, char *err, size_t errlen);
/*
 * agent_coalesce - dev's coalescing into *now, after changing it to set first
 * (a "rx-usecs=0,..." list; NULL: read only). 0; -EOPNOTSUPP when the driver has
 * none (err says so in the driver's words); -errno.
 */
int agent_coalesce(struct agent_conn *a, const char *dev, const char *set, struct bp_nic_coalesce *now, char *err,
		   size_t errlen);
/* agent_napi - NAPI id's settings into *now, after changing them to set ("defer-hard-irqs=N,..."; NULL: read). */
int agent_napi(struct agent_conn *a, uint32_t id, const char *set, struct bp_napi_info *now, char *err, size_t errlen);
/* agent_sample - the host's evidence since the session began (tools/agent/session.h, SAMPLE). */
int agent_sample(struct agent_conn *a, struct evidence *ev, char *err, size_t errlen);

/*
 * agent_local - an agent on this host, as a child (our own program's `agent
 * --stdio`): for the local end's changes in a two-host run, journalled and restored
 * exactly as the remote end's (also when we are SIGKILLed: it sees its stdin end).
 * state_dir NULL: the default.
 */
int agent_local(struct agent_conn *a, const char *state_dir, char *err, size_t errlen);
/* The local agent says only what goes wrong (-q): its end's lines would read like the remote's. */

#endif
