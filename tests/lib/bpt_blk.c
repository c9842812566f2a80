/* SPDX-License-Identifier: MIT */
/* Loop devices, the blkio cgroup and private mounts for the storage tests (bpt_blk.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpt_blk.h"

#define BLKIO_ROOT "/sys/fs/cgroup/blkio"
#define CG_PREFIX "bpt-blk-"

static char errbuf[512];
static char cg_ours[256];

static int fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

const char *bpt_blk_error(void)
{
	return errbuf;
}

int bpt_blk_private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return fail(-errno, "unshare(CLONE_NEWNS): %s", strerror(errno));
	/* Nothing mounted here propagates back to the machine's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail(-errno, "mount --make-rprivate /: %s", strerror(errno));
	return 0;
}

/* ---- loop devices ---- */

int bpt_loop_attach(struct bpt_loop *l, const char *file, bool direct, bool read_only, uint32_t block_size)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), bfd, ret = -EBUSY;
	struct stat sb;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (ctl < 0)
		return fail(-errno, "/dev/loop-control: %s", strerror(errno));
	bfd = open(file, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (bfd < 0) {
		ret = fail(-errno, "%s: %s", file, strerror(errno));
		close(ctl);
		return ret;
	}
	/* Another process may take the free device between the two calls: try again. */
	for (int tries = 0; tries < 16 && ret == -EBUSY; tries++) {
		struct loop_config cfg;
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (n < 0) {
			ret = fail(-errno, "LOOP_CTL_GET_FREE: %s", strerror(errno));
			break;
		}
		snprintf(l->dev, sizeof(l->dev), "/dev/loop%d", n);
		l->fd = open(l->dev, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (l->fd < 0) {
			ret = fail(-errno, "%s: %s", l->dev, strerror(errno));
			continue;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (uint32_t)bfd;
		cfg.block_size = block_size;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | (direct ? LO_FLAGS_DIRECT_IO : 0) |
				    (read_only ? LO_FLAGS_READ_ONLY : 0);
		if (ioctl(l->fd, LOOP_CONFIGURE, &cfg) == 0) {
			ret = 0;
			break;
		}
		ret = errno == EBUSY ? -EBUSY : fail(-errno, "LOOP_CONFIGURE %s: %s", l->dev, strerror(errno));
		close(l->fd);
		l->fd = -1;
	}
	close(bfd);
	close(ctl);
	if (ret)
		return ret == -EBUSY ? fail(ret, "no free loop device") : ret;
	if (fstat(l->fd, &sb) < 0) {
		bpt_loop_detach(l);
		return fail(-errno, "fstat %s: %s", l->dev, strerror(errno));
	}
	l->rdev = sb.st_rdev;
	return 0;
}

void bpt_loop_detach(struct bpt_loop *l)
{
	if (l->fd < 0)
		return;
	/* With autoclear this only marks it when someone else still holds it. */
	ioctl(l->fd, LOOP_CLR_FD, 0);
	close(l->fd);
	l->fd = -1;
}

int bpt_loop_stat(const struct bpt_loop *l, uint64_t *reads, uint64_t *flushes)
{
	unsigned long long v[17] = { 0 };
	char path[96];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", major(l->rdev), minor(l->rdev));
	f = fopen(path, "re");
	if (!f)
		return fail(-errno, "%s: %s", path, strerror(errno));
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13],
		   &v[14], &v[15], &v[16]);
	fclose(f);
	if (n < 17)
		return fail(-EINVAL, "%s: %d fields (no flush counts in this kernel?)", path, n);
	*reads = v[0];
	*flushes = v[15];
	return 0;
}

/* ---- the blkio cgroup ---- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return fail(-errno, "%s: %s", path, strerror(errno));
	if (write(fd, text, strlen(text)) < 0)
		ret = fail(-errno, "write '%s' to %s: %s", text, path, strerror(errno));
	close(fd);
	return ret;
}

/* Empty cgroups of ours whose test is gone (SIGKILLed): rmdir fails on one that has tasks. */
static void remove_leftovers(void)
{
	DIR *d = opendir(BLKIO_ROOT);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[512];
		long pid;

		if (strncmp(e->d_name, CG_PREFIX, strlen(CG_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(CG_PREFIX), NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), BLKIO_ROOT "/%s", e->d_name);
		rmdir(path);
	}
	closedir(d);
}

int bpt_blkio_create(char *path, size_t n)
{
	char probe[300];

	snprintf(probe, sizeof(probe), BLKIO_ROOT "/blkio.throttle.read_iops_device");
	if (access(probe, W_OK) != 0)
		return fail(-ENOENT, "no cgroup v1 blkio throttle at " BLKIO_ROOT);
	remove_leftovers();
	snprintf(path, n, BLKIO_ROOT "/" CG_PREFIX "%d", (int)getpid());
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return fail(-errno, "mkdir %s: %s", path, strerror(errno));
	if (!cg_ours[0])
		atexit(bpt_blk_cleanup);
	snprintf(cg_ours, sizeof(cg_ours), "%s", path);
	return 0;
}

int bpt_blkio_throttle_reads(const char *cg, dev_t dev, unsigned iops)
{
	char path[300], v[64];

	snprintf(path, sizeof(path), "%s/blkio.throttle.read_iops_device", cg);
	snprintf(v, sizeof(v), "%u:%u %u", major(dev), minor(dev), iops);
	return write_file(path, v);
}

int bpt_blkio_enter(const char *cg)
{
	char path[300], v[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	return write_file(path, v);
}

int bpt_blkio_reads(const char *cg, dev_t dev, uint64_t *reads)
{
	char path[300], line[256], want[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/blkio.throttle.io_serviced", cg);
	snprintf(want, sizeof(want), "%u:%u Read ", major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return fail(-errno, "%s: %s", path, strerror(errno));
	*reads = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			*reads = strtoull(line + strlen(want), NULL, 10);
	fclose(f);
	return 0;
}

void bpt_blk_cleanup(void)
{
	char v[32];

	if (!cg_ours[0])
		return;
	snprintf(v, sizeof(v), "%d", (int)getpid());
	write_file(BLKIO_ROOT "/cgroup.procs", v);
	rmdir(cg_ours);
	cg_ours[0] = 0;
}

/* ---- mounts, commands ---- */

int bpt_mount(const char *source, const char *dir, const char *fstype, unsigned long flags, const char *data)
{
	if (mount(source, dir, fstype, flags, data) < 0)
		return fail(-errno, "mount %s on %s (%s): %s", source, dir, fstype ? fstype : "bind", strerror(errno));
	return 0;
}

void bpt_umount(const char *dir)
{
	umount2(dir, MNT_DETACH);
}

int bpt_run_cmd(const char *cmd)
{
	char full[1200];

	snprintf(full, sizeof(full), "%s%s", cmd, getenv("BPT_VERBOSE") ? "" : " >/dev/null 2>&1");
	if (system(full) != 0)
		return fail(-1, "'%s' failed", cmd);
	return 0;
}
