/* SPDX-License-Identifier: MIT */
/*
 * A generic netlink client over libmnl (net/genl.c), shared by the net layer's
 * families: netdev (net/napi_nl.c: napi-get/set, queue-get) and ethtool
 * (net/ethtool_nl.c: coalescing, channels). One request, its replies, the ack.
 *
 * A socket acts in the network namespace its creating thread was in when it was
 * opened; open one per call (as the callers do) and a thread that setns()'d into
 * a test bed talks to that bed. Nothing here is shared between threads except the
 * per-family id cache, which is written once.
 */
#ifndef BP_NET_GENL_H
#define BP_NET_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

struct bp_genl {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;
};

/* What the kernel said about a request it refused (the extended ack). */
struct bp_genl_ack {
	int err;        /* the kernel's negative errno; 0 when the failure was not the kernel's answer */
	char msg[160];  /* NLMSGERR_ATTR_MSG, "" if none */
	uint32_t offs;  /* NLMSGERR_ATTR_OFFS: the rejected attribute's offset in the request, 0 if none */
};

/* A family as the kernel's nlctrl describes it. */
struct bp_genl_family {
	uint16_t id;
	uint64_t ops[4]; /* bit c set: the family has command c (0..255) */
};

/* A per-family cache (families are global, not per namespace): static, zeroed. */
struct bp_genl_family_cache {
	struct bp_genl_family fam;
	bool have; /* written once, atomically; a race only asks the kernel twice */
};

/*
 * bp_genl_open - a NETLINK_GENERIC socket, bound, with extended and capped acks
 * asked for (best effort). 0 or -errno with bp_last_error() naming the syscall.
 */
int bp_genl_open(struct bp_genl *g);

/* bp_genl_close - close the socket; harmless on a closed or never-opened one (zeroed). */
void bp_genl_close(struct bp_genl *g);

/*
 * bp_genl_msg - start a request in buf (at least NLMSG_HDRLEN + GENL_HDRLEN bytes,
 * 4-byte aligned, zeroed by the caller): netlink header of type (a family id) with
 * NLM_F_REQUEST | flags, generic header with cmd and version. Attributes follow
 * with mnl_attr_put_*. Returns the header.
 */
struct nlmsghdr *bp_genl_msg(void *buf, uint16_t type, uint16_t flags, uint8_t cmd,
			     uint8_t version);

/*
 * bp_genl_talk - send req (its seq and port are filled in here) and feed every
 * reply message to cb (NULL: ignore them) until the ack or the end of a dump.
 * Returns 0; or -errno with bp_last_error() set ("what: reason"). When the kernel
 * refused the request, ack (if not NULL) holds its errno, message and offset so
 * that the caller can name the setting it refused; ack->err is 0 for every other
 * failure (a syscall, a malformed reply, -EINTR: a dump interrupted by a change).
 */
int bp_genl_talk(struct bp_genl *g, struct nlmsghdr *req, mnl_cb_t cb, void *data,
		 struct bp_genl_ack *ack, const char *what);

/*
 * bp_genl_parse - one datagram (len bytes) of the replies to the request with seq
 * from the kernel to portid (0, 0: no checks, e.g. for a capture): cb (NULL:
 * ignored) for each data message. Returns 1 when the ack or the end of a dump
 * ended the exchange, 0 when more datagrams follow, or -errno: the kernel refused
 * the request (ack, if not NULL, holds why) or the reply is malformed (ack->err 0).
 * Sets no bp_last_error (bp_genl_talk words it).
 */
int bp_genl_parse(const void *buf, size_t len, uint32_t seq, uint32_t portid, mnl_cb_t cb,
		  void *data, struct bp_genl_ack *ack);

/*
 * bp_genl_family - look up family name (e.g. "ethtool"): its id and commands. With
 * a cache (may be NULL) the kernel is asked once per process. 0; -ENOENT when this
 * kernel has no such family (bp_last_error says so); -errno.
 */
int bp_genl_family(struct bp_genl *g, const char *name, struct bp_genl_family_cache *cache,
		   struct bp_genl_family *out);

/* bp_genl_has_op - does the family have command cmd? */
static inline bool bp_genl_has_op(const struct bp_genl_family *f, uint8_t cmd)
{
	return (f->ops[cmd / 64] >> (cmd % 64)) & 1;
}

/*
 * bp_genl_attr_at - the attribute at offset offs of req (an extack offset), if the
 * offset points at a whole attribute header inside the request's attributes; NULL
 * otherwise (never trust an offset from outside).
 */
const struct nlattr *bp_genl_attr_at(const struct nlmsghdr *req, uint32_t offs);

/* bp_genl_get_uint - a netlink "uint" (4 or 8 bytes) into *v; false for another length. */
bool bp_genl_get_uint(const struct nlattr *a, uint64_t *v);

/* bp_genl_put_uint - like the kernel's nla_put_uint: 4 bytes when v fits, 8 otherwise. */
void bp_genl_put_uint(struct nlmsghdr *nlh, uint16_t type, uint64_t v);

#endif
