/* SPDX-License-Identifier: MIT */
/*
 * Two hosts for the two-host tests: the veth test bed's two namespaces, host A
 * (ns[0], the client) and host B (ns[1], the server), and a real OpenSSH server
 * (Debian's openssh-server) that the test starts in B on a private port with its
 * own host key and one authorized test key, all in a temporary directory. A is
 * given an ssh client configuration (that key, B's host key as the only known
 * host, BatchMode) so that `ssh -F CONFIG hostb CMD`, run in A, reaches B only over
 * TCP across the veth pair, exactly as between two lab machines.
 *
 * Cleanup on every exit path: sshd and every process started through
 * bpt_twohost_spawn die with the test (PR_SET_PDEATHSIG) and are reaped at exit,
 * the directory is removed at exit, the bed by bpt_testbed_guard.
 */
#ifndef BPT_TWOHOST_H
#define BPT_TWOHOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpt_testbed.h"

#define BPT_SSH_HOST "hostb" /* the Host entry of the client configuration */

struct bpt_twohost {
	struct bp_testbed tb;
	char dir[64];            /* keys, configurations, sshd's log */
	char ssh_config[128];    /* for ssh -F, in host A */
	char sshd_log[128];
	pid_t sshd;
	uint16_t ssh_port;
};

/*
 * bpt_twohost_up - the bed NAME (guarded), the keys, sshd in B listening (checked
 * by a TCP connect from A). Exits 77 when not root or sshd/ssh/ssh-keygen are not
 * installed (apt-get install openssh-server openssh-client); fails the test otherwise.
 */
void bpt_twohost_up(struct bpt_twohost *h, const char *name);

/*
 * bpt_twohost_ssh_argv - into argv (at least 12 slots, NULL-terminated): run
 * remote_cmd on B through ssh from A: ip netns exec A ssh -F CONFIG hostb remote_cmd.
 */
void bpt_twohost_ssh_argv(const struct bpt_twohost *h, const char *remote_cmd, const char **argv);

/* bpt_twohost_down - stop sshd, remove the bed. (The directory goes at exit.) */
void bpt_twohost_down(struct bpt_twohost *h);

#endif
