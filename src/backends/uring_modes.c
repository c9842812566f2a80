/* SPDX-License-Identifier: MIT */
/*
 * What the io_uring backend offers the mode grammar (its families: keys, ranges,
 * defaults), whether this kernel and process can use each mode right now, and
 * which optional features (multishot receive, registered descriptors, ...) its
 * loops use.
 *
 * Nothing is assumed from version numbers: each feature is probed by doing the
 * smallest real thing that needs it (a ring with the setup flags, an SQPOLL ring,
 * an IORING_REGISTER_NAPI, a multishot recv of one byte) and reading the errno,
 * once per process, when a uring mode is first checked (base/once.h).
 *
 * Two environment variables, read once with the probe:
 *   BP_URING_FEATURES  which optional features loops may use: a comma list of
 *                      "all" (the default), "none" (the path of kernels without
 *                      any: what the suite runs again to test it), NAME to add one,
 *                      -NAME to drop one; names as bp_features lists them.
 *   BP_URING_BUFS      the provided buffer ring of each loop: COUNTxSIZE (COUNT a
 *                      power of two up to 32768, SIZE 1..1048576 bytes; 128x8192).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include <busypoll/net.h>

#include "backends/uring.h"
#include "base/once.h"

/* io_uring's NAPI busy-poll time is capped at 10 ms by the kernel; we refuse rather than
 * let it silently shorten what the user asked for. */
#define URING_NAPI_MAX_USECS 10000u

#define SPEC(bit_) { (bit_), 0, 0 }
#define NUM(bit_, lo, hi) { (bit_), (lo), (hi) }
#define KEYS(a) (a), (sizeof(a) / sizeof((a)[0]))

static const struct bp_key_spec setup_keys[] = {
	SPEC(BP_KEY_SETUP),
};
static const struct bp_key_spec napi_keys[] = {
	NUM(BP_KEY_USECS, 1, URING_NAPI_MAX_USECS),
	SPEC(BP_KEY_PREFER),
	SPEC(BP_KEY_TRACKING),
	SPEC(BP_KEY_SETUP),
};
static const struct bp_key_spec hybrid_keys[] = {
	NUM(BP_KEY_PERIOD, 1, 10000000),
	SPEC(BP_KEY_SETUP),
};
/* idle=0 would make the kernel use its own 1 s default, so 0 is refused rather than
 * meaning something other than what it says. */
static const struct bp_key_spec sqpoll_keys[] = {
	NUM(BP_KEY_IDLE, 1, UINT32_MAX),
	NUM(BP_KEY_NAPI, 0, URING_NAPI_MAX_USECS),
	SPEC(BP_KEY_SPIN),
	NUM(BP_KEY_CPU, 0, CPU_SETSIZE - 1),
};
static const struct bp_key_hint sqpoll_hints[] = {
	{ "setup", "setup is not allowed (an SQPOLL ring has its own setup flags)" },
	{ NULL, NULL },
};

const struct bp_mode_family bp_uring_families[] = {
	{ { "uring:block", "setup=defer", "wait in io_uring_enter for completions (the io_uring baseline)" },
	  KEYS(setup_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_BLOCK, .setup = BP_URING_SETUP_DEFER },
	  NULL, NULL },
	{ { "uring:napi", "usecs=64[,prefer],tracking=dynamic,setup=defer",
	    "io_uring busy-polls the NAPI while waiting for completions (IORING_REGISTER_NAPI, Linux 6.9)" },
	  KEYS(napi_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_NAPI, .busy_usecs = 64,
	    .tracking = BP_TRACKING_DYNAMIC, .setup = BP_URING_SETUP_DEFER },
	  NULL, NULL },
	/* DEFER, measured: a plain ring reaps without entering the kernel, but each
	 * completion is posted by a task-work IPI into the spinning CPU, which on a VM
	 * costs a VM exit (P50 28 us vs 15.6 us over veth here); a DEFER ring pays one
	 * io_uring_enter per spin instead. setup=plain is there to measure the other. */
	{ { "uring:spin", "setup=defer", "poll for completions without sleeping, never block (burns a CPU)" },
	  KEYS(setup_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_SPIN, .setup = BP_URING_SETUP_DEFER },
	  NULL, NULL },
	{ { "uring:hybrid", "period=30,setup=defer",
	    "peek completions while work came in the last period us or a timer is due within it, then block" },
	  KEYS(hybrid_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_HYBRID, .period_us = 30, /* as epoll's */
	    .setup = BP_URING_SETUP_DEFER },
	  NULL, NULL },
	/* setup stays PLAIN (zero): an SQPOLL ring has its own flags, setup= does not apply. */
	{ { "uring:sqpoll", "idle=1000,napi=0[,spin][,cpu=N]",
	    "a kernel SQ thread submits (and busy-polls the NAPI when napi>0); sleeps after idle ms; "
	    "spin: the loop reaps completions in userspace, no syscalls; cpu: the SQ thread's CPU "
	    "(default: the loop thread's CPUs)" },
	  KEYS(sqpoll_keys),
	  { .backend = BP_BACKEND_URING, .policy = BP_POLICY_SQPOLL, .sq_idle_ms = 1000, .busy_usecs = 0 },
	  sqpoll_hints, NULL },
	{ { NULL, NULL, NULL }, NULL, 0, { 0 }, NULL, NULL },
};

unsigned bp_uring_setup_flags(enum bp_uring_setup setup)
{
	switch (setup) {
	case BP_URING_SETUP_COOP:
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
	case BP_URING_SETUP_DEFER:
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	case BP_URING_SETUP_PLAIN:
	default:
		return 0;
	}
}

int bp_uring_register_napi(int ring_fd, struct bp_io_uring_napi *napi)
{
	return syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_NAPI, napi, 1) ? -errno : 0;
}

/* ---- the probe ---- */

/* Each result is 0 (works), -EOPNOTSUPP (kernel lacks it), -EPERM (privilege
 * missing), or another -errno when the probe itself could not run (e.g. -EMFILE). */
struct uring_probe {
	int ring;        /* io_uring_setup at all (may be disabled by sysctl) */
	int disabled;    /* kernel.io_uring_disabled, -1 when the sysctl is absent */
	int setup[3];    /* by enum bp_uring_setup: PLAIN, COOP, DEFER */
	int napi;        /* IORING_REGISTER_NAPI (Linux 6.9) */
	int napi_static; /* static tracking (Linux 6.13) */
	int sqpoll;      /* an SQPOLL ring */
};

static struct bp_once probe_once;
static struct uring_probe probed;

/* read_int_file - the number in a /proc file, -1 when absent or not a number. */
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

/* ring_try - can a ring with these setup flags be made? 0, -EOPNOTSUPP, -errno. */
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

/* napi_try - IORING_REGISTER_NAPI with this tracking on ring_fd: 0 or the raw -errno. */
static int napi_try(int ring_fd, uint32_t tracking)
{
	struct bp_io_uring_napi n = { .busy_poll_to = 64, .opcode = BP_NAPI_OP_REGISTER,
				      .op_param = tracking };

	return bp_uring_register_napi(ring_fd, &n);
}

/* probe_napi - NAPI registration, dynamic then static tracking, on a fresh ring. */
static void probe_napi(struct uring_probe *r)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(4, &ring, 0);

	if (ret < 0) {
		r->napi = r->napi_static = ret;
		return;
	}
	/* Before 6.9 the opcode is unknown (EINVAL); 6.9..6.12 know NAPI but insist the
	 * bytes that later became opcode/op_param are zero, so STATIC is EINVAL there. */
	ret = napi_try(ring.ring_fd, BP_NAPI_TRACK_DYNAMIC);
	r->napi = ret == -EINVAL ? -EOPNOTSUPP : ret;
	if (r->napi) {
		r->napi_static = r->napi;
	} else {
		ret = napi_try(ring.ring_fd, BP_NAPI_TRACK_STATIC);
		r->napi_static = ret == -EINVAL ? -EOPNOTSUPP : ret;
	}
	io_uring_queue_exit(&ring);
}

/* probe_uring - every result of struct uring_probe (bp_once_per_process). */
static void probe_uring(void *arg)
{
	struct uring_probe *r = arg;

	r->disabled = read_int_file("/proc/sys/kernel/io_uring_disabled");
	r->ring = ring_try(0);
	if (r->ring) {
		r->setup[0] = r->setup[1] = r->setup[2] = r->ring;
		r->napi = r->napi_static = r->sqpoll = r->ring;
		return;
	}
	for (int s = 0; s < 3; s++)
		r->setup[s] = ring_try(bp_uring_setup_flags((enum bp_uring_setup)s));
	probe_napi(r);
	/* Since 5.11 unprivileged SQPOLL is allowed; older kernels want CAP_SYS_ADMIN (EPERM). */
	r->sqpoll = ring_try(IORING_SETUP_SQPOLL);
}

/* ---- optional features ---- */

struct feature_def {
	unsigned bit;         /* URING_F_*, 0: a setup the modes choose (not switchable here) */
	const char *name, *needs, *summary;
};

static const struct feature_def feature_defs[] = {
	{ 0, "defer-taskrun", "Linux 6.1",
	  "SINGLE_ISSUER|DEFER_TASKRUN rings (setup=defer, the default but for sqpoll): "
	  "completions posted in a batch when the loop enters" },
	{ URING_F_MULTISHOT, "multishot", "Linux 6.0",
	  "one multishot recv per stream conn from a provided buffer ring: no SQE per message" },
	{ URING_F_DIRECT, "direct", "Linux 5.19",
	  "registered descriptors for conns: no fd lookup or file reference per op" },
	{ URING_F_REGRING, "regring", "Linux 5.18",
	  "registered ring fd: no fd lookup per io_uring_enter" },
	{ URING_F_NOSQARRAY, "nosqarray", "Linux 6.6",
	  "IORING_SETUP_NO_SQARRAY: SQEs taken in ring order, no index array" },
};
#define N_FEATURES (sizeof(feature_defs) / sizeof(feature_defs[0]))
#define ALL_FEATURES (URING_F_MULTISHOT | URING_F_DIRECT | URING_F_REGRING | URING_F_NOSQARRAY)

#define DEFAULT_BUF_COUNT 128
#define DEFAULT_BUF_SIZE 8192

struct feature_probe {
	int status[N_FEATURES]; /* 0 the kernel has it, -EOPNOTSUPP, or the probe's -errno */
	unsigned wanted;        /* URING_F_* BP_URING_FEATURES leaves on */
	unsigned buf_count, buf_size;
	char env_error[160];    /* a variable that does not parse; empty when both do */
};

static struct bp_once features_once;
static struct feature_probe features;

/* lacks_if_einval - EINVAL from a probe means the kernel lacks the feature. */
static int lacks_if_einval(int ret)
{
	return ret == -EINVAL ? -EOPNOTSUPP : ret;
}

/* probe_nosqarray - can a ring be made with IORING_SETUP_NO_SQARRAY? */
static int probe_nosqarray(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_NO_SQARRAY };
	int fd = io_uring_setup(4, &p);

	if (fd < 0)
		return lacks_if_einval(fd);
	close(fd);
	return 0;
}

/*
 * One byte through a multishot recv from a one-buffer ring: it must come back in
 * the buffer with IORING_CQE_F_MORE (before 6.0 the recv fails with EINVAL).
 */
static int probe_multishot(struct io_uring *ring)
{
	static uint8_t buf[64];
	static struct io_uring_buf_ring br __attribute__((aligned(4096)));
	struct io_uring_buf_reg reg = { .ring_addr = (uint64_t)(uintptr_t)&br, .ring_entries = 1, .bgid = 0 };
	struct __kernel_timespec ts = { .tv_sec = 1 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int sv[2], ret;

	ret = io_uring_register_buf_ring(ring, &reg, 0);
	if (ret < 0)
		return lacks_if_einval(ret);
	io_uring_buf_ring_init(&br);
	io_uring_buf_ring_add(&br, buf, sizeof(buf), 0, io_uring_buf_ring_mask(1), 0);
	io_uring_buf_ring_advance(&br, 1);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 0;
	ret = io_uring_submit(ring);
	if (ret == 1 && write(sv[1], "x", 1) != 1)
		ret = -errno;
	if (ret == 1)
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
	if (ret == 0) {
		if (cqe->res == 1 && (cqe->flags & IORING_CQE_F_BUFFER) && (cqe->flags & IORING_CQE_F_MORE))
			ret = 0;
		else
			ret = lacks_if_einval(cqe->res < 0 ? cqe->res : -EINVAL);
	}
	close(sv[0]);
	close(sv[1]);
	/* the ring goes next, and the recv still armed with it */
	return ret;
}

/* probe_ring_features - the features one plain ring can show: a registered ring fd, a
 * sparse file table, a multishot recv from a buffer ring. */
static void probe_ring_features(struct feature_probe *r, int *multishot, int *direct, int *regring)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(4, &ring, 0);

	if (ret < 0) {
		*multishot = *direct = *regring = ret;
		return;
	}
	ret = io_uring_register_ring_fd(&ring);
	*regring = ret == 1 ? 0 : lacks_if_einval(ret < 0 ? ret : -EINVAL);
	if (ret == 1)
		io_uring_unregister_ring_fd(&ring);
	*direct = lacks_if_einval(io_uring_register_files_sparse(&ring, 1));
	*multishot = probe_multishot(&ring);
	io_uring_queue_exit(&ring);
}

/* feature_index - the switchable feature called name (len bytes), or -1. */
static int feature_index(const char *name, size_t len)
{
	for (size_t i = 0; i < N_FEATURES; i++)
		if (feature_defs[i].bit && strlen(feature_defs[i].name) == len &&
		    !memcmp(feature_defs[i].name, name, len))
			return (int)i;
	return -1;
}

/* BP_URING_FEATURES: "all", "none", NAME, -NAME, comma separated, applied in order. */
static void parse_features_env(struct feature_probe *r, const char *v)
{
	r->wanted = ALL_FEATURES;
	while (v && *v) {
		const char *end = strchr(v, ',');
		size_t len = end ? (size_t)(end - v) : strlen(v);
		bool drop = len && v[0] == '-';
		int i = feature_index(v + drop, len - drop);

		if (len == 3 && !memcmp(v, "all", 3))
			r->wanted = ALL_FEATURES;
		else if (len == 4 && !memcmp(v, "none", 4))
			r->wanted = 0;
		else if (i >= 0 && drop)
			r->wanted &= ~feature_defs[i].bit;
		else if (i >= 0)
			r->wanted |= feature_defs[i].bit;
		else {
			snprintf(r->env_error, sizeof(r->env_error),
				 "BP_URING_FEATURES: unknown feature '%.*s' (all, none, multishot, direct, "
				 "regring, nosqarray, each may be -NAME)", (int)(len > 32 ? 32 : len), v);
			return;
		}
		v = end ? end + 1 : NULL;
	}
}

/* BP_URING_BUFS: COUNTxSIZE. */
static void parse_bufs_env(struct feature_probe *r, const char *v)
{
	unsigned long count, size;
	char *x, *end;

	r->buf_count = DEFAULT_BUF_COUNT;
	r->buf_size = DEFAULT_BUF_SIZE;
	if (!v)
		return;
	count = strtoul(v, &x, 10);
	size = *x == 'x' ? strtoul(x + 1, &end, 10) : 0;
	if (x == v || *x != 'x' || end == x + 1 || *end || !count || count > 32768 ||
	    (count & (count - 1)) || !size || size > (1u << 20)) {
		snprintf(r->env_error, sizeof(r->env_error),
			 "BP_URING_BUFS='%.32s' is not COUNTxSIZE (COUNT a power of two 1..32768, "
			 "SIZE 1..1048576), e.g. 128x8192", v);
		return;
	}
	r->buf_count = (unsigned)count;
	r->buf_size = (unsigned)size;
}

/* probe_features - the environment and every optional feature (bp_once_per_process). */
static void probe_features(void *arg)
{
	struct feature_probe *r = arg;
	int multishot, direct, regring;

	memset(r, 0, sizeof(*r));
	parse_features_env(r, getenv("BP_URING_FEATURES"));
	if (!r->env_error[0])
		parse_bufs_env(r, getenv("BP_URING_BUFS"));
	probe_ring_features(r, &multishot, &direct, &regring);
	for (size_t i = 0; i < N_FEATURES; i++) {
		switch (feature_defs[i].bit) {
		case URING_F_MULTISHOT: r->status[i] = multishot; break;
		case URING_F_DIRECT: r->status[i] = direct; break;
		case URING_F_REGRING: r->status[i] = regring; break;
		case URING_F_NOSQARRAY: r->status[i] = probe_nosqarray(); break;
		default: r->status[i] = 0; break; /* filled from the mode probe when listed */
		}
	}
}

unsigned bp_uring_features(void)
{
	unsigned on = 0;

	bp_once_per_process(&features_once, probe_features, &features);
	if (features.env_error[0])
		return 0;
	for (size_t i = 0; i < N_FEATURES; i++)
		if (!features.status[i])
			on |= feature_defs[i].bit;
	return on & features.wanted;
}

void bp_uring_buf_geometry(unsigned *count, unsigned *size)
{
	bp_once_per_process(&features_once, probe_features, &features);
	*count = features.buf_count ? features.buf_count : DEFAULT_BUF_COUNT;
	*size = features.buf_size ? features.buf_size : DEFAULT_BUF_SIZE;
}

size_t bp_uring_feature_list(struct bp_feature *out, size_t max)
{
	bp_once_per_process(&probe_once, probe_uring, &probed);
	bp_once_per_process(&features_once, probe_features, &features);
	for (size_t i = 0; i < N_FEATURES && i < max; i++) {
		const struct feature_def *d = &feature_defs[i];
		int st = d->bit ? features.status[i] : probed.setup[BP_URING_SETUP_DEFER];

		if (!st && d->bit && features.env_error[0])
			st = -EINVAL;
		else if (!st && d->bit && !(features.wanted & d->bit))
			st = -ECANCELED;
		out[i] = (struct bp_feature){ "uring", d->name, d->needs, d->summary, st };
	}
	return N_FEATURES;
}

/* ---- the check ---- */

/* cpu_online - is CPU cpu in /sys/devices/system/cpu/online? (true when unreadable:
 * the kernel then says what it thinks at ring creation). */
static bool cpu_online(uint32_t cpu)
{
	int cpus[CPU_SETSIZE];
	char line[512];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = -1;

	if (f) {
		if (fgets(line, sizeof(line), f))
			n = bp_parse_cpu_list(line, cpus, CPU_SETSIZE);
		fclose(f);
	}
	if (n < 0)
		return true;
	for (int i = 0; i < n; i++)
		if ((uint32_t)cpus[i] == cpu)
			return true;
	return false;
}

static int check_ring(const char *name, char *err, size_t errlen)
{
	int ret = probed.ring;

	if (ret == -ENOSYS || ret == -EOPNOTSUPP)
		return bp_check_say(-EOPNOTSUPP, err, errlen, "%s needs io_uring, which is disabled here%s", name,
				    probed.disabled == 2 ? " (kernel.io_uring_disabled=2)" : "");
	if (ret == -EPERM)
		return bp_check_say(-EPERM, err, errlen, "%s needs io_uring, which kernel.io_uring_disabled=%d "
				    "limits to CAP_SYS_ADMIN and kernel.io_uring_group", name, probed.disabled);
	if (ret)
		return bp_check_probe_failed(ret, "io_uring_setup", err, errlen);
	return 0;
}

static int check_setup(const char *name, const struct bp_mode *m, char *err, size_t errlen)
{
	static const char *const words[] = { "plain", "coop", "defer" };
	static const char *const flags[] = { "no setup flags", "IORING_SETUP_COOP_TASKRUN (Linux 5.19)",
					     "IORING_SETUP_DEFER_TASKRUN (Linux 6.1)" };
	int s = (int)m->setup;
	int ret;

	if (s < 0 || s > 2)
		return bp_check_say(-EINVAL, err, errlen, "%s: invalid setup %d", name, s);
	ret = probed.setup[s];
	if (ret == -EOPNOTSUPP)
		return bp_check_say(ret, err, errlen, "%s,setup=%s needs %s; this kernel lacks it", name, words[s],
				    flags[s]);
	if (ret)
		return bp_check_probe_failed(ret, "io_uring setup flags", err, errlen);
	return 0;
}

static int check_napi(const char *name, const char *key, char *err, size_t errlen)
{
	int ret = probed.napi;

	if (ret == -EOPNOTSUPP)
		return bp_check_say(ret, err, errlen,
				    "%s%s needs IORING_REGISTER_NAPI (Linux 6.9); this kernel lacks it", name, key);
	if (ret)
		return bp_check_probe_failed(ret, "IORING_REGISTER_NAPI", err, errlen);
	return 0;
}

/* bp_uring_check - the backend's ->check (contract in backend.h and mode.h). */
int bp_uring_check(const struct bp_mode *m, char *err, size_t errlen)
{
	const char *name = bp_mode_name(m);
	int ret;

	bp_once_per_process(&probe_once, probe_uring, &probed);
	ret = check_ring(name, err, errlen);
	if (ret)
		return ret;
	bp_once_per_process(&features_once, probe_features, &features);
	if (features.env_error[0])
		return bp_check_say(-EINVAL, err, errlen, "%s: %s", name, features.env_error);
	if (m->policy == BP_POLICY_SQPOLL) {
		if (probed.sqpoll == -EPERM)
			return bp_check_say(-EPERM, err, errlen, "%s needs privilege to create an SQPOLL ring here "
					    "(CAP_SYS_ADMIN before Linux 5.11)", name);
		if (probed.sqpoll)
			return bp_check_probe_failed(probed.sqpoll, "IORING_SETUP_SQPOLL", err, errlen);
		if ((m->keys_set & BP_KEY_CPU) && !cpu_online(m->sq_cpu))
			return bp_check_say(-EINVAL, err, errlen, "%s,cpu=%u: this machine has no CPU %u online "
					    "(/sys/devices/system/cpu/online)", name, m->sq_cpu, m->sq_cpu);
		return m->busy_usecs ? check_napi(name, ",napi>0", err, errlen) : 0;
	}
	ret = check_setup(name, m, err, errlen);
	if (ret || m->policy != BP_POLICY_NAPI)
		return ret;
	ret = check_napi(name, "", err, errlen);
	if (ret || m->tracking != BP_TRACKING_STATIC)
		return ret;
	if (probed.napi_static == -EOPNOTSUPP)
		return bp_check_say(-EOPNOTSUPP, err, errlen,
				    "%s,tracking=static needs static NAPI tracking (Linux 6.13); this kernel lacks it",
				    name);
	if (probed.napi_static)
		return bp_check_probe_failed(probed.napi_static, "IORING_REGISTER_NAPI static", err, errlen);
	return 0;
}
