/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the fault tests (tests/integration/test_faults_*): plain blocking
 * sockets for misbehaving peers, the three ways a peer can disappear, descriptor
 * counting, and descriptor limits. The misbehaving side is deliberately not the
 * library under test: a bug in the engine must not hide itself on both ends.
 */
#ifndef BPT_FAULTS_H
#define BPT_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* bpt_fd_count - open descriptors of pid (0 = this process), from /proc/PID/fd; -1 if unreadable. */
int bpt_fd_count(pid_t pid);

/* bpt_fd_count_below - those of them numbered below n (RLIMIT_NOFILE bounds numbers, not inherited fds). */
int bpt_fd_count_below(pid_t pid, int n);

/*
 * bpt_fd_settle - wait up to timeout_ms for pid's descriptor count to come down
 * to at most want (the other side closes asynchronously). Returns the last count.
 */
int bpt_fd_settle(pid_t pid, int want, int timeout_ms);

/* bpt_connect - a blocking TCP connection to 127.0.0.1:port (fails the test if refused). */
int bpt_connect(uint16_t port);
/*
 * bpt_connect_rcvbuf - bpt_connect with SO_RCVBUF set to rcvbuf before the
 * handshake (so the window stays small): what the peer sends past that waits on
 * the peer's side.
 */
int bpt_connect_rcvbuf(uint16_t port, int rcvbuf);
/* bpt_rx_queued - bytes waiting in fd's receive queue (FIONREAD); -1 on error. */
int bpt_rx_queued(int fd);
/* bpt_connect_nb - the same, non-blocking, connect started; -errno on an immediate failure. */
int bpt_connect_nb(uint16_t port);

/* The ways a peer disappears. */
enum bpt_vanish {
	BPT_FIN,     /* close(): the kernel sends FIN, the server reads EOF */
	BPT_RST,     /* SO_LINGER {1, 0} then close(): the kernel sends RST */
	BPT_FORGET,  /* TCP_REPAIR then close(): nothing is sent, the server's side is half-open */
};
const char *bpt_vanish_name(enum bpt_vanish how);
/*
 * bpt_vanish - make the peer disappear that way. BPT_FORGET needs CAP_NET_ADMIN
 * (TCP_REPAIR, as CRIU uses it): returns false without it (fd closed with FIN).
 */
bool bpt_vanish(int fd, enum bpt_vanish how);
/* bpt_can_forget - this process may use TCP_REPAIR (root or CAP_NET_ADMIN). */
bool bpt_can_forget(void);

/* bpt_send_all - send every byte (fails the test otherwise). */
void bpt_send_all(int fd, const void *buf, size_t n);
/* bpt_recv_all - read exactly n bytes within timeout_ms. false on EOF, error or timeout. */
bool bpt_recv_all(int fd, void *buf, size_t n, int timeout_ms);
/*
 * bpt_wait_closed - wait up to timeout_ms for the other side to close (EOF or
 * reset; bytes that arrive meanwhile are discarded). Returns the ms it took, -1 on timeout.
 */
int bpt_wait_closed(int fd, int timeout_ms);

/*
 * bpt_raise_nofile - make RLIMIT_NOFILE at least n (soft, and hard when allowed).
 * Returns true if it now is.
 */
bool bpt_raise_nofile(rlim_t n);

/* bpt_sleep_ms - sleep (restarted after signals). */
void bpt_sleep_ms(int ms);

/* bpt_file_has - file contains text (a log check). */
bool bpt_file_has(const char *path, const char *text);

/*
 * Cleaning up on every exit path. A failed check exits the test (exit(1)) with
 * servers still running in children and files in /tmp:
 *  - bpt_reap_at_exit(pid): at exit, SIGKILL that child and reap it (until
 *    bpt_reaped(pid) says it was waited for normally);
 *  - bpt_die_with_parent(parent), in the child right after fork: SIGKILL when
 *    the test process dies however it dies (kept across exec);
 *  - bpt_rmdir_at_exit(dir): at exit, remove dir and the files in it.
 * Only the process that registered runs them (children inherit atexit lists).
 */
void bpt_reap_at_exit(pid_t pid);
void bpt_reaped(pid_t pid);
void bpt_die_with_parent(pid_t parent);
void bpt_rmdir_at_exit(const char *dir);

#endif
