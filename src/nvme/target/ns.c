/* SPDX-License-Identifier: MIT */
/*
 * Namespaces: ram (anonymous memory, pages allocated on first write) and file (a
 * regular file or a block device, told apart when opened). Files and devices are
 * opened O_DIRECT unless asked for the page cache (,buffered), exclusively for a
 * block device, read-only when writing is refused or asked for (,ro), and flock'ed;
 * their I/O goes through the loop threads' storage queues (io.c). Opening finds
 * what each supports, and Identify reports exactly that: the block size (the
 * device's logical block size, or what O_DIRECT needs on the file system), a
 * volatile write cache, Write Zeroes (fallocate zero range), deallocation (a hole
 * punched; on a block device only where it has write-zeroes, so it reads back as
 * zeros). Callers check LBA ranges against nblocks before any access.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nvme/target/internal.h"

#define NS_RAM_MAX (1ull << 40)
#define FLOCK_TRIES 30             /* a dead target's lock: wait up to 3 s for the kernel to let it go */
#define FLOCK_WAIT_US 100000   /* 1 TiB of address space; only written pages cost memory */

int bp_nvmet_parse_size(const char *text, uint64_t *bytes)
{
	char *end;
	uint64_t v, mult = 1;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mult = 1ull << 10; end++; break;
	case 'm': case 'M': mult = 1ull << 20; end++; break;
	case 'g': case 'G': mult = 1ull << 30; end++; break;
	case 't': case 'T': mult = 1ull << 40; end++; break;
	default: break;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I') && (end[1] == 'B' || end[1] == 'b'))
		end += 2;
	else if (mult > 1 && (*end == 'B' || *end == 'b'))
		end++;
	if (*end || (v && mult > UINT64_MAX / v))
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

static int ns_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ns_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* bs=N: a power of two from 512 to 4096 ("4k" too). */
static bool parse_block_size(const char *v, uint32_t *bs)
{
	uint64_t n;

	if (!strcmp(v, "4k") || !strcmp(v, "4K")) {
		*bs = 4096;
		return true;
	}
	if (bp_nvmet_parse_size(v, &n) || n < 512 || n > 4096 || (n & (n - 1)))
		return false;
	*bs = (uint32_t)n;
	return true;
}

int bp_nvmet_ns_parse(const char *text, struct bp_nvmet_ns_spec *spec, char *err, size_t errlen)
{
	char buf[1200], *opts, *tok, *save;
	bool have_size = false;

	memset(spec, 0, sizeof(*spec));
	if (strlen(text) >= sizeof(buf))
		return ns_fail(err, errlen, "--ns %.60s...: too long", text);
	snprintf(buf, sizeof(buf), "%s", text);
	if (!strncmp(buf, "ram:", 4)) {
		spec->kind = BP_NVMET_NS_RAM;
		spec->block_size = 512;
		opts = strchr(buf + 4, ',');
		if (opts)
			*opts++ = 0;
		if (bp_nvmet_parse_size(buf + 4, &spec->size) || !spec->size)
			return ns_fail(err, errlen, "--ns %s: '%s' is not a size (e.g. ram:64M)", text, buf + 4);
		have_size = true;
	} else if (!strncmp(buf, "file:", 5)) {
		spec->kind = BP_NVMET_NS_FILE;
		opts = strchr(buf + 5, ',');
		if (opts)
			*opts++ = 0;
		if (!buf[5])
			return ns_fail(err, errlen, "--ns %s: no path (file:PATH[,size=SIZE])", text);
		if (strlen(buf + 5) >= sizeof(spec->path))
			return ns_fail(err, errlen, "--ns %.60s...: path too long", text);
		memcpy(spec->path, buf + 5, strlen(buf + 5) + 1);
	} else {
		return ns_fail(err, errlen, "--ns %s: must be ram:SIZE or file:PATH (a file or a block device)", text);
	}
	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		bool file = spec->kind == BP_NVMET_NS_FILE;

		if (!strncmp(tok, "size=", 5) && file) {
			if (bp_nvmet_parse_size(tok + 5, &spec->size) || !spec->size)
				return ns_fail(err, errlen, "--ns %s: '%s' is not a size", text, tok + 5);
			have_size = true;
		} else if (!strncmp(tok, "bs=", 3)) {
			if (!parse_block_size(tok + 3, &spec->block_size))
				return ns_fail(err, errlen, "--ns %s: bs=%s: block size must be 512, 1024, 2048 or 4096",
					       text, tok + 3);
		} else if (!strcmp(tok, "buffered") && file) {
			spec->buffered = true;
		} else if (!strcmp(tok, "ro") && file) {
			spec->read_only = true;
		} else {
			return ns_fail(err, errlen, "--ns %s: unknown option '%s' (%s)", text, tok,
				       file ? "size=, bs=, buffered, ro" : "bs=");
		}
	}
	if (have_size && spec->block_size && spec->size % spec->block_size)
		return ns_fail(err, errlen, "--ns %s: size is not a multiple of the block size", text);
	if (have_size && spec->size % 512)
		return ns_fail(err, errlen, "--ns %s: size is not a multiple of 512 bytes", text);
	if (spec->kind == BP_NVMET_NS_RAM && spec->size > NS_RAM_MAX)
		return ns_fail(err, errlen, "--ns %s: ram namespaces are limited to 1T", text);
	return 0;
}

/* FNV-1a, to derive identifiers that stay the same across restarts. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void derive_ids(struct nvmet_ns *ns, const char *nqn)
{
	uint64_t h1 = fnv1a(0xcbf29ce484222325ull, nqn, strlen(nqn));
	uint64_t h2, h3, h4;

	h1 = fnv1a(h1, &ns->nsid, sizeof(ns->nsid));
	h2 = fnv1a(h1, "nguid", 5);
	h3 = fnv1a(h1, "uuid-a", 6);
	h4 = fnv1a(h1, "uuid-b", 6);
	memcpy(ns->nguid, &h1, 8);
	memcpy(ns->nguid + 8, &h2, 8);
	memcpy(ns->uuid, &h3, 8);
	memcpy(ns->uuid + 8, &h4, 8);
	ns->uuid[6] = (uint8_t)((ns->uuid[6] & 0x0f) | 0x40); /* RFC 4122 version 4 layout */
	ns->uuid[8] = (uint8_t)((ns->uuid[8] & 0x3f) | 0x80);
}


/* Close what was opened and say why, for bp_nvmet_start (its message is the user's). */
static int open_fail(struct nvmet_ns *ns, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int open_fail(struct nvmet_ns *ns, int err, const char *fmt, ...)
{
	char msg[1400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = -1;
	return bp_set_last_error(err, "%s", msg);
}

/* A small sysfs file into out (NUL-terminated, newline dropped). */
static bool read_sysfs(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(out, (int)n, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\n")] = 0;
	return ok;
}

/* A block device's queue attribute (a partition's is its disk's). */
static bool bdev_queue_attr(dev_t rdev, const char *attr, char *out, size_t n)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s", major(rdev), minor(rdev), attr);
	if (read_sysfs(path, out, n))
		return true;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/%s", major(rdev), minor(rdev), attr);
	return read_sysfs(path, out, n);
}

/*
 * What a regular file's file system does with fallocate, found beyond the end of
 * the file (KEEP_SIZE) where nothing is lost: zero range, then a hole punched over
 * the same block, which also gives back what the zeroing allocated.
 */
static void probe_fallocate(struct nvmet_ns *ns, uint64_t file_size)
{
	off_t end = (off_t)((file_size > ns->size ? file_size : ns->size) + 2 * NVMET_BUF_ALIGN - 1) &
		    ~(off_t)(NVMET_BUF_ALIGN - 1);
	bool zero, punch;

	zero = fallocate(ns->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, end, NVMET_BUF_ALIGN) == 0 ||
	       (errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS);
	punch = fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, end, NVMET_BUF_ALIGN) == 0 ||
		(errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS);
	ns->can_zero = zero || punch;
	ns->zero_mode = zero ? FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE : FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	ns->can_dealloc = punch;
	ns->dealloc_zeroes = punch; /* a hole reads as zeros */
	ns->dealloc_mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
}

/* A block device: its logical block size and what its queue supports. */
static int bdev_setup(struct nvmet_ns *ns, const struct stat *sb, const char *path, uint32_t *need)
{
	char v[64];
	int lbs = 0, ro = 0;

	if (ioctl(ns->fd, BLKSSZGET, &lbs) < 0 || lbs < 512)
		return open_fail(ns, -errno ? -errno : -EINVAL, "--ns file:%s: BLKSSZGET: %s", path, strerror(errno));
	*need = (uint32_t)lbs;
	if (ioctl(ns->fd, BLKROGET, &ro) == 0 && ro)
		ns->readonly = true;
	ns->vwc = bdev_queue_attr(sb->st_rdev, "write_cache", v, sizeof(v)) && !strncmp(v, "write back", 10);
	/* Zero range always works on a block device (the kernel writes zeros if the device cannot). */
	ns->can_zero = true;
	ns->zero_mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	/* A punched hole is a write-zeroes with unmap allowed: only where the device has one. */
	ns->can_dealloc = bdev_queue_attr(sb->st_rdev, "write_zeroes_max_bytes", v, sizeof(v)) && strtoull(v, NULL, 10);
	ns->dealloc_zeroes = ns->can_dealloc;
	ns->dealloc_mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	return 0;
}

/*
 * What O_DIRECT on this regular file needs: the file system says (statx
 * STATX_DIOALIGN, Linux 6.1); one that does not say (tmpfs) gets its device's
 * logical block size, or 512.
 */
static int dio_alignment(struct nvmet_ns *ns, const struct stat *sb, const char *path, uint32_t *need)
{
	struct statx stx;
	char v[32];

	if (statx(ns->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN)) {
		if (!stx.stx_dio_offset_align)
			return open_fail(ns, -EINVAL, "--ns file:%s: this file system does not do O_DIRECT; add ,buffered "
					 "to go through the page cache", path);
		if (stx.stx_dio_mem_align > NVMET_BUF_ALIGN)
			return open_fail(ns, -EINVAL, "--ns file:%s: O_DIRECT needs %u-byte aligned memory here; add "
					 ",buffered", path, stx.stx_dio_mem_align);
		*need = stx.stx_dio_offset_align;
		return 0;
	}
	*need = bdev_queue_attr(sb->st_dev, "logical_block_size", v, sizeof(v)) ? (uint32_t)strtoul(v, NULL, 10) : 512;
	return 0;
}

/* partition_of - is block device MAJ:MIN a partition of disk (its sysfs parent's dev)? */
static bool partition_of(unsigned int maj, unsigned int min, dev_t disk)
{
	char path[96], v[32], want[32];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", maj, min);
	snprintf(want, sizeof(want), "%u:%u", major(disk), minor(disk));
	return read_sysfs(path, v, sizeof(v)) && !strcmp(v, want);
}

/*
 * mounted_at - where the block device at path (or a partition of it) is mounted,
 * from /proc/self/mountinfo, into where (in one line); false when it is not (or unknown).
 * Used to word a refusal only: the kernel's own refusal (EBUSY, or EPERM for a
 * mounted device opened for writing) is what stops the export.
 */
static bool mounted_at(const char *path, char *where, size_t len)
{
	struct stat st;
	char line[1024];
	bool found = false;
	FILE *f;

	if (stat(path, &st) || !S_ISBLK(st.st_mode) || !(f = fopen("/proc/self/mountinfo", "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		char mnt[512];

		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ..."; a partition shares the disk's major */
		if (sscanf(line, "%*u %*u %u:%u %*s %511s", &maj, &min, mnt) != 3 || maj != major(st.st_rdev))
			continue;
		if (min == minor(st.st_rdev) || partition_of(maj, min, st.st_rdev)) {
			snprintf(where, len, "%s", mnt);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* open(2) as the spec asks: O_DIRECT unless buffered, read-only when writing is refused. */
static int open_path(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, bool bdev)
{
	int flags = (spec->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | (spec->buffered ? 0 : O_DIRECT) |
		    (bdev ? O_EXCL : 0);
	int fd = open(spec->path, flags | (!bdev && spec->size && !spec->read_only ? O_CREAT : 0), 0644);
	char where[512];

	ns->readonly = spec->read_only;
	if (fd < 0 && !spec->read_only && (errno == EROFS || errno == EACCES || errno == EPERM)) {
		/* Not writable (a read-only mount, an immutable file, a read-only device): export it read-only. */
		fd = open(spec->path, (flags & ~O_RDWR) | O_RDONLY);
		ns->readonly = fd >= 0;
	}
	if (fd >= 0) {
		ns->fd = fd;
		return 0;
	}
	if (errno == ENOENT)
		return open_fail(ns, -ENOENT, "--ns file:%s: no such file; add ,size=SIZE to create it", spec->path);
	if (errno == EINVAL && !spec->buffered)
		return open_fail(ns, -EINVAL, "--ns file:%s: this file system does not do O_DIRECT; add ,buffered to go "
				 "through the page cache", spec->path);
	if ((errno == EBUSY || errno == EPERM) && bdev && mounted_at(spec->path, where, sizeof(where)))
		return open_fail(ns, -EBUSY, "--ns file:%s: the device is mounted at %s: exporting it would corrupt it; "
				 "unmount it first", spec->path, where);
	if (errno == EBUSY && bdev)
		return open_fail(ns, -EBUSY, "--ns file:%s: the device is in use (mounted, or held by another "
				 "driver): exporting it would corrupt it", spec->path);
	return open_fail(ns, -errno, "--ns file:%s: %s", spec->path, strerror(errno));
}

/*
 * The block size to serve: the one asked for, else what the device needs (its
 * logical block size; for O_DIRECT on a file, the file system's alignment), at
 * least 512. Fails when what was asked for is smaller than what the device needs.
 */
static int choose_block_size(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, uint32_t need)
{
	uint32_t bs = spec->block_size ? spec->block_size : need < 512 ? 512 : need;

	if (need > 4096)
		return open_fail(ns, -EINVAL, "--ns file:%s: the device needs %u-byte blocks; at most 4096 are served",
				 spec->path, need);
	if (bs < need)
		return open_fail(ns, -EINVAL, "--ns file:%s: bs=%u is smaller than the %u bytes the device needs%s; "
				 "leave bs= out", spec->path, bs, need, ns->direct ? " for O_DIRECT" : "");
	ns->lba_shift = 9;
	while ((1u << ns->lba_shift) < bs)
		ns->lba_shift++;
	return 0;
}

static int file_open_made(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, bool bdev);

/*
 * file_open - the file or device of spec; a file this call created (size= on a
 * path that did not exist) is removed again when it cannot be served, so a
 * refused size=100T leaves nothing behind.
 */
static int file_open(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec)
{
	struct stat sb;
	bool existed = stat(spec->path, &sb) == 0;
	int ret = file_open_made(ns, spec, existed && S_ISBLK(sb.st_mode));

	if (ret && !existed && stat(spec->path, &sb) == 0 && S_ISREG(sb.st_mode))
		unlink(spec->path);
	return ret;
}

static int file_open_made(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, bool bdev)
{
	struct stat sb;
	uint32_t need = 512;
	uint64_t bytes = 0;
	int ret;

	ns->direct = !spec->buffered;
	if ((ret = open_path(ns, spec, bdev)))
		return ret;
	/*
	 * Two targets writing one file would corrupt it for both. A target that was just
	 * killed holds its lock a little longer, until the kernel has finished the storage
	 * I/O it had in flight (its io_uring still refers to the file): wait that out.
	 */
	for (int tries = 0; flock(ns->fd, LOCK_EX | LOCK_NB) < 0; tries++) {
		if (errno != EWOULDBLOCK || tries == FLOCK_TRIES)
			return open_fail(ns, errno == EWOULDBLOCK ? -EBUSY : -errno,
					 "--ns file:%s: in use by another process (locked)", spec->path);
		usleep(FLOCK_WAIT_US);
	}
	if (fstat(ns->fd, &sb) < 0)
		return open_fail(ns, -errno, "--ns file:%s: fstat: %s", spec->path, strerror(errno));
	if (S_ISBLK(sb.st_mode)) {
		ns->blockdev = true;
		if ((ret = bdev_setup(ns, &sb, spec->path, &need)))
			return ret;
		if (ioctl(ns->fd, BLKGETSIZE64, &bytes) < 0)
			return open_fail(ns, -errno, "--ns file:%s: BLKGETSIZE64: %s", spec->path, strerror(errno));
		ns->size = spec->size && spec->size < bytes ? spec->size : bytes;
	} else if (S_ISREG(sb.st_mode)) {
		if (ns->direct && (ret = dio_alignment(ns, &sb, spec->path, &need)))
			return ret;
		if (spec->size && (uint64_t)sb.st_size < spec->size) {
			if (ns->readonly)
				return open_fail(ns, -EINVAL, "--ns file:%s: read-only, and shorter than size=%llu",
						 spec->path, (unsigned long long)spec->size);
			if (ftruncate(ns->fd, (off_t)spec->size) < 0) {
				int e = errno;

				/* a size this file system cannot hold is bad input (exit 2), said as such */
				return open_fail(ns, e == EFBIG || e == ENOSPC || e == EINVAL ? -EINVAL : -e,
						 "--ns file:%s: cannot grow it to %llu bytes: %s%s", spec->path,
						 (unsigned long long)spec->size, strerror(e),
						 e == EFBIG || e == EINVAL ? " (more than this file system's largest "
									     "file: give a smaller size=)" : "");
			}
		}
		ns->size = spec->size ? spec->size : (uint64_t)sb.st_size;
		ns->vwc = true; /* the page cache, or the device under the file system */
	} else {
		return open_fail(ns, -EINVAL, "--ns file:%s: not a regular file or block device", spec->path);
	}
	if ((ret = choose_block_size(ns, spec, need)))
		return ret;
	if (!ns->size)
		return open_fail(ns, -EINVAL, "--ns file:%s: empty; add ,size=SIZE", spec->path);
	/* never rounded down in silence: the last bytes could not be reached */
	if (ns->size & ((1ull << ns->lba_shift) - 1))
		return open_fail(ns, -EINVAL, "--ns file:%s: its %llu bytes are not a whole number of %u-byte blocks "
				 "(what the device needs); give size= a multiple of %u", spec->path,
				 (unsigned long long)ns->size, 1u << ns->lba_shift, 1u << ns->lba_shift);
	if (!ns->blockdev && !ns->readonly)
		probe_fallocate(ns, (uint64_t)sb.st_size);
	if (ns->readonly) {
		ns->can_zero = ns->can_dealloc = false;
	}
	snprintf(ns->desc, sizeof(ns->desc), "file:%s", spec->path);
	return 0;
}

int nvmet_ns_open(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, uint32_t nsid, const char *nqn)
{
	int ret;

	memset(ns, 0, sizeof(*ns));
	ns->nsid = nsid;
	ns->kind = spec->kind;
	ns->fd = -1;
	if (spec->kind == BP_NVMET_NS_RAM) {
		void *p = mmap(NULL, spec->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		if (p == MAP_FAILED)
			return bp_set_last_error(-errno, "--ns ram:%llu: cannot map that much memory: %s",
						 (unsigned long long)spec->size, strerror(errno));
		ns->ram = p;
		ns->size = spec->size;
		ns->lba_shift = 9;
		while ((1u << ns->lba_shift) < spec->block_size)
			ns->lba_shift++;
		/* Memory: nothing volatile to flush; zeroing and deallocation give pages back. */
		ns->can_zero = ns->can_dealloc = ns->dealloc_zeroes = true;
		snprintf(ns->desc, sizeof(ns->desc), "ram:%llu", (unsigned long long)spec->size);
	} else if ((ret = file_open(ns, spec))) {
		return ret;
	}
	ns->nblocks = ns->size >> ns->lba_shift;
	derive_ids(ns, nqn);
	return 0;
}

void nvmet_ns_close(struct nvmet_ns *ns)
{
	if (ns->ram)
		munmap(ns->ram, ns->size);
	if (ns->fd >= 0) {
		if (!ns->readonly)
			fdatasync(ns->fd);
		close(ns->fd);
	}
	ns->ram = NULL;
	ns->fd = -1;
}

void nvmet_ns_ram_zero(struct nvmet_ns *ns, uint64_t off, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), lo = (off + page - 1) & ~(page - 1),
		 hi = (off + len) & ~(page - 1);

	/* Whole pages go back to the kernel (and read as zeros); what is left is cleared. */
	if (lo < hi && madvise(ns->ram + lo, hi - lo, MADV_DONTNEED) == 0) {
		memset(ns->ram + off, 0, lo - off);
		memset(ns->ram + hi, 0, off + len - hi);
		return;
	}
	memset(ns->ram + off, 0, len);
}

uint16_t nvmet_storage_status(int err, uint8_t opc)
{
	uint16_t media = opc == BP_NVME_CMD_READ ? BP_NVME_SC_READ_ERROR : BP_NVME_SC_WRITE_FAULT;

	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return BP_NVME_SC_CAP_EXCEEDED | BP_NVME_DNR;
	case -EROFS:
	case -EPERM:
	case -EACCES:
		return opc == BP_NVME_CMD_READ ? media | BP_NVME_DNR : BP_NVME_SC_NS_WRITE_PROTECTED | BP_NVME_DNR;
	case -EIO:
		return media; /* the device failed this time: the host may try again */
	case -EOPNOTSUPP:
		return BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR;
	case -EINVAL:
		return BP_NVME_SC_INTERNAL | BP_NVME_DNR; /* ours: an alignment the device refused */
	case -ENOMEM:
	case -EAGAIN:
	case -EBUSY:
	case -EINTR:
		return BP_NVME_SC_INTERNAL;
	default:
		/* the device is gone (ENODEV, ENXIO), the file cannot grow (EFBIG), ...: not worth retrying */
		return media | BP_NVME_DNR;
	}
}
