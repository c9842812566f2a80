/* SPDX-License-Identifier: MIT */
/*
 * File-descriptor exhaustion. A server runs in a child under a low RLIMIT_NOFILE
 * (setrlimit in the child) and gets more connections than it can accept (the
 * kernel completes them all into the listen backlog):
 *
 *  - it says so in one clear line on stderr (accept4's reason and the limit),
 *  - the connections it accepted keep being served,
 *  - it accepts until the limit (uses every descriptor it may),
 *  - when descriptors free up it accepts the waiting connections (the engine
 *    retries every 100 ms) and says so,
 *  - once every client is gone its descriptor count is back where it started.
 *
 * The rr server on epoll:block and uring:block, and the NVMe/TCP target (a
 * controller connected before the flood keeps doing verified I/O through it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_faults.h"
#include "bptest.h"
#include "base/bytes.h"
#include "tools/rr/rr.h"

#define LIMIT 64
#define FLOOD 160           /* connections opened: well over what LIMIT lets it accept */
#define FREED 30            /* closed to make room */
#define NQN "nqn.2024-01.io.busypoll:fds"

enum server_kind { RR, TARGET };

static char dir[] = "/tmp/bpt-fds-XXXXXX";
static uint64_t faults;

struct child {
	pid_t pid;
	uint16_t port;
	char log[300];
	int base_fds;
};

/* In the child: the server under RLIMIT_NOFILE = LIMIT until SIGTERM. */
static void child_main(enum server_kind kind, const char *mode_text, int wfd, const char *log)
{
	struct rlimit rl = { LIMIT, LIMIT };
	struct bp_mode m;
	char err[256];
	sigset_t set;
	uint16_t port = 0;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), sig;
	struct rr_server *s = NULL;
	struct bp_nvmet *t = NULL;

	if (fd < 0 || dup2(fd, 2) < 0)
		_exit(3);
	close(fd);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "child: setrlimit: %s\n", strerror(errno));
		_exit(3);
	}
	if (bp_mode_parse(mode_text, &m, err, sizeof(err))) {
		fprintf(stderr, "child: %s: %s\n", mode_text, err);
		_exit(3);
	}
	if (kind == RR) {
		struct rr_opts o;

		rr_opts_defaults(&o);
		o.server = true;
		o.port = 0;
		o.threads = 1;
		o.mode = m;
		snprintf(o.mode_text, sizeof(o.mode_text), "%s", mode_text);
		snprintf(o.host, sizeof(o.host), "127.0.0.1");
		if (rr_server_start(&o, &s, err, sizeof(err))) {
			fprintf(stderr, "child: %s\n", err);
			_exit(3);
		}
		port = rr_server_port(s);
	} else {
		struct bp_nvmet_cfg cfg;

		bp_nvmet_cfg_defaults(&cfg);
		((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
		snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
		bp_nvmet_ns_parse("ram:16M", &cfg.ns[0], err, sizeof(err));
		cfg.n_ns = 1;
		cfg.mode = m;
		cfg.log_level = BP_NVMET_LOG_WARN;
		if (bp_nvmet_start(&cfg, &t)) {
			fprintf(stderr, "child: %s\n", bp_last_error());
			_exit(3);
		}
		port = bp_nvmet_port(t);
	}
	fflush(stderr);
	if (write(wfd, &port, sizeof(port)) != sizeof(port)) {
		fprintf(stderr, "child: write: %s\n", strerror(errno));
		_exit(3);
	}
	close(wfd);
	sigwait(&set, &sig);
	if (s)
		rr_server_stop(s);
	if (t)
		bp_nvmet_stop(t);
	_exit(0);
}

static struct child child_up(enum server_kind kind, const char *mode_text)
{
	struct child c = { 0 };
	pid_t parent = getpid();
	int p[2];

	snprintf(c.log, sizeof(c.log), "%s/%s-%d.log", dir, kind == RR ? "rr" : "target", (int)getpid());
	BPT_CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe");
	c.pid = fork();
	BPT_CHECK(c.pid >= 0, "fork");
	if (c.pid == 0) {
		bpt_die_with_parent(parent);
		close(p[0]);
		child_main(kind, mode_text, p[1], c.log);
	}
	close(p[1]);
	bpt_reap_at_exit(c.pid);
	BPT_CHECK(read(p[0], &c.port, sizeof(c.port)) == sizeof(c.port), "the server child did not start (see %s)",
		  c.log);
	close(p[0]);
	c.base_fds = bpt_fd_count(c.pid);
	return c;
}

static void child_down(struct child *c)
{
	int st;

	kill(c->pid, SIGTERM);
	BPT_CHECK(waitpid(c->pid, &st, 0) == c->pid, "waitpid");
	bpt_reaped(c->pid);
	BPT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server child ended with status 0x%x", st);
}

/* ---- the two protocols' first exchange, by hand ---- */

static void greet(enum server_kind kind, int fd)
{
	uint8_t b[128] = { 0 };

	if (kind == RR) {
		struct bp_rr_hello h = { .version = BP_RR_VERSION, .kind = BP_RR_KIND_DATA, .request_size = 8,
					 .response_size = 8, .run_id = 0x5eed0000u + (uint64_t)fd, .flow_id = 1 };

		bp_rr_hello_encode(&h, b);
		bpt_send_all(fd, b, BP_RR_HELLO_LEN);
	} else {
		struct bp_nvme_tcp_ic ic = { 0 };

		bp_nvme_tcp_ic_encode(b, BP_NVME_TCP_ICREQ, &ic);
		bpt_send_all(fd, b, BP_NVME_TCP_IC_LEN);
	}
}

static size_t answer_len(enum server_kind kind)
{
	return kind == RR ? BP_RR_ACK_LEN : BP_NVME_TCP_IC_LEN;
}

/* Has the server answered fd's greeting? Reads the answer if it is all there. */
static bool answered(enum server_kind kind, int fd)
{
	uint8_t b[128];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 0) != 1)
		return false;
	BPT_CHECK(bpt_recv_all(fd, b, answer_len(kind), 2000), "a partial or no answer to a greeting");
	if (kind == RR) {
		struct bp_rr_ack a;

		BPT_CHECK(bp_rr_ack_decode(b, &a) == 0 && a.status == BP_RR_OK, "bad ack");
	} else {
		BPT_CHECK(b[0] == BP_NVME_TCP_ICRESP, "not an ICResp: type %u", b[0]);
	}
	return true;
}

/* Count the connections answered within ms (they are answered in a burst). */
static int collect(enum server_kind kind, const int *fds, bool *ok, int n, int ms)
{
	uint64_t end = bpt_now_ns() + (uint64_t)ms * 1000000;
	int got = 0, last = -1;
	uint64_t quiet_since = bpt_now_ns();

	while (bpt_now_ns() < end) {
		for (int i = 0; i < n; i++)
			if (fds[i] >= 0 && !ok[i] && answered(kind, fds[i]))
				ok[i] = true;
		got = 0;
		for (int i = 0; i < n; i++)
			got += fds[i] >= 0 && ok[i];
		if (got != last) {
			last = got;
			quiet_since = bpt_now_ns();
		} else if (bpt_now_ns() - quiet_since > 400000000ull) {
			break; /* nothing new for 400 ms: four accept retries */
		}
		bpt_sleep_ms(10);
	}
	return got;
}

/* An rr transaction on an accepted connection. */
static void rr_serve_check(int fd)
{
	uint8_t b[8] = { 0 };

	bpt_send_all(fd, b, sizeof(b));
	BPT_CHECK(bpt_recv_all(fd, b, sizeof(b), 5000), "an accepted connection was not served");
}

/* ---- the target's own I/O through it all ---- */

struct host {
	struct bp_loop *loop;
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_queue *q;
	uint32_t seed;
};

static void host_up(struct host *h, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct bp_nvmeh_opts o;
	struct bp_mode m;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), NQN);
	o.kato_ms = 0; /* the loop does not run while we flood */
	o.timeout_ms = 10000;
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&h->loop, &m) == 0, "loop: %s", bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_connect(h->loop, (struct sockaddr *)&a, sizeof(a), &o, 1, &h->c) == 0,
		  "initiator connect: %s", bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(h->c, h->loop, 1, &h->q) == 0, "I/O queue: %s", bp_last_error());
}

static void host_io(struct host *h, const char *when)
{
	uint8_t w[4096], r[4096], sqe[64];

	for (int i = 0; i < 8; i++) {
		h->seed++;
		for (size_t k = 0; k < sizeof(w); k++)
			w[k] = (uint8_t)(h->seed * 131 + k * 7);
		bp_nvmeh_sqe_rw(sqe, true, 1, (uint64_t)i * 8, 8);
		BPT_CHECK(bp_nvmeh_sync(h->q, sqe, w, sizeof(w), true, NULL, 10000) == 0, "%s: write: %s", when,
			  bp_last_error());
		bp_nvmeh_sqe_rw(sqe, false, 1, (uint64_t)i * 8, 8);
		BPT_CHECK(bp_nvmeh_sync(h->q, sqe, r, sizeof(r), false, NULL, 10000) == 0, "%s: read: %s", when,
			  bp_last_error());
		BPT_CHECK(!memcmp(w, r, sizeof(w)), "%s: data read back differs", when);
	}
}

static void host_down(struct host *h)
{
	bp_nvmeh_queue_close(h->q);
	bp_nvmeh_ctrl_disconnect(h->c);
	bp_loop_destroy(h->loop);
}

/* ---- the test ---- */

static void exhaust(enum server_kind kind, const char *mode_text)
{
	const char *what = kind == RR ? "rr server" : "target";
	struct child c = child_up(kind, mode_text);
	static int fds[FLOOD];
	static bool ok[FLOOD];
	struct host h = { 0 };
	int first, freed = 0, second, peak;

	if (kind == TARGET) {
		host_up(&h, c.port);
		host_io(&h, "before the flood");
		c.base_fds = bpt_fd_count(c.pid) - 2; /* the host's admin and I/O queues stay open throughout */
	}
	for (int i = 0; i < FLOOD; i++) {
		fds[i] = bpt_connect(c.port); /* the kernel completes them all into the backlog */
		ok[i] = false;
		greet(kind, fds[i]);
	}
	faults += FLOOD;
	first = collect(kind, fds, ok, FLOOD, 3000);
	peak = bpt_fd_count_below(c.pid, LIMIT);
	BPT_CHECK(first > 0 && first < FLOOD, "%s %s: %d of %d connections answered under RLIMIT_NOFILE %d", what,
		  mode_text, first, FLOOD, LIMIT);
	/* It accepted until the limit, not fewer (fds 0..LIMIT-1 all in use, give or take a transient one). */
	BPT_CHECK(peak >= LIMIT - 2, "%s: only %d of %d descriptors in use when it stopped accepting", what, peak,
		  LIMIT);
	BPT_CHECK(bpt_file_has(c.log, "cannot accept new connections: accept4: Too many open files"),
		  "%s %s: no clear error line in its log (%s)", what, mode_text, c.log);
	/* The ones it has are served. */
	for (int i = 0; i < FLOOD; i++)
		if (ok[i] && kind == RR)
			rr_serve_check(fds[i]);
	if (kind == TARGET)
		host_io(&h, "during the flood");

	/* Make room: the waiting connections get in. */
	for (int i = 0; i < FLOOD && freed < FREED; i++)
		if (ok[i]) {
			close(fds[i]);
			fds[i] = -1;
			freed++;
		}
	second = collect(kind, fds, ok, FLOOD, 3000) - (first - freed);
	BPT_CHECK(second >= FREED / 2, "%s %s: only %d waiting connections got in after %d descriptors freed up",
		  what, mode_text, second, FREED);
	BPT_CHECK(bpt_file_has(c.log, "accepting new connections again"), "%s: no line saying it accepts again",
		  what);
	for (int i = 0; i < FLOOD; i++)
		if (fds[i] >= 0 && ok[i] && kind == RR)
			rr_serve_check(fds[i]);
	if (kind == TARGET)
		host_io(&h, "after descriptors freed up");

	/* Everyone leaves: every descriptor comes back. */
	for (int i = 0; i < FLOOD; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	{
		int after = bpt_fd_settle(c.pid, kind == TARGET ? c.base_fds + 2 : c.base_fds, 10000);

		BPT_CHECK(after <= (kind == TARGET ? c.base_fds + 2 : c.base_fds),
			  "%s: %d descriptors after every client left, %d before", what, after, c.base_fds);
	}
	if (kind == TARGET) {
		host_io(&h, "after the flood");
		host_down(&h);
	}
	child_down(&c);
	printf("ok   %-6s %-12s RLIMIT_NOFILE %d, %d connections: %d served at once (peak %d fds), %d more "
	       "after %d freed; a clear error line and a recovery line\n",
	       kind == RR ? "rr" : "target", mode_text, LIMIT, FLOOD, first, peak, second, FREED);
	unlink(c.log);
}

int main(void)
{
	struct bp_mode m;

	signal(SIGPIPE, SIG_IGN);
	BPT_CHECK(mkdtemp(dir), "mkdtemp");
	bpt_rmdir_at_exit(dir);
	exhaust(RR, "epoll:block");
	if (bpt_mode_usable("uring:block", &m))
		exhaust(RR, "uring:block");
	exhaust(TARGET, "epoll:block");
	rmdir(dir);
	printf("faults injected: %llu (connections past the descriptor limit)\n", (unsigned long long)faults);
	printf("PASS\n");
	return bpt_exit_status();
}
