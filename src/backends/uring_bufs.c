/* SPDX-License-Identifier: MIT */
/*
 * A loop's provided buffer ring (IORING_REGISTER_PBUF_RING, Linux 5.19): the kernel
 * picks a buffer from it for each multishot receive completion and names it in the
 * CQE (IORING_CQE_F_BUFFER, the buffer id in the upper 16 bits of flags).
 *
 * Ownership: a buffer is the kernel's while it sits in the ring, then the backend's
 * from its CQE on. The backend lends it to the core with the event (uring_bufs_lend)
 * and takes every lent buffer back at the start of the next wait, before anything is
 * submitted (uring_bufs_return_lent): the core copies out whatever it keeps during
 * dispatch. A buffer whose bytes go to nobody (a CQE of a closed conn) goes back at
 * once. When the ring runs dry the kernel ends the multishot receive with -ENOBUFS;
 * the core re-arms it, and since the lent buffers go back before that re-arm is
 * submitted, the bytes still in the socket come next, in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backends/uring.h"

#define BUF_GROUP 0

struct uring_bufs {
	struct io_uring_buf_ring *br; /* the entries the kernel picks from, page aligned */
	size_t br_bytes;
	uint8_t *base;                /* count buffers of size bytes, one mapping */
	size_t base_bytes;
	unsigned count, size, mask;
	uint16_t *lent;               /* ids lent to the core since the last wait */
	unsigned nlent;
};

/* page_round - n rounded up to whole pages. */
static size_t page_round(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/* bufs_free - unmap what was mapped of b and free it. */
static void bufs_free(struct uring_bufs *b)
{
	if (b->br && b->br != MAP_FAILED)
		munmap(b->br, b->br_bytes);
	if (b->base && b->base != MAP_FAILED)
		munmap(b->base, b->base_bytes);
	free(b->lent);
	free(b);
}

/* Put buffer bid at the ring's tail + off (visible to the kernel after an advance). */
static void bufs_add(struct uring_bufs *b, uint16_t bid, int off)
{
	io_uring_buf_ring_add(b->br, b->base + (size_t)bid * b->size, b->size, bid, b->mask, off);
}

int uring_bufs_create(struct bp_backend_loop *bl, struct io_uring *ring, unsigned count,
		      unsigned size, struct uring_bufs **out)
{
	struct io_uring_buf_reg reg = { 0 };
	struct uring_bufs *b = calloc(1, sizeof(*b));
	int ret;

	if (!b || !(b->lent = calloc(count, sizeof(*b->lent)))) {
		free(b);
		return bp_err_set(-ENOMEM, "uring: out of memory for the buffer ring");
	}
	b->count = count;
	b->size = size;
	b->mask = (unsigned)io_uring_buf_ring_mask(count);
	b->br_bytes = page_round(count * sizeof(struct io_uring_buf));
	b->base_bytes = page_round((size_t)count * size);
	b->br = mmap(NULL, b->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->base = mmap(NULL, b->base_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->br == MAP_FAILED || b->base == MAP_FAILED) {
		ret = bp_err_sys("mmap(buffer ring)", -errno);
		bufs_free(b);
		return ret;
	}
	io_uring_buf_ring_init(b->br);
	reg.ring_addr = (uint64_t)(uintptr_t)b->br;
	reg.ring_entries = count;
	reg.bgid = BUF_GROUP;
	bl->ctr.syscalls++;
	ret = io_uring_register_buf_ring(ring, &reg, 0);
	if (ret < 0) {
		bufs_free(b);
		return bp_err_sys("io_uring_register(PBUF_RING)", ret);
	}
	for (unsigned i = 0; i < count; i++)
		bufs_add(b, (uint16_t)i, (int)i);
	io_uring_buf_ring_advance(b->br, (int)count);
	*out = b;
	return 0;
}

void uring_bufs_destroy(struct uring_bufs *b)
{
	if (b)
		bufs_free(b);
}

uint16_t uring_bufs_group(const struct uring_bufs *b)
{
	return BUF_GROUP;
}

const uint8_t *uring_bufs_lend(struct uring_bufs *b, uint16_t bid)
{
	/* Each id is out at most once, so count entries always suffice. */
	b->lent[b->nlent++] = bid;
	return b->base + (size_t)bid * b->size;
}

void uring_bufs_give_back(struct uring_bufs *b, uint16_t bid)
{
	bufs_add(b, bid, 0);
	io_uring_buf_ring_advance(b->br, 1);
}

void uring_bufs_return_lent(struct uring_bufs *b)
{
	if (!b->nlent)
		return;
	for (unsigned i = 0; i < b->nlent; i++)
		bufs_add(b, b->lent[i], (int)i);
	io_uring_buf_ring_advance(b->br, (int)b->nlent);
	b->nlent = 0;
}
