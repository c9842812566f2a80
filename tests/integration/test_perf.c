/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf against our target, in one process, over loopback: every --rw
 * pattern with --verify on a ram namespace (512-byte blocks) and a file one
 * (4096-byte blocks), several jobs; trims (Dataset Management deallocate) read
 * back as zeros, as the namespace's DLFEAT says; the open loop (--rate_iops)
 * per direction, its latency from the intended issue time the sum of the issue
 * lag and the latency from the issue; 1 MiB blocks through R2T; digests on; fio's
 * batch and reap settings (polling with complete_min 0); every host wait mode;
 * Ctrl-C's partial result; and the failures said in one line: a disallowed
 * host, an unknown NQN, a target that is not there, options that do not fit
 * the namespace. Timing is never asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_nvmet.h"
#include "bptest.h"
#include "tools/perf/perf.h"

#define NQN "nqn.2024-01.io.busypoll:perftest"
#define HOST_A "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-4000-8000-00000000000a"
#define HOST_X "nqn.2014-08.org.nvmexpress:uuid:dddddddd-0000-4000-8000-00000000000d"

static char file_path[256], target[64];
static struct bp_nvmet *tgt;
static struct perf_result res;
static char err[1024];

static void target_up(void)
{
	struct bp_nvmet_cfg cfg;
	char spec[300];
	const char *specs[] = { "ram:16M", spec };

	snprintf(spec, sizeof(spec), "file:%s,size=8M,bs=4096", file_path);
	bpt_nvmet_cfg(&cfg, NQN, specs, 2);
	snprintf(cfg.allow_hosts[0], sizeof(cfg.allow_hosts[0]), HOST_A);
	cfg.n_allow = 1;
	cfg.threads = 2;
	cfg.max_queues = 4;
	BPT_CHECK(bp_nvmet_start(&cfg, &tgt) == 0, "target: %s", bp_last_error());
	snprintf(target, sizeof(target), "127.0.0.1:%u", bp_nvmet_port(tgt));
}

/* opts - parse a perf command line (the target, NQN and host filled in, quiet, short unless it says). */
static void opts(struct perf_opts *o, int argc, const char **argv)
{
	const char *full[64] = { "perf", "--target", target, "--nqn", NQN, "--hostnqn", HOST_A, "-q" };
	bool runtime = false;
	int n = 8;

	for (int i = 0; i < argc; i++) {
		runtime |= !strcmp(argv[i], "--runtime");
		full[n++] = argv[i];
	}
	if (!runtime) { /* an option is given once: the default short run only when none is asked for */
		full[n++] = "--runtime";
		full[n++] = "0.3";
	}
	BPT_CHECK(perf_parse_opts(n, (char **)full, o, err, sizeof(err)) == 0, "options: %s", err);
}

#define OPTS(o, ...)                                                                  \
	do {                                                                          \
		const char *a_[] = { __VA_ARGS__ };                                   \
		opts(o, (int)(sizeof(a_) / sizeof(a_[0])), a_);                       \
	} while (0)

static int run(const struct perf_opts *o, volatile sig_atomic_t *stop)
{
	return perf_run(o, o->numjobs, NULL, stop, &res, err, sizeof(err));
}

/* run_ok - a run that must succeed and do I/O (and check blocks when verifying). */
static void run_ok(const struct perf_opts *o, const char *what)
{
	int ret = run(o, NULL);

	BPT_CHECK(ret == 0, "%s: %d: %s", what, ret, err);
	BPT_CHECK(perf_total_ios(&res) > 0, "%s: no I/O measured", what);
	BPT_CHECK(res.all.count == perf_total_ios(&res), "%s: %llu samples for %llu I/Os", what,
		  (unsigned long long)res.all.count, (unsigned long long)perf_total_ios(&res));
	BPT_CHECK(!o->verify || res.verified_blocks > 0, "%s: --verify checked no block", what);
	BPT_CHECK(res.seconds > 0 && !res.interrupted, "%s: seconds %f", what, res.seconds);
	if (o->rw == PERF_RW_READ || o->rw == PERF_RW_RANDREAD)
		BPT_CHECK(res.wr.ios == 0, "%s: writes in a read pattern", what);
	if (o->rw == PERF_RW_WRITE || o->rw == PERF_RW_RANDWRITE)
		BPT_CHECK(res.rd.ios == 0, "%s: reads in a write pattern", what);
	printf("ok   %-44s %8.0f IOPS  %llu blocks verified\n", what, perf_iops(&res, &(struct perf_dir){
		.ios = perf_total_ios(&res) }), (unsigned long long)res.verified_blocks);
}

static void run_fails(const struct perf_opts *o, int want_ret, const char *want_text, const char *what)
{
	int ret = run(o, NULL);

	BPT_CHECK(ret == want_ret, "%s: returned %d (want %d): %s", what, ret, want_ret, err);
	BPT_CHECK(strstr(err, want_text), "%s: '%s' does not say '%s'", what, err, want_text);
	BPT_CHECK(!strchr(err, '\n'), "%s: more than one line: %s", what, err);
	printf("ok   %-44s %s\n", what, err);
}

static void test_patterns(void)
{
	static const char *const pats[] = { "read", "write", "randread", "randwrite", "randrw" };
	struct perf_opts o;

	for (int ns = 1; ns <= 2; ns++)
		for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
			char what[96];

			OPTS(&o, "--nsid", ns == 1 ? "1" : "2", "--rw", pats[i], "--verify", "--numjobs", "2", "--iodepth",
			     "8", "--iodepth-batch", "4", "--iodepth-batch-complete-max", "8", "--size", "2M", "--bs",
			     ns == 1 ? "4k" : "8k");
			snprintf(what, sizeof(what), "%s --verify on the %s namespace", pats[i], ns == 1 ? "ram" : "file");
			run_ok(&o, what);
			if (o.rw == PERF_RW_READ || o.rw == PERF_RW_RANDREAD)
				BPT_CHECK(res.prefilled_bytes == 2u << 20, "%s: pre-filled %llu", what,
					  (unsigned long long)res.prefilled_bytes);
		}
	/* rwmixread 100 is all reads, 0 all writes (fio). */
	OPTS(&o, "--rw", "randrw", "--rwmixread", "100", "--verify", "--size", "1M", "--iodepth", "4");
	run_ok(&o, "randrw rwmixread=100 --verify");
	BPT_CHECK(res.wr.ios == 0 && res.rd.ios > 0, "rwmixread 100 wrote %llu", (unsigned long long)res.wr.ios);
	OPTS(&o, "--rw", "randrw", "--rwmixread", "0", "--size", "1M", "--iodepth", "4");
	run_ok(&o, "randrw rwmixread=0");
	BPT_CHECK(res.rd.ios == 0 && res.wr.ios > 0, "rwmixread 0 read %llu", (unsigned long long)res.rd.ios);
}

static uint64_t target_r2ts(void)
{
	struct bp_nvmet_queue_stats st[64];
	size_t n = 0;
	uint64_t r2ts = 0;

	BPT_CHECK(bp_nvmet_snapshot(tgt, st, 64, &n) == 0, "snapshot");
	for (size_t i = 0; i < n; i++)
		r2ts += st[i].r2ts;
	return r2ts;
}

static void test_big_blocks_and_digests(void)
{
	struct perf_opts o;
	uint64_t r2ts = target_r2ts();

	/* 1 MiB: beyond the 8 KiB in-capsule limit, so every write goes R2T + H2CData. */
	OPTS(&o, "--rw", "randrw", "--bs", "1M", "--verify", "--size", "8M", "--iodepth", "4");
	run_ok(&o, "randrw 1 MiB blocks --verify (R2T)");
	BPT_CHECK(res.wr.ios && target_r2ts() > r2ts, "1 MiB writes made no R2T");
	OPTS(&o, "--nsid", "2", "--rw", "write", "--bs", "1M", "--verify", "--size", "4M", "--iodepth", "2");
	run_ok(&o, "write 1 MiB blocks --verify on the file namespace");

	OPTS(&o, "--rw", "randrw", "--digest", "hdr,data", "--verify", "--size", "2M", "--iodepth", "8", "--bs", "16k");
	run_ok(&o, "randrw --digest hdr,data --verify");
	OPTS(&o, "--rw", "randread", "--digest", "hdr", "--iodepth", "8");
	run_ok(&o, "randread --digest hdr");
}

static void test_batching(void)
{
	struct perf_opts o;

	/* The reference: batch 8, reap 1..32, at iodepth 32. */
	OPTS(&o, "--rw", "randrw", "--rwmixread", "100", "--iodepth", "32", "--iodepth-batch", "8",
	     "--iodepth-batch-complete-min", "1", "--iodepth-batch-complete-max", "32", "--numjobs", "2");
	run_ok(&o, "the reference: iodepth 32, batch 8, reap 1..32");
	/* Wait for 8, reap 8 at a time. */
	OPTS(&o, "--rw", "randread", "--iodepth", "32", "--iodepth-batch", "8", "--iodepth-batch-complete-min", "8");
	run_ok(&o, "reap 8..8");
	/* complete_min 0: polling waits; the loop must not sleep while I/O is out. */
	OPTS(&o, "--rw", "randread", "--iodepth", "16", "--iodepth-batch-complete-min", "0",
	     "--iodepth-batch-complete-max", "16", "--verify", "--size", "1M");
	run_ok(&o, "reap 0..16 (polling) --verify");
	BPT_CHECK(res.initiator.wakeups * 4 < res.initiator.syscalls + 4, "complete_min 0 slept: %llu wake-ups, %llu syscalls",
		  (unsigned long long)res.initiator.wakeups, (unsigned long long)res.initiator.syscalls);
	/* iodepth 1. */
	OPTS(&o, "--rw", "randwrite", "--verify", "--size", "1M");
	run_ok(&o, "iodepth 1 --verify");
}

static void test_modes(void)
{
	for (size_t i = 0; i < bpt_n_modes; i++) {
		struct perf_opts o;
		struct bp_mode m;
		char what[96];

		if (!bpt_mode_usable(bpt_all_modes[i], &m))
			continue;
		OPTS(&o, "--rw", "randrw", "--iodepth", "8", "--iodepth-batch", "4", "--mode", bpt_all_modes[i],
		     "--runtime", "0.2", "--verify", "--size", "1M");
		snprintf(what, sizeof(what), "host mode %s", bpt_all_modes[i]);
		run_ok(&o, what);
	}
}

static void test_refusals(void)
{
	struct perf_opts o;

	OPTS(&o, "--rw", "randread");
	snprintf(o.hostnqn, sizeof(o.hostnqn), HOST_X);
	run_fails(&o, -ECONNREFUSED, "is not allowed into", "a disallowed host");
	BPT_CHECK(strstr(err, HOST_X) && strstr(err, "Connect Invalid Host"), "host message: %s", err);

	OPTS(&o, "--rw", "randread");
	snprintf(o.nqn, sizeof(o.nqn), "nqn.2024-01.io.busypoll:nope");
	run_fails(&o, -ECONNREFUSED, "does not serve subsystem NQN 'nqn.2024-01.io.busypoll:nope'", "an unknown NQN");
	BPT_CHECK(strstr(err, "Connect Invalid Parameters"), "NQN message: %s", err);

	OPTS(&o, "--nsid", "3");
	run_fails(&o, -EINVAL, "--nsid 3: no such namespace", "a namespace that is not there");
	OPTS(&o, "--nsid", "2", "--bs", "512");
	run_fails(&o, -EINVAL, "not a multiple of namespace 2's block size 4096", "bs below the block size");
	OPTS(&o, "--size", "32M");
	run_fails(&o, -EINVAL, "past the end of namespace 1", "a region past the end");
	OPTS(&o, "--bs", "2M");
	run_fails(&o, -EINVAL, "largest transfer (MDTS)", "bs beyond MDTS");
	OPTS(&o, "--iodepth", "512");
	run_fails(&o, -EINVAL, "hold at most 128 commands", "iodepth beyond the queue");
	OPTS(&o, "--verify", "--size", "64k", "--iodepth", "32");
	run_fails(&o, -EINVAL, "at least --iodepth 32 blocks", "--verify on too small a region");
	OPTS(&o, "--numjobs", "5");
	run_fails(&o, -EINVAL, "the target grants 4 I/O queues; 5 jobs need one each", "more jobs than I/O queues");

	/* Nothing listens: a port we just had and closed. */
	{
		struct bp_nvmet_cfg cfg;
		struct bp_nvmet *t2;
		char e[160];

		bp_nvmet_cfg_defaults(&cfg);
		((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
		BPT_CHECK(bp_nvmet_ns_parse("ram:1M", &cfg.ns[0], e, sizeof(e)) == 0, "%s", e);
		cfg.n_ns = 1;
		cfg.log_level = BP_NVMET_LOG_ERROR;
		BPT_CHECK(bp_nvmet_start(&cfg, &t2) == 0, "second target: %s", bp_last_error());
		OPTS(&o, "--rw", "randread");
		snprintf(o.target, sizeof(o.target), "127.0.0.1:%u", bp_nvmet_port(t2));
		bp_nvmet_stop(t2);
		run_fails(&o, -ECONNREFUSED, "connection refused", "a target that is not running");
	}
}

/* ---- a target that returns wrong data: the file under the namespace zeroed behind its back ---- */

static volatile bool corrupting;

static void *corrupt_file(void *arg)
{
	static uint8_t zeros[1u << 20];
	int fd = open(file_path, O_WRONLY);

	BPT_CHECK(fd >= 0, "open %s: %s", file_path, strerror(errno));
	while (corrupting) {
		BPT_CHECK(pwrite(fd, zeros, sizeof(zeros), 0) == (ssize_t)sizeof(zeros), "pwrite");
		usleep(1000);
	}
	close(fd);
	return arg;
}

static void test_verify_mismatch(void)
{
	struct perf_opts o;
	pthread_t th;
	int ret;

	/* The first MiB of the file namespace (4096-byte blocks) keeps turning into zeros. */
	OPTS(&o, "--nsid", "2", "--rw", "randread", "--verify", "--size", "1M", "--iodepth", "8", "--runtime", "1");
	corrupting = true;
	pthread_create(&th, NULL, corrupt_file, NULL);
	ret = run(&o, NULL);
	corrupting = false;
	pthread_join(th, NULL);
	BPT_CHECK(ret != 0, "a corrupted namespace passed --verify");
	BPT_CHECK(strstr(err, "verify failed on nsid 2: LBA "), "the failure does not name the LBA: %s", err);
	BPT_CHECK(!strchr(err, '\n'), "more than one line: %s", err);
	/* the summary agrees with the failure: never "no mismatch" after one */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		BPT_CHECK(m != NULL, "open_memstream");
		perf_print(m, &res, TOOL_FORMAT_TABLE);
		fclose(m);
		BPT_CHECK(res.measured, "the mismatch came before the measured run: %s", err);
		BPT_CHECK(!strstr(text, "no mismatch"), "the table says 'no mismatch' after a mismatch:\n%s", text);
		BPT_CHECK(strstr(text, "before the run failed"), "the table's verify line does not say the run failed:\n%s",
			  text);
		free(text);
	}
	printf("ok   %-44s %s\n", "verify: a mismatch names the LBA", err);
}

/* ---- an I/O error status: writes past RLIMIT_FSIZE fail in the target's pwrite (EFBIG) ---- */

static void test_io_error(void)
{
	struct rlimit old, lim;
	struct perf_opts o;
	int ret;

	OPTS(&o, "--nsid", "2", "--rw", "write", "--offset", "4M", "--size", "1M", "--iodepth", "4");
	signal(SIGXFSZ, SIG_IGN);
	BPT_CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
	lim = old;
	lim.rlim_cur = 1u << 20;
	BPT_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit: %s", strerror(errno));
	ret = run(&o, NULL);
	setrlimit(RLIMIT_FSIZE, &old);
	BPT_CHECK(ret != 0, "writes the target could not do passed");
	BPT_CHECK(strstr(err, "write of 1 block at LBA 1024 ") && strstr(err, "(nsid 2) failed: Write Fault (sct 2 sc 0x80"),
		  "the status is not decoded: %s", err);
	printf("ok   %-44s %s\n", "an I/O error status, decoded", err);
}

/* ---- trims: Dataset Management deallocate, read back as the target defines ---- */

/* host_io - one read or write of the 4 KiB unit u (8 blocks of 512 bytes) of namespace 1. */
static void host_io(struct bp_nvmeh_queue *q, bool write, uint64_t u, uint8_t *buf)
{
	uint8_t sqe[64];
	int ret;

	bp_nvmeh_sqe_rw(sqe, write, 1, u * 8, 8);
	ret = bp_nvmeh_sync(q, sqe, buf, 4096, write, NULL, 10000);
	BPT_CHECK(ret == 0, "%s of unit %llu: %d %s", write ? "write" : "read", (unsigned long long)u, ret,
		  ret < 0 ? bp_last_error() : "");
}

static uint64_t target_deallocs(void)
{
	return bpt_nvmet_sum(tgt, false).total.deallocs;
}

/*
 * trim_check - the first MiB of namespace 1 written full (not zeros), then a perf
 * trim run of that MiB: every 4 KiB unit reads back either zeros (deallocated: the
 * namespace says so, DLFEAT 001b) or its data untouched, the zeroed ones are as
 * many as the target's Dataset Management commands say (sequential: the first
 * ones; random: at most that many), and the trims are measured as fio's trim.
 */
static void trim_check(const char *rw)
{
	enum { UNITS = 256 };
	static uint8_t buf[4096];
	struct bp_loop *loop = NULL;
	struct bp_nvmeh_queue *q = NULL;
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_ns_info ns;
	struct perf_opts o;
	struct bp_mode m;
	uint64_t d0, deallocs, zeroed = 0, first_kept = UNITS;
	char what[64];

	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "loop: %s", bp_last_error());
	c = bpt_nvmeh_up(loop, bp_nvmet_port(tgt), NQN, HOST_A, &q);
	BPT_CHECK(bp_nvmeh_identify_ns(c, 1, &ns) == 0, "Identify Namespace 1");
	BPT_CHECK((ns.dlfeat & 7) == 1, "the ram namespace must say deallocated blocks read as zeros (DLFEAT %#x)",
		  ns.dlfeat);
	for (uint64_t u = 0; u < UNITS; u++) {
		memset(buf, 0xa5 ^ (int)u, sizeof(buf));
		host_io(q, true, u, buf);
	}
	d0 = target_deallocs();
	OPTS(&o, "--rw", rw, "--size", "1M", "--bs", "4k", "--iodepth", "4", "--runtime", "0.2");
	snprintf(what, sizeof(what), "--rw %s (Dataset Management)", rw);
	run_ok(&o, what);
	deallocs = target_deallocs() - d0;
	BPT_CHECK(res.tr.ios > 0 && res.rd.ios == 0 && res.wr.ios == 0, "%s: %llu trims, %llu reads, %llu writes", what,
		  (unsigned long long)res.tr.ios, (unsigned long long)res.rd.ios, (unsigned long long)res.wr.ios);
	BPT_CHECK(res.tr.bytes == res.tr.ios * 4096, "%s: trim bytes %llu for %llu trims", what,
		  (unsigned long long)res.tr.bytes, (unsigned long long)res.tr.ios);
	BPT_CHECK(deallocs >= res.tr.ios, "%s: the target saw %llu deallocates for %llu measured trims", what,
		  (unsigned long long)deallocs, (unsigned long long)res.tr.ios);
	for (uint64_t u = 0; u < UNITS; u++) {
		bool zero = true, kept = true;

		host_io(q, false, u, buf);
		for (size_t i = 0; i < sizeof(buf); i++) {
			zero &= buf[i] == 0;
			kept &= buf[i] == (uint8_t)(0xa5 ^ u);
		}
		BPT_CHECK(zero || kept, "%s: unit %llu is neither deallocated (zeros) nor its data", what,
			  (unsigned long long)u);
		zeroed += zero;
		if (!zero && first_kept == UNITS)
			first_kept = u;
		BPT_CHECK(!zero || first_kept == UNITS || strcmp(rw, "trim"),
			  "sequential trims must deallocate from the start: unit %llu zeroed after %llu kept", (unsigned long long)u,
			  (unsigned long long)first_kept);
	}
	BPT_CHECK(zeroed > 0, "%s: no unit reads as deallocated", what);
	if (!strcmp(rw, "trim"))
		BPT_CHECK(zeroed == (deallocs < UNITS ? deallocs : UNITS), "%s: %llu units zeroed by %llu deallocates", what,
			  (unsigned long long)zeroed, (unsigned long long)deallocs);
	else
		BPT_CHECK(zeroed <= deallocs, "%s: %llu units zeroed by %llu deallocates", what, (unsigned long long)zeroed,
			  (unsigned long long)deallocs);
	printf("ok   %-44s %llu trims, %llu of %d units read back as zeros\n", what, (unsigned long long)res.tr.ios,
	       (unsigned long long)zeroed, UNITS);
	bp_nvmeh_queue_close(q);
	bp_nvmeh_ctrl_disconnect(c);
	bp_loop_destroy(loop);
}

static void test_trim(void)
{
	trim_check("trim");
	trim_check("randtrim");
}

/* ---- the open loop (--rate_iops): each I/O's latency from its intended issue time ---- */

/* open_dir_check - one direction's open-loop figures: lat = clat + slat for every I/O, so the sums agree exactly. */
static void open_dir_check(const struct perf_dir *d, const char *what)
{
	BPT_CHECK(d->clat.count == d->ios && d->slat.count == d->ios && d->hist.count == d->ios,
		  "%s: %llu I/Os, %llu lat, %llu clat, %llu slat samples", what, (unsigned long long)d->ios,
		  (unsigned long long)d->hist.count, (unsigned long long)d->clat.count, (unsigned long long)d->slat.count);
	BPT_CHECK(d->hist.sum == d->clat.sum + d->slat.sum, "%s: lat %llu ns in all is not clat %llu + slat %llu", what,
		  (unsigned long long)d->hist.sum, (unsigned long long)d->clat.sum, (unsigned long long)d->slat.sum);
	BPT_CHECK(d->late <= d->ios && d->queued <= d->ios, "%s: %llu late, %llu queued of %llu", what,
		  (unsigned long long)d->late, (unsigned long long)d->queued, (unsigned long long)d->ios);
}

static void test_open_loop(void)
{
	struct perf_opts o;

	OPTS(&o, "--rw", "randrw", "--rate_iops", "2000,1000", "--iodepth", "8", "--numjobs", "2", "--runtime", "0.5");
	run_ok(&o, "open loop: --rate_iops 2000,1000, 2 jobs");
	BPT_CHECK(res.rd.ios > 0 && res.wr.ios > 0, "both directions ran: %llu reads, %llu writes",
		  (unsigned long long)res.rd.ios, (unsigned long long)res.wr.ios);
	open_dir_check(&res.rd, "open loop reads");
	open_dir_check(&res.wr, "open loop writes");
	/* each direction at its own rate: about twice the reads of writes, whatever rwmixread */
	BPT_CHECK(res.rd.ios > res.wr.ios, "reads at 2000/s, writes at 1000/s: %llu reads, %llu writes",
		  (unsigned long long)res.rd.ios, (unsigned long long)res.wr.ios);
	/* a schedule never issues more than it offers: 0.5 s x 3000/s x 2 jobs, and what the ramp-less start adds */
	BPT_CHECK(perf_total_ios(&res) <= (uint64_t)(res.seconds * 6000) + 2 * 8 + 2,
		  "the open loop issued more than its schedule: %llu I/Os in %.3f s",
		  (unsigned long long)perf_total_ios(&res), res.seconds);
	OPTS(&o, "--rw", "randread", "--iodepth", "8");
	run_ok(&o, "closed loop: no open-loop figures");
	BPT_CHECK(res.rd.clat.count == 0 && res.rd.slat.count == 0 && res.rd.late == 0 && res.behind == 0,
		  "a closed loop recorded open-loop figures");
}

/* --cpus_allowed (fio's): the jobs' threads run on the set only; split: job i on its own CPU of it. */
static void test_cpus_allowed(void)
{
	struct perf_opts o;
	int last = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	char cpu[16];

	snprintf(cpu, sizeof(cpu), "%d", last);
	OPTS(&o, "--rw", "randread", "--iodepth", "4", "--numjobs", "2", "--cpus_allowed", cpu);
	run_ok(&o, "--cpus_allowed: both jobs on the last CPU");
	for (int i = 0; i < 2; i++)
		BPT_CHECK(res.jobs[i].ran_on == last && res.jobs[i].cpu == -1, "job %d ran on CPU %d (pinned %d), not %d", i,
			  res.jobs[i].ran_on, res.jobs[i].cpu, last);
	OPTS(&o, "--rw", "randread", "--iodepth", "4", "--numjobs", "2", "--cpus_allowed", last ? "0-1" : "0",
	     "--cpus_allowed_policy", "split");
	run_ok(&o, "--cpus_allowed_policy split: job i on the i-th CPU");
	for (int i = 0; i < 2; i++)
		BPT_CHECK(res.jobs[i].cpu == (last ? i : 0) && res.jobs[i].ran_on == res.jobs[i].cpu,
			  "split: job %d pinned %d ran on %d", i, res.jobs[i].cpu, res.jobs[i].ran_on);
}

static volatile sig_atomic_t stop_flag;

/* target_ios - reads and writes the target's live queues have taken so far. */
static uint64_t target_ios(void)
{
	struct bpt_nvmet_sum s = bpt_nvmet_sum(tgt, true);

	return s.total.reads + s.total.writes;
}

/* Ctrl-C mid-run: once the run's queues have done 1000 I/Os (no ramp: all of them are measured). */
static void *press_ctrl_c(void *arg)
{
	BPT_CHECK(BPT_WAIT_UNTIL(target_ios() >= 1000, 20000), "the run did no I/O to interrupt");
	stop_flag = 1;
	return arg;
}

static void test_interrupt(void)
{
	struct perf_opts o;
	pthread_t th;
	int ret;

	OPTS(&o, "--rw", "randrw", "--iodepth", "8", "--runtime", "60", "--ramp-time", "0", "--verify", "--size",
	     "1M", "--numjobs", "2");
	stop_flag = 0;
	pthread_create(&th, NULL, press_ctrl_c, NULL);
	ret = run(&o, &stop_flag);
	pthread_join(th, NULL);
	BPT_CHECK(ret == 0, "interrupted run: %d %s", ret, err);
	BPT_CHECK(res.interrupted, "not marked interrupted");
	BPT_CHECK(perf_total_ios(&res) > 0 && res.seconds > 0 && res.seconds < 30, "partial result: %llu I/Os in %f s",
		  (unsigned long long)perf_total_ios(&res), res.seconds);
	printf("ok   %-44s %llu I/Os in %.2f s\n", "Ctrl-C: partial results", (unsigned long long)perf_total_ios(&res),
	       res.seconds);
}

int main(void)
{
	snprintf(file_path, sizeof(file_path), "/tmp/bpt-perf-%d.img", getpid());
	unlink(file_path);
	target_up();
	test_patterns();
	test_big_blocks_and_digests();
	test_batching();
	test_refusals();
	test_verify_mismatch();
	test_io_error();
	test_trim();
	test_open_loop();
	test_cpus_allowed();
	test_interrupt();
	test_modes();
	bp_nvmet_stop(tgt);
	unlink(file_path);
	printf("PASS\n");
	return bpt_exit_status();
}
