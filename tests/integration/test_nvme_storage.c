/* SPDX-License-Identifier: MIT */
/*
 * busypoll target on real storage, in one process over loopback, on both engine
 * backends:
 *
 *  - namespaces on a file and on loop devices, O_DIRECT (the default) and through
 *    the page cache (,buffered): what each turned out to be (block device or file,
 *    O_DIRECT as the kernel's fdinfo shows it, the block size, the write cache,
 *    zeroing and deallocation); a loop device with 4096-byte sectors is served with
 *    4096-byte blocks, and bs=512 on it is refused;
 *  - `busypoll perf --verify` for every --rw at iodepth 1 and 32 on each of them;
 *    the target's storage queues had several I/Os in flight at once (so they are
 *    not served one at a time), and the loop device's own counters show the reads
 *    reached it;
 *  - Write Zeroes (with and without DEAC), Dataset Management deallocate, FUA
 *    writes and Flush, each checked by reading back: zeros where Identify says
 *    deallocated blocks read as zeros, the blocks beside untouched; a FUA write and
 *    a Flush reach a loop device as flushes (its counters); Identify's ONCS, VWC,
 *    DLFEAT and WZSL as the namespaces support.
 *
 * Loop devices need root: without it only the file namespaces run (said on a SKIP
 * line). Timing is never asserted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_blk.h"
#include "bptest.h"
#include "base/bytes.h"
#include "tools/perf/perf.h"

#define NQN "nqn.2024-01.io.busypoll:storage"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:5702a9e0-0000-4000-8000-000000000015"
#define MIB (1u << 20)

enum { NS_FILE = 1, NS_FILE_BUF, NS_LOOP, NS_LOOP_BUF, NS_RAM, NS_LOOP4K, NS_MAX = NS_LOOP4K };

static char dir[] = "/tmp/bpt-storage-XXXXXX";
static char path[NS_MAX + 1][300];
static struct bpt_loop loops[NS_MAX + 1];
static bool have_loops;
static int n_ns;
static struct bp_nvmet *tgt;
static char target_addr[64], err[1024];
static struct perf_result res;
static struct sockaddr_in taddr;

static void cleanup(void)
{
	if (tgt)
		bp_nvmet_stop(tgt);
	tgt = NULL;
	for (int i = 0; i <= NS_MAX; i++)
		bpt_loop_detach(&loops[i]);
	for (int i = 0; i <= NS_MAX; i++)
		if (path[i][0] && strncmp(path[i], "/dev/", 5))
			unlink(path[i]);
	rmdir(dir);
}

static void make_file(int ns, uint64_t size)
{
	int fd;

	snprintf(path[ns], sizeof(path[ns]), "%s/ns%d.img", dir, ns);
	fd = open(path[ns], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	BPT_CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "%s: %s", path[ns], strerror(errno));
	close(fd);
}

/* A loop device over a new file; the namespace is the device. */
static void make_loop(int ns, uint32_t sector)
{
	char backing[320];
	int fd;

	snprintf(backing, sizeof(backing), "%s/loop%d.img", dir, ns);
	fd = open(backing, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	BPT_CHECK(fd >= 0 && ftruncate(fd, 32 * MIB) == 0, "%s: %s", backing, strerror(errno));
	close(fd);
	BPT_CHECK(bpt_loop_attach(&loops[ns], backing, true, false, sector) == 0, "loop: %s", bpt_blk_error());
	unlink(backing); /* the loop device holds it */
	snprintf(path[ns], sizeof(path[ns]), "%s", loops[ns].dev);
}

static void target_up(const char *mode)
{
	static const char *const opt[NS_MAX + 1] = { "", "", ",buffered", "", ",buffered", "", "" };
	struct bp_nvmet_cfg cfg;
	char e[300], spec[400];

	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
	for (int ns = 1; ns <= n_ns; ns++) {
		if (ns == NS_RAM)
			snprintf(spec, sizeof(spec), "ram:16M");
		else
			snprintf(spec, sizeof(spec), "file:%s%s", path[ns], opt[ns]);
		BPT_CHECK(bp_nvmet_ns_parse(spec, &cfg.ns[ns - 1], e, sizeof(e)) == 0, "%s", e);
	}
	cfg.n_ns = n_ns;
	cfg.threads = 2;
	cfg.max_queues = 8;
	cfg.log_level = getenv("BPT_VERBOSE") ? BP_NVMET_LOG_DEBUG : BP_NVMET_LOG_ERROR;
	BPT_CHECK(bp_mode_parse(mode, &cfg.mode, e, sizeof(e)) == 0, "%s", e);
	BPT_CHECK(bp_nvmet_start(&cfg, &tgt) == 0, "target: %s", bp_last_error());
	snprintf(target_addr, sizeof(target_addr), "127.0.0.1:%u", bp_nvmet_port(tgt));
	taddr.sin_family = AF_INET;
	taddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	taddr.sin_port = htons(bp_nvmet_port(tgt));
}

/* ---- what the namespaces turned out to be ---- */

/* The open flags of this process's descriptor for path, as the kernel's fdinfo says them. */
static long fd_flags_of(const char *p)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long flags = -1;

	BPT_CHECK(d, "/proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)) && flags < 0) {
		char link[400], target[400], info[400], line[128];
		ssize_t n;
		FILE *f;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strcmp(target, p))
			continue;
		snprintf(info, sizeof(info), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(info, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "flags:", 6))
				flags = strtol(line + 6, NULL, 8);
		fclose(f);
		/* our own helper descriptor of a loop device is not the target's */
		for (int i = 0; i <= NS_MAX; i++)
			if (loops[i].fd >= 0 && atoi(e->d_name) == loops[i].fd)
				flags = -1;
	}
	closedir(d);
	return flags;
}

static void check_namespaces(void)
{
	for (int i = 0; i < n_ns; i++) {
		struct bp_nvmet_ns_info ni;
		int ns = i + 1;

		BPT_CHECK(bp_nvmet_ns_info(tgt, i, &ni) == 0, "ns info %d", ns);
		if (ns == NS_RAM) {
			BPT_CHECK(!ni.write_cache && ni.write_zeroes && ni.dealloc_zeroes, "ram namespace: %s", ni.desc);
			continue;
		}
		BPT_CHECK(ni.blockdev == (ns >= NS_LOOP), "nsid %d (%s): block device %d", ns, ni.desc, ni.blockdev);
		BPT_CHECK(ni.direct == (ns != NS_FILE_BUF && ns != NS_LOOP_BUF), "nsid %d: direct %d", ns, ni.direct);
		BPT_CHECK(ni.write_cache && !ni.read_only, "nsid %d: write cache %d, read-only %d", ns, ni.write_cache,
			  ni.read_only);
		BPT_CHECK(ni.write_zeroes && ni.deallocate && ni.dealloc_zeroes,
			  "nsid %d (%s): zero %d deallocate %d reads zeros %d (ext4 and loop devices do all three)", ns,
			  ni.desc, ni.write_zeroes, ni.deallocate, ni.dealloc_zeroes);
		BPT_CHECK(ni.block_size == (ns == NS_LOOP4K ? 4096u : 512u) ||
			  (ns == NS_FILE && ni.block_size >= 512), "nsid %d: %u-byte blocks", ns, ni.block_size);
		/* The kernel's own word on O_DIRECT: the flags of the target's descriptor. */
		{
			long fl = fd_flags_of(path[ns]);

			BPT_CHECK(fl >= 0, "nsid %d: no descriptor of the target for %s", ns, path[ns]);
			BPT_CHECK(!!(fl & O_DIRECT) == ni.direct, "nsid %d: fdinfo flags 0%lo, O_DIRECT %s expected", ns,
				  fl, ni.direct ? "" : "not ");
		}
	}
	printf("ok   namespaces: kinds, O_DIRECT (fdinfo), block sizes, write cache, zeroing, deallocation\n");
}

/* ---- perf --verify ---- */

static void perf_opts(struct perf_opts *o, int argc, const char **argv)
{
	const char *full[64] = { "perf", "--target", target_addr, "--nqn", NQN, "--hostnqn", HOSTNQN, "-q",
				 "--runtime", "0.2" };
	int n = 10;

	for (int i = 0; i < argc; i++)
		full[n++] = argv[i];
	BPT_CHECK(perf_parse_opts(n, (char **)full, o, err, sizeof(err)) == 0, "options: %s", err);
}

#define PERF(o, ...)                                                                  \
	do {                                                                          \
		const char *a_[] = { __VA_ARGS__ };                                   \
		perf_opts(o, (int)(sizeof(a_) / sizeof(a_[0])), a_);                  \
	} while (0)

static void perf_ok(const struct perf_opts *o, const char *what)
{
	int ret = perf_run(o, o->numjobs, NULL, NULL, &res, err, sizeof(err));

	BPT_CHECK(ret == 0, "%s: %d: %s", what, ret, err);
	BPT_CHECK(perf_total_ios(&res) > 0 && res.verified_blocks > 0, "%s: %llu I/Os, %llu blocks verified", what,
		  (unsigned long long)perf_total_ios(&res), (unsigned long long)res.verified_blocks);
}

/* The most I/Os a namespace's storage queues had in flight at once, over every thread. */
static uint32_t max_inflight(uint32_t nsid)
{
	struct bp_nvmet_storage_stats st[64];
	size_t n = 0;
	uint32_t m = 0;

	BPT_CHECK(bp_nvmet_storage_snapshot(tgt, st, 64, &n) == 0, "storage snapshot");
	for (size_t i = 0; i < n; i++)
		if (st[i].nsid == nsid && st[i].aio.max_inflight > m)
			m = st[i].aio.max_inflight;
	return m;
}

static void verify_matrix(const char *mode)
{
	static const char *const pats[] = { "read", "write", "randread", "randwrite", "randrw" };
	static const char *const qds[] = { "1", "32" };

	for (int ns = 1; ns <= n_ns; ns++) {
		char nsid[16], bs[8];
		uint64_t reads0 = 0, reads1 = 0, fl;
		struct perf_opts o;
		int runs = 0;

		if (ns == NS_RAM)
			continue;
		snprintf(nsid, sizeof(nsid), "%d", ns);
		snprintf(bs, sizeof(bs), "%s", ns == NS_LOOP4K ? "8k" : "4k");
		if (loops[ns].fd >= 0)
			BPT_CHECK(bpt_loop_stat(&loops[ns], &reads0, &fl) == 0, "%s", bpt_blk_error());
		for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++)
			for (size_t d = 0; d < 2; d++) {
				char what[128];

				PERF(&o, "--nsid", nsid, "--rw", pats[p], "--iodepth", qds[d], "--iodepth-batch", "8",
				     "--verify", "--size", "4M", "--bs", bs);
				snprintf(what, sizeof(what), "%s: nsid %d %s iodepth %s", mode, ns, pats[p], qds[d]);
				perf_ok(&o, what);
				runs++;
			}
		/* Evidence that the device is not served one command at a time. */
		BPT_CHECK(max_inflight((uint32_t)ns) >= 2, "%s: nsid %d: at most %u storage I/O in flight at iodepth 32",
			  mode, ns, max_inflight((uint32_t)ns));
		if (loops[ns].fd >= 0) {
			/* O_DIRECT: every read reaches the device (through the page cache, a warm cache serves them). */
			BPT_CHECK(bpt_loop_stat(&loops[ns], &reads1, &fl) == 0, "%s", bpt_blk_error());
			BPT_CHECK(ns == NS_LOOP_BUF || reads1 > reads0, "%s: nsid %d: the loop device completed no read",
				  mode, ns);
		}
		printf("ok   %s: nsid %d (%s%s): %d verified runs (every --rw, iodepth 1 and 32); up to %u I/Os in "
		       "flight to it at once", mode, ns, path[ns], ns == NS_FILE_BUF || ns == NS_LOOP_BUF ? ", buffered" : "",
		       runs, max_inflight((uint32_t)ns));
		if (loops[ns].fd >= 0)
			printf("; %llu reads on the device", (unsigned long long)(reads1 - reads0));
		printf("\n");
	}
}

/* ---- commands, read back ---- */

static struct bp_loop *hloop;

static int sync_cmd(struct bp_nvmeh_queue *q, uint8_t *sqe, void *buf, uint32_t len, bool to_ctrl)
{
	return bp_nvmeh_sync(q, sqe, buf, len, to_ctrl, NULL, 10000);
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		b[i] = (uint8_t)((seed >> 24) | 1); /* never a zero byte: zeros mean zeroed */
	}
}

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void commands_read_back(const char *mode)
{
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_ctrl *c = NULL;
	struct bp_nvmeh_queue *q = NULL;
	uint8_t sqe[64], id[4096];
	int ret;

	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), NQN);
	snprintf(o.hostnqn, sizeof(o.hostnqn), HOSTNQN);
	ret = bp_nvmeh_ctrl_connect(hloop, (struct sockaddr *)&taddr, sizeof(taddr), &o, 1, &c);
	BPT_CHECK(ret == 0, "connect: %d %s", ret, bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, hloop, 1, &q) == 0, "io queue: %s", bp_last_error());
	/* Identify Controller: Dataset Management and Write Zeroes, a volatile write cache. */
	BPT_CHECK((bp_get_le16(c->id + 520) & 0xc) == 0xc, "ONCS 0x%x: want DSM and Write Zeroes",
		  bp_get_le16(c->id + 520));
	BPT_CHECK(c->id[525] & 1, "VWC 0x%x", c->id[525]);
	/* The NVM command set's controller structure: Write Zeroes of 65536 512-byte blocks. */
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_IDENTIFY, 0, 0, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_ID_CNS_CS_CTRL);
	BPT_CHECK(bp_nvmeh_admin_sync(c, sqe, id, 4096, false, NULL) == 0, "identify cns 6");
	BPT_CHECK(id[1] == 13, "WZSL %u (want 13: 32 MiB in 4 KiB units)", id[1]);

	for (int ns = 1; ns <= n_ns; ns++) {
		struct bp_nvmeh_ns_info ni;
		uint32_t bs, nb = 64;
		uint8_t *w, *r, ranges[2 * BP_NVME_DSM_RANGE_LEN];
		uint64_t reads, fl0 = 0, fl1 = 0, fl2 = 0;
		bool loop = loops[ns].fd >= 0;

		if (ns == NS_FILE_BUF || ns == NS_LOOP_BUF)
			continue;
		BPT_CHECK(bp_nvmeh_identify_ns(c, (uint32_t)ns, &ni) == 0, "identify ns %d", ns);
		bs = ni.block_size;
		BPT_CHECK((ni.dlfeat & 7) == 1 && !ni.read_only, "nsid %d: DLFEAT 0x%x NSATTR ro %d", ns, ni.dlfeat,
			  ni.read_only);
		BPT_CHECK(ns != NS_LOOP4K || bs == 4096, "the 4096-byte loop device is served with %u-byte blocks", bs);
		w = malloc(nb * bs);
		r = malloc(nb * bs);
		BPT_CHECK(w && r, "oom");
		fill(w, nb * bs, (uint32_t)ns * 77);
		bp_nvmeh_sqe_rw(sqe, true, (uint32_t)ns, 0, nb);
		BPT_CHECK(sync_cmd(q, sqe, w, nb * bs, true) == 0, "nsid %d: write", ns);
		/* Write Zeroes 8..15, with DEAC 16..23; deallocate 24..31 and 40..43. */
		bp_nvmeh_sqe_write_zeroes(sqe, (uint32_t)ns, 8, 8, false);
		BPT_CHECK(sync_cmd(q, sqe, NULL, 0, false) == 0, "nsid %d: write zeroes", ns);
		bp_nvmeh_sqe_write_zeroes(sqe, (uint32_t)ns, 16, 8, true);
		BPT_CHECK(sync_cmd(q, sqe, NULL, 0, false) == 0, "nsid %d: write zeroes DEAC", ns);
		bp_nvmeh_dsm_range(ranges, 24, 8);
		bp_nvmeh_dsm_range(ranges + BP_NVME_DSM_RANGE_LEN, 40, 4);
		bp_nvmeh_sqe_dsm(sqe, (uint32_t)ns, 2);
		BPT_CHECK(sync_cmd(q, sqe, ranges, sizeof(ranges), true) == 0, "nsid %d: deallocate", ns);
		/* A deallocate past the end is refused before anything is touched. */
		bp_nvmeh_dsm_range(ranges + BP_NVME_DSM_RANGE_LEN, ni.nblocks - 2, 4);
		bp_nvmeh_sqe_dsm(sqe, (uint32_t)ns, 2);
		ret = sync_cmd(q, sqe, ranges, sizeof(ranges), true);
		BPT_CHECK(ret == (BP_NVME_SC_LBA_RANGE | BP_NVME_DNR), "nsid %d: deallocate past the end: 0x%x", ns, ret);
		/* FUA, and a Flush: on a loop device both arrive as flushes (its own counters). */
		if (loop)
			BPT_CHECK(bpt_loop_stat(&loops[ns], &reads, &fl0) == 0, "%s", bpt_blk_error());
		fill(w + 48 * bs, 2 * bs, 991);
		bp_nvmeh_sqe_rw(sqe, true, (uint32_t)ns, 48, 2);
		bp_nvmeh_sqe_fua(sqe);
		BPT_CHECK(sync_cmd(q, sqe, w + 48 * bs, 2 * bs, true) == 0, "nsid %d: FUA write", ns);
		if (loop)
			BPT_CHECK(bpt_loop_stat(&loops[ns], &reads, &fl1) == 0, "%s", bpt_blk_error());
		bp_nvmeh_sqe_flush(sqe, (uint32_t)ns);
		BPT_CHECK(sync_cmd(q, sqe, NULL, 0, false) == 0, "nsid %d: flush", ns);
		if (loop) {
			BPT_CHECK(bpt_loop_stat(&loops[ns], &reads, &fl2) == 0, "%s", bpt_blk_error());
			BPT_CHECK(fl1 > fl0, "nsid %d: a FUA write reached %s as no flush", ns, loops[ns].dev);
			BPT_CHECK(fl2 > fl1, "nsid %d: a Flush reached %s as no flush", ns, loops[ns].dev);
		}
		/* Read it all back. */
		memset(r, 0xee, nb * bs);
		bp_nvmeh_sqe_rw(sqe, false, (uint32_t)ns, 0, nb);
		BPT_CHECK(sync_cmd(q, sqe, r, nb * bs, false) == 0, "nsid %d: read back", ns);
		for (uint32_t b = 0; b < nb; b++) {
			bool zeroed = (b >= 8 && b < 32) || (b >= 40 && b < 44);

			if (zeroed)
				BPT_CHECK(all_zero(r + b * bs, bs), "nsid %d: block %u is not zeros after %s", ns, b,
					  b < 16 ? "Write Zeroes" : b < 24 ? "Write Zeroes DEAC" : "deallocate");
			else
				BPT_CHECK(!memcmp(r + b * bs, w + b * bs, bs), "nsid %d: block %u changed", ns, b);
		}
		free(w);
		free(r);
		printf("ok   %s: nsid %d: Write Zeroes, DEAC, deallocate read back as zeros, the rest intact; FUA and "
		       "Flush%s\n", mode, ns, loop ? " reached the device as flushes" : "");
	}
	/* Every namespace at once. */
	bp_nvmeh_sqe_flush(sqe, 0xffffffffu);
	BPT_CHECK(sync_cmd(q, sqe, NULL, 0, false) == 0, "broadcast flush");
	bp_nvmeh_queue_close(q);
	bp_nvmeh_ctrl_disconnect(c);
}

/* ---- refusals at start ---- */

static void start_refused(const char *spec, int want, const char *want_text)
{
	struct bp_nvmet_cfg cfg;
	struct bp_nvmet *t = NULL;
	char e[300];
	int ret;

	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	BPT_CHECK(bp_nvmet_ns_parse(spec, &cfg.ns[0], e, sizeof(e)) == 0, "%s", e);
	cfg.n_ns = 1;
	cfg.log_level = BP_NVMET_LOG_ERROR;
	ret = bp_nvmet_start(&cfg, &t);
	if (!ret)
		bp_nvmet_stop(t);
	BPT_CHECK(ret == want, "--ns %s: start returned %d, want %d", spec, ret, want);
	BPT_CHECK(strstr(bp_last_error(), want_text), "--ns %s: '%s' does not say '%s'", spec, bp_last_error(),
		  want_text);
	printf("ok   refused: %s\n", bp_last_error());
}

int main(void)
{
	static const char *const modes[] = { "epoll:block", "uring:block" };
	struct bp_mode m;
	char e[200], spec[400];

	if (bpt_is_root()) {
		BPT_CHECK(bpt_blk_private_mounts() == 0, "%s", bpt_blk_error());
		have_loops = access("/dev/loop-control", W_OK) == 0;
	}
	BPT_CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	for (int i = 0; i <= NS_MAX; i++)
		loops[i].fd = -1;
	atexit(cleanup);
	make_file(NS_FILE, 32 * MIB);
	make_file(NS_FILE_BUF, 32 * MIB);
	if (have_loops) {
		make_loop(NS_LOOP, 0);
		make_loop(NS_LOOP_BUF, 0);
		make_loop(NS_LOOP4K, 4096);
		n_ns = NS_MAX;
	} else {
		printf("SKIP the loop device namespaces: %s\n", bpt_is_root() ? "no /dev/loop-control" : "not root");
		n_ns = NS_FILE_BUF;
	}
	BPT_CHECK(bp_mode_parse("epoll:block", &m, e, sizeof(e)) == 0 && bp_loop_create(&hloop, &m) == 0, "host loop");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!bpt_mode_usable(modes[i], &m))
			continue;
		target_up(modes[i]);
		if (i == 0)
			check_namespaces();
		verify_matrix(modes[i]);
		commands_read_back(modes[i]);
		bp_nvmet_stop(tgt);
		tgt = NULL;
	}
	if (have_loops) {
		snprintf(spec, sizeof(spec), "file:%s,bs=512", path[NS_LOOP4K]);
		start_refused(spec, -EINVAL, "bs=512 is smaller than the 4096 bytes the device needs");
	}
	snprintf(spec, sizeof(spec), "file:%s/missing.img", dir);
	start_refused(spec, -ENOENT, "no such file; add ,size=SIZE to create it");
	bp_loop_destroy(hloop);
	return 0;
}
