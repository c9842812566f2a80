/* SPDX-License-Identifier: MIT */
/*
 * Named network namespaces, as `ip netns` keeps them: a bind mount of the
 * namespace on /run/netns/NAME. setns() moves only the calling thread, which is
 * what lets a test run a client thread in one namespace and a server in the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/napi.h>
#include "tools/bed/testbed.h"
#include "net/xps.h"
#include <busypoll/loop.h>

#include "base/error.h"

int bp_netns_enter(const char *nsname)
{
	char path[128];
	int fd, err = 0;

	if (!nsname || !*nsname || strchr(nsname, '/') ||
	    (size_t)snprintf(path, sizeof(path), "/run/netns/%s", nsname) >= sizeof(path))
		return bp_err_set(-EINVAL, "netns: bad name '%s'", nsname ? nsname : "(null)");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bp_err_set(-errno, "open(%s): %s", path, strerror(errno));
	if (setns(fd, CLONE_NEWNET) < 0)
		err = bp_err_set(-errno, "setns(%s, CLONE_NEWNET): %s", path, strerror(errno));
	close(fd);
	return err;
}

int bp_netns_save(int *fd)
{
	/* thread-self: another thread of this process may be somewhere else */
	*fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return bp_err_sys("open(/proc/thread-self/ns/net)", -errno);
	return 0;
}

int bp_netns_restore(int fd)
{
	int err = 0;

	if (setns(fd, CLONE_NEWNET) < 0)
		err = bp_err_sys("setns(saved namespace, CLONE_NEWNET)", -errno);
	close(fd);
	return err;
}

/* ---- sysfs of a device inside a namespace ---- */

struct knob_reply {
	int rc;
	uint64_t value;
	int map[BP_TESTBED_MAX_QUEUES];   /* XPS: rx queue of each tx queue */
	char msg[224];
};

/* What a child does inside the namespace (its sysfs mounted), into r. */
struct knob_job {
	const char *dev, *knob;
	bool set;
	uint64_t value;
	int queues;
	int (*fn)(const struct knob_job *job, struct knob_reply *r);
};

/*
 * In a child (it changes namespaces for good): enter the network namespace, then a
 * private mount namespace with a fresh sysfs, which shows the devices of the
 * network namespace it is mounted from. Same steps as `ip netns exec`.
 */
static int child_sysfs(const char *nsname)
{
	int rc = bp_netns_enter(nsname);

	if (rc)
		return rc;
	if (unshare(CLONE_NEWNS) < 0)
		return bp_err_sys("unshare(CLONE_NEWNS)", -errno);
	/* keep our unmount from propagating back to the caller's mounts */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return bp_err_sys("mount(/, MS_SLAVE|MS_REC)", -errno);
	umount2("/sys", MNT_DETACH); /* it may not be mounted at all */
	if (mount("sysfs", "/sys", "sysfs", 0, NULL) < 0)
		return bp_err_sys("mount(sysfs on /sys)", -errno);
	return 0;
}

/* Run job in a child inside nsname with its own sysfs; its reply comes back through a pipe. */
static int netns_child(const char *nsname, const struct knob_job *job, struct knob_reply *out)
{
	struct knob_reply r = { 0 };
	int pfd[2], status, err;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return bp_err_sys("pipe2", -errno);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return bp_err_sys("fork", err);
	}
	if (pid == 0) {
		close(pfd[0]);
		r.rc = child_sysfs(nsname);
		if (!r.rc)
			r.rc = job->fn(job, &r);
		if (r.rc < 0)
			snprintf(r.msg, sizeof(r.msg), "%s", bp_last_error());
		_exit(write(pfd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	err = -errno;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return bp_err_sys("waitpid", -errno);
	if (n < 0)
		return bp_err_sys("read(knob child)", err);
	if (n != (ssize_t)sizeof(r))
		return bp_err_set(-EIO, "netns %s: the sysfs child died (status 0x%x)", nsname, status);
	if (r.rc < 0)
		return bp_err_set(r.rc, "netns %s: %s", nsname, r.msg);
	*out = r;
	return r.rc;
}

static int knob_fn(const struct knob_job *job, struct knob_reply *r)
{
	return job->set ? bp_dev_set_knob(job->dev, job->knob, job->value)
			: bp_dev_get_knob(job->dev, job->knob, &r->value);
}

int bp_netns_dev_get_knob(const char *nsname, const char *dev, const char *knob,
			  uint64_t *value)
{
	struct knob_job job = { .dev = dev, .knob = knob, .fn = knob_fn };
	struct knob_reply r;
	int rc = netns_child(nsname, &job, &r);

	if (!rc)
		*value = r.value;
	return rc;
}

int bp_netns_dev_set_knob(const char *nsname, const char *dev, const char *knob,
			  uint64_t value)
{
	struct knob_job job = { .dev = dev, .knob = knob, .set = true, .value = value, .fn = knob_fn };
	struct knob_reply r;

	return netns_child(nsname, &job, &r);
}

static int xps_fn(const struct knob_job *job, struct knob_reply *r)
{
	if (job->set)
		return bp_xps_set_symmetric(job->dev, job->queues);
	return bp_xps_read(job->dev, r->map, BP_TESTBED_MAX_QUEUES);
}

int bp_netns_xps_set_symmetric(const char *nsname, const char *dev, int queues)
{
	struct knob_job job = { .dev = dev, .set = true, .queues = queues, .fn = xps_fn };
	struct knob_reply r;

	return netns_child(nsname, &job, &r);
}

int bp_netns_xps_read(const char *nsname, const char *dev, int *rxq_of_tx, int max)
{
	struct knob_job job = { .dev = dev, .fn = xps_fn };
	struct knob_reply r;
	int n = netns_child(nsname, &job, &r);

	for (int i = 0; i < n && i < max; i++)
		rxq_of_tx[i] = r.map[i];
	return n;
}
