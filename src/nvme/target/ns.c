/* SPDX-License-Identifier: MIT */
/*
 * Namespaces: ram (anonymous memory, pages allocated on first write) and file
 * (a regular file or a block device, through the page cache with pread/pwrite;
 * Flush is fdatasync). Callers check LBA ranges against nblocks before any
 * access, so nothing here ever touches bytes outside [0, size).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvme/target/internal.h"

#define NS_RAM_MAX (1ull << 40)   /* 1 TiB of address space; only written pages cost memory */

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

static int ns_fail(char *err, size_t errlen, const char *fmt, const char *text, const char *extra)
{
	snprintf(err, errlen, fmt, text, extra);
	return -EINVAL;
}

int bp_nvmet_ns_parse(const char *text, struct bp_nvmet_ns_spec *spec, char *err, size_t errlen)
{
	char buf[1200], *opts, *tok, *save;
	bool have_size = false;

	memset(spec, 0, sizeof(*spec));
	spec->block_size = 512;
	if (strlen(text) >= sizeof(buf))
		return ns_fail(err, errlen, "--ns %.60s...: too long%s", text, "");
	snprintf(buf, sizeof(buf), "%s", text);
	if (!strncmp(buf, "ram:", 4)) {
		spec->kind = BP_NVMET_NS_RAM;
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
			return ns_fail(err, errlen, "--ns %s: no path (file:PATH[,size=SIZE])%s", text, "");
		if (strlen(buf + 5) >= sizeof(spec->path))
			return ns_fail(err, errlen, "--ns %.60s...: path too long%s", text, "");
		memcpy(spec->path, buf + 5, strlen(buf + 5) + 1);
	} else {
		return ns_fail(err, errlen, "--ns %s: must be ram:SIZE or file:PATH[,size=SIZE]%s", text, "");
	}
	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "size=", 5) && spec->kind == BP_NVMET_NS_FILE) {
			if (bp_nvmet_parse_size(tok + 5, &spec->size) || !spec->size)
				return ns_fail(err, errlen, "--ns %s: '%s' is not a size", text, tok + 5);
			have_size = true;
		} else if (!strncmp(tok, "bs=", 3)) {
			if (!strcmp(tok + 3, "512"))
				spec->block_size = 512;
			else if (!strcmp(tok + 3, "4096") || !strcmp(tok + 3, "4k") || !strcmp(tok + 3, "4K"))
				spec->block_size = 4096;
			else
				return ns_fail(err, errlen, "--ns %s: bs=%s: block size must be 512 or 4096", text, tok + 3);
		} else {
			return ns_fail(err, errlen, "--ns %s: unknown option '%s' (size=, bs=)", text, tok);
		}
	}
	if (have_size && spec->size % spec->block_size)
		return ns_fail(err, errlen, "--ns %s: size is not a multiple of the block size%s", text, "");
	if (spec->kind == BP_NVMET_NS_RAM && spec->size > NS_RAM_MAX)
		return ns_fail(err, errlen, "--ns %s: ram namespaces are limited to 1T%s", text, "");
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

int nvmet_ns_open(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, uint32_t nsid, const char *nqn)
{
	memset(ns, 0, sizeof(*ns));
	ns->nsid = nsid;
	ns->kind = spec->kind;
	ns->fd = -1;
	ns->lba_shift = spec->block_size == 4096 ? 12 : 9;
	if (spec->kind == BP_NVMET_NS_RAM) {
		void *p = mmap(NULL, spec->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		if (p == MAP_FAILED)
			return bp_set_last_error(-errno, "--ns ram:%llu: cannot map that much memory: %s",
						 (unsigned long long)spec->size, strerror(errno));
		ns->ram = p;
		ns->size = spec->size;
		snprintf(ns->desc, sizeof(ns->desc), "ram:%llu", (unsigned long long)spec->size);
	} else {
		struct stat sb;
		int flags = O_RDWR | O_CLOEXEC | (spec->size ? O_CREAT : 0);
		int fd = open(spec->path, flags, 0644);
		int err;

		if (fd < 0) {
			err = -errno;
			if (err == -ENOENT)
				return bp_set_last_error(err, "--ns file:%s: no such file; add ,size=SIZE to create it",
							 spec->path);
			return bp_set_last_error(err, "--ns file:%s: %s", spec->path, strerror(-err));
		}
		/* Two targets writing one file would corrupt it for both. */
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			err = -errno;
			close(fd);
			return bp_set_last_error(err == -EWOULDBLOCK ? -EBUSY : err,
						 "--ns file:%s: in use by another process (locked)", spec->path);
		}
		if (fstat(fd, &sb) < 0) {
			err = -errno;
			close(fd);
			return bp_set_last_error(err, "--ns file:%s: %s", spec->path, strerror(-err));
		}
		ns->fd = fd;
		if (S_ISBLK(sb.st_mode)) {
			uint64_t bytes = 0;

			ns->blockdev = true;
			if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
				err = -errno;
				nvmet_ns_close(ns);
				return bp_set_last_error(err, "--ns file:%s: BLKGETSIZE64: %s", spec->path, strerror(-err));
			}
			ns->size = spec->size && spec->size < bytes ? spec->size : bytes;
		} else if (S_ISREG(sb.st_mode)) {
			if (spec->size && (uint64_t)sb.st_size < spec->size && ftruncate(fd, (off_t)spec->size) < 0) {
				err = -errno;
				nvmet_ns_close(ns);
				return bp_set_last_error(err, "--ns file:%s: cannot grow it to %llu bytes: %s", spec->path,
							 (unsigned long long)spec->size, strerror(-err));
			}
			ns->size = spec->size ? spec->size : (uint64_t)sb.st_size;
		} else {
			nvmet_ns_close(ns);
			return bp_set_last_error(-EINVAL, "--ns file:%s: not a regular file or block device", spec->path);
		}
		ns->size &= ~(((uint64_t)1 << ns->lba_shift) - 1);
		if (!ns->size) {
			nvmet_ns_close(ns);
			return bp_set_last_error(-EINVAL, "--ns file:%s: empty; add ,size=SIZE", spec->path);
		}
		snprintf(ns->desc, sizeof(ns->desc), "file:%s", spec->path);
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
		fdatasync(ns->fd);
		close(ns->fd);
	}
	ns->ram = NULL;
	ns->fd = -1;
}

static uint16_t errno_status(int err, bool write)
{
	if (err == ENOSPC || err == EDQUOT)
		return BP_NVME_SC_CAP_EXCEEDED | BP_NVME_DNR;
	return write ? BP_NVME_SC_WRITE_FAULT : BP_NVME_SC_READ_ERROR;
}

uint16_t nvmet_ns_read(struct nvmet_ns *ns, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (off > ns->size || len > ns->size - off)
		return BP_NVME_SC_LBA_RANGE | BP_NVME_DNR; /* never reached: callers check */
	if (ns->ram) {
		memcpy(buf, ns->ram + off, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(ns->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno_status(errno, false);
		if (n == 0) { /* the file shrank under us: what is gone reads as zeros */
			memset(p, 0, len);
			break;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

uint16_t nvmet_ns_write(struct nvmet_ns *ns, uint64_t off, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (off > ns->size || len > ns->size - off)
		return BP_NVME_SC_LBA_RANGE | BP_NVME_DNR;
	if (ns->ram) {
		memcpy(ns->ram + off, buf, len);
		return 0;
	}
	while (len) {
		ssize_t n = pwrite(ns->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return errno_status(n < 0 ? errno : EIO, true);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

uint16_t nvmet_ns_flush(struct nvmet_ns *ns)
{
	if (ns->fd >= 0 && fdatasync(ns->fd) < 0)
		return BP_NVME_SC_INTERNAL;
	return 0;
}
