/* SPDX-License-Identifier: MIT */
/*
 * Block devices, cgroups and file systems for the storage tests (all need root).
 *
 * Nothing outlives the test, whatever ends it:
 *  - loop devices are attached with LO_FLAGS_AUTOCLEAR and held open by the test:
 *    the kernel detaches each when its last opener (the test, the target in it, a
 *    mount) closes it, also when the process is SIGKILLed;
 *  - mounts are made in a mount namespace of the test's own (bpt_blk_private_mounts,
 *    called before any thread starts), which dies with the process;
 *  - the blkio cgroup (v1, /sys/fs/cgroup/blkio/bpt-blk-PID) is left and removed by
 *    bpt_blk_cleanup (registered with atexit by the first bpt_blkio_create); one
 *    left by a SIGKILLed test (its PID gone, no task in it) is removed by the next
 *    bpt_blkio_create. Nothing of anyone else's is touched.
 * Functions return 0 or -errno with a message in bpt_blk_error().
 */
#ifndef BPT_BLK_H
#define BPT_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* bpt_blk_error - why the last call failed. */
const char *bpt_blk_error(void);

/* bpt_blk_private_mounts - a private mount namespace for this process (before threads). */
int bpt_blk_private_mounts(void);

struct bpt_loop {
	int fd;            /* held open: the device lives while this is open */
	char dev[32];      /* /dev/loopN */
	dev_t rdev;
};
/*
 * bpt_loop_attach - a loop device over file: direct I/O, read-only, logical block
 * size (0 = 512). Returns 0 and fills *l.
 */
int bpt_loop_attach(struct bpt_loop *l, const char *file, bool direct, bool read_only, uint32_t block_size);
/* bpt_loop_detach - let it go (it detaches once nobody else holds it). */
void bpt_loop_detach(struct bpt_loop *l);
/* bpt_loop_stat - the kernel's counts for the device: reads and flushes completed. */
int bpt_loop_stat(const struct bpt_loop *l, uint64_t *reads, uint64_t *flushes);

/* bpt_blkio_create - this test's blkio cgroup (path filled in), cleaning up dead tests' first. */
int bpt_blkio_create(char *path, size_t n);
/* bpt_blkio_throttle_reads - blkio.throttle.read_iops_device: at most iops reads/s on dev. */
int bpt_blkio_throttle_reads(const char *cg, dev_t dev, unsigned iops);
/* bpt_blkio_enter - move this whole process (every thread) into cg. */
int bpt_blkio_enter(const char *cg);
/* bpt_blkio_reads - blkio.throttle.io_serviced: reads of dev issued from cg. */
int bpt_blkio_reads(const char *cg, dev_t dev, uint64_t *reads);
/* bpt_blk_cleanup - back to the root cgroup, remove ours (atexit does it too). */
void bpt_blk_cleanup(void);

/* bpt_mount - mount(2); fstype "tmpfs" with data "size=1M" etc. */
int bpt_mount(const char *source, const char *dir, const char *fstype, unsigned long flags, const char *data);
/* bpt_umount - unmount dir (lazily). */
void bpt_umount(const char *dir);
/* bpt_run_cmd - run a command line with sh -c, output to /dev/null unless BPT_VERBOSE. 0 or -1. */
int bpt_run_cmd(const char *cmd);

#endif
