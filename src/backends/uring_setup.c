/* SPDX-License-Identifier: MIT */
/*
 * A loop's ring, from setup to teardown, with what this kernel offers (the features
 * probed once per process in uring_modes.c):
 *
 *   setup     the ring with the mode's setup flags (SQPOLL, or setup=plain|coop|defer)
 *             and IORING_SETUP_NO_SQARRAY where the kernel has it; NAPI busy polling
 *             registered; the provided buffer ring for multishot receives and the
 *             sparse table for registered descriptors, both registered here, while a
 *             SINGLE_ISSUER ring is still disabled and so takes registrations from
 *             the creating thread.
 *   start     on the thread that runs the loop, before its first submit or wait: a
 *             SINGLE_ISSUER ring (created R_DISABLED) is enabled, so it belongs to
 *             that thread, and the ring fd is registered there (IORING_REGISTER_RING_FDS:
 *             every io_uring_enter then skips the fd lookup). Registered ring fds are
 *             per thread, which is why this waits for the loop's own thread.
 *   teardown  cancel and drain (uring.c), then let go of the ring.
 *
 * NO_SQARRAY with liburing 2.3: the kernel reads SQE i at SQ head i and has no index
 * array (sq_off.array is 0), but io_uring_queue_init_params fills the array it
 * believes in (sq.array[i] = i), which would land on the ring's head and tail, and
 * older liburings rewrote it on every submit. So such a ring is set up with
 * io_uring_setup + io_uring_queue_mmap (which fills nothing) and sq.array then points
 * at a private scratch array that the kernel never reads.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backends/uring.h"

#define URING_SQ_ENTRIES 1024
#define URING_CQ_ENTRIES 4096
/* Registered descriptors per loop at most (fewer when RLIMIT_NOFILE is lower). */
#define URING_SLOTS 4096
/* liburing 2.3's int_flags bit for "ring fd registered" (liburing/src/int_flags.h). */
#define LIBURING_INT_FLAG_REG_RING 1

/* setup_flags - the IORING_SETUP_* flags of a loop's ring for mode, with the features used. */
static unsigned setup_flags(const struct bp_mode *mode, unsigned features)
{
	unsigned f = mode->policy == BP_POLICY_SQPOLL ? IORING_SETUP_SQPOLL
						      : bp_uring_setup_flags(mode->setup);

	if (features & URING_F_NOSQARRAY)
		f |= IORING_SETUP_NO_SQARRAY;
	return f;
}

/* setup_name - how error messages name the ring setup of mode. */
static const char *setup_name(const struct bp_mode *mode)
{
	if (mode->policy == BP_POLICY_SQPOLL)
		return "sqpoll";
	switch (mode->setup) {
	case BP_URING_SETUP_COOP:
		return "setup=coop (SINGLE_ISSUER|COOP_TASKRUN, Linux 6.0)";
	case BP_URING_SETUP_DEFER:
		return "setup=defer (SINGLE_ISSUER|DEFER_TASKRUN, Linux 6.1)";
	default:
		return "setup=plain";
	}
}

/* The ring itself: liburing's set-up, or by hand for NO_SQARRAY (see above). */
static int ring_create(struct uring *u, struct io_uring_params *p)
{
	int fd, ret;

	if (!(p->flags & IORING_SETUP_NO_SQARRAY))
		return io_uring_queue_init_params(URING_SQ_ENTRIES, &u->ring, p);
	u->sq_scratch = calloc(URING_SQ_ENTRIES, sizeof(*u->sq_scratch));
	if (!u->sq_scratch)
		return -ENOMEM;
	fd = io_uring_setup(URING_SQ_ENTRIES, p);
	if (fd < 0)
		return fd;
	ret = io_uring_queue_mmap(fd, p, &u->ring);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	u->ring.features = p->features;
	u->ring.sq.array = u->sq_scratch;
	return 0;
}

/* setup_ring - the ring for bl->mode; -EOPNOTSUPP/-EPERM named, or another -errno. */
static int setup_ring(struct bp_backend_loop *bl, struct uring *u)
{
	const struct bp_mode *mode = &bl->mode;
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = setup_flags(mode, u->features) | IORING_SETUP_CQSIZE;
	p.cq_entries = URING_CQ_ENTRIES;
	if (p.flags & IORING_SETUP_SQPOLL) {
		p.sq_thread_idle = mode->sq_idle_ms;
		/* Without SQ_AFF the SQ thread inherits the creator's affinity: a loop
		 * pinned to one CPU would share it with its own SQ thread. */
		if (mode->keys_set & BP_KEY_CPU) {
			p.flags |= IORING_SETUP_SQ_AFF;
			p.sq_thread_cpu = mode->sq_cpu;
		}
	}
	if (p.flags & IORING_SETUP_SINGLE_ISSUER)
		p.flags |= IORING_SETUP_R_DISABLED;

	bl->ctr.syscalls++;
	ret = ring_create(u, &p);
	if (ret < 0) {
		free(u->sq_scratch);
		u->sq_scratch = NULL;
	}
	if (ret == -EINVAL)
		return bp_err_set(-EOPNOTSUPP, "uring %s: io_uring_setup: ring flags not supported by this kernel",
				  setup_name(mode));
	if (ret == -EPERM)
		return bp_err_set(-EPERM, "uring %s: io_uring_setup: not permitted (kernel.io_uring_disabled?)",
				  setup_name(mode));
	if (ret < 0)
		return bp_err_sys("io_uring_setup", ret);
	u->disabled = p.flags & IORING_SETUP_R_DISABLED;
	u->deferred_tw = p.flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN);
	return 0;
}

/* setup_napi - IORING_REGISTER_NAPI as the mode says; -EOPNOTSUPP names the kernel it needs. */
static int setup_napi(struct bp_backend_loop *bl, struct uring *u)
{
	const struct bp_mode *mode = &bl->mode;
	bool track_static = mode->tracking == BP_TRACKING_STATIC;
	struct bp_io_uring_napi napi;
	int ret;

	memset(&napi, 0, sizeof(napi));
	napi.busy_poll_to = mode->busy_usecs;
	napi.prefer_busy_poll = mode->prefer ? 1 : 0;
	napi.opcode = BP_NAPI_OP_REGISTER;
	napi.op_param = track_static ? BP_NAPI_TRACK_STATIC : BP_NAPI_TRACK_DYNAMIC;

	bl->ctr.syscalls++;
	ret = bp_uring_register_napi(u->ring.ring_fd, &napi);
	if (ret == -EINVAL)
		return bp_err_set(-EOPNOTSUPP,
				  "uring napi: IORING_REGISTER_NAPI%s not supported by this kernel (needs Linux %s)",
				  track_static ? " with tracking=static" : "",
				  track_static ? "6.13" : "6.9");
	if (ret == -EPERM)
		return bp_err_set(-EPERM, "uring napi: IORING_REGISTER_NAPI: not permitted");
	if (ret < 0)
		return bp_err_sys("io_uring_register", ret);
	u->napi_static = track_static;
	return 0;
}

/* wants_napi - does mode ask the ring to busy poll NAPI (uring:napi, uring:sqpoll,napi>0)? */
static bool wants_napi(const struct bp_mode *mode)
{
	return mode->policy == BP_POLICY_NAPI ||
	       (mode->policy == BP_POLICY_SQPOLL && mode->busy_usecs > 0);
}

/* The buffer ring and the descriptor table: a loop works without either, so a
 * failure here (memory, a limit) only turns the feature off for this loop. */
static void setup_extras(struct bp_backend_loop *bl, struct uring *u)
{
	unsigned count, size;

	if (u->features & URING_F_MULTISHOT) {
		bp_uring_buf_geometry(&count, &size);
		if (uring_bufs_create(bl, &u->ring, count, size, &u->bufs) < 0)
			u->features &= ~URING_F_MULTISHOT;
	}
	if (u->features & URING_F_DIRECT) {
		if (uring_slots_init(bl, &u->ring, &u->slots, URING_SLOTS) < 0 || !u->slots.n)
			u->features &= ~URING_F_DIRECT;
	}
}

/* ring_free - the ring, then the memory the kernel may have used with it. */
static void ring_free(struct uring *u)
{
	io_uring_queue_exit(&u->ring);
	uring_bufs_destroy(u->bufs);
	uring_slots_fini(&u->slots);
	free(u->sq_scratch);
	free(u);
}

int uring_setup(struct bp_backend_loop *bl)
{
	struct uring *u;
	int ret;

	if (bl->mode.policy == BP_POLICY_SUSPEND)
		return bp_err_set(-EOPNOTSUPP, "uring:suspend: IRQ suspension is an epoll mode");

	u = calloc(1, sizeof(*u));
	if (!u)
		return bp_err_set(-ENOMEM, "uring: out of memory");
	u->features = bp_uring_features();
	ret = setup_ring(bl, u);
	if (ret < 0) {
		free(u);
		return ret;
	}
	if (wants_napi(&bl->mode)) {
		ret = setup_napi(bl, u);
		if (ret < 0) {
			io_uring_queue_exit(&u->ring);
			free(u->sq_scratch);
			free(u);
			return ret;
		}
	}
	setup_extras(bl, u);
	bl->data = u;
	return 0;
}

int uring_enter_error(int err)
{
	if (err == -EEXIST)
		return bp_err_set(err, "io_uring_enter: SINGLE_ISSUER ring used from a thread "
				  "other than the one that runs the loop");
	return bp_err_sys("io_uring_enter", err);
}

int uring_start(struct bp_backend_loop *bl, struct uring *u)
{
	if (u->disabled) {
		/* liburing 2.3 declares io_uring_enable_rings() but does not export it. */
		bl->ctr.syscalls++;
		if (syscall(__NR_io_uring_register, u->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
			return bp_err_sys("io_uring_register(ENABLE_RINGS)", -errno);
		u->disabled = false;
	}
	if (u->features & URING_F_REGRING) {
		/* 1: registered. A thread holds 16 at most (EBUSY): then this one enters by fd. */
		bl->ctr.syscalls++;
		if (io_uring_register_ring_fd(&u->ring) != 1)
			u->features &= ~URING_F_REGRING;
	}
	u->owner_tid = gettid();
	u->started = true;
	return 0;
}

/*
 * A registered ring fd lives in the registering thread's table, at an offset that
 * means another ring in another thread's. Only the owner can take it out; from any
 * other thread liburing's queue_exit would unregister whatever that thread has at
 * the offset, so the mark is dropped instead and the entry goes when the owner
 * thread exits (it holds the ring until then).
 */
static void forget_foreign_ring_fd(struct uring *u)
{
	if (!(u->ring.int_flags & LIBURING_INT_FLAG_REG_RING) || u->owner_tid == gettid())
		return;
	u->ring.int_flags &= (__u8)~LIBURING_INT_FLAG_REG_RING;
	u->ring.enter_ring_fd = u->ring.ring_fd;
}

void uring_teardown(struct bp_backend_loop *bl)
{
	struct uring *u = ring_of(bl);

	if (!u)
		return;
	uring_drain(bl, u);
	forget_foreign_ring_fd(u);
	ring_free(u);
	bl->data = NULL;
}

/* ---- the kernel threads that work for a ring ---- */

/* "SqThread:\t1234" from the ring's fdinfo: the SQPOLL thread, or 0. */
static int sq_thread_tid(int ring_fd)
{
	char path[64], line[128];
	int tid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ring_fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SqThread: %d", &tid) == 1)
			break;
	fclose(f);
	return tid > 0 ? tid : 0;
}

/* Threads of this process named "iou-wrk-<owner>": the io-wq workers of task owner. */
static int iowq_workers(int owner, struct bp_loop_kthread *out, size_t max, size_t n)
{
	char want[32], path[300], comm[32];
	struct dirent *d;
	DIR *dir;

	snprintf(want, sizeof(want), "iou-wrk-%d", owner);
	dir = opendir("/proc/self/task");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* exited meanwhile */
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, want, strlen(want)) &&
		    (comm[strlen(want)] == '\n' || comm[strlen(want)] == '\0')) {
			if (n < max)
				out[n] = (struct bp_loop_kthread){ atoi(d->d_name), "io-wq" };
			n++;
		}
		fclose(f);
	}
	closedir(dir);
	return (int)n;
}

int uring_kthreads(const struct bp_backend_loop *bl, struct bp_loop_kthread *out, size_t max)
{
	const struct uring *u = bl->data;
	int sq = 0, owner;
	size_t n = 0;

	if (!u)
		return 0;
	if (u->ring.flags & IORING_SETUP_SQPOLL) {
		sq = sq_thread_tid(u->ring.ring_fd);
		if (sq < 0)
			return bp_err_sys("read(/proc/self/fdinfo)", sq);
		if (sq) {
			if (n < max)
				out[n] = (struct bp_loop_kthread){ sq, "sqpoll" };
			n++;
		}
	}
	/* io-wq workers belong to the task that submits: the SQ thread, or the loop's. */
	owner = sq ? sq : u->owner_tid;
	if (!owner)
		return (int)n;
	return iowq_workers(owner, out, max, n);
}
