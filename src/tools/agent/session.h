/* SPDX-License-Identifier: MIT */
/*
 * One agent session: what the agent does with each control message
 * (tools/harness/control.h) of an authenticated client (or of the ssh user on
 * --stdio), the servers it starts for it (servers.h), and the journal of what it
 * changed, which session_end plays back however the session ends. No I/O but the
 * journal's file, the servers' control sessions and the kernel calls a request
 * makes; the transports (door.c, stdio.c) own the client's bytes.
 *
 *   HELLO (tool "agent")      HELLO_OK: version, pid, host name, kernel, netns,
 *                             net.core.busy_poll/busy_read, the --cpus servers may use
 *   SERVER_START              SERVER_INFO (servers.h)
 *   SERVER_STOP SERVER        SERVER_INFO with its exit status
 *   NAPI NAPI_ID [SETTINGS]   NAPI: its settings (after the change, journalled)
 *   KNOB DEV KNOB [VALUE]     KNOB: its value (after the change, journalled)
 *   COALESCE DEV [SETTINGS]   COALESCE: SETTINGS now (journalled change)
 *   CHANNELS DEV [SETTINGS]   CHANNELS: SETTINGS (counts) and MAX now (journalled change)
 *   PATH_REPORT DEV | ADDR    PATH: the report of DEV, or of the device that has ADDR
 *   SAMPLE                    EVIDENCE: this namespace's BusyPollRxPackets and NET_RX
 *                             since the session began, and every thread of every
 *                             server it runs with its CPU
 *   HELLO/START/STOP/SET_MODE/SAMPLE SERVER   relayed to that server (servers.h)
 *   BYE                       BYE RESTORED: servers stopped, changes put back; the end
 *
 * A change is marked CTL_F_SET in CTL_T_FLAGS (a NAPI, a knob, coalescing,
 * channels) and only then takes the host's change lock. A request that fails is
 * answered CTL_ERROR (errno, one line) and the session goes on; so is a message
 * that does not decode (seq 0), since the transport frames messages whole.
 */
#ifndef BP_TOOLS_AGENT_SESSION_H
#define BP_TOOLS_AGENT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <busypoll/kstats.h>

#include "tools/agent/agent.h"
#include "tools/agent/journal.h"
#include "tools/agent/servers.h"
#include "tools/harness/control.h"

#define SESSION_REPLY_MAX (CTL_HDR_LEN + CTL_MAX_BODY)

struct session {
	const struct agent_cfg *cfg;
	char peer[96];
	struct journal journal;         /* opened at the first change */
	struct agent_servers servers;
	unsigned requests, changes;
	struct bp_kstats k0;            /* this namespace's counters at the start: SAMPLE's base */
	uint64_t t0_ns;
	bool ended;
};

/* session_start - a new session for peer (logged). */
void session_start(struct session *s, const struct agent_cfg *cfg, const char *peer);

/*
 * session_handle - answer one message (len bytes: one encoded control message)
 * into reply (SESSION_REPLY_MAX bytes). Returns the reply's length; *end true when
 * the session is to end after sending it (BYE).
 */
size_t session_handle(struct session *s, const void *req, size_t len, uint8_t *reply, bool *end);

/*
 * session_journal - the session's journal, opened (the host's change lock taken)
 * at its first change. 0, or -errno (-EBUSY: another session holds the host) with
 * one line in err.
 */
int session_journal(struct session *s, char *err, size_t errlen);

/*
 * session_end - stop its servers, play back the journal (newest first) and close
 * it; log why the session ended and what was restored. Idempotent. Returns how
 * many settings could not be restored (the journal is kept for the next start then).
 */
int session_end(struct session *s, const char *why);

#endif
