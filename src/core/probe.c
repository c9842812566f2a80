/* SPDX-License-Identifier: MIT */
/*
 * bp_mode_check: can this kernel and this process use a mode right now?
 *
 * Nothing is assumed from version numbers when it can be tried: each feature is probed
 * by doing the smallest real thing that needs it (an EPIOCSPARAMS ioctl, a ring with the
 * setup flags, an IORING_REGISTER_NAPI, a netdev genetlink policy dump) and reading the
 * errno. The results are cached per process, in three groups probed lazily so that
 * checking an epoll mode never creates an io_uring. The cache is keyed by pid and reset in
 * a fork child, because a child may run with fewer privileges than its parent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <liburing.h>

#include <busypoll/mode.h>

#include "base/compat.h"
#include "core/internal.h"

#define CAP_NET_ADMIN_BIT 12
/* A genetlink request here is a header and one or two small attributes. */
#define REQ_BUF 512

/* Each probe result is 0 (works), -EOPNOTSUPP (kernel lacks it), -EPERM (privilege
 * missing), or another -errno when the probe itself could not run (e.g. -EMFILE). */
struct epoll_probe {
	int params;      /* EPIOCSPARAMS at all (Linux 6.9) */
	int big_budget;  /* EPIOCSPARAMS with budget > NAPI_POLL_WEIGHT (CAP_NET_ADMIN) */
};

struct uring_probe {
	int ring;        /* io_uring_setup at all (may be disabled by sysctl) */
	int disabled;    /* kernel.io_uring_disabled, -1 when the sysctl is absent */
	int setup[3];    /* by enum bp_uring_setup: PLAIN, COOP, DEFER */
	int napi;        /* IORING_REGISTER_NAPI (Linux 6.9) */
	int napi_static; /* static tracking (Linux 6.13) */
	int sqpoll;      /* an SQPOLL ring */
};

struct netdev_probe {
	int suspend;     /* napi-set takes irq-suspend-timeout (Linux 6.13) */
	int admin;       /* napi-set is allowed (CAP_NET_ADMIN in the initial namespace) */
};

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* Which process each group's results belong to; 0 = not probed. */
static pid_t epoll_pid, uring_pid, netdev_pid;
static struct epoll_probe epoll_res;
static struct uring_probe uring_res;
static struct netdev_probe netdev_res;

/* A fork child starts with nothing cached (it may drop privileges next), and with a fresh
 * lock in case another thread of the parent held it across fork(). */
static void probe_atfork_child(void)
{
	pthread_mutex_init(&probe_lock, NULL);
	epoll_pid = uring_pid = netdev_pid = 0;
}

static void probe_register_atfork(void)
{
	pthread_atfork(NULL, NULL, probe_atfork_child);
}

__attribute__((format(printf, 4, 5)))
static int say(int ret, char *err, size_t errlen, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return bp_err_set(ret, "%s", msg);
}

/* Private on purpose: bp_have_cap() belongs to src/net. Used only when netlink cannot
 * answer the privilege question itself. */
static bool have_cap(int cap)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long eff;

		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			yes = (eff >> cap) & 1;
			break;
		}
	}
	fclose(f);
	return yes;
}

/* uname's release as major*1000+minor, for the last-resort fallback only. */
static int kernel_version(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj * 1000 + min;
}

static int read_int_file(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* ---- epoll ---- */

static int epoll_set_params(int fd, uint32_t usecs, uint16_t budget, uint8_t prefer)
{
	struct epoll_params p = { .busy_poll_usecs = usecs, .busy_poll_budget = budget,
				  .prefer_busy_poll = prefer };

	return ioctl(fd, EPIOCSPARAMS, &p) ? -errno : 0;
}

static void probe_epoll(struct epoll_probe *r)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);
	int ret;

	if (fd < 0) {
		r->params = r->big_budget = -errno;
		return;
	}
	/* All zero is accepted by every kernel that has the ioctl; before 6.9 an epoll fd
	 * has no ioctl at all (ENOTTY). */
	ret = epoll_set_params(fd, 0, 0, 0);
	if (ret == -ENOTTY || ret == -EINVAL)
		ret = -EOPNOTSUPP;
	r->params = ret;
	/* Any budget above 64 takes the same capable(CAP_NET_ADMIN) check. */
	r->big_budget = ret ? ret : epoll_set_params(fd, 0, 128, 0);
	close(fd);
}

/* ---- io_uring ---- */

static const unsigned setup_flags[3] = {
	[BP_URING_SETUP_PLAIN] = 0,
	[BP_URING_SETUP_COOP] = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
	[BP_URING_SETUP_DEFER] = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
};

static int ring_try(unsigned flags)
{
	struct io_uring_params p = { .flags = flags, .sq_thread_idle = 10 };
	struct io_uring ring;
	int ret = io_uring_queue_init_params(4, &ring, &p);

	if (ret < 0)
		return ret == -EINVAL ? -EOPNOTSUPP : ret;
	io_uring_queue_exit(&ring);
	return 0;
}

/* liburing 2.3 has no io_uring_register_napi(): raw syscall, nr_args must be 1. */
static int napi_register(int ring_fd, uint32_t tracking)
{
	struct bp_io_uring_napi n = { .busy_poll_to = 64, .opcode = BP_NAPI_OP_REGISTER,
				      .op_param = tracking };

	return syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_NAPI, &n, 1) ? -errno : 0;
}

static void probe_uring_napi(struct uring_probe *r)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(4, &ring, 0);

	if (ret < 0) {
		r->napi = r->napi_static = ret;
		return;
	}
	/* Before 6.9 the opcode is unknown (EINVAL); 6.9..6.12 know NAPI but insist the
	 * bytes that later became opcode/op_param are zero, so STATIC is EINVAL there. */
	ret = napi_register(ring.ring_fd, BP_NAPI_TRACK_DYNAMIC);
	r->napi = ret == -EINVAL ? -EOPNOTSUPP : ret;
	if (r->napi) {
		r->napi_static = r->napi;
	} else {
		ret = napi_register(ring.ring_fd, BP_NAPI_TRACK_STATIC);
		r->napi_static = ret == -EINVAL ? -EOPNOTSUPP : ret;
	}
	io_uring_queue_exit(&ring);
}

static void probe_uring(struct uring_probe *r)
{
	r->disabled = read_int_file("/proc/sys/kernel/io_uring_disabled");
	r->ring = ring_try(0);
	if (r->ring) {
		r->setup[0] = r->setup[1] = r->setup[2] = r->ring;
		r->napi = r->napi_static = r->sqpoll = r->ring;
		return;
	}
	for (int s = 0; s < 3; s++)
		r->setup[s] = ring_try(setup_flags[s]);
	probe_uring_napi(r);
	/* Since 5.11 unprivileged SQPOLL is allowed; older kernels want CAP_SYS_ADMIN (EPERM). */
	r->sqpoll = ring_try(IORING_SETUP_SQPOLL);
}

/* ---- netdev generic netlink family ---- */

struct genl_reply {
	uint16_t family_id;
	bool has_napi_set;
	int do_policy;          /* policy index of napi-set's do, -1 unknown */
	uint64_t attrs_seen[8]; /* by policy index: bit per attribute the policy has */
};

static void parse_family_ops(const struct nlattr *ops, struct genl_reply *r)
{
	const struct nlattr *op, *a;

	mnl_attr_for_each_nested(op, ops)
		mnl_attr_for_each_nested(a, op)
			if (mnl_attr_get_type(a) == CTRL_ATTR_OP_ID &&
			    mnl_attr_get_payload_len(a) >= 4 &&
			    mnl_attr_get_u32(a) == BP_NETDEV_CMD_NAPI_SET)
				r->has_napi_set = true;
}

/* CTRL_ATTR_POLICY: { policy index { attribute index { its type, range... } } } */
static void parse_policy(const struct nlattr *pol, struct genl_reply *r)
{
	const struct nlattr *idx, *attr;

	mnl_attr_for_each_nested(idx, pol) {
		unsigned pi = mnl_attr_get_type(idx);

		if (pi >= 8)
			continue;
		mnl_attr_for_each_nested(attr, idx)
			if (mnl_attr_get_type(attr) < 64)
				r->attrs_seen[pi] |= 1ull << mnl_attr_get_type(attr);
	}
}

/* CTRL_ATTR_OP_POLICY: { op { CTRL_ATTR_POLICY_DO: policy index, ... } } */
static void parse_op_policy(const struct nlattr *opp, struct genl_reply *r)
{
	const struct nlattr *op, *a;

	mnl_attr_for_each_nested(op, opp) {
		if (mnl_attr_get_type(op) != BP_NETDEV_CMD_NAPI_SET)
			continue;
		mnl_attr_for_each_nested(a, op)
			if (mnl_attr_get_type(a) == CTRL_ATTR_POLICY_DO)
				r->do_policy = (int)mnl_attr_get_u32(a);
	}
}

static int genl_reply_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genl_reply *r = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			r->family_id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_OPS:
			parse_family_ops(a, r);
			break;
		case CTRL_ATTR_POLICY:
			parse_policy(a, r);
			break;
		case CTRL_ATTR_OP_POLICY:
			parse_op_policy(a, r);
			break;
		}
	}
	return MNL_CB_OK;
}

/* buf is REQ_BUF bytes. Zeroed whole: libmnl 1.0.4 (Debian 12) leaves the alignment
 * padding after an attribute unwritten, so stack bytes would go to the kernel. */
static struct nlmsghdr *genl_msg(char *buf, uint16_t type, uint16_t flags, uint8_t cmd, uint32_t seq)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	memset(buf, 0, REQ_BUF);
	nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* Send one request and run every reply through cb until done/ack. Returns 0 or -errno
 * (the kernel's error from an NLMSG_ERROR, e.g. -EPERM, -ENOENT). */
static int genl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	/* Dumps come in skbs sized to the reader's buffer history; 32 KiB is netlink's own
	 * advice for a dump reader and never truncates one message. */
	char buf[32768];
	unsigned portid = mnl_socket_get_portid(nl);
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
	} while (ret > MNL_CB_STOP);
	return ret < 0 ? -errno : 0;
}

/* Does napi-set accept NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT? Read the op's own attribute
 * policy (unprivileged); 1 yes, 0 no, -errno when the kernel cannot dump policies. */
static int genl_napi_set_has_suspend(struct mnl_socket *nl, uint16_t family_id)
{
	char buf[REQ_BUF];
	struct genl_reply r = { .do_policy = -1 };
	struct nlmsghdr *nlh = genl_msg(buf, GENL_ID_CTRL, NLM_F_DUMP, CTRL_CMD_GETPOLICY, 2);
	uint64_t want = 1ull << BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT;
	int ret;

	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, family_id);
	mnl_attr_put_u32(nlh, CTRL_ATTR_OP, BP_NETDEV_CMD_NAPI_SET);
	ret = genl_talk(nl, nlh, genl_reply_cb, &r);
	if (ret)
		return ret;
	if (r.do_policy >= 0 && r.do_policy < 8)
		return (r.attrs_seen[r.do_policy] & want) != 0;
	/* The dump was filtered to napi-set, so any policy in it is napi-set's. */
	for (int i = 0; i < 8; i++)
		if (r.attrs_seen[i] & want)
			return 1;
	return 0;
}

/*
 * Is napi-set allowed to us? genetlink checks GENL_ADMIN_PERM before it looks at the
 * attributes, so a request for NAPI id 1 (below MIN_NAPI_ID: never a NAPI, and with no
 * setting attached nothing could change anyway) answers EPERM or, when allowed, ENOENT.
 */
static int genl_napi_set_allowed(struct mnl_socket *nl, uint16_t family_id)
{
	char buf[REQ_BUF];
	struct genl_reply r = { .do_policy = -1 };
	struct nlmsghdr *nlh = genl_msg(buf, family_id, NLM_F_ACK, BP_NETDEV_CMD_NAPI_SET, 3);

	mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_ID, 1);
	return genl_talk(nl, nlh, genl_reply_cb, &r) == -EPERM ? -EPERM : 0;
}

/* Ask the kernel; returns -errno when netlink itself is unusable (then we fall back). */
static int probe_netdev_genl(struct netdev_probe *r)
{
	char buf[REQ_BUF];
	struct genl_reply fam = { .do_policy = -1 };
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	struct nlmsghdr *nlh;
	int ret;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	/* NLM_F_ACK: the ack is what ends genl_talk's read loop after the one reply. */
	nlh = genl_msg(buf, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, BP_NETDEV_FAMILY_NAME);
	ret = genl_talk(nl, nlh, genl_reply_cb, &fam);
	if (ret == -ENOENT || (!ret && !fam.has_napi_set)) {
		/* no netdev family (< 6.2) or no napi-set (< 6.13) */
		r->suspend = -EOPNOTSUPP;
		r->admin = have_cap(CAP_NET_ADMIN_BIT) ? 0 : -EPERM;
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	ret = genl_napi_set_has_suspend(nl, fam.family_id);
	if (ret < 0)
		goto out;
	r->suspend = ret ? 0 : -EOPNOTSUPP;
	r->admin = genl_napi_set_allowed(nl, fam.family_id);
	ret = 0;
out:
	mnl_socket_close(nl);
	return ret;
}

static void probe_netdev(struct netdev_probe *r)
{
	if (probe_netdev_genl(r) == 0)
		return;
	/* Netlink unusable here (seccomp, odd sandbox): irq-suspend-timeout came with 6.13. */
	r->suspend = kernel_version() >= 6013 ? 0 : -EOPNOTSUPP;
	r->admin = have_cap(CAP_NET_ADMIN_BIT) ? 0 : -EPERM;
}

/* ---- the cache ---- */

enum probe_group { GROUP_EPOLL, GROUP_URING, GROUP_NETDEV };

static void probe_ensure(enum probe_group g)
{
	pid_t me;

	pthread_once(&atfork_once, probe_register_atfork);
	pthread_mutex_lock(&probe_lock);
	/* The pid key also covers children made without fork handlers (raw clone). */
	me = getpid();
	switch (g) {
	case GROUP_EPOLL:
		if (epoll_pid != me) {
			probe_epoll(&epoll_res);
			epoll_pid = me;
		}
		break;
	case GROUP_URING:
		if (uring_pid != me) {
			probe_uring(&uring_res);
			uring_pid = me;
		}
		break;
	case GROUP_NETDEV:
		if (netdev_pid != me) {
			probe_netdev(&netdev_res);
			netdev_pid = me;
		}
		break;
	}
	pthread_mutex_unlock(&probe_lock);
}

/* ---- the checks ---- */

/* A probe failed for a reason that is neither "lacks" nor "privilege": report it as is. */
static int probe_failed(int ret, const char *what, char *err, size_t errlen)
{
	return say(ret, err, errlen, "cannot probe %s: %s", what, strerror(-ret));
}

static int check_epoll_params(const char *name, char *err, size_t errlen)
{
	int ret = epoll_res.params;

	if (ret == -EOPNOTSUPP)
		return say(ret, err, errlen, "%s needs EPIOCSPARAMS (Linux 6.9); this kernel lacks it", name);
	if (ret)
		return probe_failed(ret, "EPIOCSPARAMS", err, errlen);
	return 0;
}

static int check_epoll_budget(const char *name, const struct bp_mode *m, char *err, size_t errlen)
{
	int ret = epoll_res.big_budget;

	if (m->budget <= BP_NAPI_POLL_WEIGHT || !ret)
		return 0;
	if (ret == -EPERM)
		return say(ret, err, errlen, "%s,budget=%u needs CAP_NET_ADMIN", name, m->budget);
	return probe_failed(ret, "EPIOCSPARAMS budget>64", err, errlen);
}

static int check_epoll(const struct bp_mode *m, char *err, size_t errlen)
{
	const char *name = bp_mode_name(m);
	int ret;

	if (m->policy != BP_POLICY_NAPI && m->policy != BP_POLICY_SUSPEND)
		return 0; /* block/spin/hybrid need nothing beyond epoll itself */
	probe_ensure(GROUP_EPOLL);
	ret = check_epoll_params(name, err, errlen);
	if (ret)
		return ret;
	if (m->policy == BP_POLICY_NAPI && m->busy_usecs == 0 && m->prefer) {
		/* usecs=0 polls only through the prefer path the IRQ-suspension series added
		 * (6.13), the same series that added irq-suspend-timeout: probe that. */
		probe_ensure(GROUP_NETDEV);
		if (netdev_res.suspend)
			return say(-EOPNOTSUPP, err, errlen,
				   "%s,usecs=0,prefer needs Linux 6.13 (prefer busy poll without usecs); "
				   "this kernel lacks it", name);
	}
	if (m->policy == BP_POLICY_SUSPEND) {
		probe_ensure(GROUP_NETDEV);
		if (netdev_res.suspend)
			return say(-EOPNOTSUPP, err, errlen,
				   "%s needs the netdev napi-set irq-suspend-timeout (Linux 6.13); "
				   "this kernel lacks it", name);
		if (netdev_res.admin)
			return say(-EPERM, err, errlen,
				   "%s needs CAP_NET_ADMIN (per-NAPI settings over netlink)", name);
	}
	return check_epoll_budget(name, m, err, errlen);
}

static int check_uring_ring(const char *name, char *err, size_t errlen)
{
	int ret = uring_res.ring;

	if (ret == -ENOSYS || ret == -EOPNOTSUPP)
		return say(-EOPNOTSUPP, err, errlen, "%s needs io_uring, which is disabled here%s", name,
			   uring_res.disabled == 2 ? " (kernel.io_uring_disabled=2)" : "");
	if (ret == -EPERM)
		return say(-EPERM, err, errlen, "%s needs io_uring, which kernel.io_uring_disabled=%d "
			   "limits to CAP_SYS_ADMIN and kernel.io_uring_group", name, uring_res.disabled);
	if (ret)
		return probe_failed(ret, "io_uring_setup", err, errlen);
	return 0;
}

static int check_uring_setup(const char *name, const struct bp_mode *m, char *err, size_t errlen)
{
	static const char *const words[] = { "plain", "coop", "defer" };
	static const char *const flags[] = { "no setup flags", "IORING_SETUP_COOP_TASKRUN (Linux 5.19)",
					     "IORING_SETUP_DEFER_TASKRUN (Linux 6.1)" };
	int s = (int)m->setup;
	int ret;

	if (s < 0 || s > 2)
		return say(-EINVAL, err, errlen, "%s: invalid setup %d", name, s);
	ret = uring_res.setup[s];
	if (ret == -EOPNOTSUPP)
		return say(ret, err, errlen, "%s,setup=%s needs %s; this kernel lacks it", name, words[s], flags[s]);
	if (ret)
		return probe_failed(ret, "io_uring setup flags", err, errlen);
	return 0;
}

static int check_uring_napi(const char *name, const char *key, char *err, size_t errlen)
{
	int ret = uring_res.napi;

	if (ret == -EOPNOTSUPP)
		return say(ret, err, errlen, "%s%s needs IORING_REGISTER_NAPI (Linux 6.9); this kernel lacks it",
			   name, key);
	if (ret)
		return probe_failed(ret, "IORING_REGISTER_NAPI", err, errlen);
	return 0;
}

static int check_uring(const struct bp_mode *m, char *err, size_t errlen)
{
	const char *name = bp_mode_name(m);
	int ret;

	probe_ensure(GROUP_URING);
	ret = check_uring_ring(name, err, errlen);
	if (ret)
		return ret;
	if (m->policy == BP_POLICY_SQPOLL) {
		if (uring_res.sqpoll == -EPERM)
			return say(-EPERM, err, errlen, "%s needs privilege to create an SQPOLL ring here "
				   "(CAP_SYS_ADMIN before Linux 5.11)", name);
		if (uring_res.sqpoll)
			return probe_failed(uring_res.sqpoll, "IORING_SETUP_SQPOLL", err, errlen);
		return m->busy_usecs ? check_uring_napi(name, ",napi>0", err, errlen) : 0;
	}
	ret = check_uring_setup(name, m, err, errlen);
	if (ret || m->policy != BP_POLICY_NAPI)
		return ret;
	ret = check_uring_napi(name, "", err, errlen);
	if (ret || m->tracking != BP_TRACKING_STATIC)
		return ret;
	if (uring_res.napi_static == -EOPNOTSUPP)
		return say(-EOPNOTSUPP, err, errlen,
			   "%s,tracking=static needs static NAPI tracking (Linux 6.13); this kernel lacks it", name);
	if (uring_res.napi_static)
		return probe_failed(uring_res.napi_static, "IORING_REGISTER_NAPI static", err, errlen);
	return 0;
}

/*
 * bp_mode_check - can this kernel and process use mode now? (contract in busypoll/mode.h)
 * Returns 0, -EOPNOTSUPP (kernel lacks a feature), -EPERM (privilege missing), -EINVAL
 * (not a valid family), or the probe's own -errno when a probe could not run at all
 * (e.g. -EMFILE): that is neither "lacks" nor "not allowed", so it is not disguised as one.
 * err (and bp_last_error) get one line naming the key or capability.
 */
int bp_mode_check(const struct bp_mode *mode, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!mode || !strcmp(bp_mode_name(mode), "invalid"))
		return say(-EINVAL, err, errlen, "not a valid mode");
	return mode->backend == BP_BACKEND_EPOLL ? check_epoll(mode, err, errlen)
						 : check_uring(mode, err, errlen);
}
