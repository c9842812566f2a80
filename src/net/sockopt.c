/* SPDX-License-Identifier: MIT */
/*
 * Per-socket busy-poll and latency options. Each setter is one setsockopt (or
 * fcntl) and names the option in bp_last_error() on failure, because "Operation
 * not permitted" alone does not say which of several options needed a capability.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#include <busypoll/net.h>

#include "base/compat.h"
#include "base/error.h"

/*
 * One int-valued setsockopt. EPERM gets a hint because the options below need
 * CAP_NET_ADMIN only for some values (prefer=1, budget > 64, priority >= 7), which
 * a user cannot guess from the errno.
 */
static int set_int(int fd, int level, int opt, int val, const char *what, const char *perm_hint)
{
	if (setsockopt(fd, level, opt, &val, sizeof(val)) == 0)
		return 0;
	int err = -errno;
	if (err == -EPERM && perm_hint)
		return bp_err_set(err, "setsockopt(%s): %s (%s)", what, "Operation not permitted",
				  perm_hint);
	return bp_err_set(err, "setsockopt(%s): %s", what, strerror(-err));
}

int bp_sock_set_busy_poll(int fd, uint32_t usecs)
{
	/* The kernel takes an int and refuses negatives; say so before it does. */
	if (usecs > INT_MAX)
		return bp_err_set(-EINVAL, "setsockopt(SO_BUSY_POLL): %u us is above INT_MAX", usecs);
	return set_int(fd, SOL_SOCKET, SO_BUSY_POLL, (int)usecs, "SO_BUSY_POLL", NULL);
}

int bp_sock_set_prefer_busy_poll(int fd, bool on)
{
	return set_int(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, on, "SO_PREFER_BUSY_POLL",
		       "setting it needs CAP_NET_ADMIN");
}

int bp_sock_set_busy_poll_budget(int fd, uint16_t budget)
{
	return set_int(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, budget, "SO_BUSY_POLL_BUDGET",
		       "raising it needs CAP_NET_ADMIN; a new socket has 0");
}

int bp_sock_set_priority(int fd, int prio)
{
	return set_int(fd, SOL_SOCKET, SO_PRIORITY, prio, "SO_PRIORITY",
		       "priority 7 and above needs CAP_NET_ADMIN");
}

int bp_sock_set_nodelay(int fd, bool on)
{
	return set_int(fd, IPPROTO_TCP, TCP_NODELAY, on, "TCP_NODELAY", NULL);
}

int bp_sock_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return bp_err_sys("fcntl(F_GETFL)", -errno);
	if (fl & O_NONBLOCK)
		return 0;
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return bp_err_sys("fcntl(F_SETFL, O_NONBLOCK)", -errno);
	return 0;
}

int bp_sock_napi_id(int fd, uint32_t *id)
{
	unsigned int v = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &v, &len) < 0)
		return bp_err_sys("getsockopt(SO_INCOMING_NAPI_ID)", -errno);
	*id = v;
	return 0;
}
