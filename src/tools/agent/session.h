/* SPDX-License-Identifier: MIT */
/*
 * One agent session: what the agent does with each message of an authenticated
 * client (or of the ssh user on --stdio), and the journal of what it changed, which
 * session_end plays back however the session ends. No I/O but the journal's file
 * and the kernel calls a request makes; the transports (door.c, stdio.c) own the
 * bytes.
 *
 * TEMPORARY (issue 13 part 1): the requests are a minimal text dispatcher, one
 * line per message, until the shared control protocol (tools/common/control.[ch],
 * built by the cli helper) lands; then each request becomes one of the message
 * types it reserves for the agent (NAPI_GET/SET, COALESCE, CHANNELS, PATH_REPORT,
 * SERVER_START/STOP) and session_handle decodes those instead. The handlers below
 * the dispatcher (journalled changes, the path report) stay as they are.
 *
 *   hello                          ok busypoll-agent 1 pid=N cpus=LIST
 *   path DEV                       ok {json of the path report}
 *   napi-get ID                    ok defer-hard-irqs=N,gro-flush-timeout=NS,...
 *   napi-set ID k=v[,k=v]          ok            (journalled)
 *   knob-get DEV KNOB              ok VALUE
 *   knob-set DEV KNOB=VALUE        ok            (journalled)
 *   coalesce-get DEV               ok rx-usecs=N,...
 *   coalesce-set DEV k=v[,k=v]     ok            (journalled)
 *   channels-get DEV               ok rx=N,...  (counts; max in "max rx=N,...")
 *   channels-set DEV k=v[,k=v]     ok            (journalled)
 *   bye                            ok restored N: the session ends, restored
 *
 * A request that fails is answered "error ERRNO reason" and the session goes on.
 */
#ifndef BP_TOOLS_AGENT_SESSION_H
#define BP_TOOLS_AGENT_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/agent/agent.h"
#include "tools/agent/journal.h"

#define SESSION_REPLY_MAX 65536

struct session {
	const struct agent_cfg *cfg;
	char peer[96];
	struct journal journal;         /* opened at the first change */
	unsigned requests, changes;
	bool ended;
};

/* session_start - a new session for peer (logged). */
void session_start(struct session *s, const struct agent_cfg *cfg, const char *peer);

/*
 * session_handle - answer one request (len bytes, not NUL-terminated) into reply
 * (SESSION_REPLY_MAX bytes). Returns the reply's length; *end true when the session
 * is to end after sending it (bye).
 */
size_t session_handle(struct session *s, const void *req, size_t len, char *reply, bool *end);

/*
 * session_end - play back the journal (newest first) and close it; log why the
 * session ended and what was restored. Idempotent. Returns how many settings could
 * not be restored (the journal is kept for the next start then).
 */
int session_end(struct session *s, const char *why);

#endif
