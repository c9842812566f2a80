/* SPDX-License-Identifier: MIT */
/*
 * The standing agent's front door (`busypoll agent --listen ADDR:PORT --key-file F`):
 * one libbusypoll loop (epoll:block) on this thread serves the listener, every
 * connection still in its handshake and every authenticated session.
 *
 * Nothing but the handshake reaches an unauthenticated peer: its bytes go to
 * auth_input (fixed-size messages) and nowhere else until it proved the key. Each
 * connection has auth_timeout to finish the handshake; at most max_pending wait
 * at once, and when one more comes the oldest waiting is dropped, so a flood of
 * connections that never speak cannot keep a real client out. Every refusal is
 * logged with the peer's address and why (garbage, another version, wrong key,
 * replayed transcript, stalled, dropped, oversized or tampered record), and the
 * agent goes on serving the others.
 *
 * After ACCEPT the connection is a session: records are opened (chan_open), each
 * message handed to session_handle and its reply sealed back. However the session
 * ends (bye, the client closing or vanishing: TCP keepalive finds a silent peer,
 * a bad record, the agent stopping) session_end restores what it changed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/mode.h>
#include <busypoll/net.h>

#include "tools/agent/agent.h"
#include "tools/agent/session.h"
#include "tools/link/auth.h"
#include "tools/link/chan.h"

enum peer_state { P_AUTH, P_SESSION };

struct door;

struct peer {
	struct door *d;
	struct bp_conn *c;
	struct bp_timer deadline;
	enum peer_state state;
	char addr[64];
	bool nonce_checked, replay;
	struct peer *prev, *next;      /* the door's list of its state, oldest first */
	struct auth auth;              /* auth.chan is the session's channel */
	struct session session;
};

struct list {
	struct peer *head, *tail;
	int n;
};

struct door {
	const struct agent_cfg *cfg;
	struct bp_loop *loop;
	struct list pending, sessions;
	uint8_t msg[CHAN_MAX_MSG];
	uint8_t frame[CHAN_FRAME_MAX];
	uint8_t reply[SESSION_REPLY_MAX];
};

static struct bp_loop *stop_loop; /* for the signal handler */

static void on_signal(int sig)
{
	agent_stop = 1;
	if (stop_loop)
		bp_loop_stop(stop_loop);
}

/* ---- lists ---- */

static void list_add(struct list *l, struct peer *p)
{
	p->prev = l->tail;
	p->next = NULL;
	if (l->tail)
		l->tail->next = p;
	else
		l->head = p;
	l->tail = p;
	l->n++;
}

static void list_del(struct list *l, struct peer *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		l->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		l->tail = p->prev;
	p->prev = p->next = NULL;
	l->n--;
}

static struct list *list_of(struct peer *p)
{
	return p->state == P_AUTH ? &p->d->pending : &p->d->sessions;
}

/* Forget p: off its list, no timer, secrets wiped, freed. The conn is already gone or closed. */
static void peer_free(struct peer *p)
{
	list_del(list_of(p), p);
	bp_timer_stop(p->d->loop, &p->deadline);
	auth_wipe(&p->auth);
	free(p);
}

/* Refuse p: log why with its address, close it (no on_close), free it. */
__attribute__((format(printf, 2, 3)))
static void refuse(struct peer *p, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	agent_log(p->addr, "refused: %s", why);
	if (p->state == P_SESSION)
		session_end(&p->session, "refused");
	bp_conn_close(p->c);
	peer_free(p);
}

/* ---- the handshake ---- */

static void on_deadline(struct bp_loop *loop, void *arg)
{
	struct peer *p = arg;

	refuse(p, "stalled: no complete handshake within %g s", p->d->cfg->auth_timeout_s);
}

/* Send what the handshake has to send. false when the conn failed (p freed then). */
static bool send_auth_output(struct peer *p)
{
	size_t len;
	const uint8_t *out = auth_output(&p->auth, &len);
	int rc;

	if (!len)
		return true;
	rc = bp_conn_send(p->c, out, len);
	auth_output_sent(&p->auth);
	if (rc) {
		refuse(p, "send: %s", strerror(-rc));
		return false;
	}
	return true;
}

static size_t serve_records(struct peer *p, const uint8_t *data, size_t len);

static size_t on_auth_bytes(struct peer *p, const uint8_t *data, size_t len)
{
	size_t used = auth_input(&p->auth, data, len);

	if (!p->nonce_checked && p->auth.step >= 1) {
		p->nonce_checked = true;
		p->replay = auth_nonce_seen(p->auth.peer_nonce);
	}
	if (p->auth.state == AUTH_FAILED) {
		if (p->auth.err == -EACCES && p->replay)
			refuse(p, "replayed transcript: this client nonce was seen before (%s)", p->auth.why);
		else
			refuse(p, "%s", p->auth.why);
		return len;
	}
	if (!send_auth_output(p))
		return len;
	if (p->auth.state != AUTH_DONE)
		return used;
	/* authenticated: from now on a session */
	list_del(&p->d->pending, p);
	bp_timer_stop(p->d->loop, &p->deadline);
	p->state = P_SESSION;
	list_add(&p->d->sessions, p);
	session_start(&p->session, p->d->cfg, p->addr);
	return used + serve_records(p, data + used, len - used);
}

/* ---- sessions ---- */

/* Open every whole record in data, answer each. Returns what it used; p may be gone after. */
static size_t serve_records(struct peer *p, const uint8_t *data, size_t len)
{
	struct door *d = p->d;
	size_t off = 0;

	while (off < len) {
		size_t mlen, rlen;
		bool end;
		int n = chan_open(&p->auth.chan, data + off, len - off, d->msg, sizeof(d->msg), &mlen);
		int f;

		if (n == 0)
			break;
		if (n == -EMSGSIZE) {
			refuse(p, "an oversized message (more than %d bytes)", CHAN_MAX_MSG);
			return len;
		}
		if (n < 0) {
			refuse(p, "a record that does not open (tampered, replayed or out of order)");
			return len;
		}
		off += (size_t)n;
		rlen = session_handle(&p->session, d->msg, mlen, d->reply, &end);
		f = chan_seal(&p->auth.chan, d->reply, rlen, d->frame, sizeof(d->frame));
		if (f < 0 || bp_conn_send(p->c, d->frame, (size_t)f) < 0) {
			refuse(p, "cannot send a reply");
			return len;
		}
		if (end) {
			bp_conn_close_after_send(p->c); /* on_close frees p */
			return len;
		}
	}
	return off;
}

/* ---- connection callbacks ---- */

static size_t on_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct peer *p = bp_conn_data(c);

	if (p->session.ended)
		return len; /* bye was said: what follows is ignored until the close */
	return p->state == P_AUTH ? on_auth_bytes(p, data, len) : serve_records(p, data, len);
}

static void on_close(struct bp_conn *c, int err, const char *syscall)
{
	struct peer *p = bp_conn_data(c);
	char why[160];

	if (err)
		snprintf(why, sizeof(why), "the connection failed: %s: %s", syscall, strerror(-err));
	else
		snprintf(why, sizeof(why), "the client closed the connection");
	if (p->state == P_AUTH)
		agent_log(p->addr, "refused: %s during the handshake", err ? why : "closed");
	else
		session_end(&p->session, why);
	peer_free(p);
}

static const struct bp_conn_ops peer_ops = {
	.on_recv = on_recv,
	.on_close = on_close,
};

/*
 * A silent peer is found by TCP: keepalive probes after 10 s idle, 3 probes 5 s apart,
 * and unacknowledged data is given up after 30 s. Best effort.
 */
static void keepalive(int fd)
{
	int on = 1, idle = 10, intvl = 5, cnt = 3;
	unsigned int user_timeout = 30000;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct door *d = arg;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct peer *p;
	int rc;

	if (d->pending.n >= d->cfg->max_pending) {
		struct peer *old = d->pending.head;

		refuse(old, "dropped: %d connections waiting to authenticate, the oldest go first",
		       d->pending.n);
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		agent_log(NULL, "out of memory: a connection refused");
		close(fd);
		return;
	}
	p->d = d;
	p->state = P_AUTH;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		bp_format_addr((struct sockaddr *)&ss, p->addr, sizeof(p->addr));
	else
		snprintf(p->addr, sizeof(p->addr), "(unknown peer)");
	keepalive(fd);
	if ((rc = auth_start(&p->auth, AUTH_AGENT, &d->cfg->key)))
		close(fd);
	else
		rc = bp_conn_adopt(d->loop, fd, &peer_ops, p, &p->c); /* closes fd when it fails */
	if (rc) {
		agent_log(p->addr, "refused: cannot serve it: %s", strerror(-rc));
		auth_wipe(&p->auth);
		free(p);
		return;
	}
	list_add(&d->pending, p);
	if (bp_timer_start(d->loop, &p->deadline, (uint64_t)(d->cfg->auth_timeout_s * 1e6),
			   on_deadline, p))
		refuse(p, "out of memory for its timer");
}

static void on_accept_error(struct bp_listener *l, int err, void *arg)
{
	if (err)
		agent_log(NULL, "accept: %s: new connections wait in the backlog", strerror(-err));
	else
		agent_log(NULL, "accept works again");
}

/* As many descriptors as the hard limit allows: a flood of connections needs them. */
static void raise_fd_limit(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

int agent_serve_listen(const struct agent_cfg *cfg)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sockaddr_storage ss;
	struct bp_listener *l = NULL;
	struct bp_mode mode;
	struct door *d;
	socklen_t sl;
	char err[160], where[64];
	int rc;

	if ((rc = bp_parse_addr(cfg->listen, 0, &ss, &sl))) {
		agent_log(NULL, "--listen %s: not an address", cfg->listen);
		return rc;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = cfg;
	raise_fd_limit();
	if ((rc = bp_mode_parse("epoll:block", &mode, err, sizeof(err))) ||
	    (rc = bp_loop_create(&d->loop, &mode))) {
		agent_log(NULL, "cannot start its loop: %s", bp_last_error());
		free(d);
		return rc;
	}
	if ((rc = bp_listener_create(d->loop, (struct sockaddr *)&ss, sl, on_accept, d, &l))) {
		agent_log(NULL, "cannot listen on %s: %s", cfg->listen, bp_last_error());
		bp_loop_destroy(d->loop);
		free(d);
		return rc;
	}
	bp_listener_on_error(l, on_accept_error);
	stop_loop = d->loop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sl = sizeof(ss);
	getsockname(bp_listener_fd(l), (struct sockaddr *)&ss, &sl);
	agent_info(NULL, "listening on %s (pid %d); a client must prove the key within %g s",
		  bp_format_addr((struct sockaddr *)&ss, where, sizeof(where)), (int)getpid(),
		  cfg->auth_timeout_s);
	rc = agent_stop ? 0 : bp_loop_run(d->loop);
	agent_info(NULL, "stopping: %d session(s) to end, %d connection(s) waiting", d->sessions.n,
		  d->pending.n);
	while (d->sessions.head) {
		struct peer *p = d->sessions.head;

		session_end(&p->session, "the agent is stopping");
		bp_conn_close(p->c);
		peer_free(p);
	}
	while (d->pending.head) {
		struct peer *p = d->pending.head;

		bp_conn_close(p->c);
		peer_free(p);
	}
	stop_loop = NULL;
	bp_listener_close(l);
	bp_loop_destroy(d->loop);
	free(d);
	return rc;
}
