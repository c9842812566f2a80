/* SPDX-License-Identifier: MIT */
/*
 * One storage I/O (struct bp_aio, busypoll/aio.h) as an io_uring SQE: what is left
 * of it, from the bytes already transferred. Shared by the uring backend (the I/O on
 * the loop's own ring) and the core's storage ring of the other backends (core/aio.c).
 */
#include <linux/fs.h>
#include <stdint.h>

#include <liburing.h>

#include "backends/backend.h"

void bp_aio_prep_sqe(struct io_uring_sqe *sqe, const struct bp_aio *a)
{
	bool transfer = a->op == BP_AIO_READ || a->op == BP_AIO_WRITE;
	/* syncs and fallocate have no buffer: no arithmetic on their NULL */
	void *buf = transfer ? (uint8_t *)a->buf + a->xfer : NULL;
	unsigned len = (unsigned)(a->len - a->xfer);
	uint64_t off = a->off + a->xfer;

	switch (a->op) {
	case BP_AIO_READ:
		io_uring_prep_read(sqe, a->fd, buf, len, off);
		break;
	case BP_AIO_WRITE:
		io_uring_prep_write(sqe, a->fd, buf, len, off);
		if (a->flags & BP_AIO_FUA)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case BP_AIO_FSYNC:
		io_uring_prep_fsync(sqe, a->fd, 0);
		break;
	case BP_AIO_FDATASYNC:
		io_uring_prep_fsync(sqe, a->fd, IORING_FSYNC_DATASYNC);
		break;
	case BP_AIO_FALLOCATE:
	default:
		io_uring_prep_fallocate(sqe, a->fd, a->mode, (off_t)a->off, (off_t)a->len);
		break;
	}
}
