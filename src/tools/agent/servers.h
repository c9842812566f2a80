/* SPDX-License-Identifier: MIT */
/*
 * The servers an agent session starts on its host (SERVER_START): an rr server, a
 * pingpong server or an NVMe/TCP target, each a child process of the agent
 * (tools/harness/spawn.h) in the mode and on the CPUs the client asked for, with
 * its own control session to the agent. Child processes rather than threads of
 * the agent: every thread a server runs, io_uring's SQPOLL and io-wq helpers
 * included, is a task of that one process, so its CPU is counted exactly and
 * apart from the agent's own (SAMPLE); a server that crashes takes nothing of the
 * agent with it; and a SIGKILLed agent takes its servers with it
 * (PR_SET_PDEATHSIG), leaving only the journal for its next start.
 *
 * Starting one is a change of the host (a busy-poll mode spins a CPU, epoll:suspend
 * sets per-NAPI timeouts), so it takes the host's change lock like any change,
 * and every NAPI of the agent's network namespace is journalled before the first
 * server starts (restored at the session's end, or at the next start after a
 * SIGKILL). Stopping one puts the NAPI settings back as they were when it started,
 * so the next server (compare's next mode) starts from them.
 *
 * Messages for a server (CTL_T_SERVER: HELLO, START, STOP, SET_MODE, SAMPLE) are
 * relayed over its control session and its answer relayed back: the pingpong
 * server takes SET_MODE only from there (or from its own host), so switching a
 * server's mode from another host needs an authenticated agent session.
 */
#ifndef BP_TOOLS_AGENT_SERVERS_H
#define BP_TOOLS_AGENT_SERVERS_H

#include <stdbool.h>
#include <stdint.h>

#include <busypoll/nic.h>

#include "tools/harness/control.h"
#include "tools/harness/evidence.h"
#include "tools/harness/spawn.h"

#define AGENT_MAX_SERVERS 16
#define AGENT_SERVER_CPUS 64

struct agent_server {
	uint64_t id;                   /* 1, 2, ... in its session */
	char tool[16];                 /* "rr", "pingpong", "target" */
	struct spawn child;
	uint16_t port;
	char addr[80];                 /* where it listens, as it says */
	char mode[128];
	int cpus[AGENT_SERVER_CPUS];   /* its loop threads' CPUs, as it says (-1: not pinned) */
	int ncpus;
	int threads;
	struct bp_napi_info napi[BP_PATH_MAX]; /* the namespace's NAPIs when it started */
	int nnapi;
};

struct agent_servers {
	struct agent_server *s[AGENT_MAX_SERVERS];
	uint64_t next_id;
	uint32_t journalled[BP_PATH_MAX]; /* NAPIs whose settings the session's journal holds */
	int njournalled;
};

struct session;

/* servers_start - SERVER_START: the server started, out its SERVER_INFO; or out a CTL_ERROR. */
void servers_start(struct session *ses, const struct ctl_msg *in, struct ctl_msg *out);
/* servers_stop - SERVER_STOP: stopped (its exit status in SERVER_INFO), its NAPI settings back. */
void servers_stop(struct session *ses, const struct ctl_msg *in, struct ctl_msg *out);
/* servers_relay - a message for server CTL_T_SERVER: its answer in out (seq left to the caller). */
void servers_relay(struct session *ses, const struct ctl_msg *in, struct ctl_msg *out);
/*
 * servers_evidence - the threads of every server still running, into ev (each named,
 * with its CPU since that server started; tools/harness/spawn.h). Returns how many
 * servers were counted.
 */
int servers_evidence(struct session *ses, struct evidence *ev);
/* servers_stop_all - the session ends: every server stopped, logged with why. */
void servers_stop_all(struct session *ses, const char *why);

#endif
