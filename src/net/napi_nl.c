/* SPDX-License-Identifier: MIT */
/*
 * Per-NAPI settings over the "netdev" generic netlink family, with libmnl.
 *
 * Each call opens its own netlink socket, so it acts in the calling thread's network
 * namespace at the time of the call (a thread that setns()'d into a test bed sees
 * that bed's NAPIs) and needs no locking. NAPI ids are global, but the kernel looks
 * them up only among the devices of the socket's namespace: an id from another
 * namespace is -ENOENT.
 *
 * Which attributes a kernel knows: napi-get replies carry only those it has (see
 * bp_napi_info.has); napi-set is validated strictly, so an attribute it does not
 * know is refused as a whole request with EINVAL, extack "Unknown attribute type"
 * and the attribute's offset, which bp_napi_nl_explain() turns into -EOPNOTSUPP
 * naming the setting. Nothing is changed in that case.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/utsname.h>

#include <libmnl/libmnl.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <busypoll/napi.h>
#include <busypoll/net.h>

#include "base/compat.h"
#include "base/error.h"
#include "net/genl.h"
#include "net/napi_nl.h"

/* The first release with each attribute or command, for "this kernel lacks it". */
static const struct {
	const char *name;
	const char *since;
} napi_attrs[BP_NETDEV_A_NAPI_MAX + 1] = {
	[BP_NETDEV_A_NAPI_IFINDEX] = { "ifindex", "6.8" },
	[BP_NETDEV_A_NAPI_ID] = { "id", "6.8" },
	[BP_NETDEV_A_NAPI_IRQ] = { "irq", "6.8" },
	[BP_NETDEV_A_NAPI_PID] = { "pid", "6.8" },
	[BP_NETDEV_A_NAPI_DEFER_HARD_IRQS] = { "defer-hard-irqs", "6.13" },
	[BP_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT] = { "gro-flush-timeout", "6.13" },
	[BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT] = { "irq-suspend-timeout", "6.13" },
	[BP_NETDEV_A_NAPI_THREADED] = { "threaded", "6.17" },
};
#define NAPI_GET_SINCE "6.8"
#define NAPI_SET_SINCE "6.13"

const char *bp_napi_attr_name(unsigned int type)
{
	return type <= BP_NETDEV_A_NAPI_MAX ? napi_attrs[type].name : NULL;
}

int bp_napi_nl_explain(const struct nlmsghdr *req, int err, const char *msg, uint32_t offs,
		       const char *what)
{
	/* The offset is from the start of the request; only trust one inside it. */
	const struct nlattr *bad = bp_genl_attr_at(req, offs);
	const char *name = NULL;
	unsigned int type = 0;

	if (err == -EPERM)
		return bp_err_set(err, "%s: %s (needs CAP_NET_ADMIN)", what, strerror(EPERM));
	if (bad) {
		type = bad->nla_type & NLA_TYPE_MASK;
		name = bp_napi_attr_name(type);
	}
	if (err == -EINVAL && name && (!msg || strstr(msg, "Unknown attribute")))
		return bp_err_set(-EOPNOTSUPP, "%s %s: this kernel lacks it (Linux %s)", what, name,
				  napi_attrs[type].since);
	if (name)
		return bp_err_set(err, "%s %s: %s", what, name, msg ? msg : strerror(-err));
	if (bad)
		return bp_err_set(err, "%s attribute %u: %s", what, type, msg ? msg : strerror(-err));
	return bp_err_set(err, "%s: %s", what, msg ? msg : strerror(-err));
}

/* ---- one request and its replies, over net/genl.c ---- */

/* bp_genl_talk, with the kernel's refusals explained in NAPI terms. */
static int nl_talk(struct bp_genl *c, struct nlmsghdr *req, mnl_cb_t cb, void *data,
		   const char *what)
{
	struct bp_genl_ack ack;
	int rc = bp_genl_talk(c, req, cb, data, &ack, what);

	if (rc && ack.err)
		rc = bp_napi_nl_explain(req, ack.err, ack.msg[0] ? ack.msg : NULL, ack.offs, what);
	return rc;
}

/* ---- the netdev family: its id and whether it has the NAPI commands ---- */

struct family {
	uint16_t id;
	bool napi_get, napi_set;
};

/* Families are global (not per namespace) and the netdev family is built in, so
 * its id is asked once per process and kept. */
static int netdev_family(struct bp_genl *c, struct family *out)
{
	static struct bp_genl_family_cache cache;
	struct bp_genl_family f;
	int rc = bp_genl_family(c, BP_NETDEV_FAMILY_NAME, &cache, &f);

	if (rc == -ENOENT)
		return bp_err_set(-ENOENT, "netlink family %s: not in this kernel (napi-get needs "
				  "Linux " NAPI_GET_SINCE ")", BP_NETDEV_FAMILY_NAME);
	if (rc)
		return rc;
	out->id = f.id;
	out->napi_get = bp_genl_has_op(&f, BP_NETDEV_CMD_NAPI_GET);
	out->napi_set = bp_genl_has_op(&f, BP_NETDEV_CMD_NAPI_SET);
	return 0;
}

/* Open a socket and resolve the family; needs says which command must exist. */
static int napi_begin(struct bp_genl *c, struct family *f, uint8_t cmd)
{
	int rc = bp_genl_open(c);

	if (rc)
		return rc;
	rc = netdev_family(c, f);
	if (!rc && cmd == BP_NETDEV_CMD_NAPI_GET && !f->napi_get)
		rc = bp_err_set(-EOPNOTSUPP, "napi-get: this kernel lacks it (Linux " NAPI_GET_SINCE ")");
	if (!rc && cmd == BP_NETDEV_CMD_NAPI_SET && !f->napi_set)
		rc = bp_err_set(-EOPNOTSUPP, "napi-set: this kernel lacks it (Linux " NAPI_SET_SINCE ")");
	if (rc)
		bp_genl_close(c);
	return rc;
}

/* ---- napi-get ---- */

/* The kernel answers a missing id with ENOENT and no words: add the likely why. */
static int no_such_napi(const char *what, uint32_t id)
{
	return bp_err_set(-ENOENT, "%s: no NAPI id %u in this network namespace%s", what, id,
			  id < BP_MIN_NAPI_ID ? " (ids below 256 are not NAPI instances)" : "");
}

struct napi_collect {
	struct bp_napi_info *out;
	size_t max, n;
};

static bool get_u32(const struct nlattr *a, uint32_t *v)
{
	if (mnl_attr_validate(a, MNL_TYPE_U32))
		return false;
	*v = mnl_attr_get_u32(a);
	return true;
}

static int napi_cb(const struct nlmsghdr *nlh, void *data)
{
	struct napi_collect *c = data;
	struct bp_napi_info info = { .irq = -1, .pid = -1 };
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	bool have_id = false;
	uint32_t u;

	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN || g->cmd != BP_NETDEV_CMD_NAPI_GET)
		return MNL_CB_OK;
	/* Unknown (newer) attributes are skipped: a newer kernel must not break this. */
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case BP_NETDEV_A_NAPI_ID:
			have_id = get_u32(a, &info.id);
			break;
		case BP_NETDEV_A_NAPI_IFINDEX:
			get_u32(a, &info.ifindex);
			break;
		case BP_NETDEV_A_NAPI_IRQ:
			if (get_u32(a, &u)) {
				info.irq = (int32_t)u;
				info.has |= BP_NAPI_HAS_IRQ;
			}
			break;
		case BP_NETDEV_A_NAPI_PID:
			if (get_u32(a, &u)) {
				info.pid = (int32_t)u;
				info.has |= BP_NAPI_HAS_PID;
			}
			break;
		case BP_NETDEV_A_NAPI_DEFER_HARD_IRQS:
			if (get_u32(a, &info.defer_hard_irqs))
				info.has |= BP_NAPI_HAS_DEFER;
			break;
		case BP_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT:
			if (bp_genl_get_uint(a, &info.gro_flush_timeout_ns))
				info.has |= BP_NAPI_HAS_GRO_FLUSH;
			break;
		case BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT:
			if (bp_genl_get_uint(a, &info.irq_suspend_timeout_ns))
				info.has |= BP_NAPI_HAS_IRQ_SUSPEND;
			break;
		case BP_NETDEV_A_NAPI_THREADED:
			if (get_u32(a, &info.threaded))
				info.has |= BP_NAPI_HAS_THREADED;
			break;
		}
	}
	if (!have_id)
		return MNL_CB_OK;
	if (c->n < c->max)
		c->out[c->n] = info;
	c->n++;
	return MNL_CB_OK;
}

int bp_napi_list(uint32_t ifindex, struct bp_napi_info *out, size_t max)
{
	char req[256] __attribute__((aligned(4)));
	struct bp_genl c;
	struct family f;
	struct napi_collect col;
	int rc;

	rc = napi_begin(&c, &f, BP_NETDEV_CMD_NAPI_GET);
	if (rc)
		return rc;
	/* A dump that raced with a device change is flagged; it is cheap to redo. */
	for (int tries = 0; tries < 3; tries++) {
		struct nlmsghdr *nlh;

		memset(req, 0, sizeof(req));
		nlh = bp_genl_msg(req, f.id, NLM_F_DUMP, BP_NETDEV_CMD_NAPI_GET, 1);
		if (ifindex)
			mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_IFINDEX, ifindex);
		col = (struct napi_collect){ .out = out, .max = max };
		rc = nl_talk(&c, nlh, napi_cb, &col, "napi-get");
		if (rc != -EINTR)
			break;
	}
	bp_genl_close(&c);
	if (rc)
		return rc;
	if (col.n > INT_MAX)
		return bp_err_set(-EOVERFLOW, "napi-get: %zu NAPI instances", col.n);
	return (int)col.n;
}

int bp_napi_get(uint32_t id, struct bp_napi_info *out)
{
	char req[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	struct bp_genl c;
	struct family f;
	struct napi_collect col = { .out = out, .max = 1 };
	int rc;

	rc = napi_begin(&c, &f, BP_NETDEV_CMD_NAPI_GET);
	if (rc)
		return rc;
	memset(req, 0, sizeof(req));
	nlh = bp_genl_msg(req, f.id, NLM_F_ACK, BP_NETDEV_CMD_NAPI_GET, 1);
	mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_ID, id);
	rc = nl_talk(&c, nlh, napi_cb, &col, "napi-get");
	bp_genl_close(&c);
	if (rc == -ENOENT || (!rc && col.n == 0))
		return no_such_napi("napi-get", id);
	return rc;
}

/* ---- napi-set ---- */

int bp_napi_set(uint32_t id, const bp_napi_settings *s)
{
	const uint32_t settable = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH |
				  BP_NAPI_HAS_IRQ_SUSPEND | BP_NAPI_HAS_THREADED;
	char req[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	struct bp_genl c;
	struct family f;
	int rc;

	/* irq and pid are read-only: a napi-get result can be passed back as it is. */
	if (!(s->has & settable))
		return 0;
	rc = napi_begin(&c, &f, BP_NETDEV_CMD_NAPI_SET);
	if (rc)
		return rc;
	memset(req, 0, sizeof(req));
	nlh = bp_genl_msg(req, f.id, NLM_F_ACK, BP_NETDEV_CMD_NAPI_SET, 1);
	mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_ID, id);
	if (s->has & BP_NAPI_HAS_DEFER)
		mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_DEFER_HARD_IRQS, s->defer_hard_irqs);
	if (s->has & BP_NAPI_HAS_GRO_FLUSH)
		bp_genl_put_uint(nlh, BP_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT, s->gro_flush_timeout_ns);
	if (s->has & BP_NAPI_HAS_IRQ_SUSPEND)
		bp_genl_put_uint(nlh, BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT, s->irq_suspend_timeout_ns);
	if (s->has & BP_NAPI_HAS_THREADED)
		mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_THREADED, s->threaded);
	rc = nl_talk(&c, nlh, NULL, NULL, "napi-set");
	bp_genl_close(&c);
	return rc == -ENOENT ? no_such_napi("napi-set", id) : rc;
}

/* ---- what napi-set can do here (the epoll backend's capability probe) ---- */

/* CTRL_CMD_GETPOLICY's answer, filtered to napi-set: which attributes its policy has. */
struct napi_set_policy {
	int do_policy;          /* policy index of napi-set's do, -1 unknown */
	uint64_t attrs[8];      /* by policy index: a bit per attribute the policy has */
};

/* CTRL_ATTR_POLICY: { policy index { attribute index { its type, range... } } } */
static void policy_attrs(const struct nlattr *pol, struct napi_set_policy *p)
{
	const struct nlattr *idx, *attr;

	mnl_attr_for_each_nested(idx, pol) {
		unsigned pi = mnl_attr_get_type(idx);

		if (pi >= 8)
			continue;
		mnl_attr_for_each_nested(attr, idx)
			if (mnl_attr_get_type(attr) < 64)
				p->attrs[pi] |= 1ull << mnl_attr_get_type(attr);
	}
}

/* CTRL_ATTR_OP_POLICY: { op { CTRL_ATTR_POLICY_DO: policy index, ... } } */
static void policy_of_op(const struct nlattr *opp, struct napi_set_policy *p)
{
	const struct nlattr *op, *a;

	mnl_attr_for_each_nested(op, opp) {
		if (mnl_attr_get_type(op) != BP_NETDEV_CMD_NAPI_SET)
			continue;
		mnl_attr_for_each_nested(a, op)
			if (mnl_attr_get_type(a) == CTRL_ATTR_POLICY_DO &&
			    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				p->do_policy = (int)mnl_attr_get_u32(a);
	}
}

static int policy_cb(const struct nlmsghdr *nlh, void *data)
{
	struct napi_set_policy *p = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_POLICY)
			policy_attrs(a, p);
		else if (mnl_attr_get_type(a) == CTRL_ATTR_OP_POLICY)
			policy_of_op(a, p);
	}
	return MNL_CB_OK;
}

/* Does napi-set take irq-suspend-timeout? Its own attribute policy says (unprivileged).
 * 1 yes, 0 no, -errno when the kernel cannot dump policies. */
static int napi_set_has_suspend(struct bp_genl *c, uint16_t family_id)
{
	char req[256] __attribute__((aligned(4)));
	struct napi_set_policy p = { .do_policy = -1 };
	uint64_t want = 1ull << BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT;
	struct nlmsghdr *nlh;
	int rc;

	memset(req, 0, sizeof(req));
	nlh = bp_genl_msg(req, GENL_ID_CTRL, NLM_F_DUMP, CTRL_CMD_GETPOLICY, 1);
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, family_id);
	mnl_attr_put_u32(nlh, CTRL_ATTR_OP, BP_NETDEV_CMD_NAPI_SET);
	rc = nl_talk(c, nlh, policy_cb, &p, "netlink policy of napi-set");
	if (rc)
		return rc;
	if (p.do_policy >= 0 && p.do_policy < 8)
		return (p.attrs[p.do_policy] & want) != 0;
	/* The dump was filtered to napi-set, so any policy in it is napi-set's. */
	for (int i = 0; i < 8; i++)
		if (p.attrs[i] & want)
			return 1;
	return 0;
}

/*
 * Is napi-set allowed to us? genetlink checks GENL_ADMIN_PERM before it looks at the
 * attributes, so a request for NAPI id 1 (below BP_MIN_NAPI_ID: never a NAPI, and with
 * no setting attached nothing could change anyway) answers EPERM or, when allowed,
 * something else (ENOENT).
 */
static int napi_set_allowed(struct bp_genl *c, uint16_t family_id)
{
	char req[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;

	memset(req, 0, sizeof(req));
	nlh = bp_genl_msg(req, family_id, NLM_F_ACK, BP_NETDEV_CMD_NAPI_SET, 1);
	mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_ID, 1);
	return nl_talk(c, nlh, NULL, NULL, "napi-set") == -EPERM ? -EPERM : 0;
}

/* Ask the kernel; -errno when netlink itself is unusable here (then the caller guesses). */
static int napi_set_ask(struct bp_napi_set_support *s)
{
	struct bp_genl c;
	struct family f;
	int rc = bp_genl_open(&c);

	if (rc)
		return rc;
	rc = netdev_family(&c, &f);
	if (rc == -ENOENT || (!rc && !f.napi_set)) {
		/* no netdev family (< 6.2) or no napi-set (< 6.13) */
		s->irq_suspend = -EOPNOTSUPP;
		s->allowed = bp_have_cap(CAP_NET_ADMIN) ? 0 : -EPERM;
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	rc = napi_set_has_suspend(&c, f.id);
	if (rc < 0)
		goto out;
	s->irq_suspend = rc ? 0 : -EOPNOTSUPP;
	s->allowed = napi_set_allowed(&c, f.id);
	rc = 0;
out:
	bp_genl_close(&c);
	return rc;
}

/* uname's release as major*1000+minor, for the last-resort guess only. */
static int kernel_version(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj * 1000 + min;
}

void bp_napi_set_support(struct bp_napi_set_support *s)
{
	char saved[512];

	/* The requests that answer "no" set the thread's last error; a probe must not. */
	snprintf(saved, sizeof(saved), "%s", bp_last_error());
	if (napi_set_ask(s) != 0) {
		/* Netlink unusable here (seccomp, odd sandbox): irq-suspend-timeout came with 6.13. */
		s->irq_suspend = kernel_version() >= 6013 ? 0 : -EOPNOTSUPP;
		s->allowed = bp_have_cap(CAP_NET_ADMIN) ? 0 : -EPERM;
	}
	bp_err_set(0, "%s", saved);
}

/* ---- device-wide sysfs knobs ---- */

/*
 * A path under /sys/class/net from names the caller gave: no '/', no "." or "..",
 * so a device or knob name can never walk out of the device's directory.
 */
static int knob_path(const char *dev, const char *knob, char *path, size_t len)
{
	const char *parts[2] = { dev, knob };

	for (int i = 0; i < 2; i++)
		if (!parts[i] || !*parts[i] || strchr(parts[i], '/') || !strcmp(parts[i], ".") ||
		    !strcmp(parts[i], ".."))
			return bp_err_set(-EINVAL, "sysfs knob: bad %s name '%s'",
					  i ? "knob" : "device", parts[i] ? parts[i] : "(null)");
	if ((size_t)snprintf(path, len, "/sys/class/net/%s/%s", dev, knob) >= len)
		return bp_err_set(-EINVAL, "sysfs knob: name too long");
	return 0;
}

int bp_dev_get_knob(const char *dev, const char *knob, uint64_t *value)
{
	char path[256], text[64], *end;
	ssize_t n;
	int fd, rc;

	if ((rc = knob_path(dev, knob, path, sizeof(path))))
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bp_err_set(-errno, "open(%s): %s", path, strerror(errno));
	n = read(fd, text, sizeof(text) - 1);
	rc = -errno;
	close(fd);
	if (n < 0)
		return bp_err_set(rc, "read(%s): %s", path, strerror(-rc));
	text[n] = '\0';
	errno = 0;
	*value = strtoull(text, &end, 0);
	if (end == text || errno || (*end && *end != '\n'))
		return bp_err_set(-EIO, "%s: not a number: '%.20s'", path, text);
	return 0;
}

int bp_dev_set_knob(const char *dev, const char *knob, uint64_t value)
{
	char path[256], text[32];
	int fd, rc, len;
	ssize_t n;

	if ((rc = knob_path(dev, knob, path, sizeof(path))))
		return rc;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return bp_err_set(-errno, "open(%s): %s", path, strerror(errno));
	len = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)value);
	/* sysfs takes the whole value in one write; its errors come back from it */
	n = write(fd, text, (size_t)len);
	rc = n < 0 ? -errno : n != len ? -EIO : 0;
	close(fd);
	if (rc)
		return bp_err_set(rc, "write(%s, %llu): %s", path, (unsigned long long)value,
				  strerror(-rc));
	return 0;
}
