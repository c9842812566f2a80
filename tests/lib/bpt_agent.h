/* SPDX-License-Identifier: MIT */
/*
 * Running `busypoll agent` (the binary in $BUSYPOLL) from a test: a child with its
 * stderr (the agent's log) on a pipe the test reads, in a named network namespace
 * when asked (through `ip netns exec`, which also mounts that namespace's sysfs, as
 * an agent on a real host would see it). The child dies with the test and is
 * reaped at exit (bpt_faults.h), whatever path the test takes.
 */
#ifndef BPT_AGENT_H
#define BPT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpt_agent {
	pid_t pid;
	int log_fd;          /* its stderr */
	int in_fd, out_fd;   /* its stdin and stdout (one socket), -1 unless asked for */
	char log[1 << 18];   /* what it logged so far */
	size_t log_len;
	uint16_t port;       /* --listen: the port from its "listening on" line */
};

/*
 * bpt_agent_start - run `[ip netns exec NETNS] $BUSYPOLL agent ARGS...` (args ends
 * with NULL). stdio: give it a socket as stdin and stdout (in_fd == out_fd), else
 * /dev/null.
 * Fails the test if it cannot start.
 */
void bpt_agent_start(struct bpt_agent *a, const char *netns, bool stdio, const char *const args[]);

/*
 * bpt_agent_wait_log - read its log until text appears (true) or timeout_ms pass or
 * it closes stderr (false). The whole log stays in a->log.
 */
bool bpt_agent_wait_log(struct bpt_agent *a, const char *text, int timeout_ms);

/* bpt_agent_count - how many times text is in the log read so far. */
int bpt_agent_count(const struct bpt_agent *a, const char *text);

/*
 * bpt_agent_fd_settle - wait up to timeout_ms for the agent's descriptor count to
 * come down to want, reading its log meanwhile (an agent whose stderr pipe is full
 * stops). Returns the last count.
 */
int bpt_agent_fd_settle(struct bpt_agent *a, int want, int timeout_ms);

/* bpt_agent_wait_listening - wait for "listening on ADDR:PORT" and set a->port. */
void bpt_agent_wait_listening(struct bpt_agent *a, int timeout_ms);

/*
 * bpt_agent_end - send sig, or with sig 0 end its stdin (stdio); wait up to timeout_ms for it to exit,
 * read the rest of its log. Returns its exit status (128+N for a signal N), -1 on timeout
 * (then it is killed).
 */
int bpt_agent_end(struct bpt_agent *a, int sig, int timeout_ms);

/* bpt_agent_call - over its stdin/stdout: one framed request, the reply into buf. */
bool bpt_agent_call(struct bpt_agent *a, const char *req, char *buf, size_t cap, int timeout_ms);

/*
 * bpt_tmpdir - a new directory /tmp/bp-PREFIX-XXXXXX into buf (len >= 64), whose
 * files are removed with it at exit, however the test ends. Fails the test if it
 * cannot be made.
 */
const char *bpt_tmpdir(const char *prefix, char *buf, size_t len);

/* bpt_busypoll - $BUSYPOLL (the program under test); skips the test (77) when unset. */
const char *bpt_busypoll(void);

#endif
