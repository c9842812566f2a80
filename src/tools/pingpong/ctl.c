/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong client: its end of the control session (contract in
 * tools/pingpong.h). Blocking request/reply on the main thread, between runs only:
 * nothing here ever overlaps a measured round trip.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/pingpong/pingpong.h"
#include "tools/common/options.h"

int pp_ctl_call(struct pp_ctl *ctl, struct bp_pp_ctl *cmd, struct bp_pp_ctl *reply, char *err,
		size_t errlen)
{
	uint8_t buf[BP_PP_CTL_MSG_LEN];
	uint64_t seq = ++ctl->seq, rseq = 0;
	int ret, bad;

	bp_pp_ctl_encode(BP_PP_CONTROL, seq, cmd, buf);
	if (send(ctl->fd, buf, sizeof(buf), MSG_NOSIGNAL) != (ssize_t)sizeof(buf)) {
		ret = -errno;
		snprintf(err, errlen, "control connection to %s: send: %s", ctl->addr_text, strerror(errno));
		return ret;
	}
	ret = tool_read_full(ctl->fd, buf, sizeof(buf), ctl->timeout_ms);
	if (ret) {
		snprintf(err, errlen, "control connection to %s: %s", ctl->addr_text,
			 ret == -ETIMEDOUT ? "no answer in time" :
			 ret == -ECONNRESET ? "the server closed it" : strerror(-ret));
		return ret;
	}
	bad = bp_pp_ctl_decode(buf, BP_PP_CONTROL_REPLY, &rseq, reply);
	if (bad) {
		snprintf(err, errlen, "%s answered with something that is not busypoll pingpong (%s)",
			 ctl->addr_text, bp_pp_err_text(bad));
		return -EPROTO;
	}
	if (reply->status) {
		snprintf(err, errlen, "server %s: %s", ctl->addr_text, reply->text);
		return -(int)reply->status;
	}
	if (rseq != seq || reply->cmd != cmd->cmd) {
		snprintf(err, errlen, "server %s answered another command", ctl->addr_text);
		return -EPROTO;
	}
	return 0;
}

int pp_ctl_open(struct pp_ctl *ctl, const struct sockaddr *addr, socklen_t addrlen,
		int timeout_ms, struct bp_pp_ctl *info, char *err, size_t errlen)
{
	struct bp_pp_ctl hello = { .cmd = BP_PP_CMD_HELLO };
	int soerr = 0, ret;
	socklen_t len = sizeof(soerr);

	ctl->seq = 0;
	ctl->timeout_ms = timeout_ms;
	bp_format_addr(addr, ctl->addr_text, sizeof(ctl->addr_text));
	ctl->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	bp_sock_set_nodelay(ctl->fd, true);
	if (connect(ctl->fd, addr, addrlen) < 0 && errno != EINPROGRESS) {
		ret = -errno;
		goto unreachable;
	}
	ret = tool_wait_fd(ctl->fd, POLLOUT, timeout_ms);
	if (!ret && getsockopt(ctl->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr)
		ret = -soerr;
	if (ret)
		goto unreachable;
	ret = pp_ctl_call(ctl, &hello, info, err, errlen);
	if (ret)
		pp_ctl_close(ctl);
	return ret;
unreachable:
	snprintf(err, errlen, "cannot reach server %s: %s; is `busypoll pingpong --server` running there?",
		 ctl->addr_text, strerror(-ret));
	pp_ctl_close(ctl);
	return ret;
}

void pp_ctl_close(struct pp_ctl *ctl)
{
	if (ctl->fd >= 0)
		close(ctl->fd);
	ctl->fd = -1;
}
