/* SPDX-License-Identifier: MIT */
/*
 * busypoll's XDP program on devices (contract in net/xdp_prog.h). The object is the
 * library's own bytes (bp_xsk_udp_obj, compiled from bpf/xsk_udp.bpf.c at build
 * time), opened with libbpf and attached with bpf_xdp_attach in native (driver)
 * mode and only where no program is: a device's other XDP program is never
 * replaced. One attachment per device and namespace per process, counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/error.h"
#include "net/xdp_prog.h"
#include "xsk_udp.h"

extern const unsigned char bp_xsk_udp_obj[];
extern const size_t bp_xsk_udp_obj_len;

struct bp_xdp {
	struct bp_xdp *next;
	int refs;
	int ifindex;
	uint64_t netns;              /* the namespace's inode */
	int netns_fd;                /* to act there from another thread's namespace */
	struct bpf_object *obj;
	int prog_fd, ports_fd, xsks_fd, owner_fd;
	struct bp_xdp_owner owner;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct bp_xdp *attached;

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0; /* failures are worded by us, one line each */
}

/* netns_ino - the calling thread's network namespace, as its inode (0 unknown). */
static uint64_t netns_ino(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) ? 0 : (uint64_t)st.st_ino;
}

/* proc_start_time - field 22 of /proc/PID/stat (0: no such process). */
static uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &t) != 1)
		return 0;
	return t;
}

/* owner_alive - is the process that attached the program still the one running? */
static bool owner_alive(const struct bp_xdp_owner *o)
{
	if (!o->pid || (kill((pid_t)o->pid, 0) && errno == ESRCH))
		return false;
	return proc_start_time((pid_t)o->pid) == o->start_time;
}

uint32_t bp_xdp_prog_id(int ifindex)
{
	uint32_t id = 0;

	if (bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &id))
		return 0;
	return id;
}

/* owner_map_of - the fd of prog's bp_owner map (prog one of ours), or -errno. */
static int owner_map_of(int prog_fd)
{
	struct bpf_prog_info info = { 0 };
	uint32_t ids[8], len = sizeof(info);

	info.nr_map_ids = 8;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (uint32_t i = 0; i < info.nr_map_ids && i < 8; i++) {
		struct bpf_map_info mi = { 0 };
		uint32_t ml = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && !strcmp(mi.name, "bp_owner") &&
		    mi.value_size == sizeof(struct bp_xdp_owner))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* restore_napi - put back the NAPI settings a dead owner noted. */
static void restore_napi(const struct bp_xdp_owner *o)
{
	for (int i = 0; i < BP_XDP_MAX_NAPI; i++) {
		bp_napi_settings s = { 0 };

		if (!o->napi[i].napi_id)
			continue;
		s.defer_hard_irqs = o->napi[i].defer_hard_irqs;
		s.gro_flush_timeout_ns = o->napi[i].gro_flush_timeout_ns;
		s.has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH;
		(void)bp_napi_set(o->napi[i].napi_id, &s); /* a NAPI gone with its device is fine */
	}
}

int bp_xdp_sweep(int ifindex)
{
	struct bpf_prog_info info = { 0 };
	struct bp_xdp_owner o;
	uint32_t id = bp_xdp_prog_id(ifindex), len = sizeof(info), key = 0;
	char dev[IF_NAMESIZE] = "?";
	int fd, mfd, ret;

	if (!id)
		return 0;
	if_indextoname((unsigned)ifindex, dev);
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return bp_err_set(-errno, "xdp: cannot look at the XDP program on %s (id %u): %s", dev, id,
				  strerror(errno));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = -errno;
		close(fd);
		return bp_err_set(ret, "xdp: cannot look at the XDP program on %s (id %u): %s", dev, id, strerror(-ret));
	}
	if (strcmp(info.name, BP_XDP_PROG_NAME)) {
		close(fd);
		return bp_err_set(-EBUSY, "%s already has an XDP program (id %u, %s); remove it first "
				  "(ip link set dev %s xdp off)", dev, id, info.name[0] ? info.name : "unnamed", dev);
	}
	mfd = owner_map_of(fd);
	if (mfd < 0 || bpf_map_lookup_elem(mfd, &key, &o)) {
		memset(&o, 0, sizeof(o));
	}
	if (mfd >= 0)
		close(mfd);
	if (owner_alive(&o)) {
		close(fd);
		return bp_err_set(-EBUSY, "%s is in use by busypoll process %u (its XDP program, id %u); "
				  "one xsk run per device at a time", dev, o.pid, id);
	}
	restore_napi(&o);
	{
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = fd);

		ret = bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, &opts);
	}
	close(fd);
	if (ret && bp_xdp_prog_id(ifindex) == id)
		return bp_err_set(ret, "xdp: cannot remove the XDP program a killed run left on %s (id %u): %s", dev,
				  id, strerror(-ret));
	return 1;
}

/* load - open and load the embedded object into x (not attached yet). */
static int load(struct bp_xdp *x)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "bp_xsk_udp");
	struct bpf_program *prog;
	int ret;

	libbpf_set_print(quiet_print);
	x->obj = bpf_object__open_mem(bp_xsk_udp_obj, bp_xsk_udp_obj_len, &oo);
	if (!x->obj) {
		ret = -errno;
		x->obj = NULL;
		return bp_err_set(ret, "xdp: cannot open the XDP program: %s", strerror(-ret));
	}
	ret = bpf_object__load(x->obj);
	if (ret)
		return bp_err_set(ret, "xdp: cannot load the XDP program: %s%s", strerror(-ret),
				  ret == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN)" : "");
	prog = bpf_object__find_program_by_name(x->obj, BP_XDP_PROG_NAME);
	x->prog_fd = prog ? bpf_program__fd(prog) : -1;
	x->ports_fd = bpf_object__find_map_fd_by_name(x->obj, "bp_ports");
	x->xsks_fd = bpf_object__find_map_fd_by_name(x->obj, "bp_xsks");
	x->owner_fd = bpf_object__find_map_fd_by_name(x->obj, "bp_owner");
	if (x->prog_fd < 0 || x->ports_fd < 0 || x->xsks_fd < 0 || x->owner_fd < 0)
		return bp_err_set(-ENOENT, "xdp: the XDP program lacks a part (a build problem)");
	return 0;
}

/* owner_write - x->owner into the program's bp_owner map. */
static int owner_write(struct bp_xdp *x)
{
	uint32_t key = 0;

	return bpf_map_update_elem(x->owner_fd, &key, &x->owner, BPF_ANY) ? -errno : 0;
}

/* attach - x's program onto its device, never over another one. */
static int attach(struct bp_xdp *x)
{
	char dev[IF_NAMESIZE] = "?";
	int ret;

	if_indextoname((unsigned)x->ifindex, dev);
	ret = bpf_xdp_attach(x->ifindex, x->prog_fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (!ret)
		return 0;
	if (ret == -EOPNOTSUPP || ret == -EINVAL)
		return bp_err_set(-EOPNOTSUPP, "%s has no native XDP (xsk modes need a driver with XDP, "
				  "e.g. veth, mlx5, ice, i40e)", dev);
	if (ret == -EBUSY || ret == -EEXIST)
		return bp_xdp_sweep(x->ifindex) < 0 ? -EBUSY
			: bp_err_set(-EBUSY, "%s: another XDP program was attached meanwhile", dev);
	if (ret == -EPERM)
		return bp_err_set(-EPERM, "attaching an XDP program to %s needs CAP_NET_ADMIN", dev);
	return bp_err_set(ret, "xdp: attaching the XDP program to %s: %s", dev, strerror(-ret));
}

static void xdp_free(struct bp_xdp *x)
{
	if (x->obj)
		bpf_object__close(x->obj);
	if (x->netns_fd >= 0)
		close(x->netns_fd);
	free(x);
}

int bp_xdp_acquire(int ifindex, struct bp_xdp **out)
{
	uint64_t ns = netns_ino();
	struct bp_xdp *x;
	int ret;

	pthread_mutex_lock(&lock);
	for (x = attached; x; x = x->next)
		if (x->ifindex == ifindex && x->netns == ns) {
			x->refs++;
			*out = x;
			pthread_mutex_unlock(&lock);
			return 0;
		}
	ret = bp_xdp_sweep(ifindex);
	if (ret < 0)
		goto out;
	ret = -ENOMEM;
	x = calloc(1, sizeof(*x));
	if (!x) {
		bp_err_set(ret, "xdp: out of memory");
		goto out;
	}
	x->ifindex = ifindex;
	x->netns = ns;
	x->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	x->owner.pid = (uint32_t)getpid();
	x->owner.start_time = proc_start_time(getpid());
	ret = load(x);
	if (!ret && (ret = owner_write(x)) != 0)
		bp_err_set(ret, "xdp: cannot write the owner map: %s", strerror(-ret));
	if (!ret)
		ret = attach(x);
	if (ret) {
		xdp_free(x);
		goto out;
	}
	x->refs = 1;
	x->next = attached;
	attached = x;
	*out = x;
out:
	pthread_mutex_unlock(&lock);
	return ret < 0 ? ret : 0;
}

/* in_ns - run the detach in x's namespace: enter it when this thread is elsewhere. */
static void detach_in_ns(struct bp_xdp *x)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = x->prog_fd);
	int back = -1;

	if (netns_ino() != x->netns && x->netns_fd >= 0) {
		back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (back < 0 || setns(x->netns_fd, CLONE_NEWNET)) {
			if (back >= 0)
				close(back);
			back = -1;
		}
	}
	(void)bpf_xdp_detach(x->ifindex, XDP_FLAGS_DRV_MODE, &opts);
	if (back >= 0) {
		(void)setns(back, CLONE_NEWNET);
		close(back);
	}
}

void bp_xdp_release(struct bp_xdp *x)
{
	struct bp_xdp **p;

	if (!x)
		return;
	pthread_mutex_lock(&lock);
	if (--x->refs > 0) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (p = &attached; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	detach_in_ns(x);
	xdp_free(x);
}

int bp_xdp_port_add(struct bp_xdp *x, uint16_t port)
{
	uint32_t queue = BP_XDP_QUEUE_NONE;
	uint16_t key = htons(port);

	if (bpf_map_update_elem(x->ports_fd, &key, &queue, BPF_NOEXIST)) {
		if (errno == EEXIST)
			return bp_err_set(-EADDRINUSE, "xsk: UDP port %u is already served by another AF_XDP socket here",
					  port);
		return bp_err_sys("bpf_map_update_elem(bp_ports)", -errno);
	}
	return 0;
}

int bp_xdp_port_set(struct bp_xdp *x, uint16_t port, uint32_t queue)
{
	uint16_t key = htons(port);

	if (bpf_map_update_elem(x->ports_fd, &key, &queue, BPF_EXIST))
		return bp_err_sys("bpf_map_update_elem(bp_ports)", -errno);
	return 0;
}

void bp_xdp_port_del(struct bp_xdp *x, uint16_t port)
{
	uint16_t key = htons(port);

	(void)bpf_map_delete_elem(x->ports_fd, &key);
}

int bp_xdp_xsk_set(struct bp_xdp *x, uint32_t queue, int fd)
{
	if (fd < 0)
		return bpf_map_delete_elem(x->xsks_fd, &queue) && errno != ENOENT
			? bp_err_sys("bpf_map_delete_elem(bp_xsks)", -errno) : 0;
	if (bpf_map_update_elem(x->xsks_fd, &queue, &fd, BPF_ANY))
		return bp_err_sys("bpf_map_update_elem(bp_xsks)", -errno);
	return 0;
}

int bp_xdp_napi_saved(struct bp_xdp *x, uint32_t napi_id, const bp_napi_settings *was)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < BP_XDP_MAX_NAPI; i++) {
		struct bp_xdp_napi_saved *s = &x->owner.napi[i];

		if (s->napi_id && s->napi_id != napi_id)
			continue;
		if (!s->napi_id) { /* the first note of a NAPI is what it was before any of ours */
			s->napi_id = napi_id;
			s->defer_hard_irqs = was->defer_hard_irqs;
			s->gro_flush_timeout_ns = was->gro_flush_timeout_ns;
		}
		ret = owner_write(x);
		break;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}
