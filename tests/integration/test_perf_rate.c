/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf's open loop (--rate_iops) against a device that cannot keep up,
 * in one process (root: a loop device, the cgroup v1 blkio throttle): our target
 * serves a loop device whose reads the blkio cgroup caps at THROTTLE/s, and perf
 * offers it three times that. Then:
 *
 *  - the schedule's backlog is counted: I/Os that waited for a free slot (iodepth
 *    in flight), late ones, and those due by the end that never went out; the
 *    device did about its limit, not what was offered (the throttle held);
 *  - the latency from each I/O's intended issue time includes the queueing and
 *    the latency from its issue does not: the former's median is above the
 *    latter's P90, and every I/O's is the sum of its issue lag and its latency
 *    from the issue (the sums agree exactly);
 *  - offered a third of the limit, the same device's intended-time median is
 *    below the overloaded one's (less load, less queueing);
 *  - the table says it: the open loop's line, clat, slat and late lines.
 *
 * Orderings and counts only, never a time: the overload builds a backlog of
 * seconds against a service time of tens of milliseconds. Nothing outlives it:
 * the loop device is held open with autoclear and its file unlinked at once;
 * the cgroup is removed at exit, or by the next run of any blkio test if this
 * one was SIGKILLed (tests/lib/bpt_blk.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/target.h>

#include "bpt_blk.h"
#include "bpt_nvmet.h"
#include "bptest.h"
#include "tools/perf/perf.h"

#define NQN "nqn.2024-01.io.busypoll:perfrate"
#define THROTTLE 100          /* reads/s the cgroup lets through */
#define MIB (1u << 20)

static char cg[256], target[64], err[1024];
static struct bpt_loop dev = { .fd = -1 };
static struct bp_nvmet *tgt;
static struct perf_result res;

static void cleanup(void)
{
	if (tgt)
		bp_nvmet_stop(tgt);
	tgt = NULL;
	bpt_blk_cleanup();
	bpt_loop_detach(&dev);
}

/* device_up - a 32 MiB loop device (direct I/O) over a file unlinked at once: nothing on disk outlives us. */
static void device_up(void)
{
	char path[] = "/tmp/bpt-perf-rate-XXXXXX";
	int fd = mkstemp(path);

	BPT_CHECK(fd >= 0 && ftruncate(fd, 32 * MIB) == 0, "%s: %s", path, strerror(errno));
	close(fd);
	BPT_CHECK(bpt_loop_attach(&dev, path, true, false, 0) == 0, "loop: %s", bpt_blk_error());
	unlink(path);
}

static void target_up(void)
{
	struct bp_nvmet_cfg cfg;
	char spec[64];
	const char *specs[] = { spec };

	snprintf(spec, sizeof(spec), "file:%s", dev.dev);
	bpt_nvmet_cfg(&cfg, NQN, specs, 1);
	cfg.threads = 1;
	BPT_CHECK(bp_nvmet_start(&cfg, &tgt) == 0, "target on %s: %s", dev.dev, bp_last_error());
	snprintf(target, sizeof(target), "127.0.0.1:%u", bp_nvmet_port(tgt));
}

/* run_rate - perf --rw randread at iodepth 4 for 2 s with --rate_iops rate (0: the closed loop). */
static void run_rate(unsigned rate)
{
	char r[32];
	const char *argv[] = { "perf", "--target", target, "--nqn", NQN, "-q", "--rw", "randread", "--iodepth", "4",
			       "--runtime", "2", "--rate_iops", r, NULL };
	struct perf_opts o;
	int argc = rate ? 14 : 12, ret;

	snprintf(r, sizeof(r), "%u", rate);
	BPT_CHECK(perf_parse_opts(argc, (char **)argv, &o, err, sizeof(err)) == 0, "options: %s", err);
	ret = perf_run(&o, 1, NULL, NULL, &res, err, sizeof(err));
	BPT_CHECK(ret == 0, "perf --rate_iops %u: %d: %s", rate, ret, err);
	BPT_CHECK(res.rd.ios > 0, "perf --rate_iops %u measured no read", rate);
}

static double p(const struct bp_hist *h, double pct)
{
	return (double)bp_hist_percentile(h, pct) / 1e3;
}

int main(void)
{
	double over_p50;

	if (!bpt_is_root()) {
		printf("SKIP: needs root (a loop device, the blkio cgroup)\n");
		return BPT_SKIP;
	}
	if (access("/dev/loop-control", W_OK) != 0) {
		printf("SKIP: no loop devices here (/dev/loop-control)\n");
		return BPT_SKIP;
	}
	atexit(cleanup);
	if (bpt_blkio_create(cg, sizeof(cg))) {
		printf("SKIP: %s\n", bpt_blk_error());
		return BPT_SKIP;
	}
	device_up();
	/* the throttle holds block I/O issued by this process: the target's */
	BPT_CHECK(bpt_blkio_throttle_reads(cg, dev.rdev, THROTTLE) == 0 && bpt_blkio_enter(cg) == 0, "%s",
		  bpt_blk_error());
	target_up();

	/* three times the device's limit */
	run_rate(3 * THROTTLE);
	BPT_CHECK(perf_iops(&res, &res.rd) < 2 * THROTTLE, "the throttle did not hold: %.0f reads/s against %u",
		  perf_iops(&res, &res.rd), THROTTLE);
	BPT_CHECK(res.behind > 0, "offered 3x what the device does, yet no I/O was left behind at the end");
	BPT_CHECK(res.rd.queued > 0, "offered 3x, yet no I/O waited for a free slot (iodepth 4)");
	BPT_CHECK(res.rd.late > 0, "offered 3x, yet no I/O went out late");
	BPT_CHECK(res.rd.hist.sum == res.rd.clat.sum + res.rd.slat.sum && res.rd.clat.count == res.rd.ios,
		  "every I/O's latency from its intended time is its issue lag plus its latency from the issue");
	/* P90, not P99: a stall of the loaded machine inflates the few I/Os in flight then, never a tenth of them */
	BPT_CHECK(p(&res.rd.hist, 50) > p(&res.rd.clat, 90),
		  "the intended-time latency must include the queueing and the from-issue one not: lat P50 %.0f us, "
		  "clat P90 %.0f us", p(&res.rd.hist, 50), p(&res.rd.clat, 90));
	over_p50 = p(&res.rd.hist, 50);
	printf("ok   3x the limit: %.0f reads/s, %llu queued, %llu late, %llu behind; lat P50 %.0f us > clat P90 %.0f us\n",
	       perf_iops(&res, &res.rd), (unsigned long long)res.rd.queued, (unsigned long long)res.rd.late,
	       (unsigned long long)res.behind, over_p50, p(&res.rd.clat, 90));
	{
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		BPT_CHECK(m != NULL, "open_memstream");
		perf_print(m, &res, TOOL_FORMAT_TABLE);
		fclose(m);
		BPT_CHECK(strstr(text, "open loop      --rate_iops 300 per job") && strstr(text, "clat us") &&
				  strstr(text, "slat us") && strstr(text, "waited for a free slot") &&
				  strstr(text, "never went out"),
			  "the table does not show the open loop:\n%s", text);
		free(text);
	}

	/* a third of the limit: less queueing than the overload */
	run_rate(THROTTLE / 3);
	BPT_CHECK(p(&res.rd.hist, 50) < over_p50, "at a third of the limit lat P50 %.0f us is not below the overload's "
		  "%.0f us", p(&res.rd.hist, 50), over_p50);
	printf("ok   a third of the limit: lat P50 %.0f us < %.0f us\n", p(&res.rd.hist, 50), over_p50);

	/* the closed loop on the same device: no schedule, nothing behind */
	run_rate(0);
	BPT_CHECK(res.rd.clat.count == 0 && res.behind == 0 && res.rd.queued == 0, "a closed loop kept open-loop figures");
	printf("ok   the closed loop: %.0f reads/s\nPASS\n", perf_iops(&res, &res.rd));
	return bpt_exit_status();
}
