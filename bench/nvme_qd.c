/* SPDX-License-Identifier: MIT */
/*
 * bench/nvme_qd: random reads (or writes) of BS bytes at queue depth QD on one
 * NVMe/TCP I/O queue for S seconds, with the library's initiator on one loop.
 * A stand-in until `busypoll perf` (issue 7); it prints IOPS and latency.
 *
 *   bench_nvme_qd ADDR:PORT NQN [qd=32] [seconds=5] [bs=4096] [mode=epoll:block] [write]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme_host.h>

struct io {
	struct bp_nvmeh_queue *q;
	uint8_t *buf;
	uint64_t start;
};

static struct bp_hist hist;
static uint64_t done_ios, errors, nblocks, lbas_per_io, seed = 88172645463325252ull;
static uint32_t bs;
static bool writing, stopping;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static void submit(struct io *io);

static void io_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct io *io = arg;

	if (err || cqe->status) {
		errors++;
		if (err)
			return;
	}
	bp_hist_record(&hist, bp_now_ns() - io->start);
	done_ios++;
	if (!stopping)
		submit(io);
}

static void submit(struct io *io)
{
	uint8_t sqe[64];
	uint64_t slba = (rnd() % (nblocks / lbas_per_io)) * lbas_per_io;

	bp_nvmeh_sqe_rw(sqe, writing, 1, slba, (uint32_t)lbas_per_io);
	io->start = bp_now_ns();
	if (bp_nvmeh_submit(io->q, sqe, io->buf, bs, writing, io_done, io))
		errors++;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_queue *q;
	struct bp_nvmeh_ns_info ns;
	struct bp_loop *loop;
	struct bp_mode m;
	struct rusage r0, r1;
	char err[200];
	int qd = argc > 3 ? atoi(argv[3]) : 32;
	double secs = argc > 4 ? atof(argv[4]) : 5;
	struct io *ios;
	uint64_t t0, t1;

	bs = argc > 5 ? (uint32_t)atoi(argv[5]) : 4096;
	writing = argc > 7 && !strcmp(argv[7], "write");
	if (argc < 3 || bp_parse_addr(argv[1], 4420, &ss, &sl)) {
		fprintf(stderr, "usage: bench_nvme_qd ADDR:PORT NQN [qd] [seconds] [bs] [mode] [write]\n");
		return 2;
	}
	if (bp_mode_parse(argc > 6 ? argv[6] : "epoll:block", &m, err, sizeof(err)) || bp_loop_create(&loop, &m)) {
		fprintf(stderr, "mode: %s %s\n", err, bp_last_error());
		return 2;
	}
	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), "%s", argv[2]);
	o.io_queue_size = (uint16_t)(qd + 1);
	if (bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&ss, sl, &o, 1, &c) ||
	    bp_nvmeh_identify_ns(c, 1, &ns) || bp_nvmeh_ctrl_io_queue(c, loop, 1, &q)) {
		fprintf(stderr, "connect: %s\n", bp_last_error());
		return 1;
	}
	nblocks = ns.nblocks;
	lbas_per_io = bs / ns.block_size;
	bp_hist_init(&hist);
	ios = calloc((size_t)qd, sizeof(*ios));
	for (int i = 0; i < qd; i++) {
		ios[i].q = q;
		ios[i].buf = aligned_alloc(4096, bs);
		memset(ios[i].buf, 0x5a, bs);
	}
	/* One second of warm-up, then the measured run. */
	for (int pass = 0; pass < 2; pass++) {
		double len = pass ? secs : 1;

		if (pass) {
			bp_hist_init(&hist);
			done_ios = 0;
		}
		getrusage(RUSAGE_SELF, &r0);
		t0 = bp_now_ns();
		if (!pass)
			for (int i = 0; i < qd; i++)
				submit(&ios[i]);
		while ((t1 = bp_now_ns()) - t0 < (uint64_t)(len * 1e9))
			bp_loop_run_once(loop, 1000);
		getrusage(RUSAGE_SELF, &r1);
	}
	{
		double s = (double)(t1 - t0) / 1e9;
		double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
			     (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;

		printf("%s bs=%u qd=%d: %.1f K IOPS, %.1f MB/s, lat us mean %.1f p50 %.1f p99 %.1f p99.99 %.1f, "
		       "initiator CPU %.2f us/IO, errors %llu\n",
		       writing ? "randwrite" : "randread", bs, qd, (double)done_ios / s / 1e3,
		       (double)done_ios * bs / s / 1e6, bp_hist_mean(&hist) / 1e3,
		       (double)bp_hist_percentile(&hist, 50) / 1e3, (double)bp_hist_percentile(&hist, 99) / 1e3,
		       (double)bp_hist_percentile(&hist, 99.99) / 1e3, cpu * 1e6 / (double)(done_ios ? done_ios : 1),
		       (unsigned long long)errors);
	}
	stopping = true;
	while (bp_nvmeh_queue_inflight(q))
		bp_loop_run_once(loop, 1000);
	bp_nvmeh_queue_close(q);
	bp_nvmeh_ctrl_disconnect(c);
	bp_loop_destroy(loop);
	return 0;
}
