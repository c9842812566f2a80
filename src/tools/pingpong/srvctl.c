/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong server: the control thread (see server.h).
 *
 * It owns the TCP listener. A new connection is classified by its first bytes,
 * peeked so that nothing is consumed: a control message makes it the control
 * session, a request makes it a data connection (handed to the data loop, which
 * reads the request itself), anything else is counted as bad and closed. A peer
 * that says nothing within CLASSIFY_MS is closed too.
 *
 * One control session at a time: --matrix switches the server's mode, which would
 * pull the rug from under a second client. A second session is refused with
 * EBUSY. When a session ends (closed, or the client died), the data loop goes back
 * to the server's own --mode with timestamps off, so the next client finds the
 * server as it was started.
 *
 * Everything here is blocking-free and poll(2)-driven, and the thread is asleep
 * while a run goes on: it costs the measured CPUs nothing.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/bytes.h"
#include "tools/pingpong/server.h"

#define PENDING_MAX 16
#define CLASSIFY_MS 3000
#define SNAP_TIMEOUT_MS 10000

struct pending {
	int fd;
	uint64_t deadline_ns;
	struct sockaddr_storage peer;
	socklen_t peerlen;
};

struct session {
	int fd;
	char peer[64];
	uint8_t buf[BP_PP_CTL_MSG_LEN];
	size_t got;
	bool started;              /* RUN_START seen */
	struct pp_snap base;
	struct bp_kstats k0;
};

static void session_close_fd(struct session *ses)
{
	if (ses->fd >= 0)
		close(ses->fd);
	ses->fd = -1;
	ses->got = 0;
	ses->started = false;
}

/*
 * data_switch - run the data loop in mode with timestamps on or off (nothing to do
 * when it already does). On failure the previous configuration is restored.
 */
static int data_switch(struct pp_server *s, const struct bp_mode *mode, bool ts, char *err,
		       size_t errlen)
{
	char text[PP_MODE_LEN], e2[256];
	struct bp_mode old_mode;
	bool old_ts;
	int ret;

	bp_mode_format(mode, text, sizeof(text));
	if (s->data && !strcmp(text, s->data->mode_text) && ts == s->data->timestamps)
		return 0;
	old_mode = s->data ? s->data->mode : s->own_mode;
	old_ts = s->data ? s->data->timestamps : false;
	pp_data_stop(s->data);
	s->data = NULL;
	ret = pp_data_start(s, mode, ts, &s->data, err, errlen);
	if (ret && pp_data_start(s, &old_mode, old_ts, &s->data, e2, sizeof(e2)))
		pp_server_log(s, "cannot restart the data loop in its previous mode either: %s", e2);
	if (!ret)
		pp_server_log(s, "data loop now in %s, timestamps %s", text, ts ? "on" : "off");
	return ret;
}

/* session_end - the client is gone: back to the server's own configuration. */
static void session_end(struct pp_server *s, struct session *ses, const char *why)
{
	char err[256];

	pp_server_log(s, "control session with %s ended (%s)", ses->peer, why);
	session_close_fd(ses);
	if (data_switch(s, &s->own_mode, false, err, sizeof(err)))
		pp_server_log(s, "cannot return to %s: %s", s->own_mode_text, err);
}

static int snapshot(struct pp_server *s, struct pp_snap *sn)
{
	if (!s->data)
		return -ENODEV;
	return pp_data_snapshot(s->data, sn, SNAP_TIMEOUT_MS);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void ctl_set_mode(struct pp_server *s, const struct bp_pp_ctl *in, struct bp_pp_ctl *out)
{
	struct bp_mode m;
	char merr[200];
	int ret = 0;

	if (!in->text[0]) {
		m = s->own_mode;
	} else if (bp_mode_parse(in->text, &m, merr, sizeof(merr)) != 0) {
		ret = -EINVAL;
	} else {
		ret = bp_mode_check(&m, merr, sizeof(merr));
	}
	if (!ret)
		ret = data_switch(s, &m, in->flags & BP_PP_CTL_F_TIMESTAMPS, merr, sizeof(merr));
	if (ret) {
		out->status = (uint32_t)-ret;
		snprintf(out->text, sizeof(out->text), "%.*s", (int)sizeof(out->text) - 1, merr);
	}
}

static void ctl_run_stop(struct pp_server *s, struct session *ses, const struct pp_snap *now,
			 struct bp_pp_ctl *out)
{
	const struct pp_side *a = &ses->base.side, *b = &now->side;
	struct bp_pp_srv_stats *st = &out->stats;
	struct bp_kstats k1 = { 0 };

	bp_kstats_read(&k1);
	st->requests = sub0(b->round_trips, a->round_trips);
	st->dropped = sub0(now->dropped, ses->base.dropped);
	st->interval_ns = sub0(now->ns, ses->base.ns);
	st->syscalls = sub0(b->syscalls, a->syscalls);
	st->empty_polls = sub0(b->empty_polls, a->empty_polls);
	st->waits = sub0(b->waits, a->waits);
	st->wakeups = sub0(b->wakeups, a->wakeups);
	st->utime_us = sub0(b->utime_us, a->utime_us);
	st->stime_us = sub0(b->stime_us, a->stime_us);
	st->nvcsw = sub0(b->nvcsw, a->nvcsw);
	st->nivcsw = sub0(b->nivcsw, a->nivcsw);
	st->busy_poll_rx = sub0(k1.busy_poll_rx, ses->k0.busy_poll_rx);
	st->net_rx = sub0(k1.net_rx, ses->k0.net_rx);
}

/* One command in, one reply out. Returns false when the session must end. */
static bool ctl_handle(struct pp_server *s, struct session *ses)
{
	struct bp_pp_ctl in, out = { 0 };
	uint8_t buf[BP_PP_CTL_MSG_LEN];
	struct pp_snap sn;
	uint64_t seq = 0;
	int bad = bp_pp_ctl_decode(ses->buf, BP_PP_CONTROL, &seq, &in);

	if (bad) {
		pp_server_log(s, "control session with %s: %s; closing", ses->peer, bp_pp_err_text(bad));
		return false;
	}
	out.cmd = in.cmd;
	out.cpu = s->o.cpu;
	out.delay_us = s->o.server_delay_us;
	switch (in.cmd) {
	case BP_PP_CMD_SET_MODE:
		ctl_set_mode(s, &in, &out);
		break;
	case BP_PP_CMD_RUN_START:
		if (snapshot(s, &ses->base) == 0) {
			bp_kstats_read(&ses->k0);
			ses->started = true;
			out.napi_id = ses->base.napi_id;
		} else {
			out.status = ETIMEDOUT;
			snprintf(out.text, sizeof(out.text), "the data loop did not answer");
		}
		break;
	case BP_PP_CMD_RUN_STOP:
		if (!ses->started) {
			out.status = EINVAL;
			snprintf(out.text, sizeof(out.text), "RUN_STOP without RUN_START");
		} else if (snapshot(s, &sn) == 0) {
			ctl_run_stop(s, ses, &sn, &out);
			out.napi_id = sn.napi_id;
			ses->started = false;
		} else {
			out.status = ETIMEDOUT;
			snprintf(out.text, sizeof(out.text), "the data loop did not answer");
		}
		break;
	default: /* HELLO */
		break;
	}
	if (!out.status)
		snprintf(out.text, sizeof(out.text), "%s", s->data ? s->data->mode_text : "");
	bp_pp_ctl_encode(BP_PP_CONTROL_REPLY, seq, &out, buf);
	/* 304 bytes into an idle socket's buffer: a short write means the peer is broken. */
	if (send(ses->fd, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(buf)) {
		pp_server_log(s, "control session with %s: cannot answer; closing", ses->peer);
		return false;
	}
	return true;
}

static void session_read(struct pp_server *s, struct session *ses)
{
	ssize_t n = recv(ses->fd, ses->buf + ses->got, sizeof(ses->buf) - ses->got, MSG_DONTWAIT);

	if (n == 0) {
		session_end(s, ses, "closed by the client");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			session_end(s, ses, strerror(errno));
		return;
	}
	ses->got += (size_t)n;
	if (ses->got < sizeof(ses->buf))
		return;
	ses->got = 0;
	if (!ctl_handle(s, ses))
		session_end(s, ses, "protocol error");
}

/* A session whose client is gone but whose EOF we have not read yet. */
static bool session_dead(struct session *ses)
{
	uint8_t b;
	ssize_t n = recv(ses->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

static void refuse_busy(struct pp_server *s, int fd, const char *peer)
{
	struct bp_pp_ctl out = { .cmd = BP_PP_CMD_HELLO, .status = EBUSY, .cpu = s->o.cpu };
	uint8_t buf[BP_PP_CTL_MSG_LEN];

	snprintf(out.text, sizeof(out.text), "the server is busy with another client's control session");
	bp_pp_ctl_encode(BP_PP_CONTROL_REPLY, 0, &out, buf);
	if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* it will see the close instead */
	}
	pp_server_log(s, "refused a second control session from %s (busy)", peer);
	close(fd);
}

/*
 * classify - look at a new connection's first bytes. Returns true when it was
 * decided (the fd is handed on or closed), false to wait for more.
 */
static bool classify(struct pp_server *s, struct pending *pe, struct session *ses, bool hup)
{
	uint8_t b[6];
	char peer[64] = "?";
	ssize_t n = recv(pe->fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);

	if (pe->peerlen)
		bp_format_addr((struct sockaddr *)&pe->peer, peer, sizeof(peer));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		close(pe->fd); /* gone without a word: nothing to count */
		return true;
	}
	if (n >= 4 && bp_get_le32(b) != BP_PP_MAGIC) {
		pp_server_note_bad(s, &pe->peer, pe->peerlen, "TCP", BP_PP_ERR_MAGIC, (size_t)n);
		close(pe->fd);
		return true;
	}
	if (n < (ssize_t)sizeof(b)) {
		if (!hup)
			return false;
		pp_server_note_bad(s, &pe->peer, pe->peerlen, "TCP", BP_PP_ERR_SHORT, (size_t)n);
		close(pe->fd);
		return true;
	}
	if (b[4] != BP_PP_VERSION || (b[5] != BP_PP_CONTROL && b[5] != BP_PP_REQUEST)) {
		pp_server_note_bad(s, &pe->peer, pe->peerlen, "TCP",
				   b[4] != BP_PP_VERSION ? BP_PP_ERR_VERSION : BP_PP_ERR_TYPE, (size_t)n);
		close(pe->fd);
		return true;
	}
	if (b[5] == BP_PP_REQUEST) {
		if (s->data)
			pp_data_adopt_tcp(s->data, pe->fd);
		else
			close(pe->fd);
		return true;
	}
	if (ses->fd >= 0 && session_dead(ses))
		session_end(s, ses, "closed by the client");
	if (ses->fd >= 0) {
		refuse_busy(s, pe->fd, peer);
		return true;
	}
	ses->fd = pe->fd;
	ses->got = 0;
	snprintf(ses->peer, sizeof(ses->peer), "%s", peer);
	pp_server_log(s, "control session with %s", peer);
	return true;
}

static void accept_all(struct pp_server *s, struct pending *pend, int *npend)
{
	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd = accept4(s->listen_fd, (struct sockaddr *)&peer, &plen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				pp_server_log(s, "accept: %s", strerror(errno));
			return;
		}
		if (*npend == PENDING_MAX) {
			/* Connections that say nothing: keep the newest, not the oldest. */
			close(pend[0].fd);
			memmove(pend, pend + 1, sizeof(pend[0]) * (PENDING_MAX - 1));
			(*npend)--;
		}
		pend[*npend] = (struct pending){ .fd = fd, .peer = peer, .peerlen = plen,
						 .deadline_ns = bp_now_ns() + CLASSIFY_MS * 1000000ull };
		(*npend)++;
	}
}

void *pp_ctl_thread(void *arg)
{
	struct pp_server *s = arg;
	struct pending pend[PENDING_MAX];
	struct session ses = { .fd = -1 };
	int npend = 0;

	for (;;) {
		struct pollfd p[3 + PENDING_MAX];
		int np = 0, timeout = -1, ses_idx = -1, pend0;
		uint64_t now = bp_now_ns();

		p[np++] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		if (ses.fd >= 0) {
			ses_idx = np;
			p[np++] = (struct pollfd){ .fd = ses.fd, .events = POLLIN };
		}
		pend0 = np;
		for (int i = 0; i < npend; i++) {
			int ms = pend[i].deadline_ns > now ? (int)((pend[i].deadline_ns - now) / 1000000) + 1 : 0;

			p[np++] = (struct pollfd){ .fd = pend[i].fd, .events = POLLIN | POLLRDHUP };
			if (timeout < 0 || ms < timeout)
				timeout = ms;
		}
		if (poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		/* The session first: a client that closed it and opened a new one is not busy. */
		if (ses_idx >= 0 && p[ses_idx].revents)
			session_read(s, &ses);
		now = bp_now_ns();
		for (int i = 0, j = pend0; i < npend; j++) {
			bool done = false;

			if (p[j].revents)
				done = classify(s, &pend[i], &ses, p[j].revents & (POLLRDHUP | POLLHUP | POLLERR));
			if (!done && now >= pend[i].deadline_ns) {
				pp_server_log(s, "closed a connection that sent no complete header in %d ms",
					      CLASSIFY_MS);
				close(pend[i].fd);
				done = true;
			}
			if (done) {
				memmove(&pend[i], &pend[i + 1], sizeof(pend[0]) * (size_t)(npend - i - 1));
				npend--;
				/* p[] was built before the move: keep j on the next unvisited entry */
				continue;
			}
			i++;
		}
		if (p[1].revents)
			accept_all(s, pend, &npend);
	}
	for (int i = 0; i < npend; i++)
		close(pend[i].fd);
	if (ses.fd >= 0)
		session_close_fd(&ses); /* the server is stopping: no mode to go back to */
	return NULL;
}
