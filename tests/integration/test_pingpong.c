/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong over loopback, server and client in this process:
 *  - round trips in every mode, UDP and TCP: every run measures -n round trips and
 *    the server answered exactly the round trips the client made;
 *  - --breakdown: every component present, none negative, and the RTT they add
 *    up to (by definition: the remainder is what the others leave) agrees with
 *    the RTT the payload's own timestamp measured, within 1%;
 *  - where each component is measured: a known delay (300 us busy wait) put
 *    into each one in turn (--server-delay-us for server processing, the
 *    pp_opts.test_delay_us hook for the four others) is in that component in
 *    every sample, and missing from at least one sample of every other one, the
 *    remainder included;
 *  - misbehaving clients (short, oversized, truncated, garbage datagrams; garbage
 *    and silent TCP connections) are counted and dropped, and the next client is
 *    served; a second control session is refused while one is open; a session's
 *    mode switch ends with it.
 * Timings are never asserted: a busy wait of D lower-bounds the component it is in,
 * however slow the machine; a component it is not in is below D in some sample
 * unless all 200 of them happened to take longer than D.
 * Usage: integ_test_pingpong [--mode MODE]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bptest.h"
#include "base/bytes.h"
#include "tools/pingpong/pingpong.h"

static int client_cpu = -1, server_cpu = -1;
static struct pp_result res;

static struct pp_server *server_up_delays(const char *mode, uint32_t delay_us, const uint32_t *test_delay_us)
{
	struct pp_opts so;
	struct pp_server *s;
	char err[256];

	pp_opts_defaults(&so);
	so.server = true;
	so.quiet = true;
	so.port = 0; /* any free port */
	so.cpu = server_cpu;
	so.server_delay_us = delay_us;
	if (test_delay_us)
		memcpy(so.test_delay_us, test_delay_us, sizeof(so.test_delay_us));
	snprintf(so.host, sizeof(so.host), "127.0.0.1");
	BPT_CHECK(bp_mode_parse(mode, &so.mode, err, sizeof(err)) == 0, "%s: %s", mode, err);
	bp_mode_format(&so.mode, so.mode_text, sizeof(so.mode_text));
	BPT_CHECK(pp_server_start(&so, &s, err, sizeof(err)) == 0, "server %s: %s", mode, err);
	return s;
}

static struct pp_server *server_up(const char *mode, uint32_t delay_us)
{
	return server_up_delays(mode, delay_us, NULL);
}

static void client_opts(struct pp_opts *o, struct pp_server *s, const char *mode, bool tcp)
{
	char err[256];

	pp_opts_defaults(o);
	o->quiet = true;
	o->tcp = tcp;
	o->port = pp_server_port(s);
	o->cpu = client_cpu;
	o->n = 200;
	o->runs = 2;
	o->warmup = 20;
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
	BPT_CHECK(bp_mode_parse(mode, &o->mode, err, sizeof(err)) == 0, "%s: %s", mode, err);
	bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
}

static void measure(const struct pp_opts *o, const char *what)
{
	char err[512];
	int ret = pp_measure(o, NULL, &res, err, sizeof(err));

	BPT_CHECK(ret == 0, "%s: %s (%d)", what, err, ret);
	BPT_CHECK(!res.interrupted, "%s: interrupted", what);
}

/* Every run measured n, and the server answered what the client sent. */
static void check_counts(const struct pp_opts *o, const char *what)
{
	for (int r = 0; r < res.nrows; r++) {
		const struct pp_row *row = &res.rows[r];

		BPT_CHECK(row->nruns == o->runs, "%s: %d runs of %d", what, row->nruns, o->runs);
		for (int i = 0; i < row->nruns; i++) {
			const struct pp_run *run = &row->runs[i];
			uint64_t want = o->warmup + o->n + (o->breakdown ? 1 : 0);

			BPT_CHECK(run->n == o->n, "%s: run %d measured %llu", what, i, (unsigned long long)run->n);
			BPT_CHECK(run->total == want, "%s: run %d made %llu round trips, want %llu", what, i,
				  (unsigned long long)run->total, (unsigned long long)want);
			BPT_CHECK(run->client.valid && run->server.valid, "%s: a side has no counters", what);
			/* UDP: a resent request may have reached the server twice */
			BPT_CHECK(run->server.transactions >= run->total &&
					  run->server.transactions <= run->total + run->lost,
				  "%s: server answered %llu, client made %llu (lost %llu)", what,
				  (unsigned long long)run->server.transactions, (unsigned long long)run->total,
				  (unsigned long long)run->lost);
			BPT_CHECK(run->min_us > 0 && run->min_us <= run->p50_us && run->p50_us <= run->p99_us &&
					  run->mean_us >= run->min_us,
				  "%s: figures out of order", what);
		}
		BPT_CHECK(row->agg.runs == o->runs && row->all->count == o->n * (uint64_t)o->runs,
			  "%s: averages over %d runs, %llu samples", what, row->agg.runs,
			  (unsigned long long)row->all->count);
	}
}

static void every_mode(const char *mode)
{
	struct pp_server *s = server_up(mode, 0);
	struct pp_opts o;

	for (int tcp = 0; tcp <= 1; tcp++) {
		char what[160];

		snprintf(what, sizeof(what), "%s %s", mode, tcp ? "TCP" : "UDP");
		client_opts(&o, s, mode, tcp);
		measure(&o, what);
		check_counts(&o, what);
		printf("ok   %-44s mean %7.1f us  P50 %7.1f us\n", what, res.rows[0].agg.mean_us,
		       res.rows[0].agg.p50_us);
		pp_result_free(&res);
	}
	pp_server_stop(s);
}

/* The components: present, never negative, summing to the payload-timed RTT. */
static void check_breakdown(const struct pp_row *row, const char *what)
{
	const struct pp_bd_acc *bd = row->bd;
	double sum = 0, rtt, rtt_mono;

	BPT_CHECK(bd, "%s: no breakdown", what);
	BPT_CHECK(bd->samples == row->all->count, "%s: %llu samples offered of %llu", what,
		  (unsigned long long)bd->samples, (unsigned long long)row->all->count);
	/*
	 * A sample may miss a timestamp when a thread is preempted at the wrong moment (its
	 * server send path, twice in a row): on a loaded machine a quarter of them may. Half
	 * complete still shows every part; none is what a broken breakdown gives.
	 */
	BPT_CHECK(bd->complete * 2 >= bd->samples, "%s: only %llu of %llu complete (tx %llu rx %llu srx %llu stx %llu)",
		  what, (unsigned long long)bd->complete, (unsigned long long)bd->samples,
		  (unsigned long long)bd->miss[PP_MISS_CLIENT_TX], (unsigned long long)bd->miss[PP_MISS_CLIENT_RX],
		  (unsigned long long)bd->miss[PP_MISS_SERVER_RX], (unsigned long long)bd->miss[PP_MISS_SERVER_TX]);
	/* Negative parts (a remainder below zero, timestamps out of order) are refused, and must not happen here. */
	BPT_CHECK(bd->miss[PP_MISS_ORDER] == 0, "%s: %llu round trips with parts that do not fit", what,
		  (unsigned long long)bd->miss[PP_MISS_ORDER]);
	for (int c = 0; c < PP_NCOMP; c++) {
		BPT_CHECK(bd->comp[c].count == bd->complete, "%s: %s has %llu samples", what, pp_comp_name(c),
			  (unsigned long long)bd->comp[c].count);
		sum += (double)bd->comp[c].sum;
	}
	rtt = (double)bd->rtt.sum;
	rtt_mono = (double)bd->rtt_mono_sum;
	BPT_CHECK(sum >= rtt * 0.99 && sum <= rtt * 1.01, "%s: components sum to %.0f ns, RTT %.0f ns", what, sum, rtt);
	BPT_CHECK(sum >= rtt_mono * 0.99 && sum <= rtt_mono * 1.01,
		  "%s: components sum to %.0f ns, the payload's RTT %.0f ns", what, sum, rtt_mono);
}

static void breakdown(const char *mode, bool tcp)
{
	struct pp_server *s = server_up(mode, 0);
	struct pp_opts o;
	char what[160];

	snprintf(what, sizeof(what), "breakdown %s %s", mode, tcp ? "TCP" : "UDP");
	client_opts(&o, s, mode, tcp);
	o.breakdown = true;
	o.n = 300;
	measure(&o, what);
	check_counts(&o, what);
	check_breakdown(&res.rows[0], what);
	printf("ok   %-44s %llu of %llu complete\n", what, (unsigned long long)res.rows[0].bd->complete,
	       (unsigned long long)res.rows[0].bd->samples);
	pp_result_free(&res);
	pp_server_stop(s);
}

/*
 * A known delay in one component at a time: in that component in every sample,
 * and not in every sample of any other (which a misplaced reading would make it).
 */
#define INJECT_US 300

static void delay_in(int comp)
{
	const char *mode = "epoll:spin";
	uint32_t server_delays[PP_NCOMP] = { 0 }, proc_us = 0;
	bool server_side = comp == PP_C_SERVER_RX || comp == PP_C_SERVER_PROC || comp == PP_C_SERVER_SEND;
	const struct pp_bd_acc *bd;
	struct pp_server *s;
	struct pp_opts o;
	char what[96];

	snprintf(what, sizeof(what), "%d us in %s", INJECT_US, pp_comp_name(comp));
	if (comp == PP_C_SERVER_PROC)
		proc_us = INJECT_US;
	else if (server_side)
		server_delays[comp] = INJECT_US;
	s = server_up_delays(mode, proc_us, server_delays);
	client_opts(&o, s, mode, false);
	if (!server_side)
		o.test_delay_us[comp] = INJECT_US;
	o.breakdown = true;
	o.runs = 1;
	o.n = 200;
	o.warmup = 10;
	measure(&o, what);
	bd = res.rows[0].bd;
	check_breakdown(&res.rows[0], what);
	BPT_CHECK(bd->comp[comp].min >= INJECT_US * 1000ull, "%s: its minimum is %llu ns, below the delay put into it",
		  what, (unsigned long long)bd->comp[comp].min);
	for (int c = 0; c < PP_NCOMP; c++)
		if (c != comp)
			BPT_CHECK(bd->comp[c].min < INJECT_US * 1000ull,
				  "%s: %s is %llu ns or more in every one of %llu samples: the delay shows there too",
				  what, pp_comp_name(c), (unsigned long long)bd->comp[c].min,
				  (unsigned long long)bd->complete);
	if (comp == PP_C_SERVER_PROC)
		BPT_CHECK(res.server_delay_us == INJECT_US, "the server reported delay %u", res.server_delay_us);
	printf("ok   %-44s min %.1f us there; every other component below it in some sample\n", what,
	       bd->comp[comp].min / 1e3);
	pp_result_free(&res);
	pp_server_stop(s);
}

/* ---- misbehaving clients ---- */

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return a;
}

static void send_udp(uint16_t port, const uint8_t *buf, size_t len)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	BPT_CHECK(fd >= 0, "socket");
	BPT_CHECK(sendto(fd, buf, len, 0, (struct sockaddr *)&a, sizeof(a)) == (ssize_t)len, "sendto: %s",
		  strerror(errno));
	close(fd);
}

static int tcp_to(uint16_t port)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	BPT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
	return fd;
}

/* wait_closed - the server closes fd's connection within 5 s. */
static void wait_closed(int fd, const char *what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t b[512];

	for (;;) {
		ssize_t n;

		BPT_CHECK(poll(&p, 1, 5000) == 1, "%s: the server left the connection open", what);
		n = recv(fd, b, sizeof(b), 0);
		if (n <= 0)
			break;
	}
	close(fd);
}

static void request(uint8_t *b, uint32_t length, uint32_t declared)
{
	struct bp_pp_hdr h = { .type = BP_PP_REQUEST, .length = declared, .seq = 1 };

	memset(b, 0, length);
	bp_pp_hdr_encode(&h, b);
}

static void misbehaving_clients(void)
{
	const char *mode = "epoll:block";
	struct pp_server *s = server_up(mode, 0);
	uint16_t port = pp_server_port(s);
	uint64_t dropped[BP_PP_ERR_COUNT];
	uint8_t b[2048];
	struct pp_opts o;
	int fd, silent;

	/* UDP: every kind of bad datagram */
	send_udp(port, (const uint8_t *)"hello", 5);                  /* garbage (and short) */
	request(b, 40, 40);
	send_udp(port, b, 40);                                           /* short: a cut header */
	memset(b, 0xa5, 64);
	send_udp(port, b, 64);                                           /* garbage */
	request(b, 1500, 64);
	send_udp(port, b, 1500);                                         /* oversized */
	request(b, 60, 100);
	send_udp(port, b, 60);                                           /* truncated */
	request(b, 64, 64);
	b[4] = 7;
	send_udp(port, b, 64);                                           /* version */
	request(b, 64, 64);
	b[5] = BP_PP_REPLY;
	send_udp(port, b, 64);                                           /* type */
	request(b, 64, 64);
	bp_put_le16(b + 6, 1);
	send_udp(port, b, 64);                                           /* flags */
	request(b, 64, 64);
	bp_put_le32(b + 8, 5);
	send_udp(port, b, 64);                                           /* length field */
	send_udp(port, b, 0);                                            /* empty */

	/* TCP: garbage first bytes; a good request then garbage; a peer that says nothing */
	fd = tcp_to(port);
	BPT_CHECK(send(fd, "GET / HTTP/1.0\r\n\r\n", 18, 0) == 18, "send");
	wait_closed(fd, "TCP garbage");
	fd = tcp_to(port);
	request(b, 64, 64);
	memset(b + 64, 'Z', 64);
	BPT_CHECK(send(fd, b, 128, 0) == 128, "send");
	wait_closed(fd, "TCP request then garbage");
	fd = tcp_to(port);
	BPT_CHECK(send(fd, "BP", 2, 0) == 2, "send");
	shutdown(fd, SHUT_WR);
	wait_closed(fd, "TCP 2 bytes then EOF");
	silent = tcp_to(port); /* left open: must not hold anybody up */

	/* ...and the next client is served, UDP and TCP */
	for (int tcp = 0; tcp <= 1; tcp++) {
		client_opts(&o, s, mode, tcp);
		o.runs = 1;
		measure(&o, tcp ? "TCP after misbehaving clients" : "UDP after misbehaving clients");
		check_counts(&o, "after misbehaving clients");
		pp_result_free(&res);
	}
	close(silent);

	pp_server_dropped(s, dropped, BP_PP_ERR_COUNT);
	BPT_CHECK(dropped[BP_PP_ERR_SHORT] >= 2, "short: %llu", (unsigned long long)dropped[BP_PP_ERR_SHORT]);
	BPT_CHECK(dropped[BP_PP_ERR_MAGIC] >= 4, "garbage: %llu", (unsigned long long)dropped[BP_PP_ERR_MAGIC]);
	BPT_CHECK(dropped[BP_PP_ERR_OVERSIZED] == 1, "oversized: %llu", (unsigned long long)dropped[BP_PP_ERR_OVERSIZED]);
	BPT_CHECK(dropped[BP_PP_ERR_TRUNCATED] == 1, "truncated: %llu", (unsigned long long)dropped[BP_PP_ERR_TRUNCATED]);
	BPT_CHECK(dropped[BP_PP_ERR_VERSION] == 1, "version: %llu", (unsigned long long)dropped[BP_PP_ERR_VERSION]);
	BPT_CHECK(dropped[BP_PP_ERR_TYPE] == 1, "type: %llu", (unsigned long long)dropped[BP_PP_ERR_TYPE]);
	BPT_CHECK(dropped[BP_PP_ERR_FLAGS] == 1, "flags: %llu", (unsigned long long)dropped[BP_PP_ERR_FLAGS]);
	BPT_CHECK(dropped[BP_PP_ERR_LENGTH] == 1, "length: %llu", (unsigned long long)dropped[BP_PP_ERR_LENGTH]);
	printf("ok   misbehaving clients dropped (short %llu, garbage %llu, oversized 1, truncated 1, ...), next client served\n",
	       (unsigned long long)dropped[BP_PP_ERR_SHORT], (unsigned long long)dropped[BP_PP_ERR_MAGIC]);
	pp_server_stop(s);
}

/* One control session at a time; its mode switch ends with it. */
static void control_sessions(void)
{
	struct pp_server *s = server_up("epoll:block", 0);
	struct sockaddr_in a = loopback(pp_server_port(s));
	struct ctl_session c1, c2;
	struct pp_server_info info;
	char err[256], now[PP_MODE_LEN];
	int ret;

	BPT_CHECK(pp_ctl_open(&c1, (struct sockaddr *)&a, sizeof(a), 5000, &info, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(!strcmp(info.mode, "epoll:block"), "HELLO says mode %s", info.mode);
	ret = pp_ctl_open(&c2, (struct sockaddr *)&a, sizeof(a), 5000, &info, err, sizeof(err));
	BPT_CHECK(ret == -EBUSY && strstr(err, "busy"), "a second session: %d %s", ret, err);

	BPT_CHECK(pp_ctl_set_mode(&c1, "epoll:spin", false, now, err, sizeof(err)) == 0, "SET_MODE: %s", err);
	BPT_CHECK(!strcmp(now, "epoll:spin"), "SET_MODE answered %s", now);
	ret = pp_ctl_set_mode(&c1, "epoll:nonsense", false, now, err, sizeof(err));
	BPT_CHECK(ret == -EINVAL && strstr(err, "nonsense"), "a bad mode: %d %s", ret, err);
	ctl_session_close(&c1);

	/* the next session finds the server as it was started */
	BPT_CHECK(pp_ctl_open(&c2, (struct sockaddr *)&a, sizeof(a), 5000, &info, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(!strcmp(info.mode, "epoll:block"), "after the session the mode is %s", info.mode);
	ctl_session_close(&c2);
	printf("ok   one control session at a time; its mode switch ends with it\n");
	pp_server_stop(s);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	struct bp_mode m;
	int ran = 0;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--mode MODE]\n", argv[0]);
			return 2;
		}
	}
	/* Client and server on different CPUs, as every latency figure should be. */
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		client_cpu = 0;
		server_cpu = 1;
	}
	for (size_t i = 0; i < bpt_n_modes; i++) {
		const char *text = only ? only : bpt_all_modes[i];

		if (bpt_mode_usable(text, &m)) {
			every_mode(text);
			ran++;
		}
		if (only)
			break;
	}
	if (only)
		return bpt_exit_status();
	breakdown("epoll:block", false);
	breakdown("epoll:block", true);
	if (bpt_mode_usable("uring:block", &m)) {
		breakdown("uring:block", false);
		breakdown("uring:block", true);
	}
	for (int c = 0; c < PP_C_REMAINDER; c++)
		delay_in(c);
	misbehaving_clients();
	control_sessions();
	printf("%d modes, 0 failed\n", ran);
	return bpt_exit_status();
}
