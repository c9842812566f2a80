/* SPDX-License-Identifier: MIT */
/*
 * Durability of busypoll target's file namespace across SIGKILL.
 *
 * The target runs as the command a user runs (`busypoll target --ns file:PATH`, a
 * child process) and our initiator drives it. Each cycle:
 *
 *   1. restart the target on the same file and read every block back: each
 *      512-byte block carries its LBA, a generation and bytes derived from both,
 *      and must hold a generation the test allows for it (see below) with
 *      exactly that content;
 *   2. write a random half of the namespace with a new generation and Flush;
 *   3. keep writing random extents with the next generation at queue depth 64
 *      over two I/O queues, and SIGKILL the target while those writes are in
 *      flight.
 *
 * A flushed block must come back with the generation it was flushed with, or a
 * later one that was written after the flush; never older, never torn, never at
 * another LBA. Writes neither flushed nor acknowledged may or may not be there.
 * (SIGKILL keeps the page cache, so this proves what the target acknowledged and
 * flushed reached the file; a power cut is another matter.) The figures printed:
 * blocks verified after SIGKILL, and of them the blocks that were flushed.
 *
 * Usage: [--cycles N] [--size MIB]  (defaults 5 and 32; make soak: 20 and 256)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>

#include "bpt_faults.h"
#include "bptest.h"
#include "base/bytes.h"

#define NQN "nqn.2024-01.io.busypoll:durability"
#define BS 512u
#define EXTENT 128u              /* blocks per command: 64 KiB */
#define QD 32                    /* per queue */
#define NQ 2
#define MAGIC 0x4b4c4252554450ull /* "PDURBLK" */

static const char *bp_path;
static char dir[] = "/tmp/bpt-durable-XXXXXX";
static char img[300], log_path[300];
static uint64_t nblocks;
static uint32_t *lo_gen, *hi_gen;  /* a block may hold any generation in [lo, hi]; 0 = zeros */
static bool *flushed;              /* its lo generation was flushed */
static struct bp_loop *loop;
static uint64_t verified, verified_flushed, unflushed_new, unflushed_total;
static uint64_t first_read;        /* blocks of the first read: a fresh file, before any SIGKILL */

/* ---- the stamp ---- */

static void stamp(uint8_t *b, uint64_t lba, uint32_t gen)
{
	uint64_t x = lba * 0x9e3779b97f4a7c15ull ^ (uint64_t)gen * 0xbf58476d1ce4e5b9ull ^ 0x94d049bb133111ebull;

	bp_put_le64(b, MAGIC);
	bp_put_le64(b + 8, lba);
	bp_put_le32(b + 16, gen);
	bp_put_le32(b + 20, ~gen);
	for (size_t i = 24; i < BS; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bp_put_le64(b + i, x);
	}
}

/* The generation b holds, or -1 if it is not a well-formed block for this LBA. */
static int64_t stamped_gen(const uint8_t *b, uint64_t lba)
{
	static uint8_t want[BS];
	uint32_t gen;

	for (size_t i = 0; i < BS; i++)
		if (b[i])
			goto stamped;
	return 0; /* never written */
stamped:
	if (bp_get_le64(b) != MAGIC || bp_get_le64(b + 8) != lba)
		return -1;
	gen = bp_get_le32(b + 16);
	if (bp_get_le32(b + 20) != ~gen)
		return -1;
	stamp(want, lba, gen);
	return memcmp(b, want, BS) ? -1 : (int64_t)gen;
}

/* ---- the target, as a child process ---- */

static pid_t target_start(uint16_t *port, int cycle)
{
	char ns[400], line[512];
	pid_t pid;
	FILE *f;

	snprintf(log_path, sizeof(log_path), "%s/target-%d.log", dir, cycle);
	snprintf(ns, sizeof(ns), "file:%s,size=%lluM", img, (unsigned long long)(nblocks * BS >> 20));
	pid_t parent = getpid();

	pid = fork();
	BPT_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		bpt_die_with_parent(parent);
		int out = open("/dev/null", O_WRONLY), err = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execl(bp_path, bp_path, "target", "--listen", "127.0.0.1:0", "--nqn", NQN, "--ns", ns, "--threads",
		      "2", "--log-level", "warn", (char *)NULL);
		_exit(127);
	}
	bpt_reap_at_exit(pid);
	/* It says where it listens once it does. */
	for (int i = 0; i < 200; i++) {
		unsigned p = 0;

		bpt_sleep_ms(20);
		f = fopen(log_path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "busypoll target: listening on 127.0.0.1:%u,", &p) == 1)
				break;
		if (f)
			fclose(f);
		if (p) {
			*port = (uint16_t)p;
			return pid;
		}
		BPT_CHECK(waitpid(pid, NULL, WNOHANG) == 0, "busypoll target exited at start (see %s)", log_path);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	bpt_reaped(pid);
	BPT_CHECK(false, "busypoll target did not start listening (see %s)", log_path);
	return -1;
}

/* ---- I/O: up to QD commands per queue, each one extent ---- */

struct io {
	struct bp_nvmeh_queue *q;
	uint8_t buf[EXTENT * BS];
	uint64_t slba;
	bool busy, write;
	int err;              /* < 0: the queue failed; > 0: an NVMe status */
};

static struct io ios[NQ * QD];
static int inflight, failed, bad_status;

static void io_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct io *io = arg;

	io->busy = false;
	inflight--;
	if (err) {
		io->err = err;
		failed++;
		return;
	}
	io->err = cqe->status;
	if (cqe->status)
		bad_status++;
	if (!io->write) {
		for (uint32_t i = 0; i < EXTENT && io->slba + i < nblocks; i++) {
			uint64_t lba = io->slba + i;
			int64_t g = stamped_gen(io->buf + (size_t)i * BS, lba);

			BPT_CHECK(g >= 0, "LBA %llu: not the block written there (torn, misplaced or garbage)",
				  (unsigned long long)lba);
			BPT_CHECK((uint32_t)g >= lo_gen[lba] && (uint32_t)g <= hi_gen[lba],
				  "LBA %llu holds generation %lld; it was %s generation %u (and written up to %u)",
				  (unsigned long long)lba, (long long)g, flushed[lba] ? "flushed with" : "at",
				  lo_gen[lba], hi_gen[lba]);
			verified++;
			verified_flushed += flushed[lba];
			if (hi_gen[lba] > lo_gen[lba]) {
				unflushed_total++;
				unflushed_new += (uint32_t)g == hi_gen[lba];
			}
			/* What the file holds now is the new floor, as on disk. */
			lo_gen[lba] = hi_gen[lba] = (uint32_t)g;
		}
	}
}

static struct io *free_io(void)
{
	for (;;) {
		for (size_t i = 0; i < NQ * QD; i++)
			if (!ios[i].busy)
				return &ios[i];
		BPT_CHECK(bp_loop_run_once(loop, 1000000) >= 0, "loop: %s", bp_last_error());
	}
}

static void submit(struct bp_nvmeh_queue **qs, uint64_t slba, bool write, uint32_t gen)
{
	struct io *io = free_io();
	uint32_t nlb = (uint32_t)(nblocks - slba < EXTENT ? nblocks - slba : EXTENT);
	uint8_t sqe[64];
	int ret;

	io->q = qs[(io - ios) % NQ];
	io->slba = slba;
	io->write = write;
	io->err = 0;
	if (write)
		for (uint32_t i = 0; i < nlb; i++)
			stamp(io->buf + (size_t)i * BS, slba + i, gen);
	bp_nvmeh_sqe_rw(sqe, write, 1, slba, nlb);
	ret = bp_nvmeh_submit(io->q, sqe, io->buf, nlb * BS, write, io_done, io);
	BPT_CHECK(ret == 0, "submit: %d %s", ret, bp_last_error());
	io->busy = true;
	inflight++;
}

static void drain(void)
{
	uint64_t end = bpt_now_ns() + 30000000000ull;

	while (inflight && bpt_now_ns() < end)
		BPT_CHECK(bp_loop_run_once(loop, 100000) >= 0, "loop: %s", bp_last_error());
	BPT_CHECK(!inflight, "%d commands never completed", inflight);
}

/* ---- one cycle ---- */

static uint64_t rnd(void)
{
	uint64_t x;

	BPT_CHECK(getrandom(&x, sizeof(x), 0) == sizeof(x), "getrandom");
	return x;
}

static void cycle(int c, uint32_t gen)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_ctrl *ctrl;
	struct bp_nvmeh_queue *qs[NQ];
	uint64_t nextents = (nblocks + EXTENT - 1) / EXTENT, *order, before = verified, t0;
	uint16_t port;
	uint8_t sqe[64];
	pid_t pid = target_start(&port, c);
	int st, submitted_late = 0;

	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), NQN);
	o.timeout_ms = 20000;
	BPT_CHECK(bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&a, sizeof(a), &o, NQ, &ctrl) == 0,
		  "cycle %d: connect: %s (target log %s)", c, bp_last_error(), log_path);
	for (int i = 0; i < NQ; i++)
		BPT_CHECK(bp_nvmeh_ctrl_io_queue(ctrl, loop, (uint16_t)(i + 1), &qs[i]) == 0, "I/O queue: %s",
			  bp_last_error());

	/* 1. Everything back, after the previous cycle's SIGKILL. */
	failed = bad_status = 0;
	for (uint64_t e = 0; e < nextents; e++)
		submit(qs, e * EXTENT, false, 0);
	drain();
	BPT_CHECK(!failed && !bad_status, "cycle %d: reads failed (%d) or were refused (%d)", c, failed,
		  bad_status);
	if (c == 1)
		first_read = verified;

	/* 2. A random half with generation gen, then Flush. */
	order = malloc(nextents * sizeof(*order));
	BPT_CHECK(order, "oom");
	for (uint64_t e = 0; e < nextents; e++)
		order[e] = e;
	for (uint64_t e = nextents - 1; e > 0; e--) {
		uint64_t k = rnd() % (e + 1), x = order[e];

		order[e] = order[k];
		order[k] = x;
	}
	for (uint64_t i = 0; i < nextents / 2; i++)
		submit(qs, order[i] * EXTENT, true, gen);
	drain();
	BPT_CHECK(!failed && !bad_status, "cycle %d: writes failed (%d) or were refused (%d)", c, failed,
		  bad_status);
	bp_nvmeh_sqe_flush(sqe, 1);
	BPT_CHECK(bp_nvmeh_sync(qs[0], sqe, NULL, 0, false, NULL, 20000) == 0, "cycle %d: flush: %s", c,
		  bp_last_error());
	for (uint64_t i = 0; i < nextents / 2; i++)
		for (uint64_t b = order[i] * EXTENT; b < (order[i] + 1) * EXTENT && b < nblocks; b++) {
			lo_gen[b] = hi_gen[b] = gen;
			flushed[b] = true;
		}

	/* 3. Generation gen + 1 everywhere at random, and SIGKILL with writes in flight. */
	t0 = bpt_now_ns();
	while (bpt_now_ns() - t0 < 150000000ull) {
		uint64_t slba = (rnd() % nextents) * EXTENT;

		for (uint64_t b = slba; b < slba + EXTENT && b < nblocks; b++)
			hi_gen[b] = gen + 1;
		submit(qs, slba, true, gen + 1); /* waits for a free slot: the queues stay full */
		submitted_late++;
	}
	BPT_CHECK(inflight > 0, "no write in flight to be cut off");
	kill(pid, SIGKILL);
	BPT_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	bpt_reaped(pid);
	BPT_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "busypoll target did not die of SIGKILL (status 0x%x)", st);
	{
		int cut = inflight;

		drain(); /* the queues fail: every command comes back with an error */
		printf("ok   cycle %d: %llu blocks verified, %llu extents written and flushed (gen %u), SIGKILL with "
		       "%d of %d writes (gen %u) in flight\n",
		       c, (unsigned long long)(verified - before), (unsigned long long)(nextents / 2), gen, cut,
		       submitted_late, gen + 1);
	}
	for (int i = 0; i < NQ; i++)
		bp_nvmeh_queue_close(qs[i]);
	bp_nvmeh_ctrl_disconnect(ctrl); /* its admin queue failed with the target: just freed */
	free(order);
}

int main(int argc, char **argv)
{
	struct bp_mode m;
	int cycles = 5;
	uint64_t mib = 32, after_kill;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
			cycles = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			mib = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: %s [--cycles N] [--size MIB]\n", argv[0]);
			return 2;
		}
	}
	bp_path = getenv("BUSYPOLL");
	if (!bp_path || access(bp_path, X_OK)) {
		printf("SKIP: $BUSYPOLL is not an executable busypoll program\n");
		return BPT_SKIP;
	}
	BPT_CHECK(cycles >= 1 && mib >= 1, "--cycles and --size");
	BPT_CHECK(mkdtemp(dir), "mkdtemp");
	bpt_rmdir_at_exit(dir);
	snprintf(img, sizeof(img), "%s/ns.img", dir);
	nblocks = mib << 20 >> 9;
	lo_gen = calloc(nblocks, sizeof(*lo_gen));
	hi_gen = calloc(nblocks, sizeof(*hi_gen));
	flushed = calloc(nblocks, sizeof(*flushed));
	BPT_CHECK(lo_gen && hi_gen && flushed, "oom");
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "loop: %s", bp_last_error());

	for (int c = 1; c <= cycles; c++)
		cycle(c, (uint32_t)(2 * c - 1));
	/* The last SIGKILL's survivors. */
	after_kill = verified;
	{
		struct sockaddr_in a = { .sin_family = AF_INET };
		struct bp_nvmeh_opts o;
		struct bp_nvmeh_ctrl *ctrl;
		struct bp_nvmeh_queue *qs[NQ];
		uint16_t port;
		pid_t pid = target_start(&port, cycles + 1);
		int st;

		a.sin_port = htons(port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bp_nvmeh_opts_defaults(&o);
		snprintf(o.subnqn, sizeof(o.subnqn), NQN);
		BPT_CHECK(bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&a, sizeof(a), &o, NQ, &ctrl) == 0,
			  "final connect: %s", bp_last_error());
		for (int i = 0; i < NQ; i++)
			BPT_CHECK(bp_nvmeh_ctrl_io_queue(ctrl, loop, (uint16_t)(i + 1), &qs[i]) == 0, "I/O queue");
		failed = bad_status = 0;
		for (uint64_t e = 0; e < (nblocks + EXTENT - 1) / EXTENT; e++)
			submit(qs, e * EXTENT, false, 0);
		drain();
		BPT_CHECK(!failed && !bad_status, "final reads failed");
		for (int i = 0; i < NQ; i++)
			bp_nvmeh_queue_close(qs[i]);
		bp_nvmeh_ctrl_disconnect(ctrl);
		kill(pid, SIGTERM);
		BPT_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		bpt_reaped(pid);
		BPT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "busypoll target did not stop cleanly on SIGTERM (status 0x%x)", st);
		printf("ok   after the last SIGKILL: %llu blocks verified\n", (unsigned long long)(verified - after_kill));
	}
	bp_loop_destroy(loop);
	for (int c = 1; c <= cycles + 1; c++) {
		snprintf(log_path, sizeof(log_path), "%s/target-%d.log", dir, c);
		unlink(log_path);
	}
	unlink(img);
	rmdir(dir);
	printf("blocks verified after SIGKILL: %llu (%d kills; %llu of them flushed before the kill, every one "
	       "intact; of %llu blocks written after the flush, in flight or acknowledged, %llu held the newer "
	       "data, the rest the flushed data)\n",
	       (unsigned long long)(verified - first_read), cycles, (unsigned long long)verified_flushed,
	       (unsigned long long)unflushed_total, (unsigned long long)unflushed_new);
	printf("PASS\n");
	return bpt_exit_status();
}
