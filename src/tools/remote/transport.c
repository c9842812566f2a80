/* SPDX-License-Identifier: MIT */
/* The client's end of a remote agent: ssh-spawned or TCP with the key (transport.h). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "tools/link/auth.h"
#include "tools/harness/control.h"
#include "tools/remote/transport.h"
#include "tools/common/values.h"

#define FRAME_HDR 4

__attribute__((format(printf, 4, 5)))
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int init(struct remote *r, const char *peer, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	r->rfd = r->wfd = -1;
	r->timeout_ms = timeout_ms;
	snprintf(r->peer, sizeof(r->peer), "%s", peer);
	r->buf = malloc(CHAN_FRAME_MAX);
	return r->buf ? 0 : -ENOMEM;
}

int remote_fd(struct remote *r, int fd, const char *peer, int timeout_ms)
{
	int rc = init(r, peer, timeout_ms);

	if (rc) {
		close(fd);
		return rc;
	}
	r->rfd = r->wfd = fd;
	return 0;
}

int remote_connect(struct remote *r, const char *hostport, const char *key_file, int timeout_ms,
		   char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct auth_key key;
	socklen_t sl;
	int fd, rc, one = 1;

	if ((rc = init(r, hostport, timeout_ms)))
		return fail(rc, err, errlen, "out of memory");
	if ((rc = auth_key_load(key_file, &key, err, errlen)))
		goto out;
	if ((rc = bp_parse_addr(hostport, 0, &ss, &sl))) {
		rc = fail(rc, err, errlen, "'%s' is not HOST:PORT", hostport);
		goto out;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = fail(-errno, err, errlen, "socket: %s", strerror(errno));
		goto out;
	}
	r->rfd = r->wfd = fd;
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		rc = fail(-errno, err, errlen, "cannot reach agent %s: %s", hostport, strerror(errno));
		goto out;
	}
	{
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		socklen_t el = sizeof(int);
		int n = poll(&p, 1, timeout_ms), soerr = 0;

		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
		if (n <= 0 || soerr) {
			rc = fail(n == 0 ? -ETIMEDOUT : soerr ? -soerr : -errno, err, errlen,
				  "cannot reach agent %s: %s", hostport,
				  n == 0 ? "no answer" : strerror(soerr ? soerr : errno));
			goto out;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((rc = auth_client_run(fd, &key, hostport, timeout_ms, &r->chan, err, errlen)))
		goto out;
	r->sealed = true;
out:
	auth_key_wipe(&key);
	if (rc)
		remote_close(r);
	return rc;
}

int remote_spawn(struct remote *r, char *const argv[], const char *peer, int timeout_ms,
		 char *err, size_t errlen)
{
	int in[2], out[2], rc;

	if ((rc = init(r, peer, timeout_ms)))
		return fail(rc, err, errlen, "out of memory");
	if (pipe2(in, O_CLOEXEC) < 0)
		return fail(-errno, err, errlen, "pipe: %s", strerror(errno));
	if (pipe2(out, O_CLOEXEC) < 0) {
		rc = -errno;
		close(in[0]), close(in[1]);
		return fail(rc, err, errlen, "pipe: %s", strerror(-rc));
	}
	r->child = fork();
	if (r->child < 0) {
		rc = -errno;
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return fail(rc, err, errlen, "fork: %s", strerror(-rc));
	}
	if (r->child == 0) {
		/* the child: the pipes as stdin/stdout (dup2 clears CLOEXEC), then the command */
		if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "busypoll: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	r->wfd = in[1];
	r->rfd = out[0];
	return 0;
}

int remote_send(struct remote *r, const void *msg, size_t len, char *err, size_t errlen)
{
	uint8_t *frame = malloc(CHAN_FRAME_MAX);
	size_t flen, off = 0;
	int rc = 0;

	if (!frame)
		return fail(-ENOMEM, err, errlen, "out of memory");
	if (len > CHAN_MAX_MSG) {
		free(frame);
		return fail(-EMSGSIZE, err, errlen, "a message of %zu bytes (at most %d)", len,
			    CHAN_MAX_MSG);
	}
	if (r->sealed) {
		flen = (size_t)chan_seal(&r->chan, msg, len, frame, CHAN_FRAME_MAX);
	} else {
		frame[0] = (uint8_t)len, frame[1] = (uint8_t)(len >> 8);
		frame[2] = (uint8_t)(len >> 16), frame[3] = (uint8_t)(len >> 24);
		memcpy(frame + FRAME_HDR, msg, len);
		flen = FRAME_HDR + len;
	}
	while (off < flen && !rc) {
		ssize_t n = write(r->wfd, frame + off, flen - off);

		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno == EAGAIN)
			rc = tool_wait_fd(r->wfd, POLLOUT, r->timeout_ms);
		else if (n < 0 && errno != EINTR)
			rc = -errno;
	}
	free(frame);
	if (rc)
		return fail(rc, err, errlen, "agent %s: cannot send: %s", r->peer,
			    rc == -ETIMEDOUT ? "it takes nothing" : strerror(-rc));
	return 0;
}

/* A whole message in r->buf? Its length into *len and the bytes it takes; 0 if not yet. */
static int take(struct remote *r, uint8_t *out, size_t cap, size_t *len)
{
	uint32_t mlen;

	if (r->sealed)
		return chan_open(&r->chan, r->buf, r->len, out, cap, len);
	if (r->len < FRAME_HDR)
		return 0;
	mlen = (uint32_t)r->buf[0] | (uint32_t)r->buf[1] << 8 | (uint32_t)r->buf[2] << 16 |
	       (uint32_t)r->buf[3] << 24;
	if (mlen > CHAN_MAX_MSG || mlen > cap)
		return -EMSGSIZE;
	if (r->len - FRAME_HDR < mlen)
		return 0;
	memcpy(out, r->buf + FRAME_HDR, mlen);
	*len = mlen;
	return (int)(FRAME_HDR + mlen);
}

/* recv_msg - the next whole message, waiting up to timeout_ms for each read. 0 or -errno. */
static int recv_msg(struct remote *r, void *buf, size_t cap, size_t *len, int timeout_ms)
{
	for (;;) {
		int n = take(r, buf, cap, len), rc;
		ssize_t got;

		if (n > 0) {
			memmove(r->buf, r->buf + n, r->len - (size_t)n);
			r->len -= (size_t)n;
			if (*len < cap)
				((char *)buf)[*len] = '\0';
			return 0;
		}
		if (n < 0)
			return n;
		if ((rc = tool_wait_fd(r->rfd, POLLIN, timeout_ms)))
			return rc;
		got = read(r->rfd, r->buf + r->len, CHAN_FRAME_MAX - r->len);
		if (got == 0)
			return -ECONNRESET;
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (got > 0)
			r->len += (size_t)got;
	}
}

int remote_recv(struct remote *r, void *buf, size_t cap, size_t *len, char *err, size_t errlen)
{
	int rc = recv_msg(r, buf, cap, len, r->timeout_ms);

	if (rc == -EMSGSIZE)
		return fail(rc, err, errlen, "agent %s: an oversized message", r->peer);
	if (rc == -EBADMSG)
		return fail(rc, err, errlen, "agent %s: a record that does not open", r->peer);
	if (rc == -ECONNRESET)
		return fail(rc, err, errlen, "agent %s closed the connection", r->peer);
	if (rc)
		return fail(rc, err, errlen, "agent %s: %s", r->peer, rc == -ETIMEDOUT ? "no answer" : strerror(-rc));
	return 0;
}

/* ---- the control protocol over it ---- */

static int tr_send(void *ctx, struct ctl_msg *m)
{
	struct remote *r = ctx;
	uint8_t *buf = malloc(CTL_HDR_LEN + CTL_MAX_BODY);
	char err[200];
	int n = buf ? ctl_encode(m, buf, CTL_HDR_LEN + CTL_MAX_BODY) : -ENOMEM;

	if (n >= 0)
		n = remote_send(r, buf, (size_t)n, err, sizeof(err));
	free(buf);
	return n;
}

static int tr_recv(void *ctx, struct ctl_msg *m, int timeout_ms)
{
	struct remote *r = ctx;
	uint8_t *buf = malloc(CHAN_MAX_MSG + 1);
	const char *why;
	size_t len = 0;
	int rc = buf ? recv_msg(r, buf, CHAN_MAX_MSG + 1, &len, timeout_ms) : -ENOMEM;

	/* one frame is one message, whole: anything else is not the agent speaking */
	if (!rc && ctl_decode(buf, len, m, &why) != (int)len)
		rc = -EPROTO;
	free(buf);
	return rc == -EBADMSG || rc == -EMSGSIZE ? -EPROTO : rc;
}

const struct ctl_transport remote_transport = { .send = tr_send, .recv = tr_recv };

int remote_close(struct remote *r)
{
	int status = 0;

	if (r->wfd >= 0 && r->wfd != r->rfd)
		close(r->wfd);
	if (r->rfd >= 0)
		close(r->rfd);
	r->rfd = r->wfd = -1;
	if (r->child > 0) {
		/* our end closed: the command sees EOF and ends; a stuck one is killed */
		for (int waited = 0; waited <= r->timeout_ms; waited += 10) {
			pid_t w = waitpid(r->child, &status, WNOHANG);

			if (w == r->child)
				break;
			if (waited + 10 > r->timeout_ms) {
				kill(r->child, SIGKILL);
				waitpid(r->child, &status, 0);
				break;
			}
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		r->child = 0;
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	chan_wipe(&r->chan);
	free(r->buf);
	r->buf = NULL;
	return status;
}
