/* SPDX-License-Identifier: MIT */
/*
 * A NIC's interrupt coalescing and channel counts over the "ethtool" generic
 * netlink family, and its driver over the ETHTOOL_GDRVINFO ioctl (see
 * include/busypoll/nic.h). Requests are byte for byte what Debian's ethtool sends
 * for the same command line (the unit test holds them against captures), so what
 * the kernel does with them is what `ethtool -c/-C/-l/-L` would get.
 *
 * What the kernel does, which the words here follow (Linux 6.x net/ethtool/):
 * a driver without the get/set operation answers EOPNOTSUPP with no reason; a
 * SET with a parameter the driver does not support is refused as a whole with
 * EINVAL, "cannot modify an unsupported parameter" and the attribute's offset; a
 * SET that changes nothing calls no driver. A GET reply leaves out a coalescing
 * parameter that is 0 and unsupported, and a channel kind whose maximum is 0.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>

#include <busypoll/nic.h>

#include "base/error.h"
#include "net/ethtool_nl.h"
#include "net/genl.h"

/* ---- names ---- */

/* The six coalescing parameters: bit, attribute, ethtool's name, u8 or u32. */
static const struct coal_param {
	uint32_t bit;
	uint16_t attr;
	const char *name;
	bool is_bool;
} coal_params[] = {
	{ BP_COAL_RX_USECS, ETHTOOL_A_COALESCE_RX_USECS, "rx-usecs", false },
	{ BP_COAL_RX_FRAMES, ETHTOOL_A_COALESCE_RX_MAX_FRAMES, "rx-frames", false },
	{ BP_COAL_ADAPTIVE_RX, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, "adaptive-rx", true },
	{ BP_COAL_TX_USECS, ETHTOOL_A_COALESCE_TX_USECS, "tx-usecs", false },
	{ BP_COAL_TX_FRAMES, ETHTOOL_A_COALESCE_TX_MAX_FRAMES, "tx-frames", false },
	{ BP_COAL_ADAPTIVE_TX, ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, "adaptive-tx", true },
};
#define N_COAL (sizeof(coal_params) / sizeof(coal_params[0]))

/* Channel kinds: max and count attributes. */
static const struct chan_kind {
	uint16_t max_attr, count_attr;
	const char *name;
} chan_kinds[BP_CHAN_KINDS] = {
	[BP_CHAN_RX] = { ETHTOOL_A_CHANNELS_RX_MAX, ETHTOOL_A_CHANNELS_RX_COUNT, "rx" },
	[BP_CHAN_TX] = { ETHTOOL_A_CHANNELS_TX_MAX, ETHTOOL_A_CHANNELS_TX_COUNT, "tx" },
	[BP_CHAN_OTHER] = { ETHTOOL_A_CHANNELS_OTHER_MAX, ETHTOOL_A_CHANNELS_OTHER_COUNT, "other" },
	[BP_CHAN_COMBINED] = { ETHTOOL_A_CHANNELS_COMBINED_MAX, ETHTOOL_A_CHANNELS_COMBINED_COUNT,
			       "combined" },
};

const char *bp_nic_coalesce_name(uint32_t bit)
{
	for (size_t i = 0; i < N_COAL; i++)
		if (coal_params[i].bit == bit)
			return coal_params[i].name;
	return NULL;
}

const char *bp_nic_chan_name(int kind)
{
	return kind >= 0 && kind < BP_CHAN_KINDS ? chan_kinds[kind].name : NULL;
}

static uint32_t *coal_u32(struct bp_nic_coalesce *c, uint32_t bit)
{
	switch (bit) {
	case BP_COAL_RX_USECS: return &c->rx_usecs;
	case BP_COAL_RX_FRAMES: return &c->rx_frames;
	case BP_COAL_TX_USECS: return &c->tx_usecs;
	case BP_COAL_TX_FRAMES: return &c->tx_frames;
	}
	return NULL;
}

static bool *coal_bool(struct bp_nic_coalesce *c, uint32_t bit)
{
	return bit == BP_COAL_ADAPTIVE_RX ? &c->adaptive_rx : bit == BP_COAL_ADAPTIVE_TX ? &c->adaptive_tx : NULL;
}

/* The name of attribute type in a request of cmd; "device" inside the header nest. */
static const char *attr_name(uint8_t cmd, const struct nlattr *a, bool in_header)
{
	uint16_t type = a->nla_type & NLA_TYPE_MASK;

	if (in_header)
		return "device";
	if (cmd == ETHTOOL_MSG_COALESCE_SET || cmd == ETHTOOL_MSG_COALESCE_GET) {
		for (size_t i = 0; i < N_COAL; i++)
			if (coal_params[i].attr == type)
				return coal_params[i].name;
	} else {
		for (int k = 0; k < BP_CHAN_KINDS; k++)
			if (chan_kinds[k].count_attr == type)
				return chan_kinds[k].name;
	}
	return type == 1 ? "device" : NULL; /* *_HEADER is attribute 1 of every message */
}

/* ---- requests ---- */

/* Header, then the device header nest every ethtool request starts with. */
static struct nlmsghdr *ethtool_msg(void *buf, uint16_t fam, uint8_t cmd, const char *dev)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	memset(buf, 0, BP_ETHTOOL_REQ_MAX);
	nlh = bp_genl_msg(buf, fam, NLM_F_ACK, cmd, ETHTOOL_GENL_VERSION);
	nest = mnl_attr_nest_start(nlh, 1 /* ETHTOOL_A_{COALESCE,CHANNELS}_HEADER */);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, dev);
	mnl_attr_nest_end(nlh, nest);
	return nlh;
}

struct nlmsghdr *bp_ethtool_coalesce_msg(void *buf, uint16_t fam, const char *dev,
					 const struct bp_nic_coalesce *set)
{
	struct nlmsghdr *nlh = ethtool_msg(buf, fam, set ? ETHTOOL_MSG_COALESCE_SET :
					   ETHTOOL_MSG_COALESCE_GET, dev);
	struct bp_nic_coalesce v = set ? *set : (struct bp_nic_coalesce){ 0 };

	for (size_t i = 0; i < N_COAL; i++) {
		const struct coal_param *p = &coal_params[i];

		if (!(v.has & p->bit))
			continue;
		if (p->is_bool)
			mnl_attr_put_u8(nlh, p->attr, *coal_bool(&v, p->bit));
		else
			mnl_attr_put_u32(nlh, p->attr, *coal_u32(&v, p->bit));
	}
	return nlh;
}

struct nlmsghdr *bp_ethtool_channels_msg(void *buf, uint16_t fam, const char *dev,
					 const struct bp_nic_channels *set)
{
	struct nlmsghdr *nlh = ethtool_msg(buf, fam, set ? ETHTOOL_MSG_CHANNELS_SET :
					   ETHTOOL_MSG_CHANNELS_GET, dev);

	for (int k = 0; set && k < BP_CHAN_KINDS; k++)
		if (set->has & (1u << k))
			mnl_attr_put_u32(nlh, chan_kinds[k].count_attr, set->count[k]);
	return nlh;
}

/* ---- replies ---- */

/* The reply's attributes, if it is a generic netlink message of command cmd. */
static bool reply_of(const struct nlmsghdr *nlh, uint8_t cmd)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	return mnl_nlmsg_get_payload_len(nlh) >= GENL_HDRLEN && g->cmd == cmd;
}

int bp_ethtool_coalesce_cb(const struct nlmsghdr *nlh, void *data)
{
	struct bp_nic_coalesce *c = data;
	const struct nlattr *a;

	if (!reply_of(nlh, ETHTOOL_MSG_COALESCE_GET_REPLY))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		uint16_t type = mnl_attr_get_type(a);

		for (size_t i = 0; i < N_COAL; i++) {
			const struct coal_param *p = &coal_params[i];

			if (p->attr != type)
				continue;
			if (p->is_bool && mnl_attr_validate(a, MNL_TYPE_U8) == 0) {
				*coal_bool(c, p->bit) = mnl_attr_get_u8(a) != 0;
				c->has |= p->bit;
			} else if (!p->is_bool && mnl_attr_validate(a, MNL_TYPE_U32) == 0) {
				*coal_u32(c, p->bit) = mnl_attr_get_u32(a);
				c->has |= p->bit;
			}
		}
	}
	return MNL_CB_OK;
}

int bp_ethtool_channels_cb(const struct nlmsghdr *nlh, void *data)
{
	struct bp_nic_channels *ch = data;
	const struct nlattr *a;

	if (!reply_of(nlh, ETHTOOL_MSG_CHANNELS_GET_REPLY))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		uint16_t type = mnl_attr_get_type(a);

		if (mnl_attr_validate(a, MNL_TYPE_U32))
			continue;
		for (int k = 0; k < BP_CHAN_KINDS; k++) {
			if (type == chan_kinds[k].max_attr) {
				ch->max[k] = mnl_attr_get_u32(a);
				ch->has |= 1u << k;
			} else if (type == chan_kinds[k].count_attr) {
				ch->count[k] = mnl_attr_get_u32(a);
				ch->has |= 1u << k;
			}
		}
	}
	return MNL_CB_OK;
}

/* ---- errors in words ---- */

int bp_ethtool_explain(const struct nlmsghdr *req, int err, const char *msg, uint32_t offs,
		       const char *what, const char *dev, const char *driver)
{
	const struct nlattr *bad = bp_genl_attr_at(req, offs);
	const char *param = NULL;
	char drv[48];
	uint8_t cmd = 0;
	bool coal;

	if (req && req->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN)
		cmd = ((const struct genlmsghdr *)mnl_nlmsg_get_payload(req))->cmd;
	coal = cmd == ETHTOOL_MSG_COALESCE_GET || cmd == ETHTOOL_MSG_COALESCE_SET;
	if (bad) {
		/* inside the header nest (which starts right after the generic header)? */
		const struct nlattr *hdr = (const struct nlattr *)((const char *)req + NLMSG_HDRLEN +
								     GENL_HDRLEN);
		bool in_header = (const char *)bad > (const char *)hdr &&
				 (const char *)bad < (const char *)hdr + hdr->nla_len;

		param = attr_name(cmd, bad, in_header);
	}
	if (driver && *driver)
		snprintf(drv, sizeof(drv), "the %s driver", driver);
	else
		snprintf(drv, sizeof(drv), "its driver");
	switch (err) {
	case -EOPNOTSUPP:
		if (param)
			return bp_err_set(err, "%s %s %s: %s does not support it", what, dev, param, drv);
		return bp_err_set(err, "%s %s: %s has no %s", what, dev, drv,
				  coal ? "interrupt coalescing" : "channel settings");
	case -EINVAL:
		if (param && msg && strstr(msg, "unsupported parameter"))
			return bp_err_set(-EOPNOTSUPP, "%s %s %s: %s does not support it", what, dev,
					  param, drv);
		break;
	case -ENODEV:
	case -ENOENT:
		return bp_err_set(-ENODEV, "%s %s: no such device in this network namespace", what, dev);
	case -EPERM:
		return bp_err_set(err, "%s %s: %s (needs CAP_NET_ADMIN)", what, dev, strerror(EPERM));
	}
	if (param)
		return bp_err_set(err, "%s %s %s: %s", what, dev, param, msg ? msg : strerror(-err));
	return bp_err_set(err, "%s %s: %s", what, dev, msg ? msg : strerror(-err));
}

/* ---- the calls ---- */

static int check_dev(const char *what, const char *dev)
{
	if (!dev || !*dev || strlen(dev) >= IFNAMSIZ || strchr(dev, '/'))
		return bp_err_set(-EINVAL, "%s: '%s' is not a device name", what, dev ? dev : "(null)");
	return 0;
}

static int ethtool_family(struct bp_genl *g, uint16_t *id)
{
	static struct bp_genl_family_cache cache;
	struct bp_genl_family f;
	int rc = bp_genl_family(g, ETHTOOL_GENL_NAME, &cache, &f);

	if (rc == -ENOENT)
		return bp_err_set(-EOPNOTSUPP, "netlink family %s: not in this kernel (Linux 5.6+ "
				  "built with CONFIG_ETHTOOL_NETLINK)", ETHTOOL_GENL_NAME);
	if (!rc)
		*id = f.id;
	return rc;
}

/*
 * One ethtool request for dev: build it with make (set NULL: a GET), decode the
 * reply with cb into out. Refusals in words, with the driver's name.
 */
static int ethtool_call(const char *what, const char *dev, const void *set,
			struct nlmsghdr *(*make)(void *, uint16_t, const char *, const void *),
			mnl_cb_t cb, void *out)
{
	char req[BP_ETHTOOL_REQ_MAX] __attribute__((aligned(4)));
	struct bp_genl g = { 0 };
	struct bp_genl_ack ack = { 0 };
	struct nlmsghdr *nlh = NULL;
	uint16_t fam = 0;
	int rc;

	if ((rc = check_dev(what, dev)))
		return rc;
	if ((rc = bp_genl_open(&g)))
		return rc;
	rc = ethtool_family(&g, &fam);
	if (!rc) {
		nlh = make(req, fam, dev, set);
		rc = bp_genl_talk(&g, nlh, cb, out, &ack, what);
	}
	bp_genl_close(&g);
	if (rc && ack.err) {
		struct bp_nic_driver d = { 0 };

		bp_nic_driver(dev, &d); /* for the words only; its own error is overwritten */
		rc = bp_ethtool_explain(nlh, ack.err, ack.msg[0] ? ack.msg : NULL, ack.offs, what,
					dev, d.driver);
	}
	return rc;
}

/* The encoders with the untyped set argument ethtool_call takes. */
static struct nlmsghdr *make_coalesce(void *buf, uint16_t fam, const char *dev, const void *set)
{
	return bp_ethtool_coalesce_msg(buf, fam, dev, set);
}

static struct nlmsghdr *make_channels(void *buf, uint16_t fam, const char *dev, const void *set)
{
	return bp_ethtool_channels_msg(buf, fam, dev, set);
}

int bp_nic_coalesce_get(const char *dev, struct bp_nic_coalesce *out)
{
	*out = (struct bp_nic_coalesce){ 0 };
	return ethtool_call("coalesce-get", dev, NULL, make_coalesce, bp_ethtool_coalesce_cb, out);
}

int bp_nic_coalesce_set(const char *dev, const struct bp_nic_coalesce *s)
{
	if (!(s->has & BP_COAL_ALL))
		return check_dev("coalesce-set", dev);
	return ethtool_call("coalesce-set", dev, s, make_coalesce, NULL, NULL);
}

int bp_nic_channels_get(const char *dev, struct bp_nic_channels *out)
{
	*out = (struct bp_nic_channels){ 0 };
	return ethtool_call("channels-get", dev, NULL, make_channels, bp_ethtool_channels_cb, out);
}

int bp_nic_channels_set(const char *dev, const struct bp_nic_channels *s)
{
	if (!(s->has & ((1u << BP_CHAN_KINDS) - 1)))
		return check_dev("channels-set", dev);
	return ethtool_call("channels-set", dev, s, make_channels, NULL, NULL);
}

/* ---- the driver ---- */

int bp_nic_driver(const char *dev, struct bp_nic_driver *out)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	int fd, rc;

	*out = (struct bp_nic_driver){ 0 };
	if ((rc = check_dev("driver-info", dev)))
		return rc;
	/* the socket's namespace, the calling thread's, is where dev is looked up */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return bp_err_sys("socket(AF_INET, SOCK_DGRAM)", -errno);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&info;
	rc = ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
	close(fd);
	if (rc == -ENODEV)
		return bp_err_set(rc, "driver-info %s: no such device in this network namespace", dev);
	if (rc == -EOPNOTSUPP)
		return bp_err_set(rc, "driver-info %s: the device reports no driver (ETHTOOL_GDRVINFO)",
				  dev);
	if (rc)
		return bp_err_set(rc, "ioctl(%s, SIOCETHTOOL ETHTOOL_GDRVINFO): %s", dev, strerror(-rc));
	/* the kernel's strings are NUL-terminated within their 32 bytes */
	snprintf(out->driver, sizeof(out->driver), "%.31s", info.driver);
	snprintf(out->version, sizeof(out->version), "%.31s", info.version);
	snprintf(out->firmware, sizeof(out->firmware), "%.31s", info.fw_version);
	snprintf(out->bus, sizeof(out->bus), "%.31s", info.bus_info);
	return 0;
}
