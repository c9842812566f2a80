/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong server internals, shared by the data loop (server.c)
 * and the control thread (srvctl.c).
 *
 * Two threads, because a mode switch restarts the data loop: the data thread runs
 * one bp_loop in the current mode, pinned (--cpus), and only answers requests; the
 * control thread (never pinned, always asleep in poll(2) while a run goes on) owns
 * the TCP listener and the control session, and stops and starts data loops. The
 * UDP socket is bound once and outlives every data loop (each adopts a dup of it),
 * so a mode switch never unbinds the port and loses no datagram.
 */
#ifndef BP_TOOLS_PINGPONG_SERVER_H
#define BP_TOOLS_PINGPONG_SERVER_H

#include <pthread.h>
#include <stdatomic.h>

#include "tools/pingpong/pingpong.h"

/* Replies remembered until their transmit timestamp comes back (a power of two). */
#define PP_SENT_RING 16
/* Send paths waiting for a reply to carry them (a power of two). */
#define PP_PREV_QUEUE 4
/* Peers whose bad messages were logged; later ones are counted, not logged. */
#define PP_BAD_PEERS 64

struct pp_data;

/* A socket the data loop answers on: the UDP socket, or one TCP connection. */
struct pp_dsock {
	struct pp_data *d;
	struct bp_conn *conn;
	bool tcp;
	struct sockaddr_storage peer; /* TCP: the client */
	socklen_t peerlen;
	/* OPT_ID of the next reply's transmit timestamp: UDP counts datagrams, TCP bytes. */
	uint64_t tx_count;
	uint32_t last_key;            /* of the last reply sent */
	bool last_pending;            /* a reply was sent (last_key means something) */
	struct {
		bool used;
		uint32_t key;
		uint64_t seq;
		uint64_t t_send;  /* CLOCK_REALTIME at the send call */
	} sent[PP_SENT_RING];
	/*
	 * Replies whose send path is known and not yet reported, oldest first. Usually
	 * one: a reply's timestamp is read before the next request arrives. When the
	 * thread was preempted and one came late, the queue lets every reply still carry
	 * one, a round trip later, instead of losing it.
	 */
	struct {
		uint64_t seq;
		uint32_t send_ns;
	} prev[PP_PREV_QUEUE];
	unsigned prev_head, prev_count;
	struct pp_dsock *next, *prv; /* TCP connections of the data loop */
};

/* One data loop: started in a mode, stopped to switch to another. */
struct pp_data {
	struct pp_server *s;
	struct bp_loop_thread *lt;
	struct bp_loop *loop;
	struct bp_mode mode;
	char mode_text[PP_MODE_LEN];
	bool timestamps;
	struct pp_dsock udp;
	struct pp_dsock *tcp;         /* list */
	uint64_t requests;            /* answered (data thread only) */
	uint64_t delay_ns;            /* --server-delay-us */
	uint32_t last_napi_id;        /* of the last TCP connection that closed */
};

/* What the data thread reports for START/STOP. */
struct pp_snap {
	struct ev_snap snap;          /* the data thread's own, and its io_uring helpers' */
	uint64_t requests;            /* answered so far */
	uint64_t dropped;
	uint32_t napi_id;
	uint64_t ns;                  /* CLOCK_MONOTONIC when taken */
	int done_fd;                  /* eventfd the data thread writes when done */
};

struct pp_server {
	struct pp_opts o;
	struct bp_mode own_mode;      /* --mode: what the server returns to after a session */
	char own_mode_text[PP_MODE_LEN];
	int udp_fd;                   /* bound once, dup'ed into each data loop */
	int listen_fd;
	int stop_fd;                  /* eventfd: the control thread ends */
	uint16_t port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct pp_data *data;         /* the running data loop (control thread only) */
	pthread_t ctl_tid;
	bool ctl_started;
	uint8_t *reply;               /* BP_PP_MAX_LEN: replies are built here (data thread) */
	/* bad messages: counted per reason, logged once per peer */
	atomic_uint_fast64_t dropped[BP_PP_ERR_COUNT];
	pthread_mutex_t bad_lock;
	struct sockaddr_storage bad_peers[PP_BAD_PEERS];
	int n_bad_peers;
	bool bad_overflow_logged;
};

/* pp_server_log - "busypoll pingpong server: ..." on stderr unless --quiet. */
void pp_server_log(const struct pp_server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * pp_server_note_bad - count a dropped message (reason BP_PP_ERR_*, len bytes) and
 * log it if it is the first from this peer. Any thread.
 */
void pp_server_note_bad(struct pp_server *s, const struct sockaddr_storage *peer,
			socklen_t peerlen, const char *proto, int reason, size_t len);

/*
 * pp_data_start - a data loop in mode with timestamps on or off: adopts a dup of
 * the UDP socket. 0 or -errno with a message in err.
 */
int pp_data_start(struct pp_server *s, const struct bp_mode *mode, bool timestamps,
		  struct pp_data **dp, char *err, size_t errlen);
/* pp_data_stop - stop the loop, close its sockets (TCP clients see a reset), free. */
void pp_data_stop(struct pp_data *d);
/* pp_data_adopt_tcp - hand an accepted TCP connection (classified as data) over. */
void pp_data_adopt_tcp(struct pp_data *d, int fd);
/*
 * pp_data_snapshot - the data thread's counters now (posted to it, waited for up
 * to timeout_ms). 0 or -ETIMEDOUT / -ENOMEM.
 */
int pp_data_snapshot(struct pp_data *d, struct pp_snap *out, int timeout_ms);

/* pp_ctl_thread - the control thread's body (srvctl.c). */
void *pp_ctl_thread(void *arg);

#endif
