/* SPDX-License-Identifier: MIT */
/*
 * A busypoll server as a child process, driven over a control session: how
 * `busypoll perf --spawn-target` runs its target and how the two-host agent runs
 * the rr servers, pingpong servers and targets a client asks for.
 *
 * The child is our own program (/proc/self/exe) running `busypoll SUB ARGS...
 * --control-fd N`, N one end of a socketpair: the child's control session
 * (tools/harness/control.h). Its HELLO_OK says it serves (where, in which mode, on
 * which CPUs); the child ends when that session closes, so it never outlives the
 * process that started it. The child runs in its own process group (a Ctrl-C or
 * a SIGHUP meant for its parent must not stop it under a run that is about to
 * print partial results) and is SIGKILLed if its parent dies (PR_SET_PDEATHSIG).
 * Its stdin and stdout are /dev/null (an agent started by ssh has its protocol
 * there); its stderr goes to an unlinked file whose last line says why when it
 * exits early.
 *
 * Every thread it runs is in /proc/PID/task, io_uring's SQPOLL and io-wq threads
 * included (they are tasks of the process whose ring they serve): spawn_threads
 * counts their CPU from outside.
 */
#ifndef BP_TOOLS_HARNESS_SPAWN_H
#define BP_TOOLS_HARNESS_SPAWN_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tools/harness/control.h"
#include "tools/harness/evidence.h"

struct spawn {
	pid_t pid;
	struct ctl_session ctl;  /* our end of the child's control session */
	int err_fd;              /* the child's stderr (an unlinked file), -1 none */
	bool reaped;
	int status;              /* its wait status, once reaped */
};

/*
 * spawn_split_args - split ARGS ("--ns ram:64M --poll-period-us 50") into words:
 * whitespace separates, single and double quotes group, a backslash escapes the
 * next character. Words point into buf (at least strlen(args)+1 bytes). Returns
 * the count, or -EINVAL (unbalanced quote, more than max words).
 */
int spawn_split_args(const char *args, char *buf, char **words, int max);

/*
 * spawn_start - run `busypoll argv[0] argv[1]...` (argv NULL-terminated, argv[0]
 * the subcommand) with --control-fd added, and say HELLO (tool: who asks) on its
 * control session, waiting up to timeout_ms for the HELLO_OK, which goes to
 * hello_ok. 0, or -errno with one line in err: the child's last stderr line when
 * it exited first ("the spawned WHAT exited (status 2): ..."; -EINVAL for status
 * 2, its bad input), -ETIMEDOUT when it never answered. On failure nothing is
 * left running.
 */
int spawn_start(struct spawn *sp, char *const argv[], const char *what, const char *tool, int timeout_ms,
		struct ctl_msg *hello_ok, char *err, size_t errlen);

/*
 * spawn_start_on - spawn_start with the child's CPU affinity set to cpus (NULL: the
 * parent's) before its exec, so every thread it runs (and io_uring's helpers of
 * its rings) stays on them: how the agent binds a server to its --cpus.
 */
int spawn_start_on(struct spawn *sp, char *const argv[], const cpu_set_t *cpus, const char *what, const char *tool,
		   int timeout_ms, struct ctl_msg *hello_ok, char *err, size_t errlen);

/* spawn_alive - the child still runs (reaped when it does not). */
bool spawn_alive(struct spawn *sp);

/* spawn_exit_status - its exit status (128+N for signal N), -1 while it runs. */
int spawn_exit_status(struct spawn *sp);

/* spawn_last_line - the child's last stderr line (without the newline) into buf, "" none. */
void spawn_last_line(struct spawn *sp, char *buf, size_t len);

/*
 * spawn_threads - every thread of the child now, into ev: each named (comm, tid)
 * with its CPU time (schedstat) in thr[] (the first EV_MAX_THREADS), all of them
 * in utime_us/stime_us (/proc/PID/task/TID/stat), io_uring helpers also in
 * helper_cpu_us, and threads counted. Cumulative since the child started.
 * 0, or -errno (-ESRCH: it is gone).
 */
int spawn_threads(const struct spawn *sp, struct evidence *ev);

/*
 * spawn_stop - SIGTERM, up to timeout_ms, then SIGKILL; reaped, the session
 * and the stderr file closed. Returns its exit status as spawn_exit_status.
 */
int spawn_stop(struct spawn *sp, int timeout_ms);

#endif
