/* SPDX-License-Identifier: MIT */
/* A device's GRO and TSO state by the ethtool ioctl (contract in tools/harness/devfeat.h). */
#include "tools/harness/devfeat.h"
#include "tools/common/emit.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* one_feature - ethtool get command cmd on dev through socket fd. */
static enum diag_tri one_feature(int fd, const char *dev, uint32_t cmd)
{
	struct ethtool_value v = { .cmd = cmd };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&v;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		return DIAG_UNKNOWN;
	return v.data ? DIAG_ON : DIAG_OFF;
}

void devfeat_read(const char *dev, enum diag_tri *gro, enum diag_tri *tso)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	*gro = *tso = DIAG_UNKNOWN;
	if (fd < 0 || !dev || !dev[0] || strlen(dev) >= IFNAMSIZ) {
		if (fd >= 0)
			close(fd);
		return;
	}
	*gro = one_feature(fd, dev, ETHTOOL_GGRO);
	*tso = one_feature(fd, dev, ETHTOOL_GTSO);
	close(fd);
}

const char *devfeat_text(enum diag_tri t)
{
	return t == DIAG_ON ? "on" : t == DIAG_OFF ? "off" : "unknown";
}

void devfeat_emit(struct emit *e, const char *key, enum diag_tri t)
{
	if (t == DIAG_UNKNOWN)
		em_null(e, key);
	else
		em_bool(e, key, t == DIAG_ON);
}
