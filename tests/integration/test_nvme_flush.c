/* SPDX-License-Identifier: MIT */
/*
 * A Flush that can be told from a no-op. SIGKILL keeps the page cache, so a
 * target whose Flush returned success without syncing passed every restart and
 * kill test. Here the target's namespace is a loop block device (file:/dev/loopN
 * over an image in /tmp), and the kernel counts what reaches it: the device's
 * own flush requests and sectors written (/sys/block/loopN/stat), and the bytes
 * the loop driver wrote into its backing image. A buffered write reaches
 * neither; a sync of the device (fdatasync, or io_uring's fsync) issues a flush
 * request after writing the dirty pages through. So, on the target's own
 * counters of the kernel:
 *  - a plain Write issues no flush request;
 *  - Flush (nsid 1, and nsid 0xffffffff: every namespace) issues one, and the
 *    data written before it is in the image behind the device;
 *  - a Write with FUA issues one, in the capsule and by R2T alike;
 *  - a shutdown (CC.SHN, from the initiator's disconnect) issues one;
 *  - stopping the target issues one;
 * and the target's own counters agree: 2 Flush, 4 writes, 3 of them by R2T.
 * Root only (loop devices); the device is set up with LO_FLAGS_AUTOCLEAR, so it
 * goes away with the last descriptor however the test ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_faults.h"
#include "bpt_nvmet.h"
#include "bpt_testbed.h"
#include "bptest.h"

#define NQN "nqn.2024-01.io.busypoll:flush"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:f1a50000-0000-4000-8000-000000000001"
#define IMG_SIZE (16u << 20)
#define RW_FUA (1u << 30)

static char dir[] = "/tmp/bpt-flush-XXXXXX";
static char img[300], dev[64], stat_path[128];
static struct bp_loop *loop;

/* The device's counters we read: flush requests and sectors written (Documentation/block/stat.rst). */
struct devstat {
	uint64_t flushes, sectors_written;
};

static struct devstat devstat(void)
{
	FILE *f = fopen(stat_path, "r");
	unsigned long long v[17] = { 0 };
	struct devstat s;
	int n;

	BPT_CHECK(f, "%s: %s", stat_path, strerror(errno));
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13], &v[14],
		   &v[15], &v[16]);
	fclose(f);
	BPT_CHECK(n == 17, "%s: %d fields, this kernel's has 17 (flush requests are fields 16, 17)", stat_path, n);
	s.flushes = v[15];
	s.sectors_written = v[6];
	return s;
}

/* loop_up - a loop device over img that detaches itself when its last descriptor closes. */
static int loop_up(void)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), bfd = open(img, O_RDWR | O_CLOEXEC);

	BPT_CHECK(ctl >= 0, "/dev/loop-control: %s", strerror(errno));
	BPT_CHECK(bfd >= 0, "%s: %s", img, strerror(errno));
	for (int tries = 0; tries < 20; tries++) {
		struct loop_config cfg = { .fd = (uint32_t)bfd, .block_size = 512 };
		int n = ioctl(ctl, LOOP_CTL_GET_FREE), lfd;

		BPT_CHECK(n >= 0, "LOOP_CTL_GET_FREE: %s", strerror(errno));
		snprintf(dev, sizeof(dev), "/dev/loop%d", n);
		lfd = open(dev, O_RDWR | O_CLOEXEC);
		BPT_CHECK(lfd >= 0, "%s: %s", dev, strerror(errno));
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			close(bfd);
			close(ctl);
			snprintf(stat_path, sizeof(stat_path), "/sys/block/loop%d/stat", n);
			return lfd;
		}
		BPT_CHECK(errno == EBUSY, "LOOP_CONFIGURE %s: %s", dev, strerror(errno));
		close(lfd); /* another process took it first */
	}
	BPT_CHECK(0, "no free loop device after 20 tries");
	return -1;
}

static struct bp_nvmet *target_up(void)
{
	struct bp_nvmet_cfg cfg;
	struct bp_nvmet *t;
	char spec[128];
	const char *specs[] = { spec, "ram:1M" };

	snprintf(spec, sizeof(spec), "file:%s", dev);
	bpt_nvmet_cfg(&cfg, NQN, specs, 2);
	cfg.threads = 1;
	BPT_CHECK(bp_nvmet_start(&cfg, &t) == 0, "target on %s: %s", dev, bp_last_error());
	return t;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		b[i] = (uint8_t)(seed >> 24);
	}
}

static void io(struct bp_nvmeh_queue *q, uint8_t *sqe, void *buf, uint32_t len, bool write, const char *what)
{
	int ret = bp_nvmeh_sync(q, sqe, buf, len, write, NULL, 10000);

	BPT_CHECK(ret == 0, "%s: %d %s", what, ret, ret < 0 ? bp_last_error() : "");
}

static void write_blocks(struct bp_nvmeh_queue *q, uint64_t slba, uint8_t *buf, uint32_t len, bool fua)
{
	uint8_t sqe[64];

	bp_nvmeh_sqe_rw(sqe, true, 1, slba, len / 512);
	if (fua)
		bp_nvme_sqe_set_dw(sqe, 12, bp_nvme_sqe_dw(sqe, 12) | RW_FUA);
	io(q, sqe, buf, len, true, fua ? "write with FUA" : "write");
}

static void flush(struct bp_nvmeh_queue *q, uint32_t nsid)
{
	uint8_t sqe[64];

	bp_nvmeh_sqe_flush(sqe, nsid);
	io(q, sqe, NULL, 0, false, "flush");
}

/* in_image - the backing image holds buf at off: the loop driver wrote it there. */
static bool in_image(const uint8_t *buf, uint32_t len, uint64_t off)
{
	uint8_t *back = malloc(len);
	int fd = open(img, O_RDONLY | O_CLOEXEC);
	bool same;

	BPT_CHECK(back && fd >= 0, "%s: %s", img, strerror(errno));
	BPT_CHECK(pread(fd, back, len, (off_t)off) == (ssize_t)len, "pread %s: %s", img, strerror(errno));
	same = !memcmp(back, buf, len);
	close(fd);
	free(back);
	return same;
}

/* A sync reached the device: at least one flush request since before. */
static void synced(const struct devstat *before, const char *what)
{
	struct devstat now = devstat();

	BPT_CHECK(now.flushes > before->flushes, "%s issued no flush request to %s (flushes %llu before and after): "
		  "it did not sync the namespace", what, dev, (unsigned long long)now.flushes);
	printf("ok   %-46s %llu flush request(s) to %s\n", what,
	       (unsigned long long)(now.flushes - before->flushes), dev);
}

int main(void)
{
	static uint8_t a[65536], b[4096];
	struct bp_nvmet *t;
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_queue *q;
	struct devstat s0, s1;
	struct bp_mode m;
	int lfd, fd;

	signal(SIGPIPE, SIG_IGN);
	bpt_require_root("a namespace on a loop device");
	BPT_CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	bpt_rmdir_at_exit(dir);
	snprintf(img, sizeof(img), "%s/ns.img", dir);
	fd = open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	BPT_CHECK(fd >= 0 && ftruncate(fd, IMG_SIZE) == 0, "%s: %s", img, strerror(errno));
	close(fd);
	lfd = loop_up();
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "loop: %s", bp_last_error());
	t = target_up();
	c = bpt_nvmeh_up(loop, bp_nvmet_port(t), NQN, HOSTNQN, &q);

	/* A plain write: in the page cache of the device, nothing sent to it. */
	fill(a, sizeof(a), 1);
	s0 = devstat();
	write_blocks(q, 0, a, sizeof(a), false);
	s1 = devstat();
	BPT_CHECK(s1.flushes == s0.flushes, "a plain Write issued %llu flush request(s): the check below would not "
		  "tell a Flush from a write", (unsigned long long)(s1.flushes - s0.flushes));
	/* Flush: the dirty pages written through, then a flush request. */
	flush(q, 1);
	synced(&s1, "Flush nsid 1");
	s1 = devstat();
	BPT_CHECK(s1.sectors_written - s0.sectors_written >= sizeof(a) / 512,
		  "after Flush only %llu sectors reached %s, the write before it was %zu",
		  (unsigned long long)(s1.sectors_written - s0.sectors_written), dev, sizeof(a) / 512);
	BPT_CHECK(in_image(a, sizeof(a), 0), "after Flush the image behind %s does not hold the data written", dev);
	/* Flush of every namespace. */
	fill(a, sizeof(a), 2);
	write_blocks(q, 256, a, sizeof(a), false);
	flush(q, 0xffffffffu);
	synced(&s1, "Flush nsid 0xffffffff (every namespace)");
	BPT_CHECK(in_image(a, sizeof(a), 256 * 512), "after Flush of every namespace the image lacks the data");
	/* A write with FUA: synced before it completes. */
	s1 = devstat();
	fill(b, sizeof(b), 3);
	write_blocks(q, 1024, b, sizeof(b), true);
	synced(&s1, "Write with FUA (4 KiB, in the capsule)");
	BPT_CHECK(in_image(b, sizeof(b), 1024 * 512), "after a FUA write the image lacks its data");
	s1 = devstat();
	fill(a, sizeof(a), 4);
	write_blocks(q, 2048, a, sizeof(a), true);
	synced(&s1, "Write with FUA (64 KiB, by R2T)");
	BPT_CHECK(in_image(a, sizeof(a), 2048 * 512), "after a FUA write by R2T the image lacks its data");
	/* The target counted what the host sent: its flushes, writes and R2Ts. */
	{
		struct bp_nvmet_queue_stats s = bpt_nvmet_sum(t, false).total;
		uint64_t flushes = s.flushes, writes = s.writes, r2ts = s.r2ts;

		BPT_CHECK(flushes == 2 && writes == 4 && r2ts == 3,
			  "the target counted %llu flushes, %llu writes, %llu R2Ts; the host sent 2 Flush and 4 writes, three "
			  "of 64 KiB (beyond the in-capsule size: by R2T)", (unsigned long long)flushes,
			  (unsigned long long)writes, (unsigned long long)r2ts);
	}
	/* Shutdown (CC.SHN) by the initiator's disconnect. */
	bp_nvmeh_queue_close(q);
	s1 = devstat();
	bp_nvmeh_ctrl_disconnect(c);
	synced(&s1, "shutdown (CC.SHN)");
	/* Stopping the target. */
	s1 = devstat();
	bp_nvmet_stop(t);
	synced(&s1, "target stop");
	bp_loop_destroy(loop);
	close(lfd); /* the last descriptor: LO_FLAGS_AUTOCLEAR detaches the device */
	printf("PASS\n");
	return bpt_exit_status();
}
