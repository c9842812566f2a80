/* SPDX-License-Identifier: MIT */
/*
 * The ethtool netlink messages (net/ethtool_nl.c) against byte captures of
 * Debian's ethtool 6.1 talking to Linux 6.18 (tests/unit/data/ethtool/, made
 * by capture.sh there): each request we build is ethtool's, byte for byte except
 * the sequence number, port id and family id (the kernel assigns those); each
 * reply the kernel gave decodes to the values ethtool printed; each refusal becomes
 * the errno and the words nic.h promises. No kernel needed.
 *
 * The expected values are those of the stored captures (veth made with 4+4
 * queues; virtio_net's eth0 with rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1,
 * no adaptive-tx, 1 combined channel): a re-capture elsewhere checks them again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <busypoll/loop.h>
#include <busypoll/nic.h>

#include "net/ethtool_nl.h"
#include "net/genl.h"

#define MAX_DGRAMS 8

struct dgram {
	bool sent;
	size_t len;
	uint8_t bytes[4096] __attribute__((aligned(4)));
};

/* One capture: the datagrams of ethtool's last request (the ethtool family's) on. */
struct capture {
	struct dgram d[MAX_DGRAMS];
	size_t n;
};

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Load NAME.nl, keeping the last "send" line and the "recv" lines after it. */
static void load(const char *name, struct capture *cap)
{
	char path[512], *line = NULL;
	size_t cap_len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ethtool/%s.nl", BP_TEST_DATA, name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: cannot open", path);
	memset(cap, 0, sizeof(*cap));
	while (getline(&line, &cap_len, f) > 0) {
		bool sent = !strncmp(line, "send ", 5);
		struct dgram *d;
		const char *h;

		if (!sent && strncmp(line, "recv ", 5))
			continue;
		if (sent)
			cap->n = 0; /* the family lookup before it is not what we test */
		if (cap->n == MAX_DGRAMS)
			fail_msg("%s: more than %d datagrams", path, MAX_DGRAMS);
		d = &cap->d[cap->n++];
		memset(d, 0, sizeof(*d));
		d->sent = sent;
		for (h = line + 5; hexval(h[0]) >= 0 && hexval(h[1]) >= 0; h += 2) {
			if (d->len == sizeof(d->bytes))
				fail_msg("%s: datagram too long", path);
			d->bytes[d->len++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
		}
	}
	free(line);
	fclose(f);
	if (cap->n < 2 || !cap->d[0].sent)
		fail_msg("%s: no request with a reply", path);
}

/* Mark the alignment padding after each attribute from off to end (nests too). */
static void mark_padding(const uint8_t *m, size_t off, size_t end, bool *pad)
{
	while (off + sizeof(struct nlattr) <= end) {
		const struct nlattr *a = (const void *)(m + off);

		if (a->nla_len < sizeof(*a) || off + a->nla_len > end)
			fail_msg("our request has a bad attribute at %zu", off);
		if (a->nla_type & NLA_F_NESTED)
			mark_padding(m, off + sizeof(*a), off + a->nla_len, pad);
		for (size_t i = off + a->nla_len; i < off + NLA_ALIGN(a->nla_len) && i < end; i++)
			pad[i] = true;
		off += NLA_ALIGN(a->nla_len);
	}
}

/*
 * Our request against ethtool's: same length, same bytes except the netlink
 * header's type (family id), seq and port, which the kernel or socket decide, and
 * attribute padding (ethtool leaves whatever its buffer held there; ours is 0).
 */
static void assert_request(const struct nlmsghdr *ours, const struct dgram *theirs)
{
	const uint8_t *a = (const uint8_t *)ours;
	bool pad[sizeof(theirs->bytes)] = { false };

	assert_int_equal(ours->nlmsg_len, theirs->len);
	mark_padding(a, NLMSG_HDRLEN + GENL_HDRLEN, ours->nlmsg_len, pad);
	for (size_t i = 0; i < theirs->len; i++) {
		bool varies = (i >= 4 && i < 6) || (i >= 8 && i < 16) || pad[i];

		if (!varies && a[i] != theirs->bytes[i])
			fail_msg("request byte %zu: ours 0x%02x, ethtool's 0x%02x", i, a[i],
				 theirs->bytes[i]);
	}
}

/* The family id ethtool used (the request's type), for our encoder. */
static uint16_t family_of(const struct capture *cap)
{
	return ((const struct nlmsghdr *)cap->d[0].bytes)->nlmsg_type;
}

/* Feed every reply datagram to cb; returns the first non-zero bp_genl_parse result. */
static int replay(const struct capture *cap, mnl_cb_t cb, void *data, struct bp_genl_ack *ack)
{
	const struct nlmsghdr *req = (const void *)cap->d[0].bytes;
	int rc = 0;

	for (size_t i = 1; i < cap->n && rc == 0; i++) {
		const struct nlmsghdr *r = (const void *)cap->d[i].bytes;

		rc = bp_genl_parse(cap->d[i].bytes, cap->d[i].len, req->nlmsg_seq, r->nlmsg_pid, cb,
				   data, ack);
	}
	return rc;
}

/* The kernel's refusal in a capture, explained as ethtool_nl.c does it. */
static int explain(const struct capture *cap, const char *what, const char *dev, const char *drv)
{
	struct bp_genl_ack ack;
	int rc = replay(cap, NULL, NULL, &ack);

	assert_true(rc < 0);
	assert_int_equal(ack.err, rc);
	return bp_ethtool_explain((const void *)cap->d[0].bytes, ack.err,
				  ack.msg[0] ? ack.msg : NULL, ack.offs, what, dev, drv);
}

static char buf[BP_ETHTOOL_REQ_MAX] __attribute__((aligned(4)));
static struct capture cap;

/* ---- coalescing ---- */

static void test_coalesce_get_dev(void **state)
{
	struct bp_nic_coalesce c = { 0 };
	struct bp_genl_ack ack;

	load("coalesce-get-dev", &cap);
	assert_request(bp_ethtool_coalesce_msg(buf, family_of(&cap), "eth0", NULL), &cap.d[0]);
	assert_int_equal(replay(&cap, bp_ethtool_coalesce_cb, &c, &ack), 1); /* reply, then ack */
	assert_int_equal(c.has, BP_COAL_RX_USECS | BP_COAL_RX_FRAMES | BP_COAL_ADAPTIVE_RX |
				BP_COAL_TX_USECS | BP_COAL_TX_FRAMES);
	assert_int_equal(c.rx_usecs, 0);
	assert_int_equal(c.rx_frames, 1);
	assert_int_equal(c.tx_usecs, 0);
	assert_int_equal(c.tx_frames, 1);
	assert_false(c.adaptive_rx);
}

static void test_coalesce_get_veth(void **state)
{
	struct bp_nic_coalesce c = { 0 };

	load("coalesce-get-veth", &cap);
	assert_request(bp_ethtool_coalesce_msg(buf, family_of(&cap), "va", NULL), &cap.d[0]);
	assert_int_equal(replay(&cap, bp_ethtool_coalesce_cb, &c, NULL), -EOPNOTSUPP);
	assert_int_equal(c.has, 0);
	assert_int_equal(explain(&cap, "coalesce-get", "va", "veth"), -EOPNOTSUPP);
	assert_string_equal(bp_last_error(), "coalesce-get va: the veth driver has no interrupt coalescing");
	/* without the driver's name */
	assert_int_equal(explain(&cap, "coalesce-get", "va", NULL), -EOPNOTSUPP);
	assert_string_equal(bp_last_error(), "coalesce-get va: its driver has no interrupt coalescing");
}

static void test_coalesce_set_veth(void **state)
{
	struct bp_nic_coalesce s = {
		.rx_usecs = 10, .rx_frames = 20, .adaptive_rx = true,
		.tx_usecs = 30, .tx_frames = 40, .adaptive_tx = false, .has = BP_COAL_ALL,
	};

	load("coalesce-set-veth", &cap);
	assert_request(bp_ethtool_coalesce_msg(buf, family_of(&cap), "va", &s), &cap.d[0]);
	assert_int_equal(explain(&cap, "coalesce-set", "va", "veth"), -EOPNOTSUPP);
	assert_string_equal(bp_last_error(), "coalesce-set va: the veth driver has no interrupt coalescing");
}

static void test_coalesce_set_dev(void **state)
{
	struct bp_nic_coalesce s = { .rx_usecs = 0, .rx_frames = 1,
				     .has = BP_COAL_RX_USECS | BP_COAL_RX_FRAMES };
	struct bp_genl_ack ack;

	load("coalesce-set-dev", &cap);
	assert_request(bp_ethtool_coalesce_msg(buf, family_of(&cap), "eth0", &s), &cap.d[0]);
	assert_int_equal(replay(&cap, NULL, NULL, &ack), 1); /* the ack: done */
	assert_int_equal(ack.err, 0);
}

static void test_coalesce_set_unsupported(void **state)
{
	struct bp_nic_coalesce s = { .adaptive_tx = true, .has = BP_COAL_ADAPTIVE_TX };
	struct bp_genl_ack ack;

	load("coalesce-set-dev-unsupported", &cap);
	assert_request(bp_ethtool_coalesce_msg(buf, family_of(&cap), "eth0", &s), &cap.d[0]);
	assert_int_equal(replay(&cap, NULL, NULL, &ack), -EINVAL);
	assert_string_equal(ack.msg, "cannot modify an unsupported parameter");
	assert_int_equal(ack.offs, 36); /* the adaptive-tx attribute, after the header nest */
	assert_int_equal(explain(&cap, "coalesce-set", "eth0", "virtio_net"), -EOPNOTSUPP);
	assert_string_equal(bp_last_error(),
			    "coalesce-set eth0 adaptive-tx: the virtio_net driver does not support it");
}

/* ---- channels ---- */

static void test_channels_get_veth(void **state)
{
	struct bp_nic_channels ch = { 0 };

	load("channels-get-veth", &cap);
	assert_request(bp_ethtool_channels_msg(buf, family_of(&cap), "va", NULL), &cap.d[0]);
	assert_int_equal(replay(&cap, bp_ethtool_channels_cb, &ch, NULL), 1);
	assert_int_equal(ch.has, 1u << BP_CHAN_RX | 1u << BP_CHAN_TX);
	assert_int_equal(ch.max[BP_CHAN_RX], 4);
	assert_int_equal(ch.count[BP_CHAN_RX], 4);
	assert_int_equal(ch.max[BP_CHAN_TX], 4);
	assert_int_equal(ch.count[BP_CHAN_TX], 4);
	assert_int_equal(ch.max[BP_CHAN_COMBINED], 0);
}

static void test_channels_get_dev(void **state)
{
	struct bp_nic_channels ch = { 0 };

	load("channels-get-dev", &cap);
	assert_request(bp_ethtool_channels_msg(buf, family_of(&cap), "eth0", NULL), &cap.d[0]);
	assert_int_equal(replay(&cap, bp_ethtool_channels_cb, &ch, NULL), 1);
	assert_int_equal(ch.has, 1u << BP_CHAN_COMBINED);
	assert_int_equal(ch.max[BP_CHAN_COMBINED], 1);
	assert_int_equal(ch.count[BP_CHAN_COMBINED], 1);
}

static void test_channels_set_veth(void **state)
{
	struct bp_nic_channels s = { .count = { [BP_CHAN_RX] = 2, [BP_CHAN_TX] = 2 },
				     .has = 1u << BP_CHAN_RX | 1u << BP_CHAN_TX };
	struct bp_genl_ack ack;

	load("channels-set-veth", &cap);
	assert_request(bp_ethtool_channels_msg(buf, family_of(&cap), "va", &s), &cap.d[0]);
	assert_int_equal(replay(&cap, NULL, NULL, &ack), 1);
	assert_int_equal(ack.err, 0);
}

static void test_channels_set_too_many(void **state)
{
	struct bp_nic_channels s = { .count = { [BP_CHAN_COMBINED] = 2 },
				     .has = 1u << BP_CHAN_COMBINED };

	load("channels-set-veth-combined", &cap);
	assert_request(bp_ethtool_channels_msg(buf, family_of(&cap), "va", &s), &cap.d[0]);
	assert_int_equal(explain(&cap, "channels-set", "va", "veth"), -EINVAL);
	assert_string_equal(bp_last_error(),
			    "channels-set va combined: requested channel count exceeds maximum");
}

/* ---- what the captures do not show ---- */

/* A reply built by hand: attributes of the wrong size are not reported. */
static void test_decode_wrong_sizes(void **state)
{
	char r[256] __attribute__((aligned(4))) = { 0 };
	struct nlmsghdr *nlh = bp_genl_msg(r, 0x15, 0, ETHTOOL_MSG_COALESCE_GET_REPLY, 1);
	struct bp_nic_coalesce c = { 0 };
	struct bp_nic_channels ch = { 0 };

	mnl_attr_put_u16(nlh, ETHTOOL_A_COALESCE_RX_USECS, 7);          /* u32 expected */
	mnl_attr_put_u32(nlh, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1);   /* u8 expected */
	mnl_attr_put_u32(nlh, ETHTOOL_A_COALESCE_TX_MAX_FRAMES, 64);
	mnl_attr_put_u32(nlh, 200, 5);                                  /* from a newer kernel */
	assert_int_equal(bp_ethtool_coalesce_cb(nlh, &c), MNL_CB_OK);
	assert_int_equal(c.has, BP_COAL_TX_FRAMES);
	assert_int_equal(c.tx_frames, 64);
	/* another command's reply is not ours */
	assert_int_equal(bp_ethtool_channels_cb(nlh, &ch), MNL_CB_OK);
	assert_int_equal(ch.has, 0);
}

/* Offsets that do not point at an attribute of the request are not trusted. */
static void test_explain_offsets(void **state)
{
	struct bp_nic_coalesce s = { .rx_usecs = 5, .has = BP_COAL_RX_USECS };
	struct nlmsghdr *req = bp_ethtool_coalesce_msg(buf, 0x15, "eth0", &s);

	assert_int_equal(bp_ethtool_explain(req, -ERANGE, "out of range", req->nlmsg_len - 8,
					    "coalesce-set", "eth0", "x"), -ERANGE);
	assert_string_equal(bp_last_error(), "coalesce-set eth0 rx-usecs: out of range");
	assert_int_equal(bp_ethtool_explain(req, -ERANGE, "out of range", req->nlmsg_len, "coalesce-set",
					    "eth0", "x"), -ERANGE);
	assert_string_equal(bp_last_error(), "coalesce-set eth0: out of range");
	assert_int_equal(bp_ethtool_explain(req, -ERANGE, NULL, 3, "coalesce-set", "eth0", "x"), -ERANGE);
	/* a device name the kernel refused, inside the header nest */
	assert_int_equal(bp_ethtool_explain(req, -EINVAL, "bad name", 24, "coalesce-set", "eth0", ""),
			 -EINVAL);
	assert_string_equal(bp_last_error(), "coalesce-set eth0 device: bad name");
	assert_int_equal(bp_ethtool_explain(req, -ENODEV, NULL, 0, "coalesce-set", "eth9", NULL), -ENODEV);
	assert_string_equal(bp_last_error(), "coalesce-set eth9: no such device in this network namespace");
	assert_int_equal(bp_ethtool_explain(req, -EPERM, NULL, 0, "coalesce-set", "eth0", NULL), -EPERM);
	assert_string_equal(bp_last_error(), "coalesce-set eth0: Operation not permitted (needs CAP_NET_ADMIN)");
}

static void test_names(void **state)
{
	assert_string_equal(bp_nic_coalesce_name(BP_COAL_ADAPTIVE_RX), "adaptive-rx");
	assert_string_equal(bp_nic_coalesce_name(BP_COAL_TX_FRAMES), "tx-frames");
	assert_null(bp_nic_coalesce_name(BP_COAL_RX_USECS | BP_COAL_RX_FRAMES));
	assert_string_equal(bp_nic_chan_name(BP_CHAN_COMBINED), "combined");
	assert_null(bp_nic_chan_name(BP_CHAN_KINDS));
	assert_null(bp_nic_chan_name(-1));
}

/* Bad device names never reach the kernel. */
static void test_bad_device(void **state)
{
	struct bp_nic_coalesce c;
	struct bp_nic_channels ch;
	struct bp_nic_driver d;

	assert_int_equal(bp_nic_coalesce_get("", &c), -EINVAL);
	assert_string_equal(bp_last_error(), "coalesce-get: '' is not a device name");
	assert_int_equal(bp_nic_channels_get("abcdefghijklmnopq", &ch), -EINVAL);
	assert_int_equal(bp_nic_driver("../x", &d), -EINVAL);
	/* nothing to change: done, once the name is fine */
	c.has = 0;
	assert_int_equal(bp_nic_coalesce_set("eth0", &c), 0);
	assert_int_equal(bp_nic_coalesce_set("a/b", &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coalesce_get_dev),
		cmocka_unit_test(test_coalesce_get_veth),
		cmocka_unit_test(test_coalesce_set_veth),
		cmocka_unit_test(test_coalesce_set_dev),
		cmocka_unit_test(test_coalesce_set_unsupported),
		cmocka_unit_test(test_channels_get_veth),
		cmocka_unit_test(test_channels_get_dev),
		cmocka_unit_test(test_channels_set_veth),
		cmocka_unit_test(test_channels_set_too_many),
		cmocka_unit_test(test_decode_wrong_sizes),
		cmocka_unit_test(test_explain_offsets),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bad_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
