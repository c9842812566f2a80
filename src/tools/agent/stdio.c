/* SPDX-License-Identifier: MIT */
/*
 * `busypoll agent --stdio`: one session over stdin and stdout, as ssh starts it
 * (`ssh HOST busypoll agent --stdio`). ssh has authenticated the user and protects
 * the bytes, so the messages travel as plain frames: length u32 little-endian, then
 * the message, at most CHAN_MAX_MSG bytes. The session ends at EOF (the client or
 * its ssh went away), at a signal (sshd sends SIGHUP when the connection drops), at
 * bye, or at a frame that is oversized; each way session_end restores what it
 * changed. The log goes to stderr, which ssh carries back to the client.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/agent/agent.h"
#include "tools/agent/session.h"
#include "tools/link/chan.h"

static void on_signal(int sig)
{
	agent_stop = 1;
}

/* Read exactly len bytes from fd 0. 0; -ECONNRESET at EOF (at a frame's start: *clean); -errno. */
static int read_full(uint8_t *buf, size_t len, bool *clean)
{
	size_t got = 0;

	*clean = true;
	while (got < len) {
		ssize_t n = read(STDIN_FILENO, buf + got, len - got);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return -errno; /* EINTR included: a signal ends the session */
		got += (size_t)n;
		*clean = false;
	}
	return 0;
}

static int write_full(const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDOUT_FILENO, buf, len);

		if (n < 0 && errno == EINTR && !agent_stop)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int agent_serve_stdio(const struct agent_cfg *cfg)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: read returns */
	static uint8_t msg[CHAN_MAX_MSG];
	static uint8_t reply[AGENT_FRAME_HDR + SESSION_REPLY_MAX];
	const char *ssh = getenv("SSH_CONNECTION");
	char peer[96], why[160] = "";
	struct session s;
	int rc = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* SSH_CONNECTION is "client-ip client-port server-ip server-port" */
	if (ssh) {
		char ip[64];
		int port;

		if (sscanf(ssh, "%63s %d", ip, &port) == 2)
			snprintf(peer, sizeof(peer), "ssh %s:%d", ip, port);
		else
			snprintf(peer, sizeof(peer), "ssh");
	} else {
		snprintf(peer, sizeof(peer), "stdio");
	}
	session_start(&s, cfg, peer);
	while (!agent_stop) {
		uint8_t hdr[AGENT_FRAME_HDR];
		uint32_t len;
		size_t rlen;
		bool clean, end;

		if ((rc = read_full(hdr, sizeof(hdr), &clean))) {
			snprintf(why, sizeof(why), "%s", rc == -ECONNRESET && clean ?
				 "the client closed its end" : rc == -EINTR ? "a signal" :
				 "the client's stream broke off");
			break;
		}
		len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
		      (uint32_t)hdr[3] << 24;
		if (len > CHAN_MAX_MSG) {
			agent_log(peer, "refused: an oversized message (%u bytes, at most %d)", len,
				  CHAN_MAX_MSG);
			snprintf(why, sizeof(why), "an oversized message");
			rc = -EMSGSIZE;
			break;
		}
		if ((rc = read_full(msg, len, &clean))) {
			snprintf(why, sizeof(why), "%s", rc == -EINTR ? "a signal" :
				 "the client's stream broke off");
			break;
		}
		rlen = session_handle(&s, msg, len, reply + AGENT_FRAME_HDR, &end);
		reply[0] = (uint8_t)rlen, reply[1] = (uint8_t)(rlen >> 8), reply[2] = (uint8_t)(rlen >> 16);
		reply[3] = (uint8_t)(rlen >> 24);
		if ((rc = write_full(reply, AGENT_FRAME_HDR + rlen))) {
			snprintf(why, sizeof(why), "its reply could not be written: %s", strerror(-rc));
			break;
		}
		if (end)
			return 0; /* bye: the session ended and restored already */
	}
	if (agent_stop && !why[0])
		snprintf(why, sizeof(why), "a signal");
	return session_end(&s, why) ? -EIO : rc == -ECONNRESET || rc == -EINTR ? 0 : rc;
}
