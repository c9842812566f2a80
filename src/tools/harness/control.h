/* SPDX-License-Identifier: MIT */
/*
 * The control protocol: how a busypoll client talks to the server side of a run
 * (rr's server, pingpong's server, perf's spawned target) and to the two-host
 * agent (`busypoll agent`, which starts those servers on its host and relays a
 * client's messages to them).
 * Every message, all integers little-endian:
 *
 *   header (16 bytes)  magic u32 "BPCT" | version u8 | flags u8 (0) | type u16 |
 *                      length u32 (body bytes, at most CTL_MAX_BODY) | seq u32
 *   body               fields, back to back: tag u16 | len u16 | value (len bytes)
 *
 * A field's kind comes from its tag (one table, control.c): an integer is 8 bytes
 * (u64; a signed value in two's complement), text is 0..CTL_MAX_TEXT bytes with no
 * NUL, a record is itself a sequence of fields (one level deep). A decoder checks
 * the header, the framing of every field, and each known tag's length and kind;
 * unknown tags are skipped, so a newer peer may add fields; a reply carries its
 * request's seq, a CTL_ERROR with seq 0 refuses the whole session (busy, at its
 * limit, not what the server speaks) whatever was asked. Decoding never reads past the bytes given (fuzz/fuzz_control.c).
 *
 * A session: connect (bounded), then request and reply, each wait bounded and cut
 * short by a signal; a request the peer cannot do is answered with CTL_ERROR
 * (an errno and a reason), which the caller gets as -errno with the reason.
 * A session runs over a plain socket (rr, pingpong, a spawned target) or over a
 * transport that carries whole messages (struct ctl_transport: the agent's ssh
 * pipes and its authenticated channel, tools/remote/transport.h), the same calls
 * either way.
 *
 * The agent's messages (tools/agent/session.h answers them): a HELLO with tool
 * "agent"; SERVER_START / SERVER_STOP (an rr server, a pingpong server or a
 * target, in a mode, on given CPUs); NAPI, KNOB, COALESCE, CHANNELS (read, or
 * with CTL_T_SETTINGS / CTL_T_VALUE change, journalled and restored); PATH_REPORT;
 * SAMPLE (the host's evidence); BYE. A message that carries CTL_T_SERVER is for
 * that server: the agent relays it (HELLO, START, STOP, SET_MODE, SAMPLE) over
 * the server's own control session and relays the answer back.
 *
 * Extending it: a new message is one entry in ctl_types[] and a new field one in
 * ctl_tags[] (control.c); nothing in the framing changes.
 */
#ifndef BP_TOOLS_HARNESS_CONTROL_H
#define BP_TOOLS_HARNESS_CONTROL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define CTL_MAGIC 0x54435042u /* "BPCT" little-endian */
#define CTL_VERSION 1
#define CTL_HDR_LEN 16
#define CTL_MAX_BODY 65536
#define CTL_MAX_TEXT 1024
#define CTL_FIELD_HDR 4

/* Message types (ctl_types[] in control.c says who sends each and what answers it). */
enum ctl_type {
	CTL_HELLO = 1,      /* client: who it is and the run (tool, run id, parameters) */
	CTL_HELLO_OK = 2,   /* server: accepted; who it is (mode, CPU, threads, ...) */
	CTL_ERROR = 3,      /* either: the request failed or is refused: errno, reason */
	CTL_START = 4,      /* client: the measured interval starts (the server takes its snapshot) */
	CTL_STARTED = 5,    /* server: snapshot taken */
	CTL_STOP = 6,       /* client: the interval ends */
	CTL_EVIDENCE = 7,   /* server: its evidence over the interval (or since start: SAMPLE) */
	CTL_SET_MODE = 8,   /* client: run the server's data path in this mode (pingpong --matrix) */
	CTL_MODE_SET = 9,   /* server: done, the mode it runs now */
	CTL_SAMPLE = 10,    /* client: the server's counters now (perf -> its spawned target; the agent's host) */
	/* the two-host agent (tools/agent/session.h) */
	CTL_SERVER_START = 11, /* client: start a server here (tool, mode, CPUs, where) */
	CTL_SERVER_INFO = 12,  /* agent: the server started or stopped: its id, pid, address, CPUs */
	CTL_SERVER_STOP = 13,  /* client: stop server CTL_T_SERVER */
	CTL_NAPI = 14,         /* client: a NAPI's settings, changed with CTL_T_SETTINGS; agent: them now */
	CTL_KNOB = 15,         /* client: a device knob, changed with CTL_T_VALUE; agent: its value now */
	CTL_COALESCE = 16,     /* client: a device's coalescing, changed with CTL_T_SETTINGS; agent: now */
	CTL_CHANNELS = 17,     /* client: a device's channel counts, changed with CTL_T_SETTINGS; agent: now */
	CTL_PATH_REPORT = 18,  /* client: the path of a device (CTL_T_DEV) or of an address (CTL_T_ADDR) */
	CTL_PATH = 19,         /* agent: that path report */
	CTL_BYE = 20,          /* client: the session ends (its servers stopped, its changes restored); agent: done */
	CTL_TYPE_MAX = 20,
};

/* Field tags (ctl_tags[] in control.c gives each its kind). */
enum ctl_tag {
	/* common */
	CTL_T_TOOL = 1,         /* text: "rr", "pingpong", "target" */
	CTL_T_RUN_ID = 2,       /* u64 */
	CTL_T_ERRNO = 3,        /* u64: a positive errno */
	CTL_T_REASON = 4,       /* text: why, one line */
	CTL_T_MODE = 5,         /* text: a mode, canonical */
	CTL_T_CPU = 6,          /* i64: a CPU, -1 = not pinned */
	CTL_T_THREADS = 7,      /* u64 */
	CTL_T_FLAGS = 8,        /* u64: the message's CTL_F_* */
	CTL_T_PID = 9,          /* u64 */
	CTL_T_ADDR = 10,        /* text: an address with port */
	CTL_T_KERNEL = 11,      /* text: uname -r */
	/* evidence (tools/harness/evidence.c) */
	CTL_T_EV_TRANSACTIONS = 32,
	CTL_T_EV_INTERVAL_NS,
	CTL_T_EV_UTIME_US,
	CTL_T_EV_STIME_US,
	CTL_T_EV_NVCSW,
	CTL_T_EV_NIVCSW,
	CTL_T_EV_BUSY_POLL_RX,
	CTL_T_EV_NET_RX,
	CTL_T_EV_SYSCALLS,
	CTL_T_EV_EMPTY_POLLS,
	CTL_T_EV_WAKEUPS,
	CTL_T_EV_WAITS,
	CTL_T_EV_COMPLETIONS,
	CTL_T_EV_NAPI_ID,       /* u64, repeated */
	CTL_T_EV_THREAD,        /* record: TID, COMM, CPU_US, THR_UTIME_US, THR_STIME_US; repeated */
	CTL_T_EV_TID,
	CTL_T_EV_COMM,          /* text */
	CTL_T_EV_CPU_US,
	CTL_T_EV_HELPER_CPU_US,
	CTL_T_EV_THR_UTIME_US,  /* in a THREAD record: its user CPU (optional: older peers lack it) */
	CTL_T_EV_THR_STIME_US,  /* in a THREAD record: its system CPU (optional, with UTIME) */
	CTL_T_EV_RUN_DELAY_NS,  /* loop threads' run-queue wait (optional: older peers lack it) */
	CTL_T_EV_STEAL_US,      /* steal on their CPUs (optional, with RUN_DELAY_NS) */
	CTL_T_EV_DIRECT_TRIED,  /* the loops' direct reads tried (optional: older peers lack it) */
	CTL_T_EV_DIRECT_HIT,    /* of those, the ones that found bytes (optional, with TRIED) */
	CTL_T_EV_XSK,           /* enum ev_xsk (optional: present with an AF_XDP socket, as the next seven) */
	CTL_T_EV_PKT_RX,
	CTL_T_EV_PKT_TX,
	CTL_T_EV_PKT_DROPPED,
	CTL_T_EV_XSK_RX_DROPPED,
	CTL_T_EV_XSK_RX_RING_FULL,
	CTL_T_EV_XSK_FILL_EMPTY,
	CTL_T_EV_XSK_TX_EMPTY,
	CTL_T_EV_OTHER_US,      /* other tasks' CPU on the loop threads' pinned CPUs (optional: older peers lack it) */
	/* rr */
	CTL_T_RR_REQUEST_SIZE = 96,
	CTL_T_RR_RESPONSE_SIZE,
	/* pingpong */
	CTL_T_PP_DELAY_US = 112,
	CTL_T_PP_NAPI_ID,
	CTL_T_PP_REQUESTS,
	CTL_T_PP_DROPPED,
	/* the NVMe/TCP target's queues (SAMPLE's EVIDENCE) */
	CTL_T_Q = 128,          /* record, repeated: one queue */
	CTL_T_Q_ID,
	CTL_T_Q_CNTLID,
	CTL_T_Q_QID,
	CTL_T_Q_THREAD,
	CTL_T_Q_LIVE,
	CTL_T_Q_PEER,           /* text */
	CTL_T_Q_COMMANDS,
	CTL_T_Q_READS,
	CTL_T_Q_WRITES,
	CTL_T_Q_FLUSHES,
	CTL_T_Q_BYTES_IN,
	CTL_T_Q_BYTES_OUT,
	CTL_T_Q_ERRORS,
	CTL_T_Q_POLL_PASSES,
	CTL_T_Q_IDLE_EXITS,
	CTL_T_Q_R2TS,
	CTL_T_Q_POLLS,          /* poll mode: passes of the poll work (optional: older targets lack it) */
	CTL_T_POLL_PERIOD_US,   /* u64, the target's --poll-period-us (0: poll mode off; optional) */
	/* the agent */
	CTL_T_SERVER = 160,     /* u64: a server the agent started (its id in the session) */
	CTL_T_DEV,              /* text: a network device, as named on the agent's host */
	CTL_T_SETTINGS,         /* text: "key=value,..." as busypoll's --coalesce and napi set take them */
	CTL_T_MAX,              /* text: the channel maxima, "rx=4,tx=4" */
	CTL_T_KNOB,             /* text: a device knob ("gro_flush_timeout") */
	CTL_T_VALUE,            /* u64: its value */
	CTL_T_ARGS,             /* text: a target configuration, `busypoll target` arguments */
	CTL_T_PORT,             /* u64 */
	CTL_T_STATUS,           /* i64: a server's exit status, -1 while it runs */
	CTL_T_RESTORED,         /* u64: settings put back */
	CTL_T_HOSTNAME,         /* text */
	CTL_T_BUSY_POLL,        /* i64: net.core.busy_poll; absent when unreadable (CTL_T_NOTE: why) */
	CTL_T_BUSY_READ,        /* i64: net.core.busy_read */
	CTL_T_NETNS,            /* u64: the network namespace's inode */
	CTL_T_VERSION,          /* text: the program's version */
	CTL_T_PRIORITY,         /* i64: SO_PRIORITY, -1 none */
	CTL_T_NOTE,             /* text: what a reader of the reply should know */
	/* a NAPI (the agent's NAPI reply, and the path report's CTL_T_P_NAPI records) */
	CTL_T_NAPI_ID = 184,    /* u64 */
	CTL_T_N_IFINDEX,
	CTL_T_N_IRQ,            /* i64 */
	CTL_T_N_PID,            /* i64 */
	CTL_T_N_DEFER,
	CTL_T_N_GRO_FLUSH,
	CTL_T_N_IRQ_SUSPEND,
	CTL_T_N_THREADED,
	CTL_T_N_HAS,            /* u64: BP_NAPI_HAS_* of what the kernel sent */
	/* the path report (tools/link/agent_wire.h) */
	CTL_T_P_IFINDEX = 200,
	CTL_T_P_DRIVER,         /* text */
	CTL_T_P_DRIVER_VERSION, /* text */
	CTL_T_P_FIRMWARE,       /* text */
	CTL_T_P_BUS,            /* text */
	CTL_T_P_CHANNELS,       /* text: counts */
	CTL_T_P_COALESCE,       /* text */
	CTL_T_P_RX_QUEUES,
	CTL_T_P_TX_QUEUES,
	CTL_T_P_N_NAPI,         /* u64: NAPIs the device has (the records may be fewer) */
	CTL_T_P_QUEUE,          /* record, repeated: P_Q_ID, P_Q_TX, NAPI_ID */
	CTL_T_P_Q_ID,
	CTL_T_P_Q_TX,
	CTL_T_P_NAPI,           /* record, repeated: NAPI_ID, N_* */
	CTL_T_P_IRQ,            /* record, repeated: P_I_IRQ, NAPI_ID, P_I_NAME, P_I_AFFINITY, P_I_EFFECTIVE */
	CTL_T_P_I_IRQ,
	CTL_T_P_I_NAME,         /* text */
	CTL_T_P_I_AFFINITY,     /* text */
	CTL_T_P_I_EFFECTIVE,    /* text */
	CTL_T_P_SECTION,        /* record, repeated: P_S_ID, ERRNO, REASON (a section's result) */
	CTL_T_P_S_ID,
	CTL_T_P_GRO,            /* u64 0/1: the device's GRO (optional: unreadable, or an older agent) */
	CTL_T_P_TSO,            /* u64 0/1: its TSO (optional, as GRO) */
};

/* Flags (CTL_T_FLAGS). */
enum {
	CTL_F_UDP = 1u << 0,        /* HELLO (rr): this run's flows are UDP */
	CTL_F_TIMESTAMPS = 1u << 1, /* SET_MODE (pingpong): software timestamps on */
	CTL_F_SET = 1u << 2,        /* NAPI, KNOB, COALESCE, CHANNELS: change, not just read */
};

enum ctl_kind { CTL_K_NONE = 0, CTL_K_U64, CTL_K_TEXT, CTL_K_RECORD };

/* A message, header fields decoded, body as its bytes. */
struct ctl_msg {
	uint16_t type;
	uint32_t seq;
	uint32_t len;             /* body bytes */
	bool overflow;            /* a put did not fit: ctl_encode refuses the message */
	uint8_t body[CTL_MAX_BODY];
};

/* ctl_type_name - "HELLO" etc., "?" for an unknown type. */
const char *ctl_type_name(unsigned type);
/* ctl_tag_kind - the kind of a tag, CTL_K_NONE for a tag this side does not know. */
enum ctl_kind ctl_tag_kind(unsigned tag);

/* ---- writing ---- */

/* ctl_msg_init - an empty message of type (seq 0: ctl_send numbers it). */
void ctl_msg_init(struct ctl_msg *m, uint16_t type);
/* ctl_put_u64 / ctl_put_i64 / ctl_put_text - append a field (text: at most CTL_MAX_TEXT bytes, cut there). */
void ctl_put_u64(struct ctl_msg *m, uint16_t tag, uint64_t v);
void ctl_put_i64(struct ctl_msg *m, uint16_t tag, int64_t v);
void ctl_put_text(struct ctl_msg *m, uint16_t tag, const char *s);
/* ctl_record_begin / ctl_record_end - a record field: the fields put between them are its value. */
size_t ctl_record_begin(struct ctl_msg *m, uint16_t tag);
void ctl_record_end(struct ctl_msg *m, size_t mark);
/* ctl_error_msg - m becomes CTL_ERROR with errno err (positive) and the reason. */
void ctl_error_msg(struct ctl_msg *m, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * ctl_encode - the whole message (header, body) into out. Returns its length, or
 * -EMSGSIZE (an overflowed message, or out too small).
 */
int ctl_encode(const struct ctl_msg *m, uint8_t *out, size_t outlen);

/* ---- reading ---- */

/*
 * ctl_decode - one message from the first avail bytes at buf. Returns its length
 * (header + body), 0 when more bytes are needed, or -EPROTO: wrong magic, another
 * version, unknown type, flags set, a body above CTL_MAX_BODY, or a malformed field
 * (why: a few words, may be NULL).
 */
int ctl_decode(const uint8_t *buf, size_t avail, struct ctl_msg *m, const char **why);

/* A walk over fields: the body's, or a record's. */
struct ctl_iter {
	const uint8_t *p;
	size_t left;
};
void ctl_iter_body(struct ctl_iter *it, const struct ctl_msg *m);
/* ctl_iter_record - the fields inside a record field's value. */
void ctl_iter_record(struct ctl_iter *it, const uint8_t *val, size_t len);
/* ctl_next - the next field: true with tag, value and length, false at the end. */
bool ctl_next(struct ctl_iter *it, uint16_t *tag, const uint8_t **val, size_t *len);
/* ctl_val_u64 - an integer field's value (its length checked by ctl_decode). */
uint64_t ctl_val_u64(const uint8_t *val);

/* ctl_get_u64 / ctl_get_i64 - the first field tag of the body: 0, or -ENOENT. */
int ctl_get_u64(const struct ctl_msg *m, uint16_t tag, uint64_t *v);
int ctl_get_i64(const struct ctl_msg *m, uint16_t tag, int64_t *v);
/* ctl_get_text - the first text field tag into buf (NUL-terminated, cut to len-1): 0, or -ENOENT. */
int ctl_get_text(const struct ctl_msg *m, uint16_t tag, char *buf, size_t len);
/* ctl_rec_text / ctl_rec_u64 - the same inside a record's fields. */
int ctl_rec_u64(const uint8_t *val, size_t len, uint16_t tag, uint64_t *v);
int ctl_rec_text(const uint8_t *val, size_t len, uint16_t tag, char *buf, size_t buflen);

/* ctl_reply_type - the type that answers a request of type (0: none; CTL_ERROR may always answer). */
uint16_t ctl_reply_type(unsigned type);

/* ---- sessions (blocking, with bounded waits) ---- */

/*
 * A transport that carries whole messages (the agent's: remote/transport.h). send
 * may add fields to m and renumber it (a relay to one of the agent's servers) before
 * it encodes it; recv waits up to timeout_ms for the next whole message and
 * decodes it. Both return 0 or -errno as ctl_send and ctl_recv do.
 */
struct ctl_transport {
	int (*send)(void *ctx, struct ctl_msg *m);
	int (*recv)(void *ctx, struct ctl_msg *m, int timeout_ms);
};

struct ctl_session {
	int fd;                   /* a plain socket, or -1 over a transport */
	const struct ctl_transport *tr; /* NULL: fd */
	void *tr_ctx;
	uint32_t seq;
	int timeout_ms;           /* each wait for a reply */
	char peer[128];           /* for messages */
	uint8_t *rbuf;            /* fd: bytes read and not yet decoded */
	size_t rlen;
};

/*
 * ctl_session_open - connect over TCP to addr (bounded by timeout_ms), TCP_NODELAY.
 * Returns 0, or -errno with "cannot reach server PEER: why; HINT" in err (hint:
 * what to check, "is `busypoll rr --server` running there?", may be NULL).
 */
int ctl_session_open(struct ctl_session *s, const struct sockaddr *addr, socklen_t len, int timeout_ms,
		     const char *hint, char *err, size_t errlen);
/* ctl_session_fd - a session over an fd already connected (a socketpair); it is the session's now. */
int ctl_session_fd(struct ctl_session *s, int fd, const char *peer, int timeout_ms);
/* ctl_session_transport - a session over tr (ctx is its own: ctl_session_close leaves it). */
void ctl_session_transport(struct ctl_session *s, const struct ctl_transport *tr, void *ctx, const char *peer,
			   int timeout_ms);
/* ctl_session_close - the fd closed (a transport's context is its owner's to close). */
void ctl_session_close(struct ctl_session *s);
/* ctl_send - number m (the session's next seq) and send it whole. 0 or -errno. */
int ctl_send(struct ctl_session *s, struct ctl_msg *m);
/* ctl_send_fd - m sent whole on a non-blocking fd (a server's reply; seq as set). 0 or -errno. */
int ctl_send_fd(int fd, const struct ctl_msg *m);
/*
 * ctl_recv - the next message, waiting up to timeout_ms (-1: the session's).
 * 0, -ETIMEDOUT, -ECONNRESET (the peer closed), -EPROTO (garbage), -EINTR (a
 * signal: the caller looks at its stop flag), -errno.
 */
int ctl_recv(struct ctl_session *s, struct ctl_msg *m, int timeout_ms);
/*
 * ctl_exchange - send req, wait for the message that answers it (its seq, or a
 * session-wide CTL_ERROR with seq 0), whatever its type: a relay's half. 0, or a
 * transport failure worded in err as ctl_call words it.
 */
int ctl_exchange(struct ctl_session *s, struct ctl_msg *req, struct ctl_msg *reply, char *err, size_t errlen);
/*
 * ctl_call - send req, wait for the reply with its seq. want: the type expected.
 * Returns 0; -errno of a CTL_ERROR reply with "server PEER: reason" in err; or a
 * transport failure (-ETIMEDOUT, -ECONNRESET, -EPROTO, -EINTR) worded in err.
 */
int ctl_call(struct ctl_session *s, struct ctl_msg *req, uint16_t want, struct ctl_msg *reply, char *err,
	     size_t errlen);

#endif
