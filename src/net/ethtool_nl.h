/* SPDX-License-Identifier: MIT */
/*
 * Insides of the ethtool netlink client (net/ethtool_nl.c), shared with its unit
 * test, which checks them against byte captures of Debian's ethtool
 * (tests/unit/data/ethtool/): the requests as bytes, the replies as values.
 */
#ifndef BP_NET_ETHTOOL_NL_H
#define BP_NET_ETHTOOL_NL_H

#include <stdint.h>
#include <linux/netlink.h>

#include <busypoll/nic.h>

/* Room for any request here: headers, the device header nest and six attributes. */
#define BP_ETHTOOL_REQ_MAX 256

/*
 * bp_ethtool_coalesce_msg / bp_ethtool_channels_msg - a request of family fam in buf
 * (BP_ETHTOOL_REQ_MAX bytes, 4-byte aligned): ETHTOOL_MSG_*_GET (set NULL) or
 * _SET with the parameters marked in set->has, for device dev (by name, as
 * ethtool sends it; at most IFNAMSIZ-1 bytes, the caller checks). NLM_F_ACK, seq 0.
 * The attribute order is ethtool's for the same command line: rx-usecs rx-frames
 * adaptive-rx tx-usecs tx-frames adaptive-tx; rx tx other combined.
 */
struct nlmsghdr *bp_ethtool_coalesce_msg(void *buf, uint16_t fam, const char *dev,
					 const struct bp_nic_coalesce *set);
struct nlmsghdr *bp_ethtool_channels_msg(void *buf, uint16_t fam, const char *dev,
					 const struct bp_nic_channels *set);

/*
 * bp_ethtool_coalesce_cb / bp_ethtool_channels_cb - libmnl data callbacks that
 * decode a COALESCE_GET_REPLY into the struct bp_nic_coalesce (CHANNELS_GET_REPLY
 * into the struct bp_nic_channels) that data points at. Other messages are
 * ignored; attributes of the wrong size are skipped (not reported), unknown
 * (newer) ones too. MNL_CB_OK.
 */
int bp_ethtool_coalesce_cb(const struct nlmsghdr *nlh, void *data);
int bp_ethtool_channels_cb(const struct nlmsghdr *nlh, void *data);

/*
 * bp_ethtool_explain - the kernel refused req (err, extack msg and offset offs into
 * req, as in struct bp_genl_ack): set bp_last_error to one line that names the
 * request (what: "coalesce-set"), the device and the parameter the offset points
 * at, and return the errno the API promises. driver names the device's driver in
 * the words ("" or NULL: "its driver"). EOPNOTSUPP stays (the driver lacks the
 * operation); EINVAL with "unsupported parameter" becomes -EOPNOTSUPP naming it;
 * ENODEV/ENOENT "no such device in this network namespace"; EPERM names
 * CAP_NET_ADMIN; anything else keeps its errno and the kernel's message.
 */
int bp_ethtool_explain(const struct nlmsghdr *req, int err, const char *msg, uint32_t offs,
		       const char *what, const char *dev, const char *driver);

#endif
