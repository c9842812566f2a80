/* SPDX-License-Identifier: MIT */
/*
 * The path report (include/busypoll/nic.h): everything on this host between a
 * device's wire and a socket, each part from the kernel interface that owns it:
 *
 *   driver, channels, coalescing   ethtool (net/ethtool_nl.c)
 *   queues and the NAPI of each    netdev queue-get (Linux 6.8)
 *   NAPI instances and settings    netdev napi-get (net/napi_nl.c)
 *   IRQs                           the NAPI's irq attribute, and the device's MSI
 *                                  vectors in sysfs (msi_irqs of it or its bus parent,
 *                                  as virtio_net's PCI device holds them), or its
 *                                  legacy irq
 *   IRQ names and affinity         /proc/interrupts, /proc/irq/N/smp_affinity_list and effective_affinity_list
 *
 * Netlink answers for the calling thread's namespace; /sys for the namespace it was
 * mounted in, so the sysfs part is used only when /sys/class/net/DEV/ifindex is the
 * netlink ifindex of DEV. /proc/irq and /proc/interrupts are global.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/nic.h>

#include "base/compat.h"
#include "base/error.h"
#include "net/genl.h"

static const char *const section_names[BP_PATH_SECTIONS] = {
	[BP_PATH_DRIVER] = "driver", [BP_PATH_CHANNELS] = "channels",
	[BP_PATH_COALESCE] = "coalesce", [BP_PATH_QUEUES] = "queues",
	[BP_PATH_NAPI] = "napi", [BP_PATH_IRQS] = "irqs",
};

const char *bp_path_section_name(int section)
{
	return section >= 0 && section < BP_PATH_SECTIONS ? section_names[section] : NULL;
}

/* Record a section's result: rc, and bp_last_error() as its reason when it failed. */
static void section(struct bp_path_report *r, int s, int rc)
{
	r->err[s] = rc < 0 ? rc : 0;
	if (rc < 0)
		snprintf(r->why[s], sizeof(r->why[s]), "%s", bp_last_error());
}

__attribute__((format(printf, 3, 4)))
static void note(struct bp_path_report *r, int s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why[s], sizeof(r->why[s]), fmt, ap);
	va_end(ap);
}

/* ---- small file reads ---- */

/* The first line of path into buf (newline dropped). 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* ---- queues: netdev queue-get ---- */

struct queue_collect {
	struct bp_path_report *r;
	uint32_t ifindex;
};

static int queue_cb(const struct nlmsghdr *nlh, void *data)
{
	struct queue_collect *c = data;
	struct bp_path_queue q = { 0 };
	const struct nlattr *a;
	uint32_t ifindex = 0, type = UINT32_MAX;
	bool have_id = false;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_validate(a, MNL_TYPE_U32))
			continue;
		switch (mnl_attr_get_type(a)) {
		case BP_NETDEV_A_QUEUE_ID:
			q.id = mnl_attr_get_u32(a);
			have_id = true;
			break;
		case BP_NETDEV_A_QUEUE_IFINDEX:
			ifindex = mnl_attr_get_u32(a);
			break;
		case BP_NETDEV_A_QUEUE_TYPE:
			type = mnl_attr_get_u32(a);
			break;
		case BP_NETDEV_A_QUEUE_NAPI_ID:
			q.napi_id = mnl_attr_get_u32(a);
			break;
		}
	}
	if (!have_id || ifindex != c->ifindex ||
	    (type != BP_NETDEV_QUEUE_TYPE_RX && type != BP_NETDEV_QUEUE_TYPE_TX))
		return MNL_CB_OK;
	q.tx = type == BP_NETDEV_QUEUE_TYPE_TX;
	if (q.tx)
		c->r->tx_queues++;
	else
		c->r->rx_queues++;
	if (c->r->n_queues < BP_PATH_MAX)
		c->r->queue[c->r->n_queues++] = q;
	return MNL_CB_OK;
}

static int list_queues(struct bp_path_report *r)
{
	static struct bp_genl_family_cache cache;
	char req[128] __attribute__((aligned(4)));
	struct queue_collect c = { .r = r, .ifindex = r->ifindex };
	struct bp_genl g = { 0 };
	struct bp_genl_family f;
	struct nlmsghdr *nlh;
	int rc = bp_genl_open(&g);

	if (rc)
		return rc;
	rc = bp_genl_family(&g, BP_NETDEV_FAMILY_NAME, &cache, &f);
	if (!rc && !bp_genl_has_op(&f, BP_NETDEV_CMD_QUEUE_GET))
		rc = bp_err_set(-EOPNOTSUPP, "queue-get: this kernel lacks it (Linux 6.8)");
	for (int tries = 0; !rc && tries < 3; tries++) {
		memset(req, 0, sizeof(req));
		nlh = bp_genl_msg(req, f.id, NLM_F_DUMP, BP_NETDEV_CMD_QUEUE_GET, 1);
		mnl_attr_put_u32(nlh, BP_NETDEV_A_QUEUE_IFINDEX, r->ifindex);
		r->n_queues = r->rx_queues = r->tx_queues = 0;
		rc = bp_genl_talk(&g, nlh, queue_cb, &c, NULL, "queue-get");
		if (rc != -EINTR) /* a dump that raced with a change is redone */
			break;
		rc = 0;
	}
	bp_genl_close(&g);
	return rc;
}

/* ---- IRQs ---- */

static void add_irq(struct bp_path_report *r, int irq, uint32_t napi_id)
{
	for (size_t i = 0; i < r->n_irqs; i++)
		if (r->irq[i].irq == irq) {
			if (napi_id)
				r->irq[i].napi_id = napi_id;
			return;
		}
	if (irq <= 0 || r->n_irqs == BP_PATH_MAX)
		return;
	r->irq[r->n_irqs++] = (struct bp_path_irq){ .irq = irq, .napi_id = napi_id };
}

/* The MSI vectors in dir/msi_irqs (one file per vector, named by its number). */
static int add_msi_irqs(struct bp_path_report *r, const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/msi_irqs", dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long irq = strtol(e->d_name, &end, 10);

		if (e->d_name[0] != '.' && !*end && irq > 0 && irq < INT32_MAX) {
			add_irq(r, (int)irq, 0);
			n++;
		}
	}
	closedir(d);
	return n;
}

/*
 * The device's own vectors from sysfs, if /sys shows dev's namespace: msi_irqs of the
 * device or of its bus parent (virtio_net: the virtio device's PCI function), else its
 * legacy "irq". Returns how many, or -errno; a note in the IRQ section says why none.
 */
static int sysfs_irqs(struct bp_path_report *r)
{
	char path[256], line[32], dev[256];
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", r->dev);
	if (read_line(path, line, sizeof(line)) || strtoul(line, NULL, 10) != r->ifindex) {
		note(r, BP_PATH_IRQS, "sysfs shows another network namespace than %s's: run in "
		     "its namespace (ip netns exec) to see its interrupts", r->dev);
		return -EXDEV;
	}
	snprintf(dev, sizeof(dev), "/sys/class/net/%s/device", r->dev);
	if (access(dev, F_OK) != 0)
		return 0; /* a virtual device: no bus device, no vectors */
	if ((n = add_msi_irqs(r, dev)) > 0)
		return n;
	strcat(dev, "/..");
	if ((n = add_msi_irqs(r, dev)) > 0)
		return n;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/irq", r->dev);
	if (read_line(path, line, sizeof(line)) == 0 && atoi(line) > 0) {
		add_irq(r, atoi(line), 0);
		return 1;
	}
	return 0;
}

/* Names from /proc/interrupts ("  38:  0  2926  PCI-MSIX-0000:00:03.0  1-edge  virtio2-input.0"). */
static void irq_names(struct bp_path_report *r)
{
	FILE *f = fopen("/proc/interrupts", "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *end, *last;
		long irq = strtol(line, &end, 10);

		if (end == line || *end != ':')
			continue;
		for (size_t i = 0; i < r->n_irqs; i++) {
			if (r->irq[i].irq != irq)
				continue;
			line[strcspn(line, "\n")] = '\0';
			last = strrchr(line, ' ');
			snprintf(r->irq[i].name, sizeof(r->irq[i].name), "%s", last ? last + 1 : "");
		}
	}
	free(line);
	fclose(f);
}

static int cmp_irq(const void *a, const void *b)
{
	return ((const struct bp_path_irq *)a)->irq - ((const struct bp_path_irq *)b)->irq;
}

static void list_irqs(struct bp_path_report *r, bool virtual_dev)
{
	char path[96];
	int rc;

	for (size_t i = 0; i < r->n_napi && i < BP_PATH_MAX; i++)
		if ((r->napi[i].has & BP_NAPI_HAS_IRQ) && r->napi[i].irq > 0)
			add_irq(r, r->napi[i].irq, r->napi[i].id);
	rc = sysfs_irqs(r);
	qsort(r->irq, r->n_irqs, sizeof(r->irq[0]), cmp_irq);
	for (size_t i = 0; i < r->n_irqs; i++) {
		struct bp_path_irq *q = &r->irq[i];

		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", q->irq);
		read_line(path, q->affinity, sizeof(q->affinity));
		snprintf(path, sizeof(path), "/proc/irq/%d/effective_affinity_list", q->irq);
		read_line(path, q->effective, sizeof(q->effective));
	}
	irq_names(r);
	if (r->n_irqs || rc == -EXDEV)
		return;
	if (virtual_dev)
		note(r, BP_PATH_IRQS, "no IRQs: %s is a virtual device (%s%s): no hardware "
		     "interrupts it; its receive work runs in softirq on the sending CPU", r->dev,
		     r->driver.driver[0] ? "driver " : "no driver", r->driver.driver);
	else
		note(r, BP_PATH_IRQS, "no IRQs: neither NAPI nor sysfs names one for %s", r->dev);
}

/* ---- the report ---- */

int bp_path_report(const char *dev, struct bp_path_report *r)
{
	char path[96];
	int n;

	memset(r, 0, sizeof(*r));
	if (!dev || !*dev || strlen(dev) >= sizeof(r->dev) || strchr(dev, '/'))
		return bp_err_set(-EINVAL, "path: '%s' is not a device name", dev ? dev : "(null)");
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	r->ifindex = if_nametoindex(dev);
	if (!r->ifindex)
		return bp_err_set(-ENODEV, "path %s: no such device in this network namespace", dev);

	section(r, BP_PATH_DRIVER, bp_nic_driver(dev, &r->driver));
	section(r, BP_PATH_CHANNELS, bp_nic_channels_get(dev, &r->channels));
	section(r, BP_PATH_COALESCE, bp_nic_coalesce_get(dev, &r->coalesce));
	section(r, BP_PATH_QUEUES, list_queues(r));

	n = bp_napi_list(r->ifindex, r->napi, BP_PATH_MAX);
	section(r, BP_PATH_NAPI, n);
	r->n_napi = n > 0 ? (size_t)n : 0;
	if (n == 0)
		note(r, BP_PATH_NAPI, "no NAPI instances on %s now (loopback has none; a veth "
		     "only with GRO or XDP on)", dev);

	/* virtual: no bus device behind it, as sysfs shows when it is our namespace's */
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", dev);
	list_irqs(r, access(path, F_OK) != 0);
	return 0;
}
