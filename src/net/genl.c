/* SPDX-License-Identifier: MIT */
/*
 * The generic netlink client of the net layer (see net/genl.h): open a socket,
 * one request and its replies with the kernel's extended ack kept, and the
 * family lookup through nlctrl. libmnl does the framing and the sequence checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/genetlink.h>

#include "base/error.h"
#include "net/genl.h"

int bp_genl_open(struct bp_genl *g)
{
	int one = 1;

	g->sock = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!g->sock)
		return bp_err_sys("socket(AF_NETLINK, NETLINK_GENERIC)", -errno);
	if (mnl_socket_bind(g->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = bp_err_sys("bind(netlink)", -errno);

		mnl_socket_close(g->sock);
		g->sock = NULL;
		return err;
	}
	/*
	 * Extended acks carry the kernel's reason and the offending attribute, which
	 * is how unsupported settings are told apart from bad values. Capped acks keep
	 * the request out of the error. Both are best effort (Linux 4.12+).
	 */
	mnl_socket_setsockopt(g->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(g->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	g->portid = mnl_socket_get_portid(g->sock);
	g->seq = (uint32_t)time(NULL);
	return 0;
}

void bp_genl_close(struct bp_genl *g)
{
	if (g->sock)
		mnl_socket_close(g->sock);
	g->sock = NULL;
}

struct nlmsghdr *bp_genl_msg(void *buf, uint16_t type, uint16_t flags, uint8_t cmd,
			     uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = version;
	return nlh;
}

const struct nlattr *bp_genl_attr_at(const struct nlmsghdr *req, uint32_t offs)
{
	const struct nlattr *a;

	if (!req || offs < NLMSG_HDRLEN + GENL_HDRLEN ||
	    (uint64_t)offs + sizeof(struct nlattr) > req->nlmsg_len)
		return NULL;
	a = (const struct nlattr *)((const char *)req + offs);
	if (a->nla_len < sizeof(*a) || (uint64_t)offs + a->nla_len > req->nlmsg_len)
		return NULL;
	return a;
}

bool bp_genl_get_uint(const struct nlattr *a, uint64_t *v)
{
	uint16_t len = mnl_attr_get_payload_len(a);

	if (len == sizeof(uint32_t))
		*v = mnl_attr_get_u32(a);
	else if (len == sizeof(uint64_t))
		*v = mnl_attr_get_u64(a);
	else
		return false;
	return true;
}

void bp_genl_put_uint(struct nlmsghdr *nlh, uint16_t type, uint64_t v)
{
	if (v <= UINT32_MAX)
		mnl_attr_put_u32(nlh, type, (uint32_t)v);
	else
		mnl_attr_put_u64(nlh, type, v);
}

/* ---- one request/reply exchange ---- */

struct talk {
	mnl_cb_t cb;            /* for each reply message */
	void *data;
	struct bp_genl_ack ack;
};

static int extack_cb(const struct nlattr *a, void *data)
{
	struct talk *t = data;

	switch (mnl_attr_get_type(a)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			snprintf(t->ack.msg, sizeof(t->ack.msg), "%s", mnl_attr_get_str(a));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			t->ack.offs = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

/* The TLVs of an error or done message start at offset off into its payload. */
static void parse_extack(const struct nlmsghdr *nlh, size_t off, struct talk *t)
{
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off > mnl_nlmsg_get_payload_len(nlh))
		return;
	mnl_attr_parse(nlh, (unsigned int)off, extack_cb, t);
}

static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (e->error == 0)
		return MNL_CB_STOP; /* the ack of a request that worked */
	t->ack.err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && e->msg.nlmsg_len >= NLMSG_HDRLEN)
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN); /* the request echoed back */
	parse_extack(nlh, off, t);
	errno = -e->error;
	return MNL_CB_ERROR;
}

/* End of a dump; a dump that failed midway says so here, with its own extack. */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;
	int err = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(int));
	if (err >= 0)
		return MNL_CB_STOP;
	t->ack.err = err;
	parse_extack(nlh, sizeof(int), t);
	errno = -err;
	return MNL_CB_ERROR;
}

static int noop_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_OK;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

int bp_genl_parse(const void *buf, size_t len, uint32_t seq, uint32_t portid, mnl_cb_t cb,
		  void *data, struct bp_genl_ack *ack)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = { /* libmnl takes it non-const */
		[NLMSG_NOOP] = noop_cb,
		[NLMSG_ERROR] = error_cb,
		[NLMSG_DONE] = done_cb,
		[NLMSG_OVERRUN] = noop_cb,
	};
	struct talk t = { .cb = cb, .data = data };
	int rc;

	if (ack)
		*ack = (struct bp_genl_ack){ 0 };
	errno = 0;
	rc = mnl_cb_run2(buf, len, seq, portid, data_cb, &t, ctl, NLMSG_MIN_TYPE);
	if (rc == MNL_CB_STOP)
		return 1;
	if (rc != MNL_CB_ERROR)
		return 0;
	if (ack)
		*ack = t.ack;
	if (t.ack.err)
		return t.ack.err;
	return errno ? -errno : -EBADMSG;
}

int bp_genl_talk(struct bp_genl *g, struct nlmsghdr *req, mnl_cb_t cb, void *data,
		 struct bp_genl_ack *ack, const char *what)
{
	struct bp_genl_ack a;
	char *buf;
	size_t cap = 32768; /* a dump packs up to this much per datagram */
	int rc;

	if (ack)
		*ack = (struct bp_genl_ack){ 0 };
	req->nlmsg_seq = ++g->seq;
	req->nlmsg_pid = 0;
	if (mnl_socket_sendto(g->sock, req, req->nlmsg_len) < 0)
		return bp_err_sys("sendto(netlink)", -errno);
	buf = malloc(cap);
	if (!buf)
		return bp_err_set(-ENOMEM, "%s: out of memory", what);
	do {
		ssize_t n = mnl_socket_recvfrom(g->sock, buf, cap);

		if (n < 0) {
			rc = bp_err_sys("recv(netlink)", -errno);
			break;
		}
		rc = bp_genl_parse(buf, (size_t)n, req->nlmsg_seq, g->portid, cb, data, &a);
		if (rc >= 0)
			continue;
		if (a.err) {
			if (ack)
				*ack = a;
			rc = bp_err_set(a.err, "%s: %s", what, a.msg[0] ? a.msg : strerror(-a.err));
		} else if (rc == -EINTR) { /* NLM_F_DUMP_INTR: the list changed mid-dump */
			rc = bp_err_set(-EINTR, "%s: dump interrupted by a change", what);
		} else {
			rc = bp_err_set(rc, "%s: bad reply: %s", what, strerror(-rc));
		}
	} while (rc == 0);
	free(buf);
	return rc < 0 ? rc : 0;
}

/* ---- families ---- */

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct bp_genl_family *f = data;
	const struct nlattr *a, *op, *oa;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U16) == 0)
				f->id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_OPS:
			mnl_attr_for_each_nested(op, a) {
				mnl_attr_for_each_nested(oa, op) {
					uint32_t cmd;

					if (mnl_attr_get_type(oa) != CTRL_ATTR_OP_ID ||
					    mnl_attr_validate(oa, MNL_TYPE_U32))
						continue;
					cmd = mnl_attr_get_u32(oa);
					if (cmd < 256)
						f->ops[cmd / 64] |= 1ull << (cmd % 64);
				}
			}
			break;
		}
	}
	return MNL_CB_OK;
}

int bp_genl_family(struct bp_genl *g, const char *name, struct bp_genl_family_cache *cache,
		   struct bp_genl_family *out)
{
	char req[256] __attribute__((aligned(4)));
	char what[64];
	struct nlmsghdr *nlh;
	int rc;

	if (cache && __atomic_load_n(&cache->have, __ATOMIC_ACQUIRE)) {
		*out = cache->fam;
		return 0;
	}
	snprintf(what, sizeof(what), "netlink family %s", name);
	memset(req, 0, sizeof(req));
	nlh = bp_genl_msg(req, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	*out = (struct bp_genl_family){ 0 };
	rc = bp_genl_talk(g, nlh, family_cb, out, NULL, what);
	if (rc == -ENOENT)
		return bp_err_set(-ENOENT, "%s: not in this kernel", what);
	if (rc)
		return rc;
	if (!out->id)
		return bp_err_set(-EPROTO, "%s: reply without an id", what);
	if (cache) {
		cache->fam = *out;
		__atomic_store_n(&cache->have, true, __ATOMIC_RELEASE);
	}
	return 0;
}
