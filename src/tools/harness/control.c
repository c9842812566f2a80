/* SPDX-License-Identifier: MIT */
/*
 * The control protocol: messages, fields, sessions (contract and wire format in
 * tools/harness/control.h). Every decode is bounds-checked against the bytes
 * given; nothing here trusts a length it has not compared with what is left.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "base/bytes.h"
#include "tools/harness/control.h"
#include "tools/common/values.h"

/* The message types: who sends each, what answers it. One entry per type. */
static const struct {
	const char *name;
	const char *from;   /* "client", "server", "agent", "either" */
	uint16_t reply;     /* the answer's type (0: none; CTL_ERROR may always answer) */
} ctl_types[CTL_TYPE_MAX + 1] = {
	[CTL_HELLO] = { "HELLO", "client", CTL_HELLO_OK },
	[CTL_HELLO_OK] = { "HELLO_OK", "server", 0 },
	[CTL_ERROR] = { "ERROR", "either", 0 },
	[CTL_START] = { "START", "client", CTL_STARTED },
	[CTL_STARTED] = { "STARTED", "server", 0 },
	[CTL_STOP] = { "STOP", "client", CTL_EVIDENCE },
	[CTL_EVIDENCE] = { "EVIDENCE", "server", 0 },
	[CTL_SET_MODE] = { "SET_MODE", "client", CTL_MODE_SET },
	[CTL_MODE_SET] = { "MODE_SET", "server", 0 },
	[CTL_SAMPLE] = { "SAMPLE", "client", CTL_EVIDENCE },
	[CTL_SERVER_START] = { "SERVER_START", "client", CTL_SERVER_INFO },
	[CTL_SERVER_INFO] = { "SERVER_INFO", "agent", 0 },
	[CTL_SERVER_STOP] = { "SERVER_STOP", "client", CTL_SERVER_INFO },
	[CTL_NAPI] = { "NAPI", "either", CTL_NAPI },
	[CTL_KNOB] = { "KNOB", "either", CTL_KNOB },
	[CTL_COALESCE] = { "COALESCE", "either", CTL_COALESCE },
	[CTL_CHANNELS] = { "CHANNELS", "either", CTL_CHANNELS },
	[CTL_PATH_REPORT] = { "PATH_REPORT", "client", CTL_PATH },
	[CTL_PATH] = { "PATH", "agent", 0 },
	[CTL_BYE] = { "BYE", "either", CTL_BYE },
};

/* The field tags and their kinds. One entry per tag; a tag not here is skipped. */
static const uint8_t ctl_tags[256] = {
	[CTL_T_TOOL] = CTL_K_TEXT, [CTL_T_RUN_ID] = CTL_K_U64, [CTL_T_ERRNO] = CTL_K_U64,
	[CTL_T_REASON] = CTL_K_TEXT, [CTL_T_MODE] = CTL_K_TEXT, [CTL_T_CPU] = CTL_K_U64,
	[CTL_T_THREADS] = CTL_K_U64, [CTL_T_FLAGS] = CTL_K_U64, [CTL_T_PID] = CTL_K_U64,
	[CTL_T_ADDR] = CTL_K_TEXT, [CTL_T_KERNEL] = CTL_K_TEXT,
	[CTL_T_EV_TRANSACTIONS] = CTL_K_U64, [CTL_T_EV_INTERVAL_NS] = CTL_K_U64,
	[CTL_T_EV_UTIME_US] = CTL_K_U64, [CTL_T_EV_STIME_US] = CTL_K_U64, [CTL_T_EV_NVCSW] = CTL_K_U64,
	[CTL_T_EV_NIVCSW] = CTL_K_U64, [CTL_T_EV_BUSY_POLL_RX] = CTL_K_U64, [CTL_T_EV_NET_RX] = CTL_K_U64,
	[CTL_T_EV_SYSCALLS] = CTL_K_U64, [CTL_T_EV_EMPTY_POLLS] = CTL_K_U64, [CTL_T_EV_WAKEUPS] = CTL_K_U64,
	[CTL_T_EV_WAITS] = CTL_K_U64, [CTL_T_EV_COMPLETIONS] = CTL_K_U64, [CTL_T_EV_NAPI_ID] = CTL_K_U64,
	[CTL_T_EV_THREAD] = CTL_K_RECORD, [CTL_T_EV_TID] = CTL_K_U64, [CTL_T_EV_COMM] = CTL_K_TEXT,
	[CTL_T_EV_CPU_US] = CTL_K_U64, [CTL_T_EV_HELPER_CPU_US] = CTL_K_U64,
	[CTL_T_EV_THR_UTIME_US] = CTL_K_U64, [CTL_T_EV_THR_STIME_US] = CTL_K_U64,
	[CTL_T_EV_XSK] = CTL_K_U64, [CTL_T_EV_PKT_RX] = CTL_K_U64, [CTL_T_EV_PKT_TX] = CTL_K_U64,
	[CTL_T_EV_PKT_DROPPED] = CTL_K_U64, [CTL_T_EV_XSK_RX_DROPPED] = CTL_K_U64,
	[CTL_T_EV_XSK_RX_RING_FULL] = CTL_K_U64, [CTL_T_EV_XSK_FILL_EMPTY] = CTL_K_U64,
	[CTL_T_EV_XSK_TX_EMPTY] = CTL_K_U64, [CTL_T_EV_OTHER_US] = CTL_K_U64,
	[CTL_T_RR_REQUEST_SIZE] = CTL_K_U64, [CTL_T_RR_RESPONSE_SIZE] = CTL_K_U64,
	[CTL_T_PP_DELAY_US] = CTL_K_U64, [CTL_T_PP_NAPI_ID] = CTL_K_U64, [CTL_T_PP_REQUESTS] = CTL_K_U64,
	[CTL_T_PP_DROPPED] = CTL_K_U64,
	[CTL_T_Q] = CTL_K_RECORD, [CTL_T_Q_ID] = CTL_K_U64, [CTL_T_Q_CNTLID] = CTL_K_U64, [CTL_T_Q_QID] = CTL_K_U64,
	[CTL_T_Q_THREAD] = CTL_K_U64, [CTL_T_Q_LIVE] = CTL_K_U64, [CTL_T_Q_PEER] = CTL_K_TEXT,
	[CTL_T_Q_COMMANDS] = CTL_K_U64, [CTL_T_Q_READS] = CTL_K_U64, [CTL_T_Q_WRITES] = CTL_K_U64,
	[CTL_T_Q_FLUSHES] = CTL_K_U64, [CTL_T_Q_BYTES_IN] = CTL_K_U64, [CTL_T_Q_BYTES_OUT] = CTL_K_U64,
	[CTL_T_Q_ERRORS] = CTL_K_U64, [CTL_T_Q_POLL_PASSES] = CTL_K_U64, [CTL_T_Q_IDLE_EXITS] = CTL_K_U64,
	[CTL_T_Q_R2TS] = CTL_K_U64, [CTL_T_Q_POLLS] = CTL_K_U64, [CTL_T_POLL_PERIOD_US] = CTL_K_U64,
	[CTL_T_SERVER] = CTL_K_U64, [CTL_T_DEV] = CTL_K_TEXT, [CTL_T_SETTINGS] = CTL_K_TEXT, [CTL_T_MAX] = CTL_K_TEXT,
	[CTL_T_KNOB] = CTL_K_TEXT, [CTL_T_VALUE] = CTL_K_U64, [CTL_T_ARGS] = CTL_K_TEXT, [CTL_T_PORT] = CTL_K_U64,
	[CTL_T_STATUS] = CTL_K_U64, [CTL_T_RESTORED] = CTL_K_U64, [CTL_T_HOSTNAME] = CTL_K_TEXT,
	[CTL_T_BUSY_POLL] = CTL_K_U64, [CTL_T_BUSY_READ] = CTL_K_U64, [CTL_T_NETNS] = CTL_K_U64,
	[CTL_T_VERSION] = CTL_K_TEXT, [CTL_T_PRIORITY] = CTL_K_U64, [CTL_T_NOTE] = CTL_K_TEXT,
	[CTL_T_NAPI_ID] = CTL_K_U64, [CTL_T_N_IFINDEX] = CTL_K_U64, [CTL_T_N_IRQ] = CTL_K_U64, [CTL_T_N_PID] = CTL_K_U64,
	[CTL_T_N_DEFER] = CTL_K_U64, [CTL_T_N_GRO_FLUSH] = CTL_K_U64, [CTL_T_N_IRQ_SUSPEND] = CTL_K_U64,
	[CTL_T_N_THREADED] = CTL_K_U64, [CTL_T_N_HAS] = CTL_K_U64,
	[CTL_T_P_IFINDEX] = CTL_K_U64, [CTL_T_P_DRIVER] = CTL_K_TEXT, [CTL_T_P_DRIVER_VERSION] = CTL_K_TEXT,
	[CTL_T_P_FIRMWARE] = CTL_K_TEXT, [CTL_T_P_BUS] = CTL_K_TEXT, [CTL_T_P_CHANNELS] = CTL_K_TEXT,
	[CTL_T_P_COALESCE] = CTL_K_TEXT, [CTL_T_P_RX_QUEUES] = CTL_K_U64, [CTL_T_P_TX_QUEUES] = CTL_K_U64,
	[CTL_T_P_N_NAPI] = CTL_K_U64, [CTL_T_P_QUEUE] = CTL_K_RECORD, [CTL_T_P_Q_ID] = CTL_K_U64,
	[CTL_T_P_Q_TX] = CTL_K_U64, [CTL_T_P_NAPI] = CTL_K_RECORD, [CTL_T_P_IRQ] = CTL_K_RECORD,
	[CTL_T_P_I_IRQ] = CTL_K_U64, [CTL_T_P_I_NAME] = CTL_K_TEXT, [CTL_T_P_I_AFFINITY] = CTL_K_TEXT,
	[CTL_T_P_I_EFFECTIVE] = CTL_K_TEXT, [CTL_T_P_SECTION] = CTL_K_RECORD, [CTL_T_P_S_ID] = CTL_K_U64,
	[CTL_T_P_GRO] = CTL_K_U64, [CTL_T_P_TSO] = CTL_K_U64,
};

const char *ctl_type_name(unsigned type)
{
	return type <= CTL_TYPE_MAX && ctl_types[type].name ? ctl_types[type].name : "?";
}

uint16_t ctl_reply_type(unsigned type)
{
	return type <= CTL_TYPE_MAX ? ctl_types[type].reply : 0;
}

enum ctl_kind ctl_tag_kind(unsigned tag)
{
	return tag < sizeof(ctl_tags) ? (enum ctl_kind)ctl_tags[tag] : CTL_K_NONE;
}

/* ---- writing ---- */

void ctl_msg_init(struct ctl_msg *m, uint16_t type)
{
	m->type = type;
	m->seq = 0;
	m->len = 0;
	m->overflow = false;
}

/* field - room for a field of n value bytes: its value's address, or NULL (overflow set). */
static uint8_t *field(struct ctl_msg *m, uint16_t tag, size_t n)
{
	uint8_t *p;

	if (m->overflow || n > UINT16_MAX || m->len + CTL_FIELD_HDR + n > CTL_MAX_BODY) {
		m->overflow = true;
		return NULL;
	}
	p = m->body + m->len;
	bp_put_le16(p, tag);
	bp_put_le16(p + 2, (uint16_t)n);
	m->len += (uint32_t)(CTL_FIELD_HDR + n);
	return p + CTL_FIELD_HDR;
}

void ctl_put_u64(struct ctl_msg *m, uint16_t tag, uint64_t v)
{
	uint8_t *p = field(m, tag, 8);

	if (p)
		bp_put_le64(p, v);
}

void ctl_put_i64(struct ctl_msg *m, uint16_t tag, int64_t v)
{
	ctl_put_u64(m, tag, (uint64_t)v);
}

void ctl_put_text(struct ctl_msg *m, uint16_t tag, const char *s)
{
	size_t n = strnlen(s, CTL_MAX_TEXT);
	uint8_t *p = field(m, tag, n);

	if (p)
		memcpy(p, s, n);
}

size_t ctl_record_begin(struct ctl_msg *m, uint16_t tag)
{
	size_t mark = m->len;

	field(m, tag, 0);
	return mark;
}

void ctl_record_end(struct ctl_msg *m, size_t mark)
{
	size_t n = m->len - mark - CTL_FIELD_HDR;

	if (m->overflow || n > UINT16_MAX) {
		m->overflow = true;
		return;
	}
	bp_put_le16(m->body + mark + 2, (uint16_t)n);
}

void ctl_error_msg(struct ctl_msg *m, int err, const char *fmt, ...)
{
	char reason[CTL_MAX_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	ctl_msg_init(m, CTL_ERROR);
	ctl_put_u64(m, CTL_T_ERRNO, (uint64_t)(err < 0 ? -err : err));
	ctl_put_text(m, CTL_T_REASON, reason);
}

int ctl_encode(const struct ctl_msg *m, uint8_t *out, size_t outlen)
{
	if (m->overflow || m->len > CTL_MAX_BODY || outlen < CTL_HDR_LEN + (size_t)m->len)
		return -EMSGSIZE;
	bp_put_le32(out, CTL_MAGIC);
	out[4] = CTL_VERSION;
	out[5] = 0;
	bp_put_le16(out + 6, m->type);
	bp_put_le32(out + 8, m->len);
	bp_put_le32(out + 12, m->seq);
	memcpy(out + CTL_HDR_LEN, m->body, m->len);
	return CTL_HDR_LEN + (int)m->len;
}

/* ---- reading ---- */

/*
 * check_fields - the fields in [p, p+len) are framed exactly (no byte over or
 * short) and every known tag has its kind's length; records (depth 0 only) are
 * checked the same way inside.
 */
static bool check_fields(const uint8_t *p, size_t len, int depth, const char **why)
{
	while (len) {
		uint16_t tag, n;
		enum ctl_kind kind;

		if (len < CTL_FIELD_HDR) {
			*why = "a field cut short";
			return false;
		}
		tag = bp_get_le16(p);
		n = bp_get_le16(p + 2);
		if (n > len - CTL_FIELD_HDR) {
			*why = "a field longer than the message";
			return false;
		}
		kind = ctl_tag_kind(tag);
		if (kind == CTL_K_U64 && n != 8) {
			*why = "an integer field not 8 bytes long";
			return false;
		}
		if (kind == CTL_K_TEXT && (n > CTL_MAX_TEXT || memchr(p + CTL_FIELD_HDR, 0, n))) {
			*why = "a text field too long or holding a NUL";
			return false;
		}
		if (kind == CTL_K_RECORD && (depth > 0 || !check_fields(p + CTL_FIELD_HDR, n, depth + 1, why))) {
			if (depth > 0)
				*why = "a record inside a record";
			return false;
		}
		p += CTL_FIELD_HDR + n;
		len -= CTL_FIELD_HDR + n;
	}
	return true;
}

int ctl_decode(const uint8_t *buf, size_t avail, struct ctl_msg *m, const char **why)
{
	const char *dummy;
	uint32_t len;
	uint16_t type;

	if (!why)
		why = &dummy;
	*why = "";
	if (avail >= 4 && bp_get_le32(buf) != CTL_MAGIC) {
		*why = "wrong magic (not a busypoll control message)";
		return -EPROTO;
	}
	if (avail < CTL_HDR_LEN)
		return 0;
	if (buf[4] != CTL_VERSION) {
		*why = "another protocol version";
		return -EPROTO;
	}
	type = bp_get_le16(buf + 6);
	len = bp_get_le32(buf + 8);
	if (buf[5] != 0) {
		*why = "header flags set";
		return -EPROTO;
	}
	if (type == 0 || type > CTL_TYPE_MAX || !ctl_types[type].name) {
		*why = "unknown message type";
		return -EPROTO;
	}
	if (len > CTL_MAX_BODY) {
		*why = "a body longer than the largest message";
		return -EPROTO;
	}
	if (avail - CTL_HDR_LEN < len)
		return 0;
	if (!check_fields(buf + CTL_HDR_LEN, len, 0, why))
		return -EPROTO;
	m->type = type;
	m->seq = bp_get_le32(buf + 12);
	m->len = len;
	m->overflow = false;
	memcpy(m->body, buf + CTL_HDR_LEN, len);
	return CTL_HDR_LEN + (int)len;
}

void ctl_iter_body(struct ctl_iter *it, const struct ctl_msg *m)
{
	it->p = m->body;
	it->left = m->len;
}

void ctl_iter_record(struct ctl_iter *it, const uint8_t *val, size_t len)
{
	it->p = val;
	it->left = len;
}

bool ctl_next(struct ctl_iter *it, uint16_t *tag, const uint8_t **val, size_t *len)
{
	size_t n;

	/* the framing was checked by ctl_decode; these checks keep a hand-built message safe too */
	if (it->left < CTL_FIELD_HDR)
		return false;
	n = bp_get_le16(it->p + 2);
	if (n > it->left - CTL_FIELD_HDR)
		return false;
	*tag = bp_get_le16(it->p);
	*val = it->p + CTL_FIELD_HDR;
	*len = n;
	it->p += CTL_FIELD_HDR + n;
	it->left -= CTL_FIELD_HDR + n;
	return true;
}

uint64_t ctl_val_u64(const uint8_t *val)
{
	return bp_get_le64(val);
}

/* find - the first field tag among it's fields. */
static bool find(struct ctl_iter *it, uint16_t want, const uint8_t **val, size_t *len)
{
	uint16_t tag;

	while (ctl_next(it, &tag, val, len))
		if (tag == want)
			return true;
	return false;
}

int ctl_rec_u64(const uint8_t *v, size_t n, uint16_t tag, uint64_t *out)
{
	struct ctl_iter it;
	const uint8_t *val;
	size_t len;

	ctl_iter_record(&it, v, n);
	if (!find(&it, tag, &val, &len) || len != 8)
		return -ENOENT;
	*out = bp_get_le64(val);
	return 0;
}

int ctl_rec_text(const uint8_t *v, size_t n, uint16_t tag, char *buf, size_t buflen)
{
	struct ctl_iter it;
	const uint8_t *val;
	size_t len;

	ctl_iter_record(&it, v, n);
	if (!buflen || !find(&it, tag, &val, &len))
		return -ENOENT;
	if (len >= buflen)
		len = buflen - 1;
	memcpy(buf, val, len);
	buf[len] = 0;
	return 0;
}

int ctl_get_u64(const struct ctl_msg *m, uint16_t tag, uint64_t *v)
{
	return ctl_rec_u64(m->body, m->len, tag, v);
}

int ctl_get_i64(const struct ctl_msg *m, uint16_t tag, int64_t *v)
{
	uint64_t u;
	int r = ctl_get_u64(m, tag, &u);

	if (!r)
		*v = (int64_t)u;
	return r;
}

int ctl_get_text(const struct ctl_msg *m, uint16_t tag, char *buf, size_t len)
{
	return ctl_rec_text(m->body, m->len, tag, buf, len);
}

/* ---- sessions ---- */

#define RBUF_LEN (CTL_HDR_LEN + CTL_MAX_BODY)

void ctl_session_transport(struct ctl_session *s, const struct ctl_transport *tr, void *ctx, const char *peer,
			   int timeout_ms)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->tr = tr;
	s->tr_ctx = ctx;
	s->timeout_ms = timeout_ms;
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
}

int ctl_session_fd(struct ctl_session *s, int fd, const char *peer, int timeout_ms)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->timeout_ms = timeout_ms;
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
	s->rbuf = malloc(RBUF_LEN);
	if (!s->rbuf) {
		close(fd);
		s->fd = -1;
		return -ENOMEM;
	}
	return 0;
}

int ctl_session_open(struct ctl_session *s, const struct sockaddr *addr, socklen_t alen, int timeout_ms,
		     const char *hint, char *err, size_t errlen)
{
	char peer[128];
	int fd, ret, soerr = 0, one = 1;
	socklen_t sl = sizeof(soerr);

	bp_format_addr(addr, peer, sizeof(peer));
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ret;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, addr, alen) < 0 && errno != EINPROGRESS) {
		ret = -errno;
		goto unreachable;
	}
	ret = tool_wait_fd(fd, POLLOUT, timeout_ms);
	if (!ret && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
		ret = -soerr;
	if (ret)
		goto unreachable;
	ret = ctl_session_fd(s, fd, peer, timeout_ms);
	if (ret)
		snprintf(err, errlen, "out of memory");
	return ret;
unreachable:
	snprintf(err, errlen, "cannot reach server %s: %s%s%s", peer, strerror(-ret), hint ? "; " : "", hint ? hint : "");
	close(fd);
	return ret;
}

void ctl_session_close(struct ctl_session *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->rbuf);
	s->rbuf = NULL;
	s->rlen = 0;
}

int ctl_send_fd(int fd, const struct ctl_msg *m)
{
	uint8_t *buf = malloc(RBUF_LEN);
	size_t off = 0;
	int n = buf ? ctl_encode(m, buf, RBUF_LEN) : -ENOMEM;

	if (n < 0) {
		free(buf);
		return n;
	}
	while (off < (size_t)n) {
		ssize_t w = send(fd, buf + off, (size_t)n - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			/* a control peer reads between messages: a full buffer clears soon */
			if (tool_wait_fd(fd, POLLOUT, 5000) == 0)
				continue;
			errno = ETIMEDOUT;
		}
		if (w < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		off += (size_t)w;
	}
	free(buf);
	return 0;
}

int ctl_send(struct ctl_session *s, struct ctl_msg *m)
{
	m->seq = ++s->seq;
	if (s->tr)
		return s->tr->send(s->tr_ctx, m);
	return ctl_send_fd(s->fd, m);
}

int ctl_recv(struct ctl_session *s, struct ctl_msg *m, int timeout_ms)
{
	if (timeout_ms < 0)
		timeout_ms = s->timeout_ms;
	if (s->tr)
		return s->tr->recv(s->tr_ctx, m, timeout_ms);
	for (;;) {
		const char *why;
		int n = ctl_decode(s->rbuf, s->rlen, m, &why), ret;
		ssize_t got;

		if (n < 0)
			return n;
		if (n > 0) {
			memmove(s->rbuf, s->rbuf + n, s->rlen - (size_t)n);
			s->rlen -= (size_t)n;
			return 0;
		}
		ret = tool_wait_fd(s->fd, POLLIN, timeout_ms);
		if (ret)
			return ret;
		got = recv(s->fd, s->rbuf + s->rlen, RBUF_LEN - s->rlen, MSG_DONTWAIT);
		if (got == 0)
			return -ECONNRESET;
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (got > 0)
			s->rlen += (size_t)got;
	}
}

int ctl_exchange(struct ctl_session *s, struct ctl_msg *req, struct ctl_msg *reply, char *err, size_t errlen)
{
	int ret = ctl_send(s, req);

	if (ret) {
		snprintf(err, errlen, "control connection to %s: %s", s->peer,
			 ret == -EPIPE || ret == -ECONNRESET ? "the server closed it" : strerror(-ret));
		return ret;
	}
	for (;;) {
		ret = ctl_recv(s, reply, -1);
		if (ret) {
			snprintf(err, errlen, "control connection to %s: %s", s->peer,
				 ret == -ETIMEDOUT ? "no answer in time" :
				 ret == -ECONNRESET ? "the server closed it" :
				 ret == -EPROTO ? "it answered with something that is not busypoll control" :
				 strerror(-ret));
			return ret;
		}
		/* seq 0: the server refuses the session as a whole (busy, at its limit) */
		if (reply->seq == req->seq || (reply->type == CTL_ERROR && reply->seq == 0))
			return 0;
		/* else an answer to an earlier request we stopped waiting for */
	}
}

int ctl_call(struct ctl_session *s, struct ctl_msg *req, uint16_t want, struct ctl_msg *reply, char *err,
	     size_t errlen)
{
	int ret = ctl_exchange(s, req, reply, err, errlen);

	if (ret)
		return ret;
	if (reply->type == CTL_ERROR) {
		uint64_t e = EPROTO;
		char reason[CTL_MAX_TEXT] = "refused";

		ctl_get_u64(reply, CTL_T_ERRNO, &e);
		ctl_get_text(reply, CTL_T_REASON, reason, sizeof(reason));
		snprintf(err, errlen, "server %s: %s", s->peer, reason);
		return e && e < 4096 ? -(int)e : -EPROTO;
	}
	if (reply->type != want) {
		snprintf(err, errlen, "server %s answered %s with %s", s->peer, ctl_type_name(req->type),
			 ctl_type_name(reply->type));
		return -EPROTO;
	}
	return 0;
}
