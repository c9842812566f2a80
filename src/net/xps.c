/* SPDX-License-Identifier: MIT */
/*
 * Symmetric queuing: transmit packet steering by receive queue (XPS, the kernel's
 * /sys/class/net/DEV/queues/tx-N/xps_rxqs bitmaps). With tx queue N mapped to rx
 * queue N alone, a socket's replies leave on the queue its requests arrived on
 * (the kernel records each socket's rx queue), which is what the reference's
 * second half sets up on a NIC. The values are hexadecimal bitmaps in 32-bit
 * groups separated by commas ("1", "80000000", "1,00000000").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/xps.h"

#include "base/error.h"

static void xps_path(const char *dev, int txq, char *out, size_t n)
{
	snprintf(out, n, "/sys/class/net/%s/queues/tx-%d/xps_rxqs", dev, txq);
}

/* The one rx queue in a bitmap, -1 when none, -2 when several. */
static int single_bit(const char *text)
{
	char buf[256], *groups[16];
	int ng = 0, found = -1;

	snprintf(buf, sizeof(buf), "%s", text);
	buf[strcspn(buf, "\n")] = 0;
	for (char *save, *g = strtok_r(buf, ",", &save); g && ng < 16; g = strtok_r(NULL, ",", &save))
		groups[ng++] = g;
	/* the last group holds bits 0..31 */
	for (int i = 0; i < ng; i++) {
		unsigned long v = strtoul(groups[ng - 1 - i], NULL, 16);

		for (int b = 0; b < 32; b++) {
			if (!(v & (1ul << b)))
				continue;
			if (found != -1)
				return -2;
			found = i * 32 + b;
		}
	}
	return found;
}

int bp_xps_read(const char *dev, int *rxq_of_tx, int max)
{
	int n = 0;

	for (; n < max; n++) {
		char path[300], text[256];
		FILE *f;

		xps_path(dev, n, path, sizeof(path));
		f = fopen(path, "re");
		if (!f) {
			if (errno == ENOENT)
				break; /* no such tx queue: that was the last */
			return bp_err_set(-errno, "%s: %s", path, strerror(errno));
		}
		if (!fgets(text, sizeof(text), f))
			text[0] = 0;
		fclose(f);
		rxq_of_tx[n] = single_bit(text);
	}
	return n;
}

int bp_xps_set_symmetric(const char *dev, int queues)
{
	for (int q = 0; q < queues; q++) {
		char path[300], text[64];
		FILE *f;

		xps_path(dev, q, path, sizeof(path));
		if (q < 32)
			snprintf(text, sizeof(text), "%x\n", 1u << q);
		else
			snprintf(text, sizeof(text), "%x,00000000\n", 1u << (q - 32));
		f = fopen(path, "we");
		if (!f)
			return bp_err_set(-errno, "%s: %s (XPS needs a kernel with CONFIG_XPS)", path, strerror(errno));
		if (fputs(text, f) < 0 || fclose(f) != 0)
			return bp_err_set(-EIO, "write %s: %s", path, strerror(errno));
	}
	return 0;
}

bool bp_xps_format(const int *rxq_of_tx, int n, char *out, size_t len)
{
	bool symmetric = n > 0;
	size_t o = 0;

	out[0] = 0;
	for (int i = 0; i < n && o < len; i++) {
		char rx[16];

		if (rxq_of_tx[i] >= 0)
			snprintf(rx, sizeof(rx), "rx%d", rxq_of_tx[i]);
		else
			snprintf(rx, sizeof(rx), "%s", rxq_of_tx[i] == -1 ? "any" : "several");
		symmetric &= rxq_of_tx[i] == i;
		o += (size_t)snprintf(out + o, len - o, "%stx%d->%s", i ? " " : "", i, rx);
	}
	return symmetric;
}
