/* SPDX-License-Identifier: MIT */
/*
 * The NIC settings and the path report live, as root, on a veth test bed with 4
 * queues per end (the unit test holds the messages against captures; this one
 * holds the calls against the kernel):
 *   - veth has no interrupt coalescing: get and set say so, naming the driver;
 *   - channels: read 4+4, set rx to 2 and the kernel's own evidence follows (the
 *     device's NAPI instances go from 4 to 2, queue-get counts 2 rx queues), a count
 *     above the maximum or a kind veth lacks is refused naming it, put back to 4;
 *   - the path report of the bed's end from a thread inside its namespace: driver,
 *     channels, queues, NAPIs, and the IRQ section saying sysfs shows another
 *     namespace (as it does for a thread that only setns()'d);
 *   - a device with a bus behind it in this namespace (eth0 on a VM), when there
 *     is one: the report's IRQs are exactly its MSI vectors in sysfs, each named as
 *     in /proc/interrupts, with an affinity list. Read only.
 * Not root: skipped (77).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/nic.h>

#include "bpt_testbed.h"
#include "bptest.h"

#define CHECK_RC(expr)                                                                \
	do {                                                                          \
		int rc_ = (expr);                                                     \
		BPT_CHECK(rc_ == 0, "%d (%s)", rc_, bp_last_error());                 \
	} while (0)
#define CHECK_ERR(expr, want, text)                                                   \
	do {                                                                          \
		int rc_ = (expr);                                                     \
		BPT_CHECK(rc_ == (want) && !strcmp(bp_last_error(), text),           \
			  "got %d \"%s\", wanted %d \"%s\"", rc_, bp_last_error(), want, text); \
	} while (0)

static int napi_count(uint32_t ifindex)
{
	struct bp_napi_info n[16];
	int rc = bp_napi_list(ifindex, n, 16);

	BPT_CHECK(rc >= 0, "napi list: %s", bp_last_error());
	return rc;
}

static void veth_coalescing(const char *dev)
{
	struct bp_nic_coalesce c = { .rx_usecs = 1, .has = BP_COAL_RX_USECS };
	char want[128];

	snprintf(want, sizeof(want), "coalesce-get %s: the veth driver has no interrupt coalescing", dev);
	CHECK_ERR(bp_nic_coalesce_get(dev, &c), -EOPNOTSUPP, want);
	BPT_CHECK(c.has == 0, "nothing reported");
	c = (struct bp_nic_coalesce){ .rx_usecs = 0, .has = BP_COAL_RX_USECS };
	snprintf(want, sizeof(want), "coalesce-set %s: the veth driver has no interrupt coalescing", dev);
	CHECK_ERR(bp_nic_coalesce_set(dev, &c), -EOPNOTSUPP, want);
	CHECK_ERR(bp_nic_coalesce_get("nosuch0", &c), -ENODEV,
		  "coalesce-get nosuch0: no such device in this network namespace");
}

static void veth_channels(const struct bp_testbed *tb)
{
	const char *dev = tb->dev[0];
	struct bp_nic_channels ch, set = { .has = 1u << BP_CHAN_RX };
	char want[128];

	CHECK_RC(bp_nic_channels_get(dev, &ch));
	BPT_CHECK(ch.has == (1u << BP_CHAN_RX | 1u << BP_CHAN_TX), "has %#x", ch.has);
	BPT_CHECK(ch.max[BP_CHAN_RX] == 4 && ch.count[BP_CHAN_RX] == 4, "rx %u/%u",
		  ch.count[BP_CHAN_RX], ch.max[BP_CHAN_RX]);
	BPT_CHECK(ch.max[BP_CHAN_TX] == 4 && ch.count[BP_CHAN_TX] == 4, "tx %u/%u",
		  ch.count[BP_CHAN_TX], ch.max[BP_CHAN_TX]);
	BPT_CHECK(napi_count(tb->ifindex[0]) == 4, "4 NAPIs before");

	set.count[BP_CHAN_RX] = 2;
	CHECK_RC(bp_nic_channels_set(dev, &set));
	CHECK_RC(bp_nic_channels_get(dev, &ch));
	BPT_CHECK(ch.count[BP_CHAN_RX] == 2 && ch.count[BP_CHAN_TX] == 4, "rx %u tx %u",
		  ch.count[BP_CHAN_RX], ch.count[BP_CHAN_TX]);
	/* the kernel's evidence: one NAPI per rx queue in use */
	BPT_CHECK(napi_count(tb->ifindex[0]) == 2, "2 NAPIs after rx=2");

	set.count[BP_CHAN_RX] = 5;
	snprintf(want, sizeof(want), "channels-set %s rx: requested channel count exceeds maximum", dev);
	CHECK_ERR(bp_nic_channels_set(dev, &set), -EINVAL, want);
	set = (struct bp_nic_channels){ .count = { [BP_CHAN_COMBINED] = 1 },
					.has = 1u << BP_CHAN_COMBINED };
	snprintf(want, sizeof(want), "channels-set %s combined: requested channel count exceeds "
		 "maximum", dev);
	CHECK_ERR(bp_nic_channels_set(dev, &set), -EINVAL, want);
	CHECK_RC(bp_nic_channels_get(dev, &ch));
	BPT_CHECK(ch.count[BP_CHAN_RX] == 2, "refusals changed nothing");
}

static void veth_path(const struct bp_testbed *tb)
{
	static struct bp_path_report r;

	CHECK_RC(bp_path_report(tb->dev[0], &r));
	BPT_CHECK(r.ifindex == tb->ifindex[0], "ifindex %u", r.ifindex);
	BPT_CHECK(!r.err[BP_PATH_DRIVER] && !strcmp(r.driver.driver, "veth"), "driver %s: %s",
		  r.driver.driver, r.why[BP_PATH_DRIVER]);
	BPT_CHECK(!r.err[BP_PATH_CHANNELS] && r.channels.count[BP_CHAN_RX] == 2, "channels");
	BPT_CHECK(r.err[BP_PATH_COALESCE] == -EOPNOTSUPP && strstr(r.why[BP_PATH_COALESCE], "veth"),
		  "coalesce: %s", r.why[BP_PATH_COALESCE]);
	BPT_CHECK(!r.err[BP_PATH_QUEUES] && r.rx_queues == 2 && r.tx_queues == 4,
		  "queues rx %u tx %u: %s", r.rx_queues, r.tx_queues, r.why[BP_PATH_QUEUES]);
	BPT_CHECK(!r.err[BP_PATH_NAPI] && r.n_napi == 2, "napi %zu: %s", r.n_napi, r.why[BP_PATH_NAPI]);
	for (size_t i = 0; i < r.n_napi; i++)
		BPT_CHECK(r.napi[i].ifindex == tb->ifindex[0] && r.napi[i].id >= 256, "napi %u",
			  r.napi[i].id);
	/* this thread setns()'d, its /sys is still the test's: the report must not guess */
	BPT_CHECK(r.n_irqs == 0 && strstr(r.why[BP_PATH_IRQS], "sysfs shows another network namespace"),
		  "irqs %zu: %s", r.n_irqs, r.why[BP_PATH_IRQS]);
	CHECK_ERR(bp_path_report("nosuch0", &r), -ENODEV,
		  "path nosuch0: no such device in this network namespace");
}

/* A device of this namespace with MSI vectors in sysfs, or NULL. */
static const char *bus_device(char *dir, size_t len)
{
	static char name[256];
	struct dirent *e;
	DIR *d = opendir("/sys/class/net");

	while (d && (e = readdir(d))) {
		const char *sub[] = { "device/msi_irqs", "device/../msi_irqs" };

		for (int i = 0; i < 2 && e->d_name[0] != '.'; i++) {
			snprintf(dir, len, "/sys/class/net/%s/%s", e->d_name, sub[i]);
			if (access(dir, F_OK) == 0) {
				snprintf(name, sizeof(name), "%s", e->d_name);
				closedir(d);
				return name;
			}
		}
	}
	if (d)
		closedir(d);
	return NULL;
}

static void host_path(void)
{
	static struct bp_path_report r;
	char dir[512], line[512];
	struct dirent *e;
	const char *dev = bus_device(dir, sizeof(dir));
	size_t n = 0;
	DIR *d;

	if (!dev) {
		printf("no device with MSI vectors here: the IRQ part against sysfs not checked\n");
		return;
	}
	CHECK_RC(bp_path_report(dev, &r));
	BPT_CHECK(!r.err[BP_PATH_DRIVER] && r.driver.driver[0], "%s driver: %s", dev,
		  r.why[BP_PATH_DRIVER]);
	d = opendir(dir);
	BPT_CHECK(d, "%s", dir);
	while ((e = readdir(d))) {
		int irq = atoi(e->d_name);
		bool found = false;

		if (irq <= 0)
			continue;
		n++;
		for (size_t i = 0; i < r.n_irqs; i++) {
			if (r.irq[i].irq != irq)
				continue;
			found = true;
			BPT_CHECK(r.irq[i].affinity[0], "irq %d: no affinity", irq);
			BPT_CHECK(r.irq[i].name[0], "irq %d: no name", irq);
			/* the name is the last word of its /proc/interrupts line */
			snprintf(line, sizeof(line), "grep -qE '^ *%d:.* %s$' /proc/interrupts", irq,
				 r.irq[i].name);
			BPT_CHECK(system(line) == 0, "irq %d named %s", irq, r.irq[i].name);
		}
		BPT_CHECK(found, "%s: irq %d of %s missing from the report", dev, irq, dir);
	}
	closedir(d);
	BPT_CHECK(n == r.n_irqs, "%s: %zu vectors in sysfs, %zu in the report", dev, n, r.n_irqs);
	printf("%s (%s): %zu IRQs, as sysfs lists them\n", dev, r.driver.driver, r.n_irqs);
}

int main(void)
{
	struct bp_testbed tb;
	struct bp_nic_channels back = { .count = { [BP_CHAN_RX] = 4 }, .has = 1u << BP_CHAN_RX };
	struct bp_nic_driver drv;
	char name[32];
	int home;

	bpt_require_root("test_nic_veth");
	bpt_testbed_name("nic", name, sizeof(name));
	bpt_testbed_guard(name);
	CHECK_RC(bp_testbed_up(&tb, name, 4, false));

	host_path(); /* before entering the bed: this namespace's devices */

	CHECK_RC(bp_netns_save(&home));
	CHECK_RC(bp_testbed_enter(&tb, 0));
	CHECK_RC(bp_nic_driver(tb.dev[0], &drv));
	BPT_CHECK(!strcmp(drv.driver, "veth"), "driver %s", drv.driver);
	veth_coalescing(tb.dev[0]);
	veth_channels(&tb);
	veth_path(&tb);
	CHECK_RC(bp_nic_channels_set(tb.dev[0], &back));
	BPT_CHECK(napi_count(tb.ifindex[0]) == 4, "4 NAPIs again");
	CHECK_RC(bp_netns_restore(home));

	CHECK_RC(bp_testbed_down(&tb));
	printf("ok\n");
	return 0;
}
