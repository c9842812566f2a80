/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong server: the control thread (see server.h).
 *
 * It owns the TCP listener. A new connection is classified by its first bytes,
 * peeked so that nothing is consumed: "BPCT" (tools/harness/control.h) makes it the
 * control session, a request makes it a data connection (handed to the data loop,
 * which reads the request itself), anything else is counted as bad and closed. A
 * peer that says nothing within CLASSIFY_MS is closed too.
 *
 * One control session at a time: --matrix switches the server's mode, which would
 * pull the rug from under a second client. A second session is refused with
 * EBUSY. When a session ends (closed, or the client died), the data loop goes back
 * to the server's own --mode with timestamps off, so the next client finds the
 * server as it was started.
 *
 * Switching the mode (SET_MODE) can change NAPI settings and spin a CPU, so it is
 * not for anyone who reaches the port: it is taken from a client on this host
 * (loopback) that runs as the server's own user (the owner of the client's socket,
 * found in /proc/net/tcp{,6}; another user is refused) and from the session of the process that started the server
 * (--control-fd: the two-host agent, which authenticated its client); a client on
 * another host is refused with EPERM and pointed at `--remote` (the agent). A
 * server started that way is the agent's for its whole life: that session is the
 * one session, and when it closes the server stops.
 *
 * Everything here is blocking-free and poll(2)-driven, and the thread is asleep
 * while a run goes on: it costs the measured CPUs nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/bytes.h"
#include "tools/harness/control.h"
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
	bool trusted;              /* the --control-fd session: the process that started us */
	bool local;                /* a TCP client on this host (loopback) */
	bool uid_ok;               /* ... of this process's user (its socket's owner, /proc/net/tcp) */
	uid_t uid;                 /* that owner, when found */
	char peer[64];
	uint8_t *buf;              /* CTL_HDR_LEN + CTL_MAX_BODY: bytes not yet a whole message */
	size_t got;
	bool started;              /* START seen */
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
	ses->local = false;
	ses->uid_ok = false;
	ses->trusted = false;
}

/* is_loopback - an address of this host's loopback (127/8, ::1, ::ffff:127/104). */
static bool is_loopback(const struct sockaddr_storage *a, socklen_t len)
{
	if (len >= sizeof(struct sockaddr_in) && a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	if (len >= sizeof(struct sockaddr_in6) && a->ss_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(x) || (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
	}
	return false;
}

/* An endpoint as /proc/net/tcp{,6} prints it: the address words as stored, the port. */
struct endpoint {
	bool v6;
	uint32_t a[4];
	unsigned port;
};

/* endpoint_of - a socket address (a v4-mapped IPv6 one as IPv4, as /proc/net/tcp lists it). */
static void endpoint_of(const struct sockaddr_storage *ss, struct endpoint *e)
{
	memset(e, 0, sizeof(*e));
	if (ss->ss_family == AF_INET) {
		e->a[0] = ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
		e->port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
		return;
	}
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	e->port = ntohs(s6->sin6_port);
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(&e->a[0], &s6->sin6_addr.s6_addr[12], 4);
		return;
	}
	e->v6 = true;
	memcpy(e->a, &s6->sin6_addr, 16);
}

/* parse_endpoint - "0100007F:1F90" or 32 hex digits ":" port, as the kernel prints them. */
static bool parse_endpoint(const char *addr, unsigned port, bool v6, struct endpoint *e)
{
	char word[9];

	memset(e, 0, sizeof(*e));
	e->v6 = v6;
	e->port = port;
	if (strlen(addr) != (v6 ? 32u : 8u))
		return false;
	for (int i = 0; i < (v6 ? 4 : 1); i++) {
		memcpy(word, addr + 8 * i, 8);
		word[8] = 0;
		e->a[i] = (uint32_t)strtoul(word, NULL, 16);
	}
	return true;
}

/*
 * peer_uid - the user owning the other end of TCP connection fd, when that end is a
 * socket of this host (loopback): its line in /proc/self/net/tcp{,6} (this network
 * namespace's). 0 and *uid, or -ENOENT when it is not found.
 */
static int peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	struct endpoint want_local, want_rem;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 || getpeername(fd, (struct sockaddr *)&peer, &pl) < 0)
		return -errno;
	endpoint_of(&peer, &want_local); /* its local end is our peer */
	endpoint_of(&me, &want_rem);
	for (int v6 = 0; v6 < 2; v6++) {
		FILE *f = fopen(v6 ? "/proc/self/net/tcp6" : "/proc/self/net/tcp", "re");
		char line[512], la[40], ra[40];
		unsigned lp, rp, u;

		while (f && fgets(line, sizeof(line), f)) {
			struct endpoint l, r;

			if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %*x %*x:%*x %*x:%*x %*x %u", la, &lp, ra,
				   &rp, &u) != 5 || !parse_endpoint(la, lp, v6, &l) || !parse_endpoint(ra, rp, v6, &r))
				continue;
			if (!memcmp(&l, &want_local, sizeof(l)) && !memcmp(&r, &want_rem, sizeof(r))) {
				fclose(f);
				*uid = (uid_t)u;
				return 0;
			}
		}
		if (f)
			fclose(f);
	}
	return -ENOENT;
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
	if (ses->trusted) {
		/* the process that started us is gone: so is the server (its main thread sees the stop) */
		session_close_fd(ses);
		kill(getpid(), SIGTERM);
		return;
	}
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

/*
 * ctl_set_mode - SET_MODE: the data loop in that mode ("" = the server's own);
 * out: MODE_SET or ERROR. Only for a local client or the agent (see the top).
 */
static void ctl_set_mode(struct pp_server *s, const struct session *ses, const struct ctl_msg *in,
			 struct ctl_msg *out)
{
	char text[PP_MODE_LEN] = "", merr[200];
	uint64_t flags = 0;
	struct bp_mode m;
	int ret = 0;

	ctl_get_text(in, CTL_T_MODE, text, sizeof(text));
	if (!ses->trusted && ses->local && !ses->uid_ok) {
		pp_server_log(s, "refused a mode switch from %s: another user of this host", ses->peer);
		ctl_error_msg(out, EPERM, "switching the mode of this server is for its own user (uid %u): the client "
			      "runs as another user of this host; run it as that user, or start your own server",
			      (unsigned)geteuid());
		return;
	}
	if (!ses->trusted && !ses->local) {
		pp_server_log(s, "refused a mode switch from %s: not on this host", ses->peer);
		ctl_error_msg(out, EPERM, "switching the mode of a server on another host needs the agent there: run the "
			      "client with --remote HOST --server-mode MODE (it starts the server through `busypoll "
			      "agent`), or start this server in that mode (--mode MODE; it runs %s)",
			      s->data ? s->data->mode_text : s->own_mode_text);
		return;
	}
	ctl_get_u64(in, CTL_T_FLAGS, &flags);
	if (!text[0])
		m = s->own_mode;
	else if (bp_mode_parse(text, &m, merr, sizeof(merr)) != 0)
		ret = -EINVAL;
	else
		ret = bp_mode_check(&m, merr, sizeof(merr));
	if (!ret)
		ret = data_switch(s, &m, flags & CTL_F_TIMESTAMPS, merr, sizeof(merr));
	if (ret) {
		ctl_error_msg(out, ret, "%s", merr);
		return;
	}
	ctl_msg_init(out, CTL_MODE_SET);
	ctl_put_text(out, CTL_T_MODE, s->data ? s->data->mode_text : "");
}

/* ctl_run_stop - STOP: the data thread's evidence since START, and what the server adds. */
static void ctl_run_stop(struct pp_server *s, struct session *ses, const struct pp_snap *now, struct ctl_msg *out)
{
	struct evidence ev = { .valid = true, .threads = 1 };
	struct bp_kstats k1 = { 0 };

	snprintf(ev.mode, sizeof(ev.mode), "%s", s->data ? s->data->mode_text : "");
	ev.transactions = sub0(now->requests, ses->base.requests);
	ev.interval_ns = sub0(now->ns, ses->base.ns);
	ev_add_interval(&ev, &ses->base.snap, &now->snap);
	bp_kstats_read(&k1);
	ev_add_kstats(&ev, &ses->k0, &k1);
	ev_add_napi(&ev, now->napi_id);
	ctl_msg_init(out, CTL_EVIDENCE);
	ev_encode(out, &ev);
	ctl_put_u64(out, CTL_T_PP_REQUESTS, ev.transactions);
	ctl_put_u64(out, CTL_T_PP_DROPPED, sub0(now->dropped, ses->base.dropped));
	ctl_put_u64(out, CTL_T_PP_NAPI_ID, now->napi_id);
}

/* ctl_hello_ok - who the server is: its data loop's mode, its CPU, its delay. */
static void ctl_hello_ok(const struct pp_server *s, struct ctl_msg *out)
{
	ctl_msg_init(out, CTL_HELLO_OK);
	ctl_put_text(out, CTL_T_TOOL, "pingpong");
	ctl_put_text(out, CTL_T_MODE, s->data ? s->data->mode_text : "");
	ctl_put_i64(out, CTL_T_CPU, s->o.cpu);
	ctl_put_u64(out, CTL_T_PP_DELAY_US, s->o.server_delay_us);
	ctl_put_u64(out, CTL_T_PORT, s->port);
	ctl_put_u64(out, CTL_T_PID, (uint64_t)getpid());
}

/* One message in, one reply out. Returns false when the session must end. */
static bool ctl_handle(struct pp_server *s, struct session *ses, const struct ctl_msg *in, struct ctl_msg *out)
{
	struct pp_snap sn;
	bool keep = true;

	switch (in->type) {
	case CTL_HELLO:
		ctl_hello_ok(s, out);
		break;
	case CTL_SET_MODE:
		ctl_set_mode(s, ses, in, out);
		break;
	case CTL_START:
		if (snapshot(s, &ses->base) == 0) {
			bp_kstats_read(&ses->k0);
			ses->started = true;
			ctl_msg_init(out, CTL_STARTED);
			ctl_put_u64(out, CTL_T_PP_NAPI_ID, ses->base.napi_id);
		} else {
			ctl_error_msg(out, ETIMEDOUT, "the data loop did not answer");
		}
		break;
	case CTL_STOP:
		if (!ses->started) {
			ctl_error_msg(out, EINVAL, "STOP without START");
		} else if (snapshot(s, &sn) == 0) {
			ctl_run_stop(s, ses, &sn, out);
			ses->started = false;
		} else {
			ctl_error_msg(out, ETIMEDOUT, "the data loop did not answer");
		}
		break;
	default:
		ctl_error_msg(out, EPROTO, "unexpected %s", ctl_type_name(in->type));
		keep = false;
		break;
	}
	out->seq = in->seq;
	if (ctl_send_fd(ses->fd, out)) {
		pp_server_log(s, "control session with %s: cannot answer; closing", ses->peer);
		return false;
	}
	return keep;
}

/* session_read - what the client sent: every whole message handled, in order. */
static void session_read(struct pp_server *s, struct session *ses)
{
	ssize_t n = recv(ses->fd, ses->buf + ses->got, CTL_HDR_LEN + CTL_MAX_BODY - ses->got, MSG_DONTWAIT);
	struct ctl_msg *in, *out;
	size_t off = 0;

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
	in = malloc(sizeof(*in));
	out = malloc(sizeof(*out));
	while (in && out && ses->fd >= 0) {
		const char *why;
		int len = ctl_decode(ses->buf + off, ses->got - off, in, &why);

		if (len == 0)
			break;
		if (len < 0) {
			pp_server_log(s, "control session with %s: %s; closing", ses->peer, why);
			session_end(s, ses, "protocol error");
			break;
		}
		off += (size_t)len;
		if (!ctl_handle(s, ses, in, out)) {
			session_end(s, ses, "protocol error");
			break;
		}
	}
	if (!in || !out)
		session_end(s, ses, "out of memory");
	if (ses->fd >= 0) {
		memmove(ses->buf, ses->buf + off, ses->got - off);
		ses->got -= off;
	}
	free(in);
	free(out);
}

/* A session whose client is gone but whose EOF we have not read yet. */
static bool session_dead(struct session *ses)
{
	uint8_t b;
	ssize_t n = recv(ses->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/* refuse_busy - a second control session: told why (a session-wide ERROR, seq 0), closed. */
static void refuse_busy(struct pp_server *s, int fd, const char *peer)
{
	struct ctl_msg *out = malloc(sizeof(*out));

	if (out) {
		ctl_error_msg(out, EBUSY, "%s", s->o.control_fd >= 0 ?
			      "the server belongs to the agent session that started it: reach it through that agent" :
			      "the server is busy with another client's control session");
		out->seq = 0;
		if (ctl_send_fd(fd, out)) {
			/* it will see the close instead */
		}
		free(out);
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
	bool control;

	if (pe->peerlen)
		bp_format_addr((struct sockaddr *)&pe->peer, peer, sizeof(peer));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		close(pe->fd); /* gone without a word: nothing to count */
		return true;
	}
	control = n >= 4 && bp_get_le32(b) == CTL_MAGIC;
	if (n >= 4 && !control && bp_get_le32(b) != BP_PP_MAGIC) {
		pp_server_note_bad(s, &pe->peer, pe->peerlen, "TCP", BP_PP_ERR_MAGIC, (size_t)n);
		close(pe->fd);
		return true;
	}
	if (!control && n < (ssize_t)sizeof(b)) {
		if (!hup && n < 4)
			return false;
		if (!hup)
			return false;
		pp_server_note_bad(s, &pe->peer, pe->peerlen, "TCP", BP_PP_ERR_SHORT, (size_t)n);
		close(pe->fd);
		return true;
	}
	if (!control && (b[4] != BP_PP_VERSION || b[5] != BP_PP_REQUEST)) {
		pp_server_note_bad(s, &pe->peer, pe->peerlen, "TCP",
				   b[4] != BP_PP_VERSION ? BP_PP_ERR_VERSION : BP_PP_ERR_TYPE, (size_t)n);
		close(pe->fd);
		return true;
	}
	if (!control) {
		if (s->data)
			pp_data_adopt_tcp(s->data, pe->fd);
		else
			close(pe->fd);
		return true;
	}
	if (ses->fd >= 0 && session_dead(ses))
		session_end(s, ses, "closed by the client");
	if (ses->fd >= 0 || s->o.control_fd >= 0) {
		refuse_busy(s, pe->fd, peer);
		return true;
	}
	ses->fd = pe->fd;
	ses->got = 0;
	/* a client on this host, and of our own user: another user may not switch a root server */
	ses->local = is_loopback(&pe->peer, pe->peerlen);
	ses->uid_ok = ses->local && peer_uid(pe->fd, &ses->uid) == 0 && ses->uid == geteuid();
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
	struct session ses = { .fd = -1, .buf = malloc(CTL_HDR_LEN + CTL_MAX_BODY) };
	int npend = 0;

	if (!ses.buf) {
		pp_server_log(s, "control thread: out of memory");
		return NULL;
	}
	if (s->o.control_fd >= 0) {
		/* started by another process (the agent): its session is the one, for the server's whole life */
		ses.fd = s->o.control_fd;
		ses.trusted = true;
		snprintf(ses.peer, sizeof(ses.peer), "the process that started it");
	}
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
	free(ses.buf);
	return NULL;
}
