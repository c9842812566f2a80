/* SPDX-License-Identifier: MIT */
/*
 * `busypoll agent`: the remote host's side of a two-host run (issue 13). Its parts:
 *
 *   cmd.c      options, and the one-shot actions (--new-key, --restore, --path)
 *   door.c     --listen: one event loop (libbusypoll, epoll:block) that accepts,
 *              authenticates (link/auth.h) with a deadline per connection, and
 *              serves authenticated sessions over the secure channel (link/chan.h)
 *   stdio.c    --stdio: one session over stdin/stdout (started through ssh, which
 *              authenticated the user already)
 *   session.c  what a session does with each control message
 *              (tools/harness/control.h); every change journalled (journal.h) and restored when
 *              the session ends, however it ends
 *   servers.c  the servers a session starts (rr, pingpong, a target), as child
 *              processes, and the messages relayed to them
 *   limits.c   the operator's limits on them (--cpus, --max-servers, a target's RAM,
 *              listen address, hosts and options)
 *   path_out.c the path report as a table, json or csv
 *
 * Messages on both transports are framed the same way: length u32 little-endian,
 * then the control message (chan.h's records carry the same message, sealed).
 */
#ifndef BP_TOOLS_AGENT_H
#define BP_TOOLS_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <busypoll/nic.h>

#include "tools/link/auth.h"
#include "tools/common/emit.h"

#define AGENT_MAX_CPUS 256
#define AGENT_FRAME_HDR 4
#define AGENT_MAX_TLISTEN 8

struct agent_cfg {
	const char *state_dir;          /* journals (JOURNAL_DEFAULT_DIR) */
	int cpus[AGENT_MAX_CPUS];       /* --cpus: where the servers it starts may run */
	int ncpus;
	char cpus_text[128];            /* as given, "" = any */
	struct auth_key key;            /* --listen */
	double auth_timeout_s;          /* a connection's whole handshake, at most (--auth-timeout) */
	int startups_start;             /* --max-startups START:RATE:FULL: from START unauthenticated */
	int startups_rate;              /* connections, a new one is refused with RATE % chance, */
	int startups_full;              /* rising to 100 % at FULL (OpenSSH's MaxStartups) */
	int per_source;                 /* unauthenticated connections from one source (an IPv4
					 * address, an IPv6 /64), at most (--per-source) */
	const char *listen;             /* ADDR:PORT; NULL for --stdio (a standing agent serves no files) */
	/* the limits on what a session starts (limits.h) */
	int max_servers;                /* --max-servers: servers at once, all sessions */
	uint64_t max_target_ram;        /* --max-target-ram: bytes of RAM namespaces per target */
	char target_listen_text[256];   /* --target-listen as given, "" = the address the client reached */
	struct sockaddr_storage target_listen[AGENT_MAX_TLISTEN];
	int ntarget_listen;
};

/*
 * agent_log - one line on stderr: "busypoll agent: PEER: message" (peer NULL: none).
 * Every refusal, session start and end, and restore goes through it.
 */
void agent_log(const char *peer, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* agent_info - the same for what is not a refusal or a failure (sessions, servers): -q drops it. */
void agent_info(const char *peer, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * agent_log_nonblocking - from now on a log line that would block (a full stderr pipe,
 * a stopped terminal) is dropped and counted, never waited for (--listen: the loop
 * thread must not stop). stderr's own flags are left as they are.
 */
void agent_log_nonblocking(void);
/* agent_quiet - -q was given. */
extern bool agent_quiet;

/* agent_log_journal - a journal_log_fn writing through agent_log; arg is the peer (or NULL). */
void agent_log_journal(void *arg, const char *line);

/*
 * agent_restore_all - play back every journal in dir left by an agent that is gone
 * (at start, and --restore). Logs each. Returns how many journals could not be
 * played back completely (held by a live agent, another namespace, a failure).
 */
int agent_restore_all(const char *dir);

/* agent_serve_listen - run the standing agent until SIGINT/SIGTERM. 0, or -errno. */
int agent_serve_listen(const struct agent_cfg *cfg);

/* agent_serve_stdio - one session on fds 0 and 1 until EOF or a signal. 0, or -errno. */
int agent_serve_stdio(const struct agent_cfg *cfg);

/* path_emit - the report's json members (json only: NAPIs are written by napi_emit). */
void path_emit(struct emit *e, const struct bp_path_report *r);
/* path_print - the report for people, one aspect per line. */
void path_print(FILE *out, const struct bp_path_report *r);
/* path_csv - the report as csv: one row per NAPI (one with empty NAPI columns when it has none). */
void path_csv(FILE *out, const struct bp_path_report *r);

/* agent_stop_flag - set by SIGINT/SIGTERM/SIGHUP (installed by the serving functions). */
extern volatile sig_atomic_t agent_stop;

#endif
