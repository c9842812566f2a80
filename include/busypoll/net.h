/* SPDX-License-Identifier: MIT */
/* Socket tuning, NAPI ids, addresses and CPU pinning. All return 0 or -errno. */
#ifndef BUSYPOLL_NET_H
#define BUSYPOLL_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

int bp_sock_set_busy_poll(int fd, uint32_t usecs);        /* SO_BUSY_POLL */
int bp_sock_set_prefer_busy_poll(int fd, bool on);        /* SO_PREFER_BUSY_POLL (1 needs CAP_NET_ADMIN) */
int bp_sock_set_busy_poll_budget(int fd, uint16_t budget); /* SO_BUSY_POLL_BUDGET */
int bp_sock_set_priority(int fd, int prio);               /* SO_PRIORITY (7+ needs CAP_NET_ADMIN) */
int bp_sock_set_nodelay(int fd, bool on);                 /* TCP_NODELAY */
int bp_sock_set_nonblock(int fd);                         /* O_NONBLOCK */
/* bp_sock_napi_id - SO_INCOMING_NAPI_ID into *id (0 on loopback / before traffic). */
int bp_sock_napi_id(int fd, uint32_t *id);

/* bp_pin_thread - pin the calling thread to one CPU. */
int bp_pin_thread(int cpu);
/*
 * bp_parse_cpu_list - "0,2-3" into cpus[] (in order, up to max). Returns the count,
 * or -EINVAL (bad syntax, or more than max).
 */
int bp_parse_cpu_list(const char *text, int *cpus, size_t max);

/*
 * bp_parse_addr - "HOST", "HOST:PORT", "[V6]:PORT" into a sockaddr (numeric or a name
 * resolved with getaddrinfo). default_port applies when none is given.
 * Returns 0 or -EINVAL / -ENOENT (name does not resolve).
 */
int bp_parse_addr(const char *text, uint16_t default_port, struct sockaddr_storage *ss,
		  socklen_t *len);
/* bp_format_addr - "1.2.3.4:5" or "[::1]:5"; returns buf. */
char *bp_format_addr(const struct sockaddr *sa, char *buf, size_t len);

/* bp_have_cap - does this process have the capability (CAP_NET_ADMIN = 12) effective? */
bool bp_have_cap(int cap);

#ifdef __cplusplus
}
#endif
#endif
