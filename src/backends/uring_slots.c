/* SPDX-License-Identifier: MIT */
/*
 * Registered (direct) descriptors for connections: each conn's socket also sits in a
 * slot of the ring's sparse file table (IORING_REGISTER_FILES2 with
 * IORING_RSRC_REGISTER_SPARSE, Linux 5.19), and its SQEs name the slot with
 * IOSQE_FIXED_FILE, so the kernel skips the fd table lookup and the file reference
 * count of every op. The core keeps the plain fd for setsockopt/getsockopt and
 * closes it as before; the slot holds a reference of its own, so it is emptied when
 * the conn's last op is back (uring.c), which is when the core closes the fd too.
 * A conn that finds no free slot keeps its plain fd: nothing else changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "backends/uring.h"

int uring_slots_init(struct bp_backend_loop *bl, struct io_uring *ring, struct uring_slots *s,
		     unsigned want)
{
	struct rlimit rl;
	unsigned n = want;
	int ret;

	/* The kernel refuses a table larger than RLIMIT_NOFILE (EMFILE). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n)
		n = (unsigned)rl.rlim_cur;
	if (!n)
		return 0;
	s->free = malloc(n * sizeof(*s->free));
	if (!s->free)
		return bp_err_set(-ENOMEM, "uring: out of memory for registered descriptors");
	bl->ctr.syscalls++;
	ret = io_uring_register_files_sparse(ring, n);
	if (ret < 0) {
		free(s->free);
		s->free = NULL;
		return bp_err_sys("io_uring_register(FILES2, sparse)", ret);
	}
	/* Hand out low slots first (the stack pops from the end). */
	for (unsigned i = 0; i < n; i++)
		s->free[i] = n - 1 - i;
	s->n = s->nfree = n;
	return 0;
}

void uring_slots_fini(struct uring_slots *s)
{
	free(s->free);
	s->free = NULL;
	s->n = s->nfree = 0;
}

void uring_slots_attach(struct bp_backend_loop *bl, struct io_uring *ring, struct uring_slots *s,
			struct bp_io *io)
{
	uint32_t slot;
	int fd = io->fd;
	int ret;

	io->bindex = 0;
	if (!s->nfree)
		return;
	slot = s->free[--s->nfree];
	bl->ctr.syscalls++;
	ret = io_uring_register_files_update(ring, slot, &fd, 1);
	if (ret != 1) {
		/* ENOMEM and the like: this conn goes on with its plain fd. */
		s->free[s->nfree++] = slot;
		return;
	}
	io->bindex = slot + 1;
}

void uring_slots_detach(struct bp_backend_loop *bl, struct io_uring *ring, struct uring_slots *s,
			struct bp_io *io)
{
	int none = -1;
	uint32_t slot;

	if (!io->bindex)
		return;
	slot = io->bindex - 1;
	io->bindex = 0;
	bl->ctr.syscalls++;
	if (io_uring_register_files_update(ring, slot, &none, 1) != 1)
		return; /* the slot stays taken; the table goes with the ring */
	s->free[s->nfree++] = slot;
}
