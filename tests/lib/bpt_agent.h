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

struct agent_conn;
/* bpt_agent_conn - a client connection (tools/remote/agent_client.h) over a --stdio agent's socket, HELLO said. */
void bpt_agent_conn(struct bpt_agent *a, struct agent_conn *c);

struct ctl_msg;
/*
 * bpt_req - m becomes a request of type for the agent: NAPI (id), KNOB/COALESCE/
 * CHANNELS/PATH_REPORT (dev), with set (NULL: a read) as its change: the settings,
 * or KNOB's "name=value".
 */
void bpt_req(struct ctl_msg *m, uint16_t type, uint32_t id, const char *dev, const char *set);
/*
 * bpt_ask - m to the agent, its answer into reply: 0 with the type it answered, or
 * the errno of its CTL_ERROR with the reason in why (cap bytes). Fails the test
 * when the connection fails.
 */
int bpt_ask(struct agent_conn *c, struct ctl_msg *m, struct ctl_msg *reply, char *why, size_t cap);

/*
 * bpt_tmpdir - a new directory /tmp/bp-PREFIX-PID-XXXXXX into buf (len >= 64), whose
 * files are removed with it at exit, however the test ends; a SIGKILLed run's
 * directory (its PID gone) is removed by the next run with the same PREFIX. Fails
 * the test if it cannot be made.
 */
const char *bpt_tmpdir(const char *prefix, char *buf, size_t len);

/* bpt_busypoll - $BUSYPOLL (the program under test); skips the test (77) when unset. */
const char *bpt_busypoll(void);

#endif
