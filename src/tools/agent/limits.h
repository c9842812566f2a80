/* SPDX-License-Identifier: MIT */
/*
 * The operator's limits on what a session starts (docs/agent.md, "Limits"): every
 * server the agent starts runs on its --cpus (a server asked for without CPUs gets
 * the whole allowed set as its affinity); at most --max-servers run at once; and a
 * target (its arguments parsed by the target's own option table, here, and only
 * an allowed subset of its options taken) exports at most --max-target-ram of RAM,
 * listens only on loopback or on an address the operator allowed (by default the
 * address the client reached the agent on; a wildcard only when listed), and
 * serves only the hosts its --allow-host names.
 */
#ifndef BP_TOOLS_AGENT_LIMITS_H
#define BP_TOOLS_AGENT_LIMITS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "tools/agent/agent.h"

#define LIMITS_DEFAULT_SERVERS 4
#define LIMITS_RAM_CAP (4ull << 30) /* the default's ceiling: MemTotal/4, at most 4 GiB */

/* limits_defaults - the limits before options: 4 servers, a target's RAM min(MemTotal/4, 4 GiB). */
void limits_defaults(struct agent_cfg *cfg);

/*
 * limits_parse_listen - --target-listen ADDR[,ADDR...] (addresses without a port,
 * 0.0.0.0 or :: allowed only so) into cfg. 0, or -EINVAL with one line in err.
 */
int limits_parse_listen(struct agent_cfg *cfg, const char *name, const char *text, char *err, size_t errlen);

/* limits_describe - the limits as one line for the start-up log. */
void limits_describe(const struct agent_cfg *cfg, char *buf, size_t len);

/* limits_affinity - the agent's --cpus as a CPU set; false when it has none (any CPU). */
bool limits_affinity(const struct agent_cfg *cfg, cpu_set_t *set);

/*
 * limits_reached - the address of this host that the session's client reached:
 * over ssh SSH_CONNECTION's server address; over TCP the local address the kernel
 * uses toward peer ("ADDR:PORT"). 0, or -ENOENT when none is known (then only
 * loopback and --target-listen are allowed).
 */
int limits_reached(const char *peer, struct sockaddr_storage *out);

/*
 * limits_check_target - a target's command line (words[0] "target", n words, the
 * agent's own additions included; own the key holder's words, own_n of them, at
 * words + 1) checked: only the allowed options, parsed by the target's table, its
 * CPUs within --cpus, its RAM within --max-target-ram, its listen address allowed
 * (reached: see limits_reached, NULL none), --allow-host given. 0, or -EINVAL /
 * -EACCES with one line in err naming the limit.
 */
int limits_check_target(const struct agent_cfg *cfg, const struct sockaddr_storage *reached, char **words, int n,
			int own_n, char *err, size_t errlen);

#endif
