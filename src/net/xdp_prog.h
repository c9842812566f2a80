/* SPDX-License-Identifier: MIT */
/*
 * busypoll's XDP program on a device (bpf/xsk_udp.bpf.c, loaded through libbpf):
 * attached in native mode when the first AF_XDP socket of this process needs it on
 * that device, shared by the others there, detached when the last one goes. The
 * one place the program is attached, changed and removed.
 *
 * A program a killed run left (its owner process gone) is removed when the next
 * run attaches, and the NAPI settings that run had changed are put back first:
 * the program's bp_owner map carries both (bp_xdp_sweep).
 *
 * Each call acts in the network namespace the program was attached in, whatever
 * the calling thread's.
 */
#ifndef BP_NET_XDP_PROG_H
#define BP_NET_XDP_PROG_H

#include <stdint.h>

#include <busypoll/napi.h>

struct bp_xdp;

/*
 * bp_xdp_acquire - our program on device ifindex of the calling thread's network
 * namespace, attached now or shared with another socket of this process. A
 * leftover of a dead run is removed first. Returns 0, or -errno with one line in
 * the last error: -EOPNOTSUPP the device has no native XDP, -EBUSY another
 * program (or a live run's) is attached there, -EPERM not allowed.
 */
int bp_xdp_acquire(int ifindex, struct bp_xdp **out);
/* bp_xdp_release - drop one use; the last detaches the program. NULL is a no-op. */
void bp_xdp_release(struct bp_xdp *x);

/*
 * bp_xdp_port_add - claim UDP port (host order) on the device; its frames still
 * pass to the kernel until bp_xdp_port_set. -EADDRINUSE when another socket here
 * has the port.
 */
int bp_xdp_port_add(struct bp_xdp *x, uint16_t port);
/* bp_xdp_port_set - from now on redirect the port's frames that arrive on queue to its socket. */
int bp_xdp_port_set(struct bp_xdp *x, uint16_t port, uint32_t queue);
void bp_xdp_port_del(struct bp_xdp *x, uint16_t port);
/* bp_xdp_xsk_set - the AF_XDP socket fd of queue (fd < 0: none; frames then pass). */
int bp_xdp_xsk_set(struct bp_xdp *x, uint32_t queue, int fd);

/*
 * bp_xdp_napi_saved - note a NAPI's settings as they were before the run changed
 * them, so that a sweep after a kill puts them back. -ENOSPC when every slot is taken.
 */
int bp_xdp_napi_saved(struct bp_xdp *x, uint32_t napi_id, const bp_napi_settings *was);

/*
 * bp_xdp_sweep - on device ifindex (calling thread's namespace): remove our program
 * if the run that attached it is gone, after putting back the NAPI settings it
 * noted. Returns 1 removed, 0 nothing of ours left, -EBUSY a live run's or a
 * foreign program (the last error names it), another -errno when it cannot tell.
 */
int bp_xdp_sweep(int ifindex);

/* bp_xdp_prog_id - the id of the XDP program attached in native mode on ifindex, 0 none. */
uint32_t bp_xdp_prog_id(int ifindex);

#endif
