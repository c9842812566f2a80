/* SPDX-License-Identifier: MIT */
/*
 * Storage I/O on the loop (busypoll/aio.h), on every backend and ring setup:
 * writes and reads through O_DIRECT and the page cache, FUA, fsync, fallocate
 * (hole punch and zero range read back as zeros), a read that meets the end of
 * the file, a read the kernel does in part continued, kernel errors as -errno, the depth bound (never more in flight,
 * waiters in order), callbacks only on the loop and never inside submit, a
 * completion waking a loop that sleeps (nothing else could), the batch hook, the
 * syscalls counted, drain while stopping, and destroy with I/O in flight running
 * no callback. Files in a temporary directory, removed at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/busypoll.h>

#define BLK 4096
#define NBLK 64

static const char *const modes[] = {
	"epoll:block", "epoll:spin", "uring:block", "uring:block,setup=plain", "uring:spin", "uring:sqpoll",
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static char dir[] = "/tmp/bpt-aio-XXXXXX";
static char path[300];
static pthread_t loop_thread;

struct done_rec {
	int calls;
	int res;
	int order;
	bool in_submit;
	bool on_other_thread;
};

static int order_seq;
static bool submitting;

static void on_done(struct bp_aio *a, int res)
{
	struct done_rec *r = a->arg;

	r->calls++;
	r->res = res;
	r->order = order_seq++;
	r->in_submit = submitting;
	r->on_other_thread = !pthread_equal(pthread_self(), loop_thread);
}

static struct bp_loop *loop_up(const char *text)
{
	struct bp_loop *loop;
	struct bp_mode m;
	char err[200];

	assert_int_equal(bp_mode_parse(text, &m, err, sizeof(err)), 0);
	if (bp_mode_check(&m, err, sizeof(err))) {
		printf("# %s not usable here: %s\n", text, err);
		return NULL;
	}
	assert_int_equal(bp_loop_create(&loop, &m), 0);
	loop_thread = pthread_self();
	return loop;
}

static void submit(struct bp_aio_queue *q, struct bp_aio *a, struct done_rec *r)
{
	memset(r, 0, sizeof(*r));
	a->done = on_done;
	a->arg = r;
	submitting = true;
	assert_int_equal(bp_aio_submit(q, a), 0);
	submitting = false;
}

/*
 * Run the loop until every record has its callback. A blocked loop must be woken by
 * them (alarm: a completion that never wakes it would hang); a spinning one polls
 * until they are there (a minute at most: an fsync on a busy disk takes its time).
 */
static void run_until(struct bp_loop *loop, struct done_rec *r, int n)
{
	uint64_t end = bp_now_ns() + 60ull * 1000000000ull;

	while (bp_now_ns() < end) {
		int left = 0;

		for (int i = 0; i < n; i++)
			left += r[i].calls == 0;
		if (!left)
			return;
		alarm(60);
		assert_true(bp_loop_run_once(loop, -1) >= 0);
		alarm(0);
	}
	fail_msg("storage I/O did not complete in 60 s");
}

static void check_record(const struct done_rec *r, int res)
{
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->res, res);
	assert_false(r->in_submit);
	assert_false(r->on_other_thread);
}

static uint8_t *aligned(size_t n)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, BLK, n), 0);
	return p;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		b[i] = (uint8_t)(seed >> 24);
	}
}

static int open_file(bool direct)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0), 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)BLK * NBLK), 0);
	return fd;
}

/* One loop in a mode, a queue of depth on it, a file and an aligned buffer of nblk blocks. */
struct fixture {
	struct bp_loop *loop;
	struct bp_aio_queue q;
	int fd;
	uint8_t *buf;
};

static bool fixture_up(struct fixture *f, const char *mode, uint32_t depth, int nblk)
{
	f->loop = loop_up(mode);
	if (!f->loop)
		return false;
	f->fd = open_file(true);
	f->buf = aligned((size_t)BLK * (size_t)nblk);
	assert_int_equal(bp_aio_queue_init(&f->q, f->loop, depth), 0);
	return true;
}

static void fixture_down(struct fixture *f)
{
	close(f->fd);
	free(f->buf);
	if (f->loop)
		bp_loop_destroy(f->loop);
	f->loop = NULL;
}

/* n one-block I/Os of op: block i of the buffer to or from block i of the file. */
static void submit_blocks(struct fixture *f, struct bp_aio *a, struct done_rec *r, int n, uint8_t op)
{
	for (int i = 0; i < n; i++) {
		a[i] = (struct bp_aio){ .op = op, .fd = f->fd, .buf = f->buf + i * BLK, .off = (uint64_t)i * BLK,
					.len = BLK };
		submit(&f->q, &a[i], &r[i]);
	}
}

/* Write every block (some with FUA), fsync and fdatasync, read them back. */
static void write_read(const char *mode, bool direct)
{
	struct bp_loop *loop = loop_up(mode);
	struct bp_aio_queue q;
	struct bp_aio a[NBLK], s[2];
	struct done_rec r[NBLK], rs[2];
	uint8_t *w = aligned(BLK * NBLK), *rb = aligned(BLK * NBLK);
	struct bp_aio_stats st;
	uint64_t sys0;
	int fd;

	if (!loop)
		return;
	fd = open_file(direct);
	fill(w, BLK * NBLK, 7);
	memset(rb, 0xee, BLK * NBLK);
	assert_int_equal(bp_aio_queue_init(&q, loop, 16), 0);
	sys0 = bp_loop_counters(loop)->syscalls;
	for (int i = 0; i < NBLK; i++) {
		a[i] = (struct bp_aio){ .op = BP_AIO_WRITE, .fd = fd, .buf = w + i * BLK, .off = (uint64_t)i * BLK,
					.len = BLK, .flags = i % 4 == 0 ? BP_AIO_FUA : 0 };
		submit(&q, &a[i], &r[i]);
	}
	assert_int_equal(bp_aio_pending(loop), NBLK);
	bp_aio_queue_stats(&q, &st);
	assert_int_equal(st.inflight, 16);
	assert_int_equal(st.waiting, NBLK - 16);
	run_until(loop, r, NBLK);
	for (int i = 0; i < NBLK; i++)
		check_record(&r[i], BLK);
	s[0] = (struct bp_aio){ .op = BP_AIO_FSYNC, .fd = fd };
	s[1] = (struct bp_aio){ .op = BP_AIO_FDATASYNC, .fd = fd };
	submit(&q, &s[0], &rs[0]);
	submit(&q, &s[1], &rs[1]);
	run_until(loop, rs, 2);
	check_record(&rs[0], 0);
	check_record(&rs[1], 0);
	/* One read of all of it, then the check. */
	a[0] = (struct bp_aio){ .op = BP_AIO_READ, .fd = fd, .buf = rb, .off = 0, .len = BLK * NBLK };
	submit(&q, &a[0], &r[0]);
	run_until(loop, r, 1);
	check_record(&r[0], BLK * NBLK);
	assert_memory_equal(w, rb, BLK * NBLK);
	bp_aio_queue_stats(&q, &st);
	assert_int_equal(st.submitted, NBLK + 3);
	assert_int_equal(st.completed, NBLK + 3);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.max_inflight, 16);
	assert_int_equal(st.waited, NBLK - 16);
	assert_int_equal(st.inflight, 0);
	assert_true(bp_aio_queue_idle(&q));
	assert_int_equal(bp_aio_pending(loop), 0);
	/* The kernel was asked: the submissions and waits are counted like every other syscall. */
	assert_true(bp_loop_counters(loop)->syscalls > sys0);
	close(fd);
	free(w);
	free(rb);
	bp_loop_destroy(loop);
}

static void test_write_read_direct(void **state)
{
	(void)state;
	for (size_t i = 0; i < NMODES; i++)
		write_read(modes[i], true);
}

static void test_write_read_buffered(void **state)
{
	(void)state;
	for (size_t i = 0; i < NMODES; i++)
		write_read(modes[i], false);
}

/* Depth 1: exactly one in flight, so completions come in submission order. */
static void test_depth_one_is_fifo(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct fixture f;
		struct bp_aio a[16];
		struct done_rec r[16];
		struct bp_aio_stats st;

		if (!fixture_up(&f, modes[m], 1, 16))
			continue;
		fill(f.buf, BLK * 16, 3);
		order_seq = 0;
		submit_blocks(&f, a, r, 16, BP_AIO_WRITE);
		run_until(f.loop, r, 16);
		for (int i = 0; i < 16; i++) {
			check_record(&r[i], BLK);
			assert_int_equal(r[i].order, i);
		}
		bp_aio_queue_stats(&f.q, &st);
		assert_int_equal(st.max_inflight, 1);
		assert_int_equal(st.waited, 15);
		fixture_down(&f);
	}
}

/* Punch a hole and zero a range: both read back as zeros, the blocks beside them untouched. */
static void test_fallocate(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bp_loop *loop = loop_up(modes[m]);
		struct bp_aio_queue q;
		struct bp_aio a[3];
		struct done_rec r[3];
		uint8_t *w = aligned(BLK * 8), *rb = aligned(BLK * 8), zero[BLK] = { 0 };
		int fd;

		if (!loop)
			continue;
		fd = open_file(true);
		fill(w, BLK * 8, 11);
		assert_int_equal(pwrite(fd, w, BLK * 8, 0), BLK * 8);
		assert_int_equal(bp_aio_queue_init(&q, loop, 4), 0);
		a[0] = (struct bp_aio){ .op = BP_AIO_FALLOCATE, .fd = fd, .mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					.off = BLK, .len = BLK * 2 };
		a[1] = (struct bp_aio){ .op = BP_AIO_FALLOCATE, .fd = fd, .mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					.off = BLK * 5, .len = BLK };
		submit(&q, &a[0], &r[0]);
		submit(&q, &a[1], &r[1]);
		run_until(loop, r, 2);
		check_record(&r[0], 0);
		check_record(&r[1], 0);
		a[2] = (struct bp_aio){ .op = BP_AIO_READ, .fd = fd, .buf = rb, .off = 0, .len = BLK * 8 };
		submit(&q, &a[2], &r[2]);
		run_until(loop, &r[2], 1);
		check_record(&r[2], BLK * 8);
		for (int i = 0; i < 8; i++) {
			if (i == 1 || i == 2 || i == 5)
				assert_memory_equal(rb + i * BLK, zero, BLK);
			else
				assert_memory_equal(rb + i * BLK, w + i * BLK, BLK);
		}
		close(fd);
		free(w);
		free(rb);
		bp_loop_destroy(loop);
	}
}

/* The end of a file: a read across it gets what is there, one beyond it 0; errors as -errno. */
static void test_eof_and_errors(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bp_loop *loop = loop_up(modes[m]);
		struct bp_aio_queue q;
		struct bp_aio a[4], bad = { 0 };
		struct done_rec r[4];
		uint8_t *b = aligned(BLK * 4);
		int fd, rfd;

		if (!loop)
			continue;
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		fill(b, 6000, 5);
		assert_int_equal(pwrite(fd, b, 6000, 0), 6000);
		rfd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(rfd >= 0);
		assert_int_equal(bp_aio_queue_init(&q, loop, 8), 0);
		a[0] = (struct bp_aio){ .op = BP_AIO_READ, .fd = fd, .buf = b, .off = 0, .len = BLK * 2 };
		a[1] = (struct bp_aio){ .op = BP_AIO_READ, .fd = fd, .buf = b + BLK * 2, .off = BLK * 8, .len = BLK };
		a[2] = (struct bp_aio){ .op = BP_AIO_WRITE, .fd = rfd, .buf = b, .off = 0, .len = BLK };
		a[3] = (struct bp_aio){ .op = BP_AIO_FALLOCATE, .fd = rfd, .mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					.off = 0, .len = BLK };
		for (int i = 0; i < 4; i++)
			submit(&q, &a[i], &r[i]);
		run_until(loop, r, 4);
		check_record(&r[0], 6000);
		check_record(&r[1], 0);
		check_record(&r[2], -EBADF);
		check_record(&r[3], -EBADF);
		/* Refused at once, and then no callback ever runs. */
		bad.done = on_done;
		bad.arg = &r[0];
		memset(&r[0], 0, sizeof(r[0]));
		bad.op = 99;
		assert_int_equal(bp_aio_submit(&q, &bad), -EINVAL);
		bad.op = BP_AIO_READ;
		bad.len = 0;
		assert_int_equal(bp_aio_submit(&q, &bad), -EINVAL);
		bad.len = BLK;
		bad.done = NULL;
		assert_int_equal(bp_aio_submit(&q, &bad), -EINVAL);
		bp_loop_run_once(loop, 0);
		assert_int_equal(r[0].calls, 0);
		{
			struct bp_aio_stats st;

			bp_aio_queue_stats(&q, &st);
			assert_int_equal(st.errors, 2);
			assert_int_equal(st.submitted, 4);
		}
		close(fd);
		close(rfd);
		free(b);
		bp_loop_destroy(loop);
	}
}

/* A read the kernel does in part (a pipe with half of it there) goes on from where it stopped. */
static void test_short_transfer_continued(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct bp_loop *loop = loop_up(modes[m]);
		struct bp_aio_queue q;
		struct bp_aio a;
		struct done_rec r;
		struct bp_aio_stats st;
		uint8_t out[200], in[200];
		int p[2];

		if (!loop)
			continue;
		assert_int_equal(pipe(p), 0);
		fill(out, sizeof(out), 17);
		assert_int_equal(write(p[1], out, 100), 100);
		assert_int_equal(bp_aio_queue_init(&q, loop, 2), 0);
		a = (struct bp_aio){ .op = BP_AIO_READ, .fd = p[0], .buf = in, .off = 0, .len = sizeof(in) };
		submit(&q, &a, &r);
		/* until the first part is back and the rest is asked for */
		for (int i = 0; i < 200000; i++) {
			bp_aio_queue_stats(&q, &st);
			if (st.continued || r.calls)
				break;
			bp_loop_run_once(loop, 0);
		}
		assert_int_equal(r.calls, 0);
		assert_int_equal(st.continued, 1);
		assert_int_equal(write(p[1], out + 100, 100), 100);
		run_until(loop, &r, 1);
		check_record(&r, 200);
		assert_memory_equal(in, out, sizeof(out));
		close(p[0]);
		close(p[1]);
		bp_loop_destroy(loop);
	}
}

static int batches;

static void on_batch(struct bp_aio_queue *q, void *arg)
{
	(void)q;
	*(int *)arg += 1;
	batches++;
}

/* The batch hook: once per iteration with completions of its queue, after their callbacks. */
static void test_batch_hook(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct fixture f;
		struct bp_aio a[8];
		struct done_rec r[8];
		int mine = 0, done = 0;
		uint64_t end = bp_now_ns() + 60ull * 1000000000ull;

		if (!fixture_up(&f, modes[m], 8, 8))
			continue;
		bp_aio_queue_on_batch(&f.q, on_batch, &mine);
		batches = 0;
		submit_blocks(&f, a, r, 8, BP_AIO_READ);
		while (done < 8 && bp_now_ns() < end) {
			int before = done, batches_before = batches;

			assert_true(bp_loop_run_once(f.loop, -1) >= 0);
			done = 0;
			for (int i = 0; i < 8; i++)
				done += r[i].calls;
			/* exactly one batch call in an iteration that completed any, none otherwise */
			assert_int_equal(batches - batches_before, done > before ? 1 : 0);
		}
		assert_int_equal(done, 8);
		assert_true(mine >= 1 && mine <= 8);
		fixture_down(&f);
	}
}

/* Drain runs the loop until the callbacks ran, even once it was asked to stop. */
static void test_drain_while_stopping(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct fixture f;
		struct bp_aio a[32];
		struct done_rec r[32];

		if (!fixture_up(&f, modes[m], 4, 32))
			continue;
		submit_blocks(&f, a, r, 32, BP_AIO_WRITE);
		bp_loop_stop(f.loop);
		assert_int_equal(bp_aio_drain(f.loop, 20000), 0);
		for (int i = 0; i < 32; i++)
			check_record(&r[i], BLK);
		assert_int_equal(bp_aio_pending(f.loop), 0);
		fixture_down(&f);
	}
}

/* Destroy with I/O in flight and waiting: it waits for the kernel and runs no callback. */
static void test_destroy_runs_no_callback(void **state)
{
	(void)state;
	for (size_t m = 0; m < NMODES; m++) {
		struct fixture f;
		struct bp_aio a[16];
		struct done_rec r[16];
		int ran = 0;

		if (!fixture_up(&f, modes[m], 4, 16))
			continue;
		submit_blocks(&f, a, r, 16, BP_AIO_READ);
		/* One poll hands them to the kernel (some may complete in it: their callbacks ran). */
		bp_loop_run_once(f.loop, 0);
		for (int i = 0; i < 16; i++)
			ran += r[i].calls;
		bp_loop_destroy(f.loop);
		f.loop = NULL;
		for (int i = 0; i < 16; i++)
			ran -= r[i].calls;
		assert_int_equal(ran, 0);
		fixture_down(&f);
	}
}

/* The epoll storage ring is the loop's own, made at the first submission, and counted. */
static void test_epoll_ring_counted(void **state)
{
	struct fixture f;
	struct bp_aio a;
	struct done_rec r;
	uint64_t before;

	(void)state;
	assert_true(fixture_up(&f, "epoll:block", 4, 1));
	before = bp_loop_counters(f.loop)->syscalls;
	submit_blocks(&f, &a, &r, 1, BP_AIO_READ);
	/* io_uring_setup, eventfd, IORING_REGISTER_EVENTFD, epoll_ctl: the ring was made now, not at init */
	assert_int_equal(bp_loop_counters(f.loop)->syscalls - before, 4);
	run_until(f.loop, &r, 1);
	check_record(&r, BLK);
	/* then at least the submit and the wait */
	assert_true(bp_loop_counters(f.loop)->syscalls - before >= 6);
	assert_true(bp_loop_counters(f.loop)->completions >= 1);
	fixture_down(&f);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/file", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read_direct),
		cmocka_unit_test(test_write_read_buffered),
		cmocka_unit_test(test_depth_one_is_fifo),
		cmocka_unit_test(test_fallocate),
		cmocka_unit_test(test_eof_and_errors),
		cmocka_unit_test(test_short_transfer_continued),
		cmocka_unit_test(test_batch_hook),
		cmocka_unit_test(test_drain_while_stopping),
		cmocka_unit_test(test_destroy_runs_no_callback),
		cmocka_unit_test(test_epoll_ring_counted),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
