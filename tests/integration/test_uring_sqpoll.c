/* SPDX-License-Identifier: MIT */
/*
 * As root, over the veth test bed (client loop on CPU 0 in side a, server loop on
 * CPU 1 in side b): request/response rounds on 15 flows, with
 *
 *   uring:sqpoll,spin  on one side, then on the other (the peer in epoll:block):
 *                      the loop reaps the completion ring in userspace and the SQ
 *                      thread submits, so after a warm-up that side makes fewer
 *                      than 0.01 syscalls per transaction (bp_loop_counters).
 *                      Its SQ thread is created before the loop thread is pinned,
 *                      so it may run on the other CPU: an SQ thread inherits its
 *                      creator's affinity, and two threads spinning on one CPU
 *                      only take turns;
 *   uring:sqpoll,spin,cpu=1  on the client (pinned to CPU 0): its SQ thread is
 *                      allowed exactly CPU 1 (IORING_SETUP_SQ_AFF), so the loop and
 *                      its SQ thread never share a CPU, and the syscall bound holds;
 *   uring:sqpoll       on both sides: the loop sleeps in io_uring_enter while the
 *                      SQ thread works: bp_loop_kthreads names that thread
 *                      ("sqpoll"), and its CPU time (bp_thread_cpu_ns) is well
 *                      above the loop thread's own over the same rounds.
 *
 * Not root: skipped with the reason. Usage: integ_test_uring_sqpoll
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include "tools/bed/testbed.h"

#include "bpt_testbed.h"
#include "bptest.h"

#define FLOWS 15
#define MSG 32
#define WARMUP_ROUNDS 100   /* per flow */
#define MEASURE_ROUNDS 2000 /* per flow */
/* uring:sqpoll on both sides: two SQ threads spin beside two loops on 2 CPUs, slowly */
#define SQPOLL_ROUNDS 200
#define DEADLINE_NS (60ull * 1000000000ull)

static struct bp_testbed tb;

/* ---- server: echo ---- */

struct server {
	struct sockaddr_in addr;
	struct bp_listener *l;
	_Atomic uint64_t syscalls_at_mark;  /* set on the loop's thread when asked */
	atomic_int mark;                    /* 1: take the mark on the next echo */
	_Atomic uint64_t transactions;
	uint64_t end_syscalls, end_tx;
};

static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct bp_loop *loop = bp_conn_loop(c);
	struct server *s = bp_loop_data(loop);

	BPT_CHECK(bp_conn_send(c, data, len) == 0, "echo: %s", bp_last_error());
	if (atomic_exchange(&s->mark, 0))
		atomic_store(&s->syscalls_at_mark, bp_loop_counters(loop)->syscalls);
	atomic_fetch_add(&s->transactions, len / MSG);
	return len - len % MSG;
}

static void echo_close(struct bp_conn *c, int err, const char *sc)
{
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	BPT_CHECK(bp_conn_adopt(bp_listener_loop(l), fd, &echo_ops, NULL, NULL) == 0, "adopt: %s",
		  bp_last_error());
}

static int server_setup(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;
	int ret = bp_testbed_enter(&tb, 1);

	/* pinned only now: an SQ thread made by the loop stays free to run elsewhere */
	if (!ret)
		ret = bp_pin_thread(1);
	if (ret)
		return ret;
	bp_loop_set_data(loop, s);
	return bp_listener_create(loop, (struct sockaddr *)&s->addr, sizeof(s->addr), on_accept, s, &s->l);
}

static void server_end(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;

	s->end_syscalls = bp_loop_counters(loop)->syscalls;
	s->end_tx = atomic_load(&s->transactions);
}

/* ---- client: 15 flows of rounds ---- */

struct client {
	struct bp_conn *conns[FLOWS];
	uint8_t msg[MSG];
	uint64_t rounds;      /* all flows */
	size_t got[FLOWS];
	int up;
};

static size_t client_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct client *cl = bp_loop_data(bp_conn_loop(c));
	size_t *got = bp_conn_data(c);

	*got += len;
	while (*got >= MSG) {
		*got -= MSG;
		cl->rounds++;
		BPT_CHECK(bp_conn_send(c, cl->msg, MSG) == 0, "send: %s", bp_last_error());
	}
	return len;
}

static void client_connect(struct bp_conn *c)
{
	struct client *cl = bp_loop_data(bp_conn_loop(c));

	cl->up++;
	BPT_CHECK(bp_conn_send(c, cl->msg, MSG) == 0, "send: %s", bp_last_error());
}

static void client_close(struct bp_conn *c, int err, const char *sc)
{
	BPT_CHECK(0, "client conn closed: %s: %s", sc, strerror(-err));
}

static const struct bp_conn_ops client_ops = {
	.on_recv = client_recv, .on_connect = client_connect, .on_close = client_close,
};

static void run_rounds(struct bp_loop *loop, struct client *cl, uint64_t until, const char *text)
{
	uint64_t start = bp_now_ns();

	while (cl->rounds < until) {
		BPT_CHECK(bp_loop_run_once(loop, 100000) >= 0, "%s: client loop: %s", text, bp_last_error());
		BPT_CHECK(bp_now_ns() - start < DEADLINE_NS, "%s: stuck after %llu rounds", text,
			  (unsigned long long)cl->rounds);
	}
}

/* The loop's SQPOLL thread, and its CPU time now. */
static int sq_thread(struct bp_loop *loop, uint64_t *cpu_ns)
{
	struct bp_loop_kthread kt[8];
	int n = bp_loop_kthreads(loop, kt, 8);

	BPT_CHECK(n >= 1, "bp_loop_kthreads: %d (%s)", n, n < 0 ? bp_last_error() : "none");
	BPT_CHECK(!strcmp(kt[0].role, "sqpoll"), "first kernel thread is '%s', want sqpoll", kt[0].role);
	BPT_CHECK(bp_thread_cpu_ns(kt[0].tid, cpu_ns) == 0, "cpu of thread %d: %s", kt[0].tid, bp_last_error());
	return kt[0].tid;
}

/* The SQ thread of a mode with cpu=N may run on CPU N and nowhere else. */
static void check_sq_affinity(int tid, int cpu, const char *text)
{
	cpu_set_t set;

	BPT_CHECK(sched_getaffinity(tid, sizeof(set), &set) == 0, "sched_getaffinity(%d): %s", tid,
		  strerror(errno));
	BPT_CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set),
		  "%s: SQ thread %d may run on %d CPUs%s, want only CPU %d", text, tid, CPU_COUNT(&set),
		  CPU_ISSET(cpu, &set) ? " including it" : ", not including it", cpu);
}

static struct bp_mode mode_of(const char *text)
{
	struct bp_mode m;

	BPT_CHECK(bpt_mode_usable(text, &m), "%s is not usable here", text);
	return m;
}

static bool is_sqpoll(const struct bp_mode *m)
{
	return m->policy == BP_POLICY_SQPOLL;
}

/*
 * measure rounds per flow with the client in ctext and the server in stext, after a
 * warm-up; checks the sqpoll side(s).
 */
static void run_pair(const char *ctext, const char *stext, int measure)
{
	struct bp_mode cm = mode_of(ctext), sm = mode_of(stext);
	struct server s = { 0 };
	struct client cl = { 0 };
	size_t got[FLOWS] = { 0 };
	struct bp_loop_thread *st;
	struct bp_loop *cloop;
	uint64_t c0, c1, srv0, tx0, sq0 = 0, sq1 = 0, me0 = 0, me1 = 0;
	int home, sq_tid = 0;
	double tx, cli, srv;

	s.addr.sin_family = AF_INET;
	s.addr.sin_port = htons(7011);
	BPT_CHECK(inet_pton(AF_INET, tb.addr[1], &s.addr.sin_addr) == 1, "addr");
	BPT_CHECK(bp_loop_thread_start(&st, &sm, -1, server_setup, &s) == 0, "%s: server: %s", stext,
		  bp_last_error());

	BPT_CHECK(bp_netns_save(&home) == 0, "save");
	BPT_CHECK(bp_testbed_enter(&tb, 0) == 0, "enter a: %s", bp_last_error());
	BPT_CHECK(bp_loop_create(&cloop, &cm) == 0, "%s: client loop: %s", ctext, bp_last_error());
	BPT_CHECK(bp_pin_thread(0) == 0, "pin: %s", bp_last_error());
	bp_loop_set_data(cloop, &cl);
	for (int i = 0; i < FLOWS; i++)
		BPT_CHECK(bp_conn_connect(cloop, (struct sockaddr *)&s.addr, sizeof(s.addr), SOCK_STREAM, &client_ops,
					  &got[i], &cl.conns[i]) == 0, "connect: %s", bp_last_error());

	run_rounds(cloop, &cl, (uint64_t)FLOWS * WARMUP_ROUNDS, ctext);
	/* measure from here: the server marks its count on its next echo */
	atomic_store(&s.mark, 1);
	c0 = bp_loop_counters(cloop)->syscalls;
	tx0 = cl.rounds;
	if (is_sqpoll(&cm)) {
		sq_tid = sq_thread(cloop, &sq0);
		if (cm.keys_set & BP_KEY_CPU)
			check_sq_affinity(sq_tid, (int)cm.sq_cpu, ctext);
		BPT_CHECK(bp_thread_cpu_ns(gettid(), &me0) == 0, "own cpu: %s", bp_last_error());
	}
	run_rounds(cloop, &cl, tx0 + (uint64_t)FLOWS * (uint64_t)measure, ctext);
	c1 = bp_loop_counters(cloop)->syscalls;
	if (sq_tid) {
		BPT_CHECK(bp_thread_cpu_ns(sq_tid, &sq1) == 0, "cpu of SQ thread: %s", bp_last_error());
		BPT_CHECK(bp_thread_cpu_ns(gettid(), &me1) == 0, "own cpu: %s", bp_last_error());
	}
	srv0 = atomic_load(&s.syscalls_at_mark);
	for (int i = 0; i < FLOWS; i++)
		bp_conn_close(cl.conns[i]);
	bp_loop_destroy(cloop);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore");
	bp_loop_thread_join(st, server_end, &s);

	tx = (double)(cl.rounds - tx0);
	cli = (double)(c1 - c0) / tx;
	/* the server echoed a few rounds more than we counted before stopping: a bound */
	srv = (double)(s.end_syscalls - srv0) / tx;
	printf("ok   client %-18s server %-18s %llu transactions: syscalls per transaction client %.4f server %.4f",
	       ctext, stext, (unsigned long long)tx, cli, srv);
	if (sq_tid)
		printf("; client CPU: SQ thread %.1f ms, loop thread %.1f ms", (sq1 - sq0) / 1e6, (me1 - me0) / 1e6);
	printf("\n");
	if (is_sqpoll(&cm) && cm.spin)
		BPT_CHECK(cli < 0.01, "client %s: %.4f syscalls per transaction, want < 0.01", ctext, cli);
	if (is_sqpoll(&sm) && sm.spin)
		BPT_CHECK(srv < 0.01, "server %s: %.4f syscalls per transaction, want < 0.01", stext, srv);
	if (is_sqpoll(&cm) && !cm.spin) {
		/* the loop sleeps, the SQ thread does the submitting and the task work */
		BPT_CHECK(sq1 - sq0 > 2 * (me1 - me0), "%s: SQ thread %.1f ms is not well above the loop's %.1f ms",
			  ctext, (sq1 - sq0) / 1e6, (me1 - me0) / 1e6);
	}
}

int main(void)
{
	char name[32];

	bpt_require_root("the veth test bed needs network namespaces");
	bpt_testbed_name("tq", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "testbed: %s", bp_last_error());
	run_pair("uring:sqpoll,spin", "epoll:block", MEASURE_ROUNDS);
	run_pair("epoll:block", "uring:sqpoll,spin", MEASURE_ROUNDS);
	run_pair("uring:sqpoll,spin,cpu=1", "epoll:block", MEASURE_ROUNDS);
	run_pair("uring:sqpoll", "uring:sqpoll", SQPOLL_ROUNDS);
	BPT_CHECK(bp_testbed_down(&tb) == 0, "testbed down: %s", bp_last_error());
	return 0;
}
