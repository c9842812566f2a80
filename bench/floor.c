/* SPDX-License-Identifier: MIT */
/*
 * bench_floor: the round-trip floor that no busy-poll tool can beat on a machine.
 *
 * A 1-byte TCP ping-pong where both ends spin on recv(MSG_DONTWAIT): no event loop,
 * no wake-ups, no library in the data path. Whatever a mode of busypoll adds on top
 * of this (epoll, io_uring, kernel busy polling, the loop's own bookkeeping) shows
 * as the distance to this floor, measured on the same test bed with the same pinning.
 *
 *   bench_floor --server [--bind ADDR] [--port P] [--cpu N] [--timeout S]
 *   bench_floor --client HOST [--port P] [--cpu N] [-n ROUNDS] [--warmup N]
 *               [--format table|json] [--timeout S]
 *   bench_floor --pair [--cpus A,B] [-n ROUNDS] [--warmup N] [--format table|json]
 *
 * The client times each round trip with CLOCK_MONOTONIC (send to byte back) and
 * prints n, min, p50, p90, p99, p99.9, mean and max in microseconds; percentiles come
 * from bp_hist (within 1/256 of the exact value), min, max and mean are exact.
 *
 * Everything is bounded: the client stops after its rounds, the server serves one
 * client and exits when it disconnects, and either end gives up after --timeout
 * seconds (default 10) without a byte, a connection or an accept, so a lost peer
 * never leaves a CPU spinning.
 *
 * Exit status: 0 done, 1 the run failed (peer gone, timeout, syscall), 2 bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <busypoll/hist.h>

#define PROG "bench_floor"
#define DEFAULT_PORT 17017
#define DEFAULT_ROUNDS 100000
#define DEFAULT_WARMUP 1000
#define DEFAULT_TIMEOUT_S 10

enum { EXIT_RUN = 1, EXIT_USAGE = 2 };

enum mode { MODE_NONE, MODE_SERVER, MODE_CLIENT, MODE_PAIR };

struct opts {
	enum mode mode;
	const char *host;       /* --client */
	const char *bind;       /* --server; NULL: any IPv4 address */
	unsigned port;          /* 0 in --pair: an ephemeral port */
	bool port_set;
	int cpu;                /* --server/--client; -1: leave affinity alone */
	int pair_cpu[2];        /* --pair: client, server */
	bool cpus_set;
	uint64_t rounds;
	uint64_t warmup;
	bool rounds_set, warmup_set, format_set, cpu_set, bind_set;
	bool json;
	uint64_t timeout_ns;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " --server [--bind ADDR] [--port P] [--cpu N] [--timeout S]\n"
		"       " PROG " --client HOST [--port P] [--cpu N] [-n ROUNDS] [--warmup N]\n"
		"                   [--format table|json] [--timeout S]\n"
		"       " PROG " --pair [--cpus CLIENT,SERVER] [-n ROUNDS] [--warmup N]\n"
		"                   [--format table|json] [--timeout S]\n"
		"1-byte TCP ping-pong, both ends spinning on recv(MSG_DONTWAIT); the client\n"
		"prints round-trip times in microseconds. Defaults: port %d, %d rounds after\n"
		"%d warm-up rounds, timeout %d s without progress, --pair on CPUs 0,1 over\n"
		"127.0.0.1.\n",
		DEFAULT_PORT, DEFAULT_ROUNDS, DEFAULT_WARMUP, DEFAULT_TIMEOUT_S);
}

/* usage_error - one line on stderr, exit 2: the input was wrong, not the run. */
static __attribute__((noreturn, format(printf, 1, 2))) void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	exit(EXIT_USAGE);
}

/* run_error - one line on stderr for a failed run; returns -1 for the caller to pass up. */
static __attribute__((format(printf, 1, 2))) int run_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one fprintf so that the two threads of --pair never interleave within a line */
	fprintf(stderr, PROG ": %s\n", msg);
	return -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* parse_u64 - a plain decimal in [lo, hi], or exit 2 naming the option. */
static uint64_t parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;
	unsigned long long v;

	/* strtoull accepts "-1" (as a huge value), spaces and "+": none is a count here */
	if (*s < '0' || *s > '9')
		usage_error("%s: '%s' is not a number", opt, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno)
		usage_error("%s: '%s' is not a number", opt, s);
	if (v < lo || v > hi)
		usage_error("%s: %s is out of range %" PRIu64 "..%" PRIu64, opt, s, lo, hi);
	return v;
}

/*
 * cpu_check - exit 2 unless cpu is one this process may run on: pinning to an offline
 * or forbidden CPU would fail anyway, better before any socket exists.
 */
static void cpu_check(const char *opt, int cpu)
{
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 &&
	    (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)))
		usage_error("%s: CPU %d is not available to this process (%ld online)", opt, cpu,
			    sysconf(_SC_NPROCESSORS_ONLN));
}

/* pin - run the calling thread on cpu only (no-op for -1). */
static int pin(int cpu)
{
	cpu_set_t set;
	int err;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		return run_error("pin to CPU %d: %s", cpu, strerror(err));
	return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_SERVER = 256, O_CLIENT, O_PAIR, O_BIND, O_PORT, O_CPU, O_CPUS, O_WARMUP,
	       O_FORMAT, O_TIMEOUT };
	static const struct option longopts[] = {
		{ "server", no_argument, NULL, O_SERVER },
		{ "client", required_argument, NULL, O_CLIENT },
		{ "pair", no_argument, NULL, O_PAIR },
		{ "bind", required_argument, NULL, O_BIND },
		{ "port", required_argument, NULL, O_PORT },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "rounds", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct opts){
		.port = DEFAULT_PORT,
		.cpu = -1,
		.pair_cpu = { 0, 1 },
		.rounds = DEFAULT_ROUNDS,
		.warmup = DEFAULT_WARMUP,
		.timeout_ns = DEFAULT_TIMEOUT_S * 1000000000ull,
	};
	opterr = 0; /* our own one-line messages, with exit status 2 */
	while ((c = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
		enum mode m = MODE_NONE;

		switch (c) {
		case O_SERVER: m = MODE_SERVER; break;
		case O_CLIENT: m = MODE_CLIENT; o->host = optarg; break;
		case O_PAIR: m = MODE_PAIR; break;
		case O_BIND: o->bind = optarg; o->bind_set = true; break;
		case O_PORT:
			o->port = (unsigned)parse_u64("--port", optarg, 1, 65535);
			o->port_set = true;
			break;
		case O_CPU:
			o->cpu = (int)parse_u64("--cpu", optarg, 0, CPU_SETSIZE - 1);
			o->cpu_set = true;
			break;
		case O_CPUS: {
			char buf[64], *comma;

			if (strlen(optarg) >= sizeof(buf) || !(comma = strchr(optarg, ',')))
				usage_error("--cpus: '%s' is not CLIENT,SERVER (e.g. 0,1)", optarg);
			strcpy(buf, optarg);
			buf[comma - optarg] = '\0';
			o->pair_cpu[0] = (int)parse_u64("--cpus", buf, 0, CPU_SETSIZE - 1);
			o->pair_cpu[1] = (int)parse_u64("--cpus", buf + (comma - optarg) + 1, 0,
							CPU_SETSIZE - 1);
			o->cpus_set = true;
			break;
		}
		case 'n':
			o->rounds = parse_u64("-n", optarg, 1, 1000000000000ull);
			o->rounds_set = true;
			break;
		case O_WARMUP:
			o->warmup = parse_u64("--warmup", optarg, 0, 1000000000000ull);
			o->warmup_set = true;
			break;
		case O_FORMAT:
			if (!strcmp(optarg, "json"))
				o->json = true;
			else if (strcmp(optarg, "table"))
				usage_error("--format: '%s' is neither table nor json", optarg);
			o->format_set = true;
			break;
		case O_TIMEOUT:
			o->timeout_ns = parse_u64("--timeout", optarg, 1, 3600) * 1000000000ull;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt) /* a short one, possibly inside a cluster like -xn5 */
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (m != MODE_NONE) {
			if (o->mode != MODE_NONE && o->mode != m)
				usage_error("choose one of --server, --client HOST, --pair");
			o->mode = m;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->mode == MODE_NONE)
		usage_error("choose one of --server, --client HOST, --pair");

	/* An option that the chosen side ignores is most likely a mistake: say so. */
	if (o->bind_set && o->mode != MODE_SERVER)
		usage_error("--bind is for --server");
	if (o->cpu_set && o->mode == MODE_PAIR)
		usage_error("--pair takes --cpus CLIENT,SERVER, not --cpu");
	if (o->cpus_set && o->mode != MODE_PAIR)
		usage_error("--cpus is for --pair; use --cpu N");
	if (o->mode == MODE_SERVER && (o->rounds_set || o->warmup_set || o->format_set))
		usage_error("-n, --warmup and --format are for the client: the server echoes "
			    "until the client leaves");

	if (o->cpu_set)
		cpu_check("--cpu", o->cpu);
	if (o->mode == MODE_PAIR) {
		/* Two spinning threads on one CPU take turns per scheduler tick: that
		 * measures the scheduler, not the floor. */
		if (o->pair_cpu[0] == o->pair_cpu[1])
			usage_error("--cpus: client and server need two different CPUs, "
				    "both ends spin");
		cpu_check("--cpus", o->pair_cpu[0]);
		cpu_check("--cpus", o->pair_cpu[1]);
		if (!o->port_set)
			o->port = 0;
	}
}

/* ---- the data path ---- */

/*
 * spin_recv - spin on recv(MSG_DONTWAIT) until something arrives.
 * Returns the byte count (> 0), 0 when the peer closed, -1 on an error or after
 * timeout_ns without a byte (message printed, naming who).
 */
static ssize_t spin_recv(int fd, void *buf, size_t len, uint64_t timeout_ns, const char *who)
{
	uint64_t deadline = 0;

	for (unsigned spins = 0;; spins++) {
		ssize_t r = recv(fd, buf, len, MSG_DONTWAIT);

		if (r >= 0)
			return r;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return run_error("%s: recv: %s", who, strerror(errno));
		/* The clock is read once per 1024 empty polls only, first after ~0.3 ms
		 * of them: a round trip that is on time never pays for the timeout. */
		if ((spins & 1023) == 1023) {
			uint64_t now = now_ns();

			if (!deadline)
				deadline = now + timeout_ns;
			else if (now >= deadline)
				return run_error("%s: no byte for %" PRIu64 " s, giving up", who,
						 timeout_ns / 1000000000u);
		}
	}
}

/* send_all - all of buf on a blocking socket; 0, or -1 with a message. */
static int send_all(int fd, const void *buf, size_t len, const char *who)
{
	const char *p = buf;

	while (len) {
		/* MSG_NOSIGNAL: a vanished peer is an error to report, not a SIGPIPE death */
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return run_error("%s: send: %s", who, strerror(errno));
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int set_nodelay(int fd, const char *who)
{
	int one = 1;

	/* each 1-byte send must leave at once: Nagle would hold it while an earlier
	 * segment is unacknowledged, and the peer may be delaying its ACK */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return run_error("%s: setsockopt(TCP_NODELAY): %s", who, strerror(errno));
	return 0;
}

/*
 * serve - echo everything back until the client closes. 0 when it did, -1 on an
 * error or a timeout.
 */
static int serve(int fd, uint64_t timeout_ns)
{
	char buf[64];

	if (set_nodelay(fd, "server"))
		return -1;
	for (;;) {
		ssize_t r = spin_recv(fd, buf, sizeof(buf), timeout_ns, "server");

		if (r == 0)
			return 0;
		if (r < 0 || send_all(fd, buf, (size_t)r, "server"))
			return -1;
	}
}

/*
 * ping_pong - warmup + rounds round trips of one byte; the timed ones go into h.
 * 0, or -1 with a message.
 */
static int ping_pong(int fd, uint64_t warmup, uint64_t rounds, uint64_t timeout_ns,
		     struct bp_hist *h)
{
	char c = 'x';

	if (set_nodelay(fd, "client"))
		return -1;
	for (uint64_t i = 0; i < warmup + rounds; i++) {
		uint64_t t0 = now_ns();

		if (send_all(fd, &c, 1, "client"))
			return -1;
		ssize_t r = spin_recv(fd, &c, 1, timeout_ns, "client");
		uint64_t t1 = now_ns();

		if (r == 0)
			return run_error("client: server closed the connection after %" PRIu64
					 " of %" PRIu64 " rounds", i, warmup + rounds);
		if (r < 0)
			return -1;
		if (i >= warmup)
			bp_hist_record(h, t1 - t0);
	}
	return 0;
}

/* ---- connection set-up ---- */

/* listen_on - a listening TCP socket on addr (NULL: 0.0.0.0) and port (0: ephemeral). */
static int listen_on(const char *addr, unsigned port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char portstr[8];
	int fd = -1, err = 0, one = 1;

	snprintf(portstr, sizeof(portstr), "%u", port);
	if (!addr)
		addr = "0.0.0.0";
	int gai = getaddrinfo(addr, portstr, &hints, &res);
	if (gai) {
		/* an address that does not resolve is bad input, not a failed run */
		fprintf(stderr, PROG ": --bind %s: %s\n", addr, gai_strerror(gai));
		exit(EXIT_USAGE);
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		/* a previous run's TIME_WAIT must not block the next one on the same port */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		run_error("server: listen on %s port %u: %s", addr, port, strerror(err));
	return fd;
}

/*
 * accept_one - the one client, within timeout_ns; its fd, or -1 with a message.
 * cancel (may be NULL): set by whoever shut lfd down on purpose; then -1 quietly.
 */
static int accept_one(int lfd, uint64_t timeout_ns, const atomic_bool *cancel)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, (int)(timeout_ns / 1000000u));
	while (r < 0 && errno == EINTR);
	if (cancel && atomic_load(cancel))
		return -1;
	if (r < 0)
		return run_error("server: poll: %s", strerror(errno));
	if (r == 0)
		return run_error("server: no client within %" PRIu64 " s, giving up",
				 timeout_ns / 1000000000u);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0 && cancel && atomic_load(cancel))
		return -1;
	if (fd < 0)
		return run_error("server: accept: %s", strerror(errno));
	return fd;
}

/*
 * connect_once - one non-blocking connect bounded by timeout_ms, then back to blocking
 * (the data path sends blocking and receives with MSG_DONTWAIT).
 * Returns the fd, or -errno.
 */
static int connect_once(const struct addrinfo *ai, int timeout_ms)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			ai->ai_protocol);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		socklen_t len = sizeof(err);
		int r;

		if (errno != EINPROGRESS) {
			err = errno;
			goto fail;
		}
		do
			r = poll(&pfd, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			err = r < 0 ? errno : ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err)
			goto fail;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		err = errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -err;
}

/*
 * connect_to - host:port within timeout_ns. A refused connection is retried until
 * then: a server started at the same moment (netns-pair.sh, --pair) may not be
 * listening yet. Returns the fd, or -1 with a message.
 */
static int connect_to(const char *host, unsigned port, uint64_t timeout_ns)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res;
	char portstr[8];
	uint64_t deadline = now_ns() + timeout_ns;
	int fd = -ECONNREFUSED;

	snprintf(portstr, sizeof(portstr), "%u", port);
	int gai = getaddrinfo(host, portstr, &hints, &res);
	if (gai) {
		fprintf(stderr, PROG ": --client %s: %s\n", host, gai_strerror(gai));
		exit(EXIT_USAGE);
	}
	for (;;) {
		for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			uint64_t now = now_ns();
			int left_ms = now < deadline ? (int)((deadline - now) / 1000000u) + 1 : 1;

			fd = connect_once(ai, left_ms);
			if (fd >= 0)
				break;
		}
		if (fd >= 0 || fd != -ECONNREFUSED || now_ns() >= deadline)
			break;
		usleep(20000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		return run_error("client: connect to %s port %u: %s", host, port, strerror(-fd));
	return fd;
}

/* ---- reporting ---- */

static void report(const struct bp_hist *h, uint64_t warmup, bool json)
{
	/* ns -> us with the ns kept: 3 decimals */
#define US(ns) ((double)(ns) / 1000.0)
	if (json) {
		printf("{\"bench\":\"floor\",\"n\":%" PRIu64 ",\"warmup\":%" PRIu64
		       ",\"min_us\":%.3f,\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f"
		       ",\"p99_9_us\":%.3f,\"mean_us\":%.3f,\"max_us\":%.3f}\n",
		       h->count, warmup, US(h->min), US(bp_hist_percentile(h, 50)),
		       US(bp_hist_percentile(h, 90)), US(bp_hist_percentile(h, 99)),
		       US(bp_hist_percentile(h, 99.9)), bp_hist_mean(h) / 1000.0, US(h->max));
	} else {
		printf("# 1-byte TCP ping-pong, both ends spinning on recv(MSG_DONTWAIT); "
		       "RTT in us\n");
		printf("%10s %9s %9s %9s %9s %9s %9s %9s\n", "n", "min", "p50", "p90", "p99",
		       "p99.9", "mean", "max");
		printf("%10" PRIu64 " %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", h->count,
		       US(h->min), US(bp_hist_percentile(h, 50)), US(bp_hist_percentile(h, 90)),
		       US(bp_hist_percentile(h, 99)), US(bp_hist_percentile(h, 99.9)),
		       bp_hist_mean(h) / 1000.0, US(h->max));
	}
#undef US
	fflush(stdout);
}

/* ---- the three ways to run ---- */

static int run_server(const struct opts *o)
{
	int lfd, fd, ret;

	if (pin(o->cpu))
		return EXIT_RUN;
	lfd = listen_on(o->bind, o->port);
	if (lfd < 0)
		return EXIT_RUN;
	fd = accept_one(lfd, o->timeout_ns, NULL);
	close(lfd); /* one client per run: the next one gets a refusal, not a hang */
	if (fd < 0)
		return EXIT_RUN;
	ret = serve(fd, o->timeout_ns);
	close(fd);
	return ret ? EXIT_RUN : 0;
}

static int run_client(const struct opts *o)
{
	static struct bp_hist h; /* 20 KiB, zero: empty */
	int fd, ret;

	if (pin(o->cpu))
		return EXIT_RUN;
	fd = connect_to(o->host, o->port, o->timeout_ns);
	if (fd < 0)
		return EXIT_RUN;
	ret = ping_pong(fd, o->warmup, o->rounds, o->timeout_ns, &h);
	close(fd); /* the server's cue to exit */
	if (ret)
		return EXIT_RUN;
	report(&h, o->warmup, o->json);
	return 0;
}

struct pair {
	const struct opts *o;
	int lfd;
	unsigned port;
	struct bp_hist h;
	int client_ret, server_ret;
	atomic_bool cancel; /* the listener was shut on purpose: the client is not coming */
};

static void *pair_server(void *arg)
{
	struct pair *p = arg;
	int fd;

	p->server_ret = -1;
	if (pin(p->o->pair_cpu[1]))
		return NULL;
	fd = accept_one(p->lfd, p->o->timeout_ns, &p->cancel);
	if (fd < 0)
		return NULL;
	p->server_ret = serve(fd, p->o->timeout_ns);
	close(fd);
	return NULL;
}

static void *pair_client(void *arg)
{
	struct pair *p = arg;
	int fd;

	p->client_ret = -1;
	if (pin(p->o->pair_cpu[0]))
		return NULL;
	fd = connect_to("127.0.0.1", p->port, p->o->timeout_ns);
	if (fd < 0)
		return NULL;
	p->client_ret = ping_pong(fd, p->o->warmup, p->o->rounds, p->o->timeout_ns, &p->h);
	close(fd);
	return NULL;
}

static int run_pair(const struct opts *o)
{
	struct pair *p = calloc(1, sizeof(*p));
	pthread_t st, ct;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int err, ret = EXIT_RUN;

	if (!p) {
		run_error("out of memory");
		return EXIT_RUN;
	}
	p->o = o;
	/* Listen before either thread starts, so the client never races the server. */
	p->lfd = listen_on("127.0.0.1", o->port);
	if (p->lfd < 0)
		goto out;
	if (getsockname(p->lfd, (struct sockaddr *)&ss, &len)) {
		run_error("getsockname: %s", strerror(errno));
		goto out_close;
	}
	p->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if ((err = pthread_create(&st, NULL, pair_server, p))) {
		run_error("pthread_create: %s", strerror(err));
		goto out_close;
	}
	if ((err = pthread_create(&ct, NULL, pair_client, p))) {
		run_error("pthread_create: %s", strerror(err));
		/* no client will come: wake the server out of its accept */
		atomic_store(&p->cancel, true);
		shutdown(p->lfd, SHUT_RDWR);
		pthread_join(st, NULL);
		goto out_close;
	}
	pthread_join(ct, NULL);
	/* A client that failed before connecting would leave the server in accept until
	 * its timeout; shutting the listener wakes it at once, and cancel keeps it from
	 * adding a second, misleading message to the client's. After a connection the
	 * listener is unused, so this changes nothing for a run that got that far. */
	if (p->client_ret) {
		atomic_store(&p->cancel, true);
		shutdown(p->lfd, SHUT_RDWR);
	}
	pthread_join(st, NULL);
	if (p->client_ret == 0 && p->server_ret == 0) {
		report(&p->h, o->warmup, o->json);
		ret = 0;
	}
out_close:
	close(p->lfd);
out:
	free(p);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_args(argc, argv, &o);
	switch (o.mode) {
	case MODE_SERVER: return run_server(&o);
	case MODE_CLIENT: return run_client(&o);
	case MODE_PAIR: return run_pair(&o);
	default: return EXIT_USAGE;
	}
}
