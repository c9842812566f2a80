/* SPDX-License-Identifier: MIT */
/*
 * Load on one machine, over loopback:
 *
 *  1. N concurrent connections to the rr server (a child process, 2 loop
 *     threads). Client threads open them (at most 256 handshakes pending per
 *     thread), say hello on every one, and wait until every one is acked: the
 *     server then holds all N at once (counted in /proc/PID/fd). Then every
 *     connection does K request/response transactions at once; each must get
 *     exactly its K responses. Afterwards the server's descriptors come back.
 *  2. M I/O queues to the NVMe/TCP target, spread over several controllers of
 *     our initiator, all connected at once (the target's counters show them
 *     live); then every queue writes blocks stamped with its id, round and LBA
 *     to its own region and reads them back, several rounds at queue depth 4.
 *
 * The normal suite runs N = 1,000 and M = 32; `make soak` runs N = 10,000 and
 * M = 256. RLIMIT_NOFILE is raised for the test (root may raise the hard limit).
 * Bounded: every phase has a deadline. Prints connections held and blocks verified.
 * Usage: [--conns N] [--queues M] [--mode MODE (the servers'; default epoll:block)]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_faults.h"
#include "bptest.h"
#include "base/bytes.h"
#include "tools/rr/rr.h"

#define CLIENT_THREADS 4
#define PENDING_CONNECTS 256
#define K_TX 3
#define Q_SIZE 64
#define R_SIZE 64
#define NQN "nqn.2024-01.io.busypoll:load"

static int n_conns = 1000, n_queues = 32;
static const char *mode_text = "epoll:block"; /* the servers' mode (the clients stay on epoll:block) */
static struct bp_mode server_mode;
static double deadline_s;

/* ---- 1. rr: the server in a child ---- */

static pid_t rr_child(uint16_t *port)
{
	int p[2];
	pid_t pid, parent = getpid();

	BPT_CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe");
	pid = fork();
	BPT_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		bpt_die_with_parent(parent);
		struct rr_opts o;
		struct rr_server *s;
		char err[256];
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		rr_opts_defaults(&o);
		o.server = true;
		o.port = 0;
		o.threads = 2;
		o.mode = server_mode;
		snprintf(o.mode_text, sizeof(o.mode_text), "%s", mode_text);
		snprintf(o.host, sizeof(o.host), "127.0.0.1");
		if (rr_server_start(&o, &s, err, sizeof(err))) {
			fprintf(stderr, "rr server: %s\n", err);
			_exit(3);
		}
		*port = rr_server_port(s);
		if (write(p[1], port, sizeof(*port)) != sizeof(*port))
			_exit(3);
		sigwait(&set, &sig);
		rr_server_stop(s);
		_exit(0);
	}
	close(p[1]);
	bpt_reap_at_exit(pid);
	BPT_CHECK(read(p[0], port, sizeof(*port)) == sizeof(*port), "the rr server child did not start");
	close(p[0]);
	return pid;
}

enum cstate { C_IDLE, C_CONNECTING, C_HELLO, C_HELD, C_TX, C_DONE };

struct cconn {
	int fd;
	enum cstate st;
	uint32_t got;         /* bytes of the current ack/response */
	int responses;
	uint8_t ack[BP_RR_ACK_LEN];
};

struct cthread {
	pthread_t th;
	int idx, n;
	struct cconn *c;
	int ep;
	int pending, held, done;
	char err[256];
};

static uint16_t rr_port;
static atomic_int threads_held, go_tx, threads_failed;
static uint64_t t_end_ns;

static void cfail(struct cthread *t, int i, const char *what, int err)
{
	if (!t->err[0])
		snprintf(t->err, sizeof(t->err), "connection %d (thread %d): %s: %s", i, t->idx, what,
			 err ? strerror(err) : "closed by the server");
	atomic_store(&threads_failed, 1);
}

static void start_connects(struct cthread *t, int *next)
{
	while (*next < t->n && t->pending < PENDING_CONNECTS) {
		struct cconn *c = &t->c[*next];
		struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)*next };
		int fd = bpt_connect_nb(rr_port);

		if (fd < 0) {
			cfail(t, *next, "socket/connect", -fd);
			return;
		}
		c->fd = fd;
		c->st = C_CONNECTING;
		BPT_CHECK(epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl: %s", strerror(errno));
		t->pending++;
		(*next)++;
	}
}

static void send_request(struct cthread *t, int i)
{
	uint8_t req[Q_SIZE] = { 0 };
	struct cconn *c = &t->c[i];

	c->got = 0;
	if (send(c->fd, req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		cfail(t, i, "send request", errno);
}

static void on_event(struct cthread *t, int i, uint32_t events)
{
	struct cconn *c = &t->c[i];
	uint8_t buf[256];

	if (c->st == C_CONNECTING) {
		int soerr = 0;
		socklen_t len = sizeof(soerr);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		struct bp_rr_hello h = { .version = BP_RR_VERSION, .kind = BP_RR_KIND_DATA, .request_size = Q_SIZE,
					 .response_size = R_SIZE, .run_id = 0x10ad0000ull + (uint64_t)t->idx,
					 .flow_id = (uint32_t)i };

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr || !(events & EPOLLOUT)) {
			cfail(t, i, "connect", soerr);
			return;
		}
		t->pending--;
		bp_rr_hello_encode(&h, buf);
		if (send(c->fd, buf, BP_RR_HELLO_LEN, MSG_NOSIGNAL) != BP_RR_HELLO_LEN) {
			cfail(t, i, "send hello", errno);
			return;
		}
		c->st = C_HELLO;
		c->got = 0;
		epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &ev);
		return;
	}
	for (;;) {
		uint32_t want = c->st == C_HELLO ? BP_RR_ACK_LEN - c->got : R_SIZE - c->got;
		ssize_t n;

		if (c->st != C_HELLO && c->st != C_TX) {
			/* Nothing is owed to a held or finished connection: only a close can come. */
			n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n >= 0)
				cfail(t, i, n ? "unexpected bytes" : "recv", 0);
			else if (errno != EAGAIN)
				cfail(t, i, "recv", errno);
			return;
		}
		n = recv(c->fd, c->st == C_HELLO ? c->ack + c->got : buf, want, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			cfail(t, i, "recv", n < 0 ? errno : 0);
			return;
		}
		c->got += (uint32_t)n;
		if (c->st == C_HELLO && c->got == BP_RR_ACK_LEN) {
			struct bp_rr_ack a;

			if (bp_rr_ack_decode(c->ack, &a) || a.status != BP_RR_OK) {
				cfail(t, i, "hello refused", 0);
				return;
			}
			c->st = C_HELD;
			t->held++;
		} else if (c->st == C_TX && c->got == R_SIZE) {
			if (++c->responses == K_TX) {
				c->st = C_DONE;
				t->done++;
			} else {
				send_request(t, i);
			}
		}
	}
}

static void *client_thread(void *arg)
{
	struct cthread *t = arg;
	struct epoll_event evs[256];
	int next = 0;
	bool released = false, counted = false;

	t->ep = epoll_create1(EPOLL_CLOEXEC);
	BPT_CHECK(t->ep >= 0, "epoll_create1");
	while (bpt_now_ns() < t_end_ns && !atomic_load(&threads_failed)) {
		int n;

		start_connects(t, &next);
		n = epoll_wait(t->ep, evs, 256, 10);
		for (int k = 0; k < n; k++)
			on_event(t, (int)evs[k].data.u32, evs[k].events);
		if (t->held == t->n && !counted) {
			counted = true;
			atomic_fetch_add(&threads_held, 1);
		}
		if (counted && !released && atomic_load(&go_tx)) {
			released = true;
			for (int i = 0; i < t->n; i++) {
				t->c[i].st = C_TX;
				send_request(t, i);
			}
		}
		if (t->done == t->n)
			break;
	}
	close(t->ep);
	return NULL;
}

static void rr_load(void)
{
	struct cthread th[CLIENT_THREADS];
	uint64_t t0 = bpt_now_ns(), t_held;
	int st, base, held_fds, responses = 0, done = 0;
	pid_t pid;

	pid = rr_child(&rr_port);
	base = bpt_fd_count(pid);
	t_end_ns = t0 + (uint64_t)(deadline_s * 1e9);
	for (int i = 0; i < CLIENT_THREADS; i++) {
		int lo = n_conns * i / CLIENT_THREADS, hi = n_conns * (i + 1) / CLIENT_THREADS;

		th[i] = (struct cthread){ .idx = i, .n = hi - lo };
		th[i].c = calloc((size_t)th[i].n, sizeof(struct cconn));
		BPT_CHECK(th[i].c, "oom");
		BPT_CHECK(pthread_create(&th[i].th, NULL, client_thread, &th[i]) == 0, "pthread_create");
	}
	/* Every connection acked: the server holds them all at once. */
	while (atomic_load(&threads_held) < CLIENT_THREADS && !atomic_load(&threads_failed) && bpt_now_ns() < t_end_ns)
		bpt_sleep_ms(5);
	held_fds = bpt_fd_count(pid) - base;
	t_held = bpt_now_ns();
	atomic_store(&go_tx, 1);
	for (int i = 0; i < CLIENT_THREADS; i++) {
		pthread_join(th[i].th, NULL);
		BPT_CHECK(!th[i].err[0], "%s", th[i].err);
	}
	BPT_CHECK(atomic_load(&threads_held) == CLIENT_THREADS, "only some of %d connections were acked within %.0f s",
		  n_conns, deadline_s);
	BPT_CHECK(held_fds >= n_conns, "the server held %d descriptors over its baseline for %d connections", held_fds,
		  n_conns);
	for (int i = 0; i < CLIENT_THREADS; i++)
		for (int k = 0; k < th[i].n; k++) {
			responses += th[i].c[k].responses;
			done += th[i].c[k].st == C_DONE;
		}
	BPT_CHECK(done == n_conns && responses == n_conns * K_TX,
		  "%d of %d connections got all %d responses (%d responses in all) within %.0f s", done, n_conns, K_TX,
		  responses, deadline_s);
	printf("ok   rr (%s): %d connections held at once by the server (+%d fds), connected and acked in %.2f s; "
	       "each got its %d responses (%d in all) in %.2f s\n",
	       mode_text, n_conns, held_fds, (double)(t_held - t0) / 1e9, K_TX, responses, (double)(bpt_now_ns() - t_held) / 1e9);
	for (int i = 0; i < CLIENT_THREADS; i++) {
		for (int k = 0; k < th[i].n; k++)
			close(th[i].c[k].fd);
		free(th[i].c);
	}
	{
		int after = bpt_fd_settle(pid, base, 20000);

		BPT_CHECK(after == base, "the rr server has %d descriptors after every client left, %d before", after,
			  base);
	}
	kill(pid, SIGTERM);
	BPT_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	bpt_reaped(pid);
	BPT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rr server child: 0x%x",
		  st);
	printf("connections held: %d\n", n_conns);
}

/* ---- 2. the target: M I/O queues over several controllers ---- */

#define QD 4
#define ROUNDS 4
#define BLOCKS_PER_IO 8       /* 4 KiB */

struct qjob {
	struct bp_nvmeh_queue *q;
	uint32_t id;
	uint64_t first_lba, nlba;
	int round, next, outstanding, verified, errors;
	bool writing;
	uint8_t buf[QD][BLOCKS_PER_IO * 512];
};

struct slot {
	struct qjob *j;
	int k;
	uint64_t lba;
};

static struct bp_loop *loop;
static uint64_t blocks_verified;
static int jobs_done;

static void fill_block(uint8_t *b, uint32_t qid, int round, uint64_t lba)
{
	for (int i = 0; i < 512; i += 16) {
		bp_put_le32(b + i, qid);
		bp_put_le32(b + i + 4, (uint32_t)round);
		bp_put_le64(b + i + 8, lba);
	}
}

static void job_step(struct qjob *j);

static void job_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct slot *s = arg;
	struct qjob *j = s->j;

	j->outstanding--;
	if (err || cqe->status) {
		j->errors++;
	} else if (!j->writing) {
		for (int b = 0; b < BLOCKS_PER_IO; b++) {
			uint8_t want[512];

			fill_block(want, j->id, j->round, s->lba + (uint64_t)b);
			if (memcmp(j->buf[s->k] + b * 512, want, 512))
				j->errors++;
			else
				j->verified++;
		}
	}
	free(s);
	job_step(j);
}

/* Fill the queue to QD with this phase's I/O; at the end of a phase, the next. */
static void job_step(struct qjob *j)
{
	uint64_t ios = j->nlba / BLOCKS_PER_IO;

	while (j->outstanding < QD && (uint64_t)j->next < ios && !j->errors) {
		struct slot *s = malloc(sizeof(*s));
		uint8_t sqe[64];
		int k = j->next % QD;

		BPT_CHECK(s, "oom");
		*s = (struct slot){ .j = j, .k = k, .lba = j->first_lba + (uint64_t)j->next * BLOCKS_PER_IO };
		/* Each slot's buffer belongs to one command at a time: QD slots, QD outstanding. */
		if (j->writing)
			for (int b = 0; b < BLOCKS_PER_IO; b++)
				fill_block(j->buf[k] + b * 512, j->id, j->round, s->lba + (uint64_t)b);
		bp_nvmeh_sqe_rw(sqe, j->writing, 1, s->lba, BLOCKS_PER_IO);
		if (bp_nvmeh_submit(j->q, sqe, j->buf[k], BLOCKS_PER_IO * 512, j->writing, job_done, s)) {
			free(s);
			j->errors++;
			break;
		}
		j->outstanding++;
		j->next++;
	}
	if (j->outstanding || (uint64_t)j->next < ios)
		return;
	if (j->errors) {
		jobs_done++;
		return;
	}
	j->next = 0;
	if (j->writing) {
		j->writing = false; /* read this round back */
	} else if (++j->round < ROUNDS) {
		j->writing = true;
	} else {
		jobs_done++;
		return;
	}
	job_step(j);
}

static void target_load(void)
{
	struct bp_nvmet_cfg cfg;
	struct bp_nvmet *t;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct bp_mode m;
	char err[160];
	int nctrl = n_queues > 128 ? (n_queues + 63) / 64 : 2, per = n_queues / nctrl, base, live = 0, errors = 0;
	struct bp_nvmeh_ctrl **ctrls = calloc((size_t)nctrl, sizeof(*ctrls));
	struct qjob **jobs = calloc((size_t)n_queues, sizeof(*jobs));
	static struct bp_nvmet_queue_stats st[2048];
	uint64_t t0, nblocks = 256ull << 20 >> 9;
	size_t n = 0;

	BPT_CHECK(ctrls && jobs && per * nctrl == n_queues && per <= 64,
		  "--queues %d: a multiple of the controllers (%d), at most 64 each", n_queues, nctrl);
	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
	BPT_CHECK(bp_nvmet_ns_parse("ram:256M", &cfg.ns[0], err, sizeof(err)) == 0, "%s", err);
	cfg.n_ns = 1;
	cfg.threads = 2;
	cfg.queue_depth = 32;
	cfg.mode = server_mode;
	cfg.max_conns = (uint32_t)(n_queues + nctrl + 16);
	cfg.log_level = BP_NVMET_LOG_ERROR;
	BPT_CHECK(bp_nvmet_start(&cfg, &t) == 0, "target: %s", bp_last_error());
	a.sin_port = htons(bp_nvmet_port(t));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "loop: %s", bp_last_error());
	base = bpt_fd_count(0);

	t0 = bpt_now_ns();
	for (int c = 0; c < nctrl; c++) {
		struct bp_nvmeh_opts o;

		bp_nvmeh_opts_defaults(&o);
		snprintf(o.subnqn, sizeof(o.subnqn), NQN);
		o.io_queue_size = 32;
		BPT_CHECK(bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&a, sizeof(a), &o, (uint16_t)per, &ctrls[c]) == 0,
			  "controller %d: %s", c, bp_last_error());
		BPT_CHECK(ctrls[c]->nr_io_queues == per, "controller %d: %u I/O queues granted, %d asked", c,
			  ctrls[c]->nr_io_queues, per);
		for (int q = 0; q < per; q++) {
			struct qjob *j = calloc(1, sizeof(*j));
			int id = c * per + q;

			BPT_CHECK(j, "oom");
			BPT_CHECK(bp_nvmeh_ctrl_io_queue(ctrls[c], loop, (uint16_t)(q + 1), &j->q) == 0,
				  "controller %d I/O queue %d: %s", c, q + 1, bp_last_error());
			j->id = (uint32_t)id;
			j->nlba = nblocks / (uint64_t)n_queues / (QD * BLOCKS_PER_IO) * (QD * BLOCKS_PER_IO);
			if (j->nlba > 1024)
				j->nlba = 1024;
			j->first_lba = (uint64_t)id * (nblocks / (uint64_t)n_queues);
			j->writing = true;
			jobs[id] = j;
		}
	}
	BPT_CHECK(bp_nvmet_snapshot(t, st, 2048, &n) == 0, "snapshot");
	for (size_t i = 0; i < n; i++)
		live += st[i].live && st[i].qid;
	BPT_CHECK(live == n_queues, "the target shows %d live I/O queues, %d connected", live, n_queues);
	printf("ok   target: %d I/O queues (+%d admin) on %d controllers live at once, connected in %.2f s\n", n_queues,
	       nctrl, nctrl, (double)(bpt_now_ns() - t0) / 1e9);

	t0 = bpt_now_ns();
	for (int i = 0; i < n_queues; i++)
		job_step(jobs[i]);
	while (jobs_done < n_queues && bpt_now_ns() - t0 < (uint64_t)(deadline_s * 1e9))
		bp_loop_run_once(loop, 100000);
	BPT_CHECK(jobs_done == n_queues, "%d of %d queues finished their verified I/O within %.0f s", jobs_done,
		  n_queues, deadline_s);
	for (int i = 0; i < n_queues; i++) {
		BPT_CHECK(!jobs[i]->errors, "queue %d: %d failed or differing blocks", i, jobs[i]->errors);
		BPT_CHECK((uint64_t)jobs[i]->verified == jobs[i]->nlba * ROUNDS, "queue %d: %d blocks verified", i,
			  jobs[i]->verified);
		blocks_verified += (uint64_t)jobs[i]->verified;
		errors += jobs[i]->errors;
	}
	printf("ok   target: every queue wrote and read back %d rounds of its region: %llu blocks verified in %.2f s\n",
	       ROUNDS, (unsigned long long)blocks_verified, (double)(bpt_now_ns() - t0) / 1e9);

	for (int i = 0; i < n_queues; i++) {
		bp_nvmeh_queue_close(jobs[i]->q);
		free(jobs[i]);
	}
	for (int c = 0; c < nctrl; c++)
		bp_nvmeh_ctrl_disconnect(ctrls[c]);
	{
		int after = bpt_fd_settle(0, base, 10000);

		BPT_CHECK(after == base, "%d descriptors after every queue closed, %d before", after, base);
	}
	bp_loop_destroy(loop);
	bp_nvmet_stop(t);
	free(jobs);
	free(ctrls);
	printf("queues: %d, blocks verified: %llu\n", n_queues, (unsigned long long)blocks_verified);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--conns") && i + 1 < argc)
			n_conns = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--queues") && i + 1 < argc)
			n_queues = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode_text = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--conns N] [--queues M] [--mode MODE]\n", argv[0]);
			return 2;
		}
	}
	BPT_CHECK(n_conns >= CLIENT_THREADS && n_queues >= 2, "--conns at least %d, --queues at least 2",
		  CLIENT_THREADS);
	if (!bpt_mode_usable(mode_text, &server_mode))
		return BPT_SKIP;
	deadline_s = 30 + n_conns / 500.0;
	/* Both ends of every connection are on this machine: the client here, the server in a child. */
	if (!bpt_raise_nofile((rlim_t)n_conns + 256)) {
		printf("SKIP: RLIMIT_NOFILE cannot be raised to %d here (hard limit; run as root)\n", n_conns + 256);
		return BPT_SKIP;
	}
	rr_load();
	target_load();
	printf("PASS\n");
	return bpt_exit_status();
}
