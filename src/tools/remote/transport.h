/* SPDX-License-Identifier: MIT */
/*
 * The client's end of a remote agent (`busypoll agent`), whichever way it is
 * reached: a command the caller names that runs `busypoll agent --stdio` on the
 * host (ssh, with the user's own keys and config), or TCP to a standing agent with
 * the key file (link/auth.h's handshake, then link/chan.h's records). Either
 * way it carries whole messages, each framed as agent.h says: control messages
 * (tools/harness/control.h) through remote_transport, a ctl_session's transport.
 * Every wait is bounded by the timeout given at the start.
 */
#ifndef BP_TOOLS_REMOTE_TRANSPORT_H
#define BP_TOOLS_REMOTE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tools/link/chan.h"

struct remote {
	int rfd, wfd;          /* the same socket, or the pipes to the command */
	pid_t child;           /* the command (ssh), 0 for TCP */
	bool sealed;           /* TCP: records through chan */
	struct chan chan;
	int timeout_ms;
	char peer[128];
	uint8_t *buf;          /* bytes read, not yet a whole message */
	size_t len;
};

/*
 * remote_connect - TCP to HOST:PORT, the handshake with the key in key_file. 0, or
 * -errno with one line in err (unreachable, the key refused, the key file refused).
 */
int remote_connect(struct remote *r, const char *hostport, const char *key_file, int timeout_ms,
		   char *err, size_t errlen);

/*
 * remote_spawn - run argv (e.g. ssh -p 22 HOST busypoll agent --stdio) with its stdin
 * and stdout as the channel, its stderr left as ours. 0, or -errno with err.
 */
int remote_spawn(struct remote *r, char *const argv[], const char *peer, int timeout_ms,
		 char *err, size_t errlen);

/*
 * remote_fd - a remote over fd, already connected to an agent's --stdio (a socketpair
 * to a child: the tests); it is the remote's now. 0 or -ENOMEM.
 */
int remote_fd(struct remote *r, int fd, const char *peer, int timeout_ms);

/* remote_send - one message. 0 or -errno with err. */
int remote_send(struct remote *r, const void *msg, size_t len, char *err, size_t errlen);

/*
 * remote_recv - the next message into buf (cap bytes, NUL added when it fits), its
 * length in *len. 0; -ECONNRESET (the agent closed), -ETIMEDOUT, -EBADMSG (a record
 * that does not open), -EMSGSIZE; err says which.
 */
int remote_recv(struct remote *r, void *buf, size_t cap, size_t *len, char *err, size_t errlen);

/*
 * remote_transport - the control protocol over a remote: ctl_session_transport(s,
 * &remote_transport, r, ...). A frame that is not one whole control message is -EPROTO.
 */
struct ctl_transport;
extern const struct ctl_transport remote_transport;

/*
 * remote_close - close our end; a spawned command is waited for (up to the
 * timeout, then killed). Returns its exit status, 0 for TCP.
 */
int remote_close(struct remote *r);

#endif
