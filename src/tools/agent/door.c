/* SPDX-License-Identifier: MIT */
/*
 * The standing agent's front door (`busypoll agent --listen ADDR:PORT --key-file F`):
 * one libbusypoll loop (epoll:block) on this thread serves the listener, every
 * connection still in its handshake and every authenticated session.
 *
 * Nothing but the handshake reaches an unauthenticated peer: its bytes go to
 * auth_input (fixed-size messages) and nowhere else until it proved the key. What
 * an unauthenticated peer can hold is bounded the way OpenSSH bounds it
 * (MaxStartups, PerSourceMaxStartups, LoginGraceTime):
 *   - a new connection is refused (BUSY sent, closed) when its source (an IPv4
 *     address, an IPv6 /64; source.h) has per_source handshakes pending already;
 *   - from startups_start pending handshakes in all, a new connection is refused
 *     with startups_rate % chance, rising linearly to 100 % at startups_full;
 *   - a handshake in progress is never evicted for a newcomer, and each has
 *     auth_timeout to finish.
 * So a flood from one source holds per_source slots and no more, a flood from many
 * can delay a real client (who is told it is busy and tries again) but cannot cut
 * its handshake short. Every refusal of an unauthenticated peer goes to the refusal
 * log (source.h: a line per source per interval, the rest summed, a cap on all),
 * refusals of an authenticated session are each logged; the agent goes on serving
 * the others.
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

#include <sodium.h>

#include <busypoll/loop.h>
#include <busypoll/mode.h>
#include <busypoll/net.h>

#include "tools/agent/agent.h"
#include "tools/agent/session.h"
#include "tools/agent/source.h"
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
	struct src src;
	bool nonce_checked, replay;
	struct peer *prev, *next;      /* the door's list of its state, oldest first */
	struct peer *sprev, *snext;    /* pending: its source bucket's chain */
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
	struct peer **bucket;          /* pending peers by src_hash: nbucket (a power of 2) chains */
	size_t nbucket;
	struct bp_timer log_timer;     /* the refusal log's interval */
	struct src_log log;
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

/* ---- pending handshakes, by source ---- */

static struct peer **bucket_of(struct door *d, const struct src *s)
{
	return &d->bucket[src_hash(s) & (d->nbucket - 1)];
}

/* How many handshakes from s are pending: its chain holds them, and few others (a keyed hash). */
static int pending_from(struct door *d, const struct src *s)
{
	int n = 0;

	for (struct peer *q = *bucket_of(d, s); q; q = q->snext)
		n += src_same(&q->src, s);
	return n;
}

static void pending_add(struct peer *p)
{
	struct peer **b = bucket_of(p->d, &p->src);

	list_add(&p->d->pending, p);
	p->sprev = NULL;
	p->snext = *b;
	if (*b)
		(*b)->sprev = p;
	*b = p;
}

static void pending_del(struct peer *p)
{
	list_del(&p->d->pending, p);
	if (p->sprev)
		p->sprev->snext = p->snext;
	else
		*bucket_of(p->d, &p->src) = p->snext;
	if (p->snext)
		p->snext->sprev = p->sprev;
	p->sprev = p->snext = NULL;
}

/* Forget p: off its list, no timer, secrets wiped, freed. The conn is already gone or closed. */
static void peer_free(struct peer *p)
{
	if (p->state == P_AUTH)
		pending_del(p);
	else
		list_del(&p->d->sessions, p);
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
	if (p->state == P_AUTH) {
		src_log_refused(&p->d->log, &p->src, p->addr, why);
	} else {
		agent_log(p->addr, "refused: %s", why);
		session_end(&p->session, "refused");
	}
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
	pending_del(p);
	bp_timer_stop(p->d->loop, &p->deadline);
	p->state = P_SESSION;
	list_add(&p->d->sessions, p);
	session_start(&p->session, p->d->cfg, p->addr);
	return used + serve_records(p, data + used, len - used);
}

/* ---- sessions ---- */

/*
 * A session's unsent replies (what neither the kernel nor the client took) past this
 * many bytes: the session is ended. A client that reads its replies never gets near it
 * (the socket buffers hold megabytes more); one that pipelines and never reads would
 * otherwise grow the agent without bound until the TCP user timeout.
 */
#define REPLY_QUEUE_MAX (4u << 20)

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
		if (bp_conn_pending(p->c) > REPLY_QUEUE_MAX) {
			refuse(p, "its replies are not read (more than %u KiB unsent)", REPLY_QUEUE_MAX >> 10);
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
	const char *when = p->state == P_AUTH ? " during the handshake" : "";

	if (err)
		snprintf(why, sizeof(why), "the connection failed: %s: %s%s", syscall, strerror(-err), when);
	else if (p->state == P_AUTH)
		snprintf(why, sizeof(why), "closed during the handshake");
	else
		snprintf(why, sizeof(why), "the client closed the connection");
	if (p->state == P_AUTH)
		src_log_refused(&p->d->log, &p->src, p->addr, why);
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

/*
 * Refused for load: BUSY (the client says the agent is busy, not that its key is
 * wrong), a FIN right after it (shutdown), what the peer sent already read, then
 * closed: a reset, if its HELLO comes later, follows BUSY on the wire and the
 * client's kernel hands BUSY over first. Nothing is held.
 */
static void refuse_busy(struct door *d, int fd, const struct src *s, const char *addr, const char *why)
{
	uint8_t busy[AUTH_BUSY_LEN], sink[512];

	auth_busy_msg(busy);
	(void)!send(fd, busy, sizeof(busy), MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 4 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
		;
	close(fd);
	src_log_refused(&d->log, s, addr, why);
}

/*
 * Random early drop (OpenSSH's MaxStartups): with n handshakes pending, from START
 * a new one is refused with RATE % chance, rising linearly to 100 % at FULL.
 */
static bool early_drop(const struct agent_cfg *cfg, int n)
{
	int p;

	if (n < cfg->startups_start)
		return false;
	if (n >= cfg->startups_full)
		return true;
	p = cfg->startups_rate + (int)((long long)(100 - cfg->startups_rate) * (n - cfg->startups_start) /
				      (cfg->startups_full - cfg->startups_start));
	return (int)randombytes_uniform(100) < p;
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct door *d = arg;
	const struct agent_cfg *cfg = d->cfg;
	struct sockaddr_storage ss = { .ss_family = AF_UNSPEC };
	socklen_t sl = sizeof(ss);
	char addr[64], why[160];
	struct peer *p;
	struct src s;
	int rc, from;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		bp_format_addr((struct sockaddr *)&ss, addr, sizeof(addr));
	else
		snprintf(addr, sizeof(addr), "(unknown peer)");
	src_of((struct sockaddr *)&ss, &s);
	/* a handshake in progress is never evicted: the newcomer is the one refused */
	if ((from = pending_from(d, &s)) >= cfg->per_source) {
		snprintf(why, sizeof(why), "busy: %d connections from %s wait to authenticate already "
			 "(--per-source %d)", from, s.text, cfg->per_source);
		refuse_busy(d, fd, &s, addr, why);
		return;
	}
	if (early_drop(cfg, d->pending.n)) {
		snprintf(why, sizeof(why), "busy: %d connections wait to authenticate (--max-startups "
			 "%d:%d:%d)", d->pending.n, cfg->startups_start, cfg->startups_rate, cfg->startups_full);
		refuse_busy(d, fd, &s, addr, why);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		agent_log(NULL, "out of memory: a connection refused");
		close(fd);
		return;
	}
	p->d = d;
	p->state = P_AUTH;
	p->src = s;
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
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
	pending_add(p);
	if (bp_timer_start(d->loop, &p->deadline, (uint64_t)(d->cfg->auth_timeout_s * 1e6),
			   on_deadline, p))
		refuse(p, "out of memory for its timer");
}

/* The refusal log's interval ended: its summaries, and the next interval. */
static void on_log_timer(struct bp_loop *loop, void *arg)
{
	struct door *d = arg;

	src_log_flush(&d->log);
	bp_timer_start(loop, &d->log_timer, SRC_LOG_INTERVAL_S * 1000000ull, on_log_timer, d);
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
	for (d->nbucket = 64; d->nbucket < (size_t)cfg->startups_full && d->nbucket < (1u << 20);)
		d->nbucket *= 2;
	d->bucket = calloc(d->nbucket, sizeof(*d->bucket));
	if (!d->bucket || sodium_init() < 0) {
		free(d->bucket);
		free(d);
		return -ENOMEM;
	}
	raise_fd_limit();
	if ((rc = bp_mode_parse("epoll:block", &mode, err, sizeof(err))) ||
	    (rc = bp_loop_create(&d->loop, &mode))) {
		agent_log(NULL, "cannot start its loop: %s", bp_last_error());
		free(d->bucket);
		free(d);
		return rc;
	}
	if ((rc = bp_listener_create(d->loop, (struct sockaddr *)&ss, sl, on_accept, d, &l))) {
		agent_log(NULL, "cannot listen on %s: %s", cfg->listen, bp_last_error());
		bp_loop_destroy(d->loop);
		free(d->bucket);
		free(d);
		return rc;
	}
	bp_listener_on_error(l, on_accept_error);
	if ((rc = bp_timer_start(d->loop, &d->log_timer, SRC_LOG_INTERVAL_S * 1000000ull, on_log_timer, d))) {
		agent_log(NULL, "cannot start its log's timer: %s", strerror(-rc));
		bp_listener_close(l);
		bp_loop_destroy(d->loop);
		free(d->bucket);
		free(d);
		return rc;
	}
	stop_loop = d->loop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sl = sizeof(ss);
	getsockname(bp_listener_fd(l), (struct sockaddr *)&ss, &sl);
	agent_info(NULL, "listening on %s (pid %d); a client must prove the key within %g s "
		   "(--auth-timeout); unauthenticated connections: at most %d per source (--per-source), "
		   "new ones refused from %d waiting with %d%% chance, all at %d (--max-startups %d:%d:%d)",
		   bp_format_addr((struct sockaddr *)&ss, where, sizeof(where)), (int)getpid(),
		   cfg->auth_timeout_s, cfg->per_source, cfg->startups_start, cfg->startups_rate,
		   cfg->startups_full, cfg->startups_start, cfg->startups_rate, cfg->startups_full);
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
	src_log_flush(&d->log);
	bp_timer_stop(d->loop, &d->log_timer);
	stop_loop = NULL;
	bp_listener_close(l);
	bp_loop_destroy(d->loop);
	free(d->bucket);
	free(d);
	return rc;
}
