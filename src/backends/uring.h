/* SPDX-License-Identifier: MIT */
/*
 * Insides of the io_uring backend, shared by its files:
 *   uring.c        the operations: submission, completions, wait
 *   uring_setup.c  the ring: setup flags, first use on the loop's thread, NAPI, teardown
 *   uring_bufs.c   the provided buffer ring multishot receives pick from
 *   uring_slots.c  registered (direct) descriptors for connections
 *   uring_modes.c  the grammar's families, the probe, the check, the optional features
 */
#ifndef BP_BACKENDS_URING_H
#define BP_BACKENDS_URING_H

#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

#include "backends/backend.h"

/* ---- optional kernel features, each probed once per process (uring_modes.c) ---- */
enum {
	URING_F_MULTISHOT = 1u << 0, /* multishot recv from a provided buffer ring (Linux 6.0) */
	URING_F_DIRECT = 1u << 1,    /* registered descriptors for connections (Linux 5.19) */
	URING_F_REGRING = 1u << 2,   /* registered ring fd (Linux 5.18) */
	URING_F_NOSQARRAY = 1u << 3, /* IORING_SETUP_NO_SQARRAY (Linux 6.6) */
};

/*
 * bp_uring_features - the URING_F_* this kernel has and the environment leaves on
 * (BP_URING_FEATURES, e.g. "none" for the path of kernels without them). Probed
 * once per process; 0 when the variable does not parse (bp_uring_check says why).
 */
unsigned bp_uring_features(void);

/* bp_uring_buf_geometry - buffers in a loop's ring and their size (BP_URING_BUFS=NxSIZE). */
void bp_uring_buf_geometry(unsigned *count, unsigned *size);

/* ---- the grammar (uring_modes.c) ---- */

/* The grammar's uring families (ended by a NULL name), their check, the features list. */
extern const struct bp_mode_family bp_uring_families[];
int bp_uring_check(const struct bp_mode *mode, char *err, size_t errlen);
size_t bp_uring_feature_list(struct bp_feature *out, size_t max);

/* bp_uring_setup_flags - the IORING_SETUP_* flags of a ring setup (enum bp_uring_setup). */
unsigned bp_uring_setup_flags(enum bp_uring_setup setup);

/*
 * bp_uring_register_napi - IORING_REGISTER_NAPI on ring_fd (raw syscall: liburing 2.3
 * has no helper; nr_args must be 1): the one place it is made, for a loop's busy
 * polling, its static NAPI ids, and the probe. Returns 0 or the raw -errno (-EINVAL:
 * the kernel lacks the opcode, or static tracking); names nothing in the last error.
 */
int bp_uring_register_napi(int ring_fd, struct bp_io_uring_napi *napi);

/* ---- a loop's provided buffer ring (uring_bufs.c) ---- */

struct uring_bufs;

/*
 * uring_bufs_create - count buffers (a power of two) of size bytes, registered as
 * buffer group 0 of ring (IORING_REGISTER_PBUF_RING, one syscall) and all given to
 * the kernel. Returns 0 and sets *out, or -errno named in the last error.
 */
int uring_bufs_create(struct bp_backend_loop *bl, struct io_uring *ring, unsigned count,
		      unsigned size, struct uring_bufs **out);
/* uring_bufs_destroy - free (the kernel lets go of the group when the ring goes). */
void uring_bufs_destroy(struct uring_bufs *b);
/* uring_bufs_group - the buffer group id SQEs select from. */
uint16_t uring_bufs_group(const struct uring_bufs *b);
/*
 * uring_bufs_lend - the bytes of buffer bid, lent to the core until the next wait:
 * uring_bufs_return_lent gives every lent buffer back to the kernel at once.
 */
const uint8_t *uring_bufs_lend(struct uring_bufs *b, uint16_t bid);
/* uring_bufs_give_back - give buffer bid back now (its bytes went to nobody). */
void uring_bufs_give_back(struct uring_bufs *b, uint16_t bid);
/* uring_bufs_return_lent - give back what was lent (before the next submit). */
void uring_bufs_return_lent(struct uring_bufs *b);

/* ---- registered descriptors (uring_slots.c) ---- */

struct uring_slots {
	unsigned n;         /* slots in the ring's sparse file table, 0 = none */
	unsigned nfree;
	uint32_t *free;     /* a stack of free slot numbers */
};

/* uring_slots_init - a sparse file table of up to want slots (fewer if RLIMIT_NOFILE
 * is lower). 0, or -errno named in the last error (the ring works without one). */
int uring_slots_init(struct bp_backend_loop *bl, struct io_uring *ring, struct uring_slots *s,
		     unsigned want);
void uring_slots_fini(struct uring_slots *s);
/* uring_slots_attach - register io->fd in a free slot (io->bindex = slot + 1). Without
 * a free slot io keeps its plain fd (bindex 0). One syscall. */
void uring_slots_attach(struct bp_backend_loop *bl, struct io_uring *ring, struct uring_slots *s,
			struct bp_io *io);
/* uring_slots_detach - empty io's slot (the kernel drops its reference) and free it. */
void uring_slots_detach(struct bp_backend_loop *bl, struct io_uring *ring, struct uring_slots *s,
			struct bp_io *io);

/* ---- one loop's ring ---- */

struct uring {
	struct io_uring ring;
	unsigned ops;           /* ops submitted or queued, CQE not yet seen */
	unsigned features;      /* URING_F_* this ring uses */
	bool disabled;          /* created R_DISABLED, enabled on first use */
	bool started;           /* first use on the loop's thread done (uring_start) */
	bool deferred_tw;       /* COOP/DEFER: completions need an enter to show up */
	bool napi_static;       /* static NAPI tracking: napi_seen adds ids */
	int owner_tid;          /* the thread that started the ring: its fd is registered there */
	unsigned *sq_scratch;   /* NO_SQARRAY: the index array liburing 2.3 still fills */
	struct uring_bufs *bufs;/* multishot receives pick from it; NULL without */
	struct uring_slots slots;
};

static inline struct uring *ring_of(struct bp_backend_loop *bl)
{
	return bl->data;
}

/* ---- the ring's life (uring_setup.c) ---- */

/* uring_setup - a ring for bl->mode with what this kernel offers; bl->data set. */
int uring_setup(struct bp_backend_loop *bl);
/* uring_teardown - cancel what is in flight, wait briefly for it, free the ring. */
void uring_teardown(struct bp_backend_loop *bl);
/*
 * uring_start - on the thread that runs the loop, before its first submit or wait:
 * enable an R_DISABLED (SINGLE_ISSUER) ring, register the ring fd. 0 or -errno.
 */
int uring_start(struct bp_backend_loop *bl, struct uring *u);
/*
 * uring_drain - (uring.c) cancel whatever is still in flight and wait briefly for
 * it to come back, so the kernel writes into no receive buffer after teardown.
 */
void uring_drain(struct bp_backend_loop *bl, struct uring *u);
/* uring_enter_error - an io_uring_enter failure, named; -EEXIST has a known cause. */
int uring_enter_error(int err);
/* uring_kthreads - the ring's SQPOLL thread and the io-wq workers of its submitter. */
int uring_kthreads(const struct bp_backend_loop *bl, struct bp_loop_kthread *out, size_t max);

#endif
