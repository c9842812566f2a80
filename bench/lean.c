/* SPDX-License-Identifier: MIT */
/*
 * bench_lean: the leanest request/response program of each backend, the rate that no
 * tool built on that backend can beat at F flows (issue 25).
 *
 * F TCP flows, one outstanding 1-byte request each; the server echoes every byte, the
 * client answers every response with the next request and counts. Nothing else runs:
 * no histogram, no clock read per transaction, no library in the data path, one
 * pinned thread per side.
 *
 *   epoll    epoll_wait (level-triggered, EPOLLIN only), then per ready flow one recv
 *            and one send (MSG_DONTWAIT). A rr mode's `epoll:block` does the same.
 *   uring    one io_uring_submit_and_wait per batch; one recv armed per flow; each
 *            recv completion queues the send and the next recv, submitted by the next
 *            batch's enter. The ring is set up as busypoll's uring modes set theirs up
 *            by default (SINGLE_ISSUER|DEFER_TASKRUN; --setup plain: none).
 *
 *   bench_lean --server --backend epoll|uring [--bind ADDR] [--port P] [--cpu N]
 *              [-F FLOWS] [--setup defer|plain] [--timeout S]
 *   bench_lean --client HOST --backend epoll|uring [--port P] [--cpu N] [-F FLOWS]
 *              [-l SECONDS] [--warmup SECONDS] [--setup defer|plain]
 *              [--format table|json] [--timeout S]
 *
 * The client reads the clock at the edges of the measured interval only (a 100 ms
 * interval timer's signal tells the loop when an edge is near) and prints the
 * transactions per second over it. The server serves F connections and exits when
 * the client closed them all. Either side gives up after --timeout seconds (default
 * 10) without a transaction, so a lost peer never leaves a CPU waiting forever.
 *
 * Exit status: 0 done, 1 the run failed (peer gone, timeout, syscall), 2 bad input.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <liburing.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PROG "bench_lean"
#define DEFAULT_PORT 17018
#define DEFAULT_FLOWS 15
#define MAX_FLOWS 1024
#define DEFAULT_TIMEOUT_S 10
#define TICK_US 100000 /* the interval timer: phase edges and the stall watchdog */
#define MSG 1          /* bytes per request and per response, as rr's and neper's default */

enum { EXIT_RUN = 1, EXIT_USAGE = 2 };
enum backend { BE_EPOLL, BE_URING };

struct opts {
	bool server, client;
	const char *host, *bind;
	unsigned port;
	int cpu;
	int flows;
	enum backend be;
	bool be_set;
	bool plain;           /* --setup plain: an io_uring ring without SINGLE_ISSUER|DEFER_TASKRUN */
	double seconds, warmup;
	bool json;
	unsigned timeout_s;
};

/* ---- what the signal handler and the loop share ---- */

static volatile uint64_t done;          /* transactions (client: responses; server: requests) */
static volatile sig_atomic_t ticks;     /* TICK_US intervals since the start */
static unsigned stall_limit;            /* ticks without a transaction before giving up */
static const char *side = "server";

/*
 * on_tick - the watchdog: a side that saw no transaction for stall_limit ticks gives
 * up (async-signal-safe: write and _exit only). Its other job is ticks, which the
 * loop reads to know that a phase edge may have come.
 */
static void on_tick(int sig)
{
	static uint64_t last;
	static unsigned still;
	char msg[96];
	int len;

	(void)sig;
	ticks++;
	if (done != last) {
		last = done;
		still = 0;
		return;
	}
	if (++still < stall_limit)
		return;
	len = snprintf(msg, sizeof(msg), PROG ": %s: no transaction for %u s, giving up\n", side,
		       stall_limit * (TICK_US / 1000) / 1000);
	if (write(2, msg, (size_t)len) < 0) {
		/* nothing more to do: exiting anyway */
	}
	_exit(EXIT_RUN);
}

static int start_ticks(unsigned timeout_s)
{
	struct sigaction sa = { .sa_handler = on_tick };
	struct itimerval it = { { 0, TICK_US }, { 0, TICK_US } };

	stall_limit = timeout_s * (1000000 / TICK_US);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		fprintf(stderr, PROG ": %s: interval timer: %s\n", side, strerror(errno));
		return -1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- input ---- */

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

static void usage(void)
{
	printf("usage: " PROG " --server --backend epoll|uring [--bind ADDR] [--port P] [--cpu N]\n"
	       "                  [-F FLOWS] [--setup defer|plain] [--timeout S]\n"
	       "       " PROG " --client HOST --backend epoll|uring [--port P] [--cpu N] [-F FLOWS]\n"
	       "                  [-l SECONDS] [--warmup SECONDS] [--setup defer|plain]\n"
	       "                  [--format table|json] [--timeout S]\n"
	       "The leanest 1-byte request/response loop of each backend over F TCP flows; the\n"
	       "client prints transactions/s. Defaults: port %d, %d flows, -l 3, --warmup 0.5,\n"
	       "--setup defer, timeout %d s without a transaction.\n",
	       DEFAULT_PORT, DEFAULT_FLOWS, DEFAULT_TIMEOUT_S);
}

static long parse_long(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi)
		usage_error("%s: '%s' is not a whole number in %ld..%ld", opt, s, lo, hi);
	return v;
}

static double parse_secs(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*s < '0' || *s > '9' || *end || errno || v > 3600)
		usage_error("%s: '%s' is not a number of seconds in 0..3600", opt, s);
	return v;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_SERVER = 256, O_CLIENT, O_BIND, O_PORT, O_CPU, O_BACKEND, O_SETUP, O_WARMUP,
	       O_FORMAT, O_TIMEOUT };
	static const struct option longopts[] = {
		{ "server", no_argument, NULL, O_SERVER },
		{ "client", required_argument, NULL, O_CLIENT },
		{ "bind", required_argument, NULL, O_BIND },
		{ "port", required_argument, NULL, O_PORT },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "setup", required_argument, NULL, O_SETUP },
		{ "flows", required_argument, NULL, 'F' },
		{ "length", required_argument, NULL, 'l' },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool client_only = false;
	int c;

	*o = (struct opts){ .port = DEFAULT_PORT, .cpu = -1, .flows = DEFAULT_FLOWS, .seconds = 3,
			    .warmup = 0.5, .timeout_s = DEFAULT_TIMEOUT_S };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":F:l:h", longopts, NULL)) != -1) {
		switch (c) {
		case O_SERVER: o->server = true; break;
		case O_CLIENT: o->client = true; o->host = optarg; break;
		case O_BIND: o->bind = optarg; break;
		case O_PORT: o->port = (unsigned)parse_long("--port", optarg, 1, 65535); break;
		case O_CPU: o->cpu = (int)parse_long("--cpu", optarg, 0, CPU_SETSIZE - 1); break;
		case O_BACKEND:
			if (!strcmp(optarg, "epoll"))
				o->be = BE_EPOLL;
			else if (!strcmp(optarg, "uring"))
				o->be = BE_URING;
			else
				usage_error("--backend: '%s' is neither epoll nor uring", optarg);
			o->be_set = true;
			break;
		case O_SETUP:
			if (strcmp(optarg, "defer") && strcmp(optarg, "plain"))
				usage_error("--setup: '%s' is neither defer nor plain", optarg);
			o->plain = !strcmp(optarg, "plain");
			break;
		case 'F': o->flows = (int)parse_long("-F", optarg, 1, MAX_FLOWS); break;
		case 'l': o->seconds = parse_secs("-l", optarg); client_only = true; break;
		case O_WARMUP: o->warmup = parse_secs("--warmup", optarg); client_only = true; break;
		case O_FORMAT:
			if (strcmp(optarg, "json") && strcmp(optarg, "table"))
				usage_error("--format: '%s' is neither table nor json", optarg);
			o->json = !strcmp(optarg, "json");
			client_only = true;
			break;
		case O_TIMEOUT: o->timeout_s = (unsigned)parse_long("--timeout", optarg, 1, 3600); break;
		case 'h': usage(); exit(0);
		case ':': usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->server == o->client)
		usage_error("choose one of --server, --client HOST");
	if (!o->be_set)
		usage_error("--backend epoll|uring is required");
	if (o->server && client_only)
		usage_error("-l, --warmup and --format are for the client");
	if (o->bind && !o->server)
		usage_error("--bind is for --server");
	if (o->client && o->seconds <= 0)
		usage_error("-l: the measured interval must be longer than 0 s");
}

/* ---- connections (set-up only: none of this is on the data path) ---- */

static int fail(const char *what)
{
	fprintf(stderr, PROG ": %s: %s: %s\n", side, what, strerror(errno));
	return -1;
}

static int pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? fail("pin") : 0;
}

static struct addrinfo *resolve(const char *host, unsigned port, bool passive)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) };
	struct addrinfo *res;
	char portstr[8];
	int gai;

	snprintf(portstr, sizeof(portstr), "%u", port);
	gai = getaddrinfo(host, portstr, &hints, &res);
	if (gai) {
		fprintf(stderr, PROG ": %s: %s\n", host ? host : "0.0.0.0", gai_strerror(gai));
		exit(EXIT_USAGE);
	}
	return res;
}

static void nodelay(int fd)
{
	int one = 1;

	/* each 1-byte send leaves at once; a failure would only show as a slow rate */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* accept_flows - listen, take n connections (within the timeout), close the listener. */
static int accept_flows(const struct opts *o, int *fds)
{
	struct addrinfo *ai = resolve(o->bind ? o->bind : "0.0.0.0", o->port, true);
	int lfd, one = 1;

	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return fail("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, MAX_FLOWS)) {
		freeaddrinfo(ai);
		return fail("listen");
	}
	freeaddrinfo(ai);
	for (int i = 0; i < o->flows; i++) {
		/* blocking; the watchdog's signal ends a wait for a client that never comes */
		fds[i] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fds[i] < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (fds[i] < 0)
			return fail("accept");
		nodelay(fds[i]);
	}
	close(lfd);
	return 0;
}

/* connect_flows - n connections to the server, retried while it is not listening yet. */
static int connect_flows(const struct opts *o, int *fds)
{
	struct addrinfo *ai = resolve(o->host, o->port, false);

	for (int i = 0; i < o->flows; i++) {
		fds[i] = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0)
			return fail("socket");
		while (connect(fds[i], ai->ai_addr, ai->ai_addrlen)) {
			if (errno != ECONNREFUSED && errno != EINTR)
				return fail("connect");
			/* the watchdog gives up for us: nothing was done while refused */
			usleep(20000);
		}
		nodelay(fds[i]);
	}
	freeaddrinfo(ai);
	return 0;
}

/* ---- the measured interval (client) ---- */

struct interval {
	double warmup, seconds;
	uint64_t t0;                 /* the first tick the loop saw: the warm-up starts */
	uint64_t t_start, t_end;     /* ns; 0 until that edge */
	uint64_t n_start, n_end;     /* transactions at the edges */
	sig_atomic_t seen;           /* ticks when last looked */
};

/*
 * interval_edge - called when ticks moved: crosses the warm-up and the end edges.
 * Returns true once the measured interval is over.
 */
static bool interval_edge(struct interval *iv)
{
	uint64_t now = now_ns();

	iv->seen = ticks;
	if (!iv->t_start) {
		if (!iv->t0)
			iv->t0 = now;
		if (now - iv->t0 >= (uint64_t)(iv->warmup * 1e9)) {
			iv->t_start = now;
			iv->n_start = done;
		}
		return false;
	}
	if (now - iv->t_start < (uint64_t)(iv->seconds * 1e9))
		return false;
	iv->t_end = now;
	iv->n_end = done;
	return true;
}

/* ---- epoll ---- */

/*
 * run_epoll - serve fds until all closed (server: iv NULL) or the interval is over
 * (client: it sent a first request on each flow). 0, or -1 with a message.
 */
static int run_epoll(int *fds, int n, struct interval *iv)
{
	struct epoll_event evs[MAX_FLOWS];
	char buf[64];
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	int open = n;

	if (epfd < 0)
		return fail("epoll_create1");
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &ev))
			return fail("epoll_ctl");
	}
	while (open) {
		int k = epoll_wait(epfd, evs, n, -1);

		if (k < 0 && errno != EINTR)
			return fail("epoll_wait");
		for (int e = 0; e < k; e++) {
			int fd = fds[evs[e].data.u32];
			ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (r > 0) {
				done++;
				/* a peer gone is found by the next recv; anything else is a failure */
				if (send(fd, buf, (size_t)r, MSG_DONTWAIT | MSG_NOSIGNAL) != r &&
				    errno != EPIPE && errno != ECONNRESET)
					return fail("send");
			} else if (r == 0 || errno == ECONNRESET) {
				/* the client closes with answers in flight: a reset is its end too */
				epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
				open--;
			} else if (errno != EAGAIN) {
				return fail("recv");
			}
		}
		if (iv && ticks != iv->seen && interval_edge(iv))
			break;
	}
	close(epfd);
	return 0;
}

/* ---- io_uring ---- */

enum { OP_RECV, OP_SEND };
#define UD(i, op) (((uint64_t)(i) << 1) | (op))

struct uflow {
	char rbuf[64], sbuf[64];
};

static int queue_recv(struct io_uring *ring, int fd, struct uflow *f, int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -1;
	io_uring_prep_recv(sqe, fd, f->rbuf, sizeof(f->rbuf), 0);
	io_uring_sqe_set_data64(sqe, UD(i, OP_RECV));
	return 0;
}

static int queue_send(struct io_uring *ring, int fd, struct uflow *f, int i, size_t len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -1;
	io_uring_prep_send(sqe, fd, f->sbuf, len, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, UD(i, OP_SEND));
	return 0;
}

/* run_uring - as run_epoll, on a ring: one submit-and-wait per batch. */
static int run_uring(int *fds, int n, struct interval *iv, bool plain)
{
	static struct uflow flows[MAX_FLOWS];
	struct io_uring ring;
	unsigned flags = plain ? 0 : IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	int open = n, ret;

	/* two SQEs per flow at most between two enters: its send and its next recv */
	ret = io_uring_queue_init(2 * (unsigned)n + 8, &ring, flags);
	if (ret) {
		errno = -ret;
		return fail("io_uring_queue_init");
	}
	for (int i = 0; i < n; i++) {
		if (iv) { /* the client opens every flow with its first request */
			flows[i].sbuf[0] = 'x';
			queue_send(&ring, fds[i], &flows[i], i, MSG);
		}
		queue_recv(&ring, fds[i], &flows[i], i);
	}
	while (open) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -ETIME) {
			errno = -ret;
			return fail("io_uring_submit_and_wait");
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			int i = (int)(cqe->user_data >> 1);

			seen++;
			if ((cqe->user_data & 1) == OP_SEND) {
				if (cqe->res != MSG && cqe->res != -EPIPE && cqe->res != -ECONNRESET) {
					errno = cqe->res < 0 ? -cqe->res : EIO;
					return fail("send");
				}
				continue;
			}
			if (cqe->res > 0) {
				done++;
				memcpy(flows[i].sbuf, flows[i].rbuf, (size_t)cqe->res);
				if (queue_send(&ring, fds[i], &flows[i], i, (size_t)cqe->res) ||
				    queue_recv(&ring, fds[i], &flows[i], i)) {
					errno = EBUSY;
					return fail("io_uring_get_sqe");
				}
			} else if (cqe->res == 0 || cqe->res == -ECONNRESET) {
				open--;
			} else {
				errno = -cqe->res;
				return fail("recv");
			}
		}
		io_uring_cq_advance(&ring, seen);
		if (iv && ticks != iv->seen && interval_edge(iv))
			break;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- the two sides ---- */

int main(int argc, char **argv)
{
	static int fds[MAX_FLOWS];
	struct opts o;
	struct interval iv = { 0 };
	int ret;

	parse_args(argc, argv, &o);
	side = o.server ? "server" : "client";
	if (pin(o.cpu) || start_ticks(o.timeout_s))
		return EXIT_RUN;
	if (o.server ? accept_flows(&o, fds) : connect_flows(&o, fds))
		return EXIT_RUN;
	if (o.client) {
		iv.warmup = o.warmup;
		iv.seconds = o.seconds;
		iv.seen = ticks;
		if (o.be == BE_EPOLL) {
			char c = 'x';

			for (int i = 0; i < o.flows; i++)
				if (send(fds[i], &c, MSG, MSG_NOSIGNAL) != MSG) {
					fail("send");
					return EXIT_RUN;
				}
		}
	}
	if (o.be == BE_EPOLL)
		ret = run_epoll(fds, o.flows, o.client ? &iv : NULL);
	else
		ret = run_uring(fds, o.flows, o.client ? &iv : NULL, o.plain);
	if (ret)
		return EXIT_RUN;
	for (int i = 0; i < o.flows; i++)
		close(fds[i]); /* the server's cue to exit */
	if (o.client) {
		uint64_t n = iv.n_end - iv.n_start;
		double s = (double)(iv.t_end - iv.t_start) / 1e9;

		if (o.json)
			printf("{\"bench\":\"lean\",\"backend\":\"%s\",\"flows\":%d,\"transactions\":%" PRIu64
			       ",\"seconds\":%.3f,\"tps\":%.0f}\n",
			       o.be == BE_EPOLL ? "epoll" : "uring", o.flows, n, s, (double)n / s);
		else
			printf("# lean %s, %d flows, 1-byte request/response\n%12s %8s %12s\n%12" PRIu64
			       " %8.3f %12.0f\n",
			       o.be == BE_EPOLL ? "epoll" : "uring", o.flows, "transactions", "seconds",
			       "tps", n, s, (double)n / s);
	}
	return 0;
}
