/* SPDX-License-Identifier: MIT */
/*
 * The veth test bed: two namespaces, one veth pair with GRO on (a NAPI per receive
 * queue), a private /30 inside the namespaces. Built with `ip` and `ethtool`
 * exactly as a person would type them, so a failure reads the same as it
 * would on the command line; removed natively so that removal needs no helper
 * program and works from any exit path.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <busypoll/napi.h>
#include "tools/bed/testbed.h"

#include "base/error.h"
#include "tools/bed/exec.h"

#define NETNS_DIR "/run/netns"

static const char *const dev_names[2] = { "bpva", "bpvb" };

static bool valid_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > BP_TESTBED_NAME_MAX)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return true;
}

/* FNV-1a: stable across runs and builds, so a bed's addresses can be predicted. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* Names and addresses of bed NAME; touches nothing. */
static int describe(struct bp_testbed *tb, const char *name)
{
	uint32_t h;

	memset(tb, 0, sizeof(*tb));
	if (!valid_name(name))
		return bp_err_set(-EINVAL, "testbed: bad name '%s' (1..%d of A-Z a-z 0-9 _ -)",
				  name ? name : "(null)", BP_TESTBED_NAME_MAX);
	h = name_hash(name);
	snprintf(tb->name, sizeof(tb->name), "%s", name);
	for (int i = 0; i < 2; i++) {
		snprintf(tb->ns[i], sizeof(tb->ns[i]), "bp-%s-%c", name, 'a' + i);
		snprintf(tb->dev[i], sizeof(tb->dev[i]), "%s", dev_names[i]);
		/* 10.X.Y.0/30: .1 and .2 are the two ends */
		snprintf(tb->addr[i], sizeof(tb->addr[i]), "10.%u.%u.%d", (h >> 8) & 0xff,
			 h & 0xff, i + 1);
	}
	return 0;
}

static bool ns_exists(const char *ns)
{
	char path[128];

	snprintf(path, sizeof(path), NETNS_DIR "/%s", ns);
	return access(path, F_OK) == 0;
}

/* What `ip netns del` does: unmount the namespace's bind mount, remove the file. */
static int ns_delete(const char *ns)
{
	char path[128];
	int err = 0;

	snprintf(path, sizeof(path), NETNS_DIR "/%s", ns);
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL) /* EINVAL: not a mount */
		err = bp_err_set(-errno, "umount2(%s): %s", path, strerror(errno));
	if (unlink(path) < 0 && !err)
		err = bp_err_set(-errno, "unlink(%s): %s", path, strerror(errno));
	return err;
}

/* ifindex of dev inside namespace ns, from this thread. */
static int ns_ifindex(const char *ns, const char *dev, uint32_t *ifindex)
{
	int saved, rc;

	if ((rc = bp_netns_save(&saved)))
		return rc;
	rc = bp_netns_enter(ns);
	if (!rc) {
		*ifindex = if_nametoindex(dev);
		if (!*ifindex)
			rc = bp_err_set(-errno, "if_nametoindex(%s) in %s: %s", dev, ns,
					strerror(errno));
	}
	int rc2 = bp_netns_restore(saved);
	return rc ? rc : rc2;
}

#define RUN(...) bp_run((const char *const[]){ __VA_ARGS__, NULL })

static int build(struct bp_testbed *tb, bool made[2])
{
	char q[16], cidr[2][INET_ADDRSTRLEN + 4];
	int rc;

	snprintf(q, sizeof(q), "%d", tb->queues);
	for (int i = 0; i < 2; i++) {
		if ((rc = RUN("ip", "netns", "add", tb->ns[i])))
			return rc;
		made[i] = true;
	}
	/* the peer is created straight inside ns[1]: no name clash in ns[0] or the host */
	if (tb->queues > 1)
		rc = RUN("ip", "-n", tb->ns[0], "link", "add", tb->dev[0], "numtxqueues", q,
			 "numrxqueues", q, "type", "veth", "peer", "name", tb->dev[1],
			 "numtxqueues", q, "numrxqueues", q, "netns", tb->ns[1]);
	else
		rc = RUN("ip", "-n", tb->ns[0], "link", "add", tb->dev[0], "type", "veth", "peer",
			 "name", tb->dev[1], "netns", tb->ns[1]);
	if (rc)
		return rc;
	for (int i = 0; i < 2; i++) {
		snprintf(cidr[i], sizeof(cidr[i]), "%s/%d", tb->addr[i], BP_TESTBED_PREFIX_LEN);
		if ((rc = RUN("ip", "-n", tb->ns[i], "addr", "add", cidr[i], "dev", tb->dev[i])) ||
		    (rc = RUN("ip", "-n", tb->ns[i], "link", "set", "lo", "up")))
			return rc;
	}
	/* GRO on is what makes veth run NAPI; TSO off keeps segments MTU-sized, like a NIC */
	for (int i = 0; i < 2; i++)
		if ((rc = RUN("ip", "netns", "exec", tb->ns[i], "ethtool", "-K", tb->dev[i], "gro",
			      "on", "tso", "off")))
			return rc;
	for (int i = 0; i < 2; i++)
		if ((rc = RUN("ip", "-n", tb->ns[i], "link", "set", tb->dev[i], "up")))
			return rc;
	/* only now: the kernel refuses threaded before the NAPIs exist (GRO + link up) */
	if (tb->threaded)
		for (int i = 0; i < 2; i++)
			if ((rc = bp_netns_dev_set_knob(tb->ns[i], tb->dev[i], "threaded", 1)))
				return rc;
	/* symmetric queuing: a reply leaves on the queue its request came in on */
	if (tb->queues > 1)
		for (int i = 0; i < 2; i++)
			if ((rc = bp_netns_xps_set_symmetric(tb->ns[i], tb->dev[i], tb->queues)))
				return rc;
	for (int i = 0; i < 2; i++)
		if ((rc = ns_ifindex(tb->ns[i], tb->dev[i], &tb->ifindex[i])))
			return rc;
	return 0;
}

int bp_testbed_up(struct bp_testbed *tb, const char *name, int queues, bool threaded)
{
	bool made[2] = { false, false };
	int rc;

	if (geteuid() != 0)
		return bp_err_set(-EPERM, "testbed: run as root (it creates network namespaces)");
	if ((rc = describe(tb, name)))
		return rc;
	if (queues < 1 || queues > BP_TESTBED_MAX_QUEUES)
		return bp_err_set(-EINVAL, "testbed %s: queues %d is outside 1..%d", name, queues,
				  BP_TESTBED_MAX_QUEUES);
	tb->queues = queues;
	tb->threaded = threaded;
	for (int i = 0; i < 2; i++)
		if (ns_exists(tb->ns[i]))
			return bp_err_set(-EEXIST, "testbed %s: namespace %s already exists "
					  "(remove it with bp_testbed_down_by_name or "
					  "`ip netns del %s`)", name, tb->ns[i], tb->ns[i]);
	rc = build(tb, made);
	if (rc) {
		/* `ip netns add` refuses an existing name (O_EXCL), so made[] is only ours */
		char why[256];
		snprintf(why, sizeof(why), "%s", bp_last_error());
		for (int i = 0; i < 2; i++)
			if (made[i])
				ns_delete(tb->ns[i]);
		bp_err_set(rc, "testbed %s: %s", name, why);
	}
	return rc;
}

int bp_testbed_open(struct bp_testbed *tb, const char *name)
{
	uint32_t ids[BP_TESTBED_MAX_QUEUES];
	uint64_t threaded = 0;
	int rc, n;

	if ((rc = describe(tb, name)))
		return rc;
	for (int i = 0; i < 2; i++)
		if (!ns_exists(tb->ns[i]))
			return bp_err_set(-ENOENT, "testbed %s: no namespace %s", name, tb->ns[i]);
	for (int i = 0; i < 2; i++)
		if ((rc = ns_ifindex(tb->ns[i], tb->dev[i], &tb->ifindex[i])))
			return rc;
	n = bp_testbed_napi_ids(tb, 1, ids, BP_TESTBED_MAX_QUEUES);
	if (n < 0)
		return n;
	tb->queues = n;
	if ((rc = bp_netns_dev_get_knob(tb->ns[1], tb->dev[1], "threaded", &threaded)))
		return rc;
	tb->threaded = threaded != 0;
	return 0;
}

static int down_names(const char *name, const char ns[2][48])
{
	int rc = 0, found = 0;

	for (int i = 0; i < 2; i++) {
		if (!ns_exists(ns[i]))
			continue;
		found++;
		int r = ns_delete(ns[i]);
		if (r && !rc)
			rc = r;
	}
	if (!found)
		return bp_err_set(-ENOENT, "testbed %s: no namespace %s or %s", name, ns[0], ns[1]);
	return rc;
}

int bp_testbed_down(const struct bp_testbed *tb)
{
	struct bp_testbed named;
	int rc;

	/* rebuild the names from tb->name: never delete a namespace it does not name */
	if ((rc = describe(&named, tb->name)))
		return rc;
	return down_names(named.name, (const char(*)[48])named.ns);
}

int bp_testbed_down_by_name(const char *name)
{
	struct bp_testbed tb;
	int rc;

	if ((rc = describe(&tb, name)))
		return rc;
	return down_names(tb.name, (const char(*)[48])tb.ns);
}

bool bp_testbed_exists(const char *name)
{
	struct bp_testbed tb;

	if (describe(&tb, name))
		return false;
	return ns_exists(tb.ns[0]) || ns_exists(tb.ns[1]);
}

int bp_testbed_enter(const struct bp_testbed *tb, int side)
{
	if (side != 0 && side != 1)
		return bp_err_set(-EINVAL, "testbed %s: side %d is not 0 or 1", tb->name, side);
	return bp_netns_enter(tb->ns[side]);
}

int bp_testbed_napi_ids(const struct bp_testbed *tb, int side, uint32_t *ids, size_t max)
{
	struct bp_napi_info *info = NULL;
	int saved, rc, rc2;

	if (side != 0 && side != 1)
		return bp_err_set(-EINVAL, "testbed %s: side %d is not 0 or 1", tb->name, side);
	if (max && !(info = calloc(max, sizeof(*info))))
		return bp_err_set(-ENOMEM, "testbed %s: out of memory", tb->name);
	if ((rc = bp_netns_save(&saved))) {
		free(info);
		return rc;
	}
	rc = bp_netns_enter(tb->ns[side]);
	if (!rc)
		rc = bp_napi_list(tb->ifindex[side], info, max);
	rc2 = bp_netns_restore(saved);
	for (int i = 0; rc > 0 && i < rc && (size_t)i < max; i++)
		ids[i] = info[i].id;
	free(info);
	return rc < 0 ? rc : rc2 ? rc2 : rc;
}
