/* SPDX-License-Identifier: MIT */
/*
 * busypoll target when storage is slow or fails, in one process over loopback,
 * on both engine backends (root: loop devices, the blkio cgroup, mounts):
 *
 *  1. A slow namespace does not stall a fast one on the same loop thread: a loop
 *     device throttled by the cgroup v1 blkio throttle to 100 reads/s beside an
 *     unthrottled one, both served by the target's one thread, 32 reads kept
 *     outstanding on each from two I/O queues. While the slow one always has reads
 *     outstanding, the fast one completes thousands: at least 20 times as many as
 *     the slow one (served one at a time, they would complete about as many). The
 *     kernel's own count (blkio.throttle.io_serviced) shows the throttle held the
 *     slow device; the target's storage counters show its depth bound (--io-depth 8:
 *     never more in flight, the rest waited). Then the slow queue's host goes away
 *     with reads in flight, the fast one keeps working, and the target stops with
 *     throttled reads in flight on another queue.
 *  2. Errors, each with the status a host understands, logged once per queue, and
 *     the queue and every other one going on: a read-only file (a read-only bind
 *     mount) and a read-only loop device (NSATTR write protected; writes, Write
 *     Zeroes and deallocate get Namespace is Write Protected, reads work); a full
 *     file system (a 1 MiB tmpfs under an 8 MiB namespace: Capacity Exceeded); a
 *     file truncated under the target (a read past its new end: Unrecovered Read
 *     Error, DNR); a file system that goes away (ext4 on a loop device, shut down
 *     with EXT4_IOC_SHUTDOWN: every I/O EIO: Unrecovered Read Error and Write
 *     Fault, retryable).
 *
 * Nothing outlives it (tests/lib/bpt_blk.h). Timing is never asserted: the
 * slow/fast check is a ratio of counts in one window.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_blk.h"
#include "bptest.h"
#include "base/bytes.h"

#define NQN "nqn.2024-01.io.busypoll:storage-faults"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:5702a9e0-0000-4000-8000-0000000000fa"
#define MIB (1u << 20)
#define SLOW_IOPS 100
#define FAST_GOAL 3000
#define QD 32

/* XFS_IOC_GOINGDOWN, which ext4 implements as EXT4_IOC_SHUTDOWN (not in the uapi headers). */
#define BPT_IOC_SHUTDOWN _IOR('X', 125, uint32_t)
#define BPT_GOING_NOLOGFLUSH 0x2

static char dir[] = "/tmp/bpt-sfaults-XXXXXX";
static bool dir_made;
static char cg[256];
static struct bpt_loop lslow, lfast, lro, lext4;
static struct bp_nvmet *tgt;
static struct bp_loop *hloop;
static struct sockaddr_in taddr;
static char log_path[300];
static FILE *log_file;

static void target_down(void);

static void cleanup(void)
{
	if (tgt)
		target_down();
	bpt_blk_cleanup();
	/* the mounts die with our mount namespace; unmount anyway to let the loop devices go now */
	{
		const char *sub[] = { "ro", "tmpfs", "ext4" };

		for (size_t i = 0; i < 3; i++) {
			char p[400];

			snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
			bpt_umount(p);
		}
	}
	bpt_loop_detach(&lslow);
	bpt_loop_detach(&lfast);
	bpt_loop_detach(&lro);
	bpt_loop_detach(&lext4);
	if (dir_made) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		bpt_run_cmd(cmd);
	}
}

static void file_of(const char *name, uint64_t size, char *out, size_t n)
{
	int fd;

	snprintf(out, n, "%s/%s", dir, name);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	BPT_CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "%s: %s", out, strerror(errno));
	close(fd);
}

static void loop_over_new_file(struct bpt_loop *l, const char *name, bool read_only)
{
	char p[400];

	file_of(name, 32 * MIB, p, sizeof(p));
	BPT_CHECK(bpt_loop_attach(l, p, true, read_only, 0) == 0, "loop: %s", bpt_blk_error());
	unlink(p);
}

static void target_up(const char *mode, const char *const *specs, int n, uint32_t io_depth)
{
	struct bp_nvmet_cfg cfg;
	char e[300];

	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
	for (int i = 0; i < n; i++)
		BPT_CHECK(bp_nvmet_ns_parse(specs[i], &cfg.ns[i], e, sizeof(e)) == 0, "%s", e);
	cfg.n_ns = n;
	cfg.threads = 1; /* every queue on one loop thread */
	cfg.max_queues = 4;
	cfg.io_depth = io_depth;
	cfg.log_level = getenv("BPT_VERBOSE") ? BP_NVMET_LOG_DEBUG : BP_NVMET_LOG_WARN;
	cfg.log = log_file = fopen(log_path, "w");
	BPT_CHECK(cfg.log, "%s: %s", log_path, strerror(errno));
	BPT_CHECK(bp_mode_parse(mode, &cfg.mode, e, sizeof(e)) == 0, "%s", e);
	BPT_CHECK(bp_nvmet_start(&cfg, &tgt) == 0, "target: %s", bp_last_error());
	taddr.sin_family = AF_INET;
	taddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	taddr.sin_port = htons(bp_nvmet_port(tgt));
}

static void target_down(void)
{
	bp_nvmet_stop(tgt);
	tgt = NULL;
	fclose(log_file);
	log_file = NULL;
}

/* How many lines of the target's log contain what. */
static int log_count(const char *what)
{
	FILE *f = fopen(log_path, "r");
	char line[2048];
	int n = 0;

	BPT_CHECK(f, "%s", log_path);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

static struct bp_nvmeh_ctrl *ctrl_up(uint16_t nq)
{
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_ctrl *c = NULL;
	int ret;

	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), NQN);
	snprintf(o.hostnqn, sizeof(o.hostnqn), HOSTNQN);
	o.kato_ms = 0; /* the host's loop does not always run while we look */
	o.timeout_ms = 30000;
	ret = bp_nvmeh_ctrl_connect(hloop, (struct sockaddr *)&taddr, sizeof(taddr), &o, nq, &c);
	BPT_CHECK(ret == 0, "connect: %d %s", ret, bp_last_error());
	return c;
}

/* ---- 1. a slow namespace beside a fast one ---- */

struct reader {
	struct bp_nvmeh_queue *q;
	uint32_t nsid;
	uint8_t buf[QD][4096];
	uint64_t submitted, done;
	uint32_t next;
	bool stop;
	int err;
};

static void read_done(void *arg, const struct bp_nvme_cqe *cqe, int err);

static void read_one(struct reader *r, uint32_t slot)
{
	uint8_t sqe[64];

	bp_nvmeh_sqe_rw(sqe, false, r->nsid, (uint64_t)(r->next++ % 4096) * 8, 8);
	BPT_CHECK(bp_nvmeh_submit(r->q, sqe, r->buf[slot], 4096, false, read_done, &r->buf[slot]) == 0,
		  "submit on nsid %u", r->nsid);
	r->submitted++;
}

static struct reader *readers[2];

static void read_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	for (int i = 0; i < 2; i++) {
		struct reader *r = readers[i];

		if (!r || (uint8_t(*)[4096])arg < r->buf || (uint8_t(*)[4096])arg >= r->buf + QD)
			continue;
		if (err || !cqe || cqe->status) {
			r->err = err ? err : cqe->status;
			return;
		}
		r->done++;
		if (!r->stop)
			read_one(r, (uint32_t)((uint8_t(*)[4096])arg - r->buf));
		return;
	}
}

static void slow_beside_fast(const char *mode)
{
	char sspec[64], fspec[64];
	const char *specs[2] = { sspec, fspec };
	struct bp_nvmeh_ctrl *c;
	struct reader *slow = calloc(1, sizeof(*slow)), *fast = calloc(1, sizeof(*fast));
	struct bp_nvmet_storage_stats st[4];
	uint64_t serviced0, serviced1, t_end;
	size_t n = 0;

	BPT_CHECK(slow && fast, "oom");
	snprintf(sspec, sizeof(sspec), "file:%s", lslow.dev);
	snprintf(fspec, sizeof(fspec), "file:%s", lfast.dev);
	target_up(mode, specs, 2, 8);
	c = ctrl_up(3);
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, hloop, 1, &slow->q) == 0, "queue 1: %s", bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, hloop, 2, &fast->q) == 0, "queue 2: %s", bp_last_error());
	slow->nsid = 1;
	fast->nsid = 2;
	readers[0] = slow;
	readers[1] = fast;
	BPT_CHECK(bpt_blkio_reads(cg, lslow.rdev, &serviced0) == 0, "%s", bpt_blk_error());
	for (uint32_t i = 0; i < QD; i++) {
		read_one(slow, i);
		read_one(fast, i);
	}
	/* The window: until the fast one did its goal (a generous cap if it cannot). */
	t_end = bpt_now_ns() + 60ull * 1000000000ull;
	while (fast->done < FAST_GOAL && !fast->err && !slow->err && bpt_now_ns() < t_end)
		bp_loop_run_once(hloop, 100000);
	BPT_CHECK(!fast->err && !slow->err, "reads failed: fast %d slow %d", fast->err, slow->err);
	/* the slow one was busy the whole window: it still has reads outstanding now */
	BPT_CHECK(slow->submitted - slow->done == QD, "the slow namespace ran out of work (%llu of %llu done)",
		  (unsigned long long)slow->done, (unsigned long long)slow->submitted);
	BPT_CHECK(fast->done >= FAST_GOAL, "%s: the fast namespace did only %llu reads in 60 s beside the slow one",
		  mode, (unsigned long long)fast->done);
	BPT_CHECK(fast->done >= 20 * (slow->done + 1), "%s: the fast namespace did %llu reads while the slow one did "
		  "%llu: stalled behind it", mode, (unsigned long long)fast->done, (unsigned long long)slow->done);
	/* The kernel's count: the throttle held the slow device. */
	BPT_CHECK(bpt_blkio_reads(cg, lslow.rdev, &serviced1) == 0, "%s", bpt_blk_error());
	BPT_CHECK(serviced1 > serviced0 && serviced1 - serviced0 <= slow->done + 8 + 1,
		  "blkio io_serviced: %llu reads of the slow device for %llu completed", (unsigned long long)(serviced1 -
		  serviced0), (unsigned long long)slow->done);
	/* The target's depth bound to each device: 8 in flight at most, the rest waited. */
	BPT_CHECK(bp_nvmet_storage_snapshot(tgt, st, 4, &n) == 0 && n == 2, "storage snapshot: %zu", n);
	for (size_t i = 0; i < n; i++) {
		BPT_CHECK(st[i].aio.depth == 8 && st[i].aio.max_inflight == 8, "nsid %u: depth %u, at most %u in flight",
			  st[i].nsid, st[i].aio.depth, st[i].aio.max_inflight);
		BPT_CHECK(st[i].nsid != 1 || (st[i].aio.waited > 0 && st[i].aio.waiting > 0),
			  "slow nsid: %llu waited, %u waiting now", (unsigned long long)st[i].aio.waited,
			  st[i].aio.waiting);
	}
	printf("ok   %s: beside a namespace throttled to %u reads/s (%llu done, %llu by the kernel's count), the "
	       "other on the same thread did %llu reads; depth 8 to each, the rest waited\n", mode, SLOW_IOPS,
	       (unsigned long long)slow->done, (unsigned long long)(serviced1 - serviced0),
	       (unsigned long long)fast->done);

	/* The slow queue's host goes away with its reads in flight; the fast one keeps going. */
	slow->stop = true;
	bp_nvmeh_queue_close(slow->q);
	readers[0] = NULL;
	{
		uint64_t before = fast->done;

		t_end = bpt_now_ns() + 30ull * 1000000000ull;
		while (fast->done < before + 500 && !fast->err && bpt_now_ns() < t_end)
			bp_loop_run_once(hloop, 100000);
		BPT_CHECK(!fast->err && fast->done >= before + 500, "the fast queue stopped after the slow host left");
	}
	fast->stop = true;
	while (fast->submitted != fast->done && !fast->err)
		bp_loop_run_once(hloop, 100000);
	bp_nvmeh_queue_close(fast->q);
	/* And a third queue with throttled reads in flight when the target stops. */
	{
		struct reader *r = calloc(1, sizeof(*r));

		BPT_CHECK(r, "oom");
		BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, hloop, 3, &r->q) == 0, "queue 3: %s", bp_last_error());
		r->nsid = 1;
		readers[0] = r;
		for (uint32_t i = 0; i < QD; i++)
			read_one(r, i);
		for (int i = 0; i < 5; i++)
			bp_loop_run_once(hloop, 1000);
		target_down(); /* waits for the kernel's I/O; the queue's memory outlives its connection */
		bp_nvmeh_queue_close(r->q);
		readers[0] = NULL;
		free(r);
	}
	bp_nvmeh_ctrl_close(c);
	readers[1] = NULL;
	free(slow);
	free(fast);
	printf("ok   %s: a host gone with reads in flight, a stop with reads in flight: the rest went on\n", mode);
}

/* ---- 2. errors ---- */

static int io(struct bp_nvmeh_queue *q, bool write, uint32_t nsid, uint64_t slba, void *buf, uint32_t len)
{
	uint8_t sqe[64];

	bp_nvmeh_sqe_rw(sqe, write, nsid, slba, len / 512);
	return bp_nvmeh_sync(q, sqe, buf, len, write, NULL, 10000);
}

static int cmd_nodata(struct bp_nvmeh_queue *q, uint8_t *sqe)
{
	return bp_nvmeh_sync(q, sqe, NULL, 0, false, NULL, 10000);
}

/* The healthy namespace still does verified I/O on both queues. */
static void others_go_on(struct bp_nvmeh_queue *qa, struct bp_nvmeh_queue *qb, uint32_t ram_nsid, const char *after)
{
	static uint32_t seed = 1;
	uint8_t w[8192], r[8192];

	for (int k = 0; k < 2; k++) {
		struct bp_nvmeh_queue *q = k ? qb : qa;

		for (size_t i = 0; i < sizeof(w); i++)
			w[i] = (uint8_t)(seed = seed * 1103515245u + 12345u) >> 16;
		BPT_CHECK(io(q, true, ram_nsid, 64, w, sizeof(w)) == 0, "after %s: a write to the ram namespace failed",
			  after);
		BPT_CHECK(io(q, false, ram_nsid, 64, r, sizeof(r)) == 0 && !memcmp(w, r, sizeof(w)),
			  "after %s: the ram namespace read back wrong", after);
	}
}

static void errors(const char *mode)
{
	char ro_file[400], ro_spec[460], ro_loop[64], full_spec[460], trunc_file[400], trunc_spec[460], eio_spec[460],
		p[400];
	const char *specs[6] = { ro_spec, ro_loop, full_spec, trunc_spec, eio_spec, "ram:16M" };
	enum { RO_FILE = 1, RO_LOOP, FULL, TRUNC, EIO_NS, RAM };
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_queue *qa, *qb;
	struct bp_nvmeh_ns_info ni;
	uint8_t sqe[64], *buf = aligned_alloc(4096, MIB), ranges[BP_NVME_DSM_RANGE_LEN];
	int ret, fd;

	BPT_CHECK(buf, "oom");
	memset(buf, 0x5a, MIB);
	/* A read-only file: its directory bind-mounted read-only. */
	snprintf(p, sizeof(p), "%s/ro-src", dir);
	BPT_CHECK(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s", p);
	file_of("ro-src/ro.img", 8 * MIB, ro_file, sizeof(ro_file));
	snprintf(ro_file, sizeof(ro_file), "%s/ro", dir);
	BPT_CHECK(mkdir(ro_file, 0700) == 0 || errno == EEXIST, "mkdir %s", ro_file);
	BPT_CHECK(bpt_mount(p, ro_file, NULL, MS_BIND, NULL) == 0 &&
		  bpt_mount(NULL, ro_file, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) == 0, "%s", bpt_blk_error());
	snprintf(ro_spec, sizeof(ro_spec), "file:%s/ro.img", ro_file);
	snprintf(ro_loop, sizeof(ro_loop), "file:%s", lro.dev);
	/* A full file system: 1 MiB of tmpfs under an 8 MiB namespace. */
	snprintf(p, sizeof(p), "%s/tmpfs", dir);
	BPT_CHECK(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s", p);
	BPT_CHECK(bpt_mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0, "%s", bpt_blk_error());
	snprintf(full_spec, sizeof(full_spec), "file:%s/full.img,size=8M", p);
	/* A file to truncate under the target. */
	file_of("trunc.img", 8 * MIB, trunc_file, sizeof(trunc_file));
	snprintf(trunc_spec, sizeof(trunc_spec), "file:%s", trunc_file);
	/* A file system that will go away: ext4 on a loop device. */
	snprintf(p, sizeof(p), "mkfs.ext4 -q -F %s", lext4.dev);
	BPT_CHECK(bpt_run_cmd(p) == 0, "%s", bpt_blk_error());
	snprintf(p, sizeof(p), "%s/ext4", dir);
	BPT_CHECK(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s", p);
	BPT_CHECK(bpt_mount(lext4.dev, p, "ext4", 0, NULL) == 0, "%s", bpt_blk_error());
	snprintf(eio_spec, sizeof(eio_spec), "file:%s/ns.img,size=8M", p);

	target_up(mode, specs, 6, 128);
	c = ctrl_up(2);
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, hloop, 1, &qa) == 0, "queue 1: %s", bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, hloop, 2, &qb) == 0, "queue 2: %s", bp_last_error());

	/* Read-only, both kinds. */
	for (uint32_t ns = RO_FILE; ns <= RO_LOOP; ns++) {
		BPT_CHECK(bp_nvmeh_identify_ns(c, ns, &ni) == 0 && ni.read_only, "nsid %u: not reported read-only", ns);
		ret = io(qa, true, ns, 0, buf, 4096);
		BPT_CHECK(ret == (BP_NVME_SC_NS_WRITE_PROTECTED | BP_NVME_DNR), "nsid %u: write: 0x%x", ns, ret);
		bp_nvmeh_sqe_write_zeroes(sqe, ns, 0, 8, false);
		ret = cmd_nodata(qa, sqe);
		BPT_CHECK(ret == (BP_NVME_SC_NS_WRITE_PROTECTED | BP_NVME_DNR), "nsid %u: write zeroes: 0x%x", ns, ret);
		bp_nvmeh_dsm_range(ranges, 0, 8);
		bp_nvmeh_sqe_dsm(sqe, ns, 1);
		ret = bp_nvmeh_sync(qa, sqe, ranges, sizeof(ranges), true, NULL, 10000);
		BPT_CHECK(ret == (BP_NVME_SC_NS_WRITE_PROTECTED | BP_NVME_DNR), "nsid %u: deallocate: 0x%x", ns, ret);
		BPT_CHECK(io(qa, false, ns, 0, buf, 65536) == 0, "nsid %u: read of a read-only namespace failed", ns);
		bp_nvmeh_sqe_flush(sqe, ns);
		BPT_CHECK(cmd_nodata(qa, sqe) == 0, "nsid %u: flush", ns);
	}
	BPT_CHECK(log_count("Namespace is Write Protected") == 1, "write-protected: %d log lines for one queue (want 1)",
		  log_count("Namespace is Write Protected"));
	others_go_on(qa, qb, RAM, "writes to read-only namespaces");
	printf("ok   %s: read-only file and loop device: write protected (NSATTR), Namespace is Write Protected (DNR) "
	       "for writes, Write Zeroes, deallocate; reads and Flush work; logged once\n", mode);

	/* A full file system. */
	ret = 0;
	for (uint32_t i = 0; i < 8 && !ret; i++)
		ret = io(qa, true, FULL, (uint64_t)i * (MIB / 512), buf, MIB);
	BPT_CHECK(ret == (BP_NVME_SC_CAP_EXCEEDED | BP_NVME_DNR), "8 MiB into 1 MiB of tmpfs: 0x%x", ret);
	BPT_CHECK(io(qa, false, FULL, 0, buf, 65536) == 0, "the full namespace's first blocks do not read");
	others_go_on(qa, qb, RAM, "a full file system");
	printf("ok   %s: a full file system: Capacity Exceeded (DNR); the queue and the others go on\n", mode);

	/* A file truncated under the target. */
	BPT_CHECK(io(qa, true, TRUNC, 8192, buf, 65536) == 0, "write before the truncation");
	BPT_CHECK(truncate(trunc_file, MIB) == 0, "truncate: %s", strerror(errno));
	ret = io(qa, false, TRUNC, 8192, buf, 65536);
	BPT_CHECK(ret == (BP_NVME_SC_READ_ERROR | BP_NVME_DNR), "a read past the truncated end: 0x%x", ret);
	BPT_CHECK(io(qa, false, TRUNC, 0, buf, 65536) == 0, "a read before the truncated end failed");
	BPT_CHECK(log_count("truncated under the target") == 1, "truncation logged %d times",
		  log_count("truncated under the target"));
	others_go_on(qa, qb, RAM, "a truncated file");
	printf("ok   %s: a truncated file: Unrecovered Read Error (DNR) past its end, fine before it\n", mode);

	/* A file system that goes away: ext4 shut down under the target. */
	BPT_CHECK(io(qa, true, EIO_NS, 0, buf, 65536) == 0, "write before the shutdown");
	snprintf(p, sizeof(p), "%s/ext4", dir);
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	BPT_CHECK(fd >= 0, "%s: %s", p, strerror(errno));
	{
		uint32_t how = BPT_GOING_NOLOGFLUSH;

		BPT_CHECK(ioctl(fd, BPT_IOC_SHUTDOWN, &how) == 0, "EXT4_IOC_SHUTDOWN: %s", strerror(errno));
	}
	close(fd);
	ret = io(qa, false, EIO_NS, 0, buf, 65536);
	BPT_CHECK(ret == BP_NVME_SC_READ_ERROR, "a read from a shut-down file system: 0x%x", ret);
	ret = io(qa, true, EIO_NS, 0, buf, 65536);
	BPT_CHECK(ret == BP_NVME_SC_WRITE_FAULT, "a write to a shut-down file system: 0x%x", ret);
	bp_nvmeh_sqe_flush(sqe, EIO_NS);
	ret = cmd_nodata(qa, sqe);
	BPT_CHECK(ret == BP_NVME_SC_WRITE_FAULT, "a flush of a shut-down file system: 0x%x", ret);
	ret = io(qb, false, EIO_NS, 0, buf, 65536);
	BPT_CHECK(ret == BP_NVME_SC_READ_ERROR, "the other queue's read: 0x%x", ret);
	BPT_CHECK(log_count("Input/output error") == 2, "EIO logged %d times for two queues (once per queue)",
		  log_count("Input/output error"));
	others_go_on(qa, qb, RAM, "a file system that went away");
	printf("ok   %s: a file system gone (EIO): Unrecovered Read Error, Write Fault (retryable), logged once per "
	       "queue; the queues and the others go on\n", mode);

	bp_nvmeh_queue_close(qa);
	bp_nvmeh_queue_close(qb);
	bp_nvmeh_ctrl_disconnect(c);
	target_down();
	/* the next backend gets fresh file systems */
	{
		const char *sub[] = { "ro", "tmpfs", "ext4" };

		for (size_t i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
			bpt_umount(p);
		}
	}
	free(buf);
}

int main(void)
{
	static const char *const modes[] = { "epoll:block", "uring:block" };
	struct bp_mode m;
	char e[200];

	if (!bpt_is_root()) {
		printf("SKIP: needs root (loop devices, the blkio cgroup, mounts)\n");
		return BPT_SKIP;
	}
	if (access("/dev/loop-control", W_OK) != 0) {
		printf("SKIP: no loop devices here (/dev/loop-control)\n");
		return BPT_SKIP;
	}
	if (bpt_run_cmd("command -v mkfs.ext4") != 0) {
		printf("SKIP: mkfs.ext4 is missing (apt-get install e2fsprogs)\n");
		return BPT_SKIP;
	}
	BPT_CHECK(bpt_blk_private_mounts() == 0, "%s", bpt_blk_error());
	BPT_CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	dir_made = true;
	snprintf(log_path, sizeof(log_path), "%s/target.log", dir);
	lslow.fd = lfast.fd = lro.fd = lext4.fd = -1;
	atexit(cleanup);
	if (bpt_blkio_create(cg, sizeof(cg))) {
		printf("SKIP: %s\n", bpt_blk_error());
		return BPT_SKIP;
	}
	loop_over_new_file(&lslow, "slow.img", false);
	loop_over_new_file(&lfast, "fast.img", false);
	loop_over_new_file(&lro, "ro-loop.img", true);
	BPT_CHECK(bp_mode_parse("epoll:block", &m, e, sizeof(e)) == 0 && bp_loop_create(&hloop, &m) == 0, "host loop");
	/* The throttle holds block I/O issued by this process: the target's. */
	BPT_CHECK(bpt_blkio_throttle_reads(cg, lslow.rdev, SLOW_IOPS) == 0 && bpt_blkio_enter(cg) == 0, "%s",
		  bpt_blk_error());
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!bpt_mode_usable(modes[i], &m))
			continue;
		slow_beside_fast(modes[i]);
	}
	bpt_blk_cleanup();
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char p[400];

		if (!bpt_mode_usable(modes[i], &m))
			continue;
		loop_over_new_file(&lext4, "ext4.img", false);
		errors(modes[i]);
		bpt_loop_detach(&lext4);
		snprintf(p, sizeof(p), "%s/trunc.img", dir);
		unlink(p);
	}
	bp_loop_destroy(hloop);
	return 0;
}
