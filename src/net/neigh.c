/* SPDX-License-Identifier: MIT */
/* Devices, MACs and neighbours for the AF_XDP path (contract in net/neigh.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "base/error.h"
#include "net/neigh.h"

/* ip_of - the address bytes of a and their length (4 or 16), NULL for another family. */
static const void *ip_of(const struct sockaddr_storage *a, size_t *len)
{
	if (a->ss_family == AF_INET) {
		*len = 4;
		return &((const struct sockaddr_in *)a)->sin_addr;
	}
	if (a->ss_family == AF_INET6) {
		*len = 16;
		return &((const struct sockaddr_in6 *)a)->sin6_addr;
	}
	return NULL;
}

int bp_dev_of_addr(const struct sockaddr_storage *a, int *ifindex, char name[IF_NAMESIZE])
{
	struct ifaddrs *list, *i;
	const void *want;
	size_t len;

	want = ip_of(a, &len);
	if (!want)
		return -EAFNOSUPPORT;
	if (getifaddrs(&list))
		return -errno;
	for (i = list; i; i = i->ifa_next) {
		const void *have;
		size_t hl;

		if (!i->ifa_addr || i->ifa_addr->sa_family != a->ss_family)
			continue;
		have = ip_of((const struct sockaddr_storage *)i->ifa_addr, &hl);
		if (have && hl == len && !memcmp(have, want, len)) {
			snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
			*ifindex = (int)if_nametoindex(i->ifa_name);
			freeifaddrs(list);
			return *ifindex ? 0 : -ENODEV;
		}
	}
	freeifaddrs(list);
	return -EADDRNOTAVAIL;
}

int bp_dev_mac(int ifindex, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (fd < 0)
		return -errno;
	if (!if_indextoname((unsigned)ifindex, ifr.ifr_name) || ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		ret = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return ret;
}

/* ---- rtnetlink: the route's next hop, then its neighbour entry ---- */

struct nl_ask {
	int family;
	const void *ip;          /* the address looked for (route: its destination; neigh: the entry) */
	size_t iplen;
	int ifindex;
	/* answers */
	bool found;
	int oif;
	uint8_t gw[16];
	bool has_gw;
	uint8_t mac[6];
	uint16_t state;
};

static int route_attr(const struct nlattr *a, void *data)
{
	struct nl_ask *q = data;

	if (mnl_attr_get_type(a) == RTA_OIF && !mnl_attr_validate(a, MNL_TYPE_U32))
		q->oif = (int)mnl_attr_get_u32(a);
	if (mnl_attr_get_type(a) == RTA_GATEWAY && mnl_attr_get_payload_len(a) == q->iplen) {
		memcpy(q->gw, mnl_attr_get_payload(a), q->iplen);
		q->has_gw = true;
	}
	return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_ask *q = data;

	q->found = true;
	mnl_attr_parse(nlh, sizeof(struct rtmsg), route_attr, q);
	return MNL_CB_OK;
}

struct neigh_attrs {
	const void *dst, *lladdr;
	size_t dlen, llen;
};

static int neigh_attr(const struct nlattr *a, void *data)
{
	struct neigh_attrs *n = data;

	if (mnl_attr_get_type(a) == NDA_DST) {
		n->dst = mnl_attr_get_payload(a);
		n->dlen = mnl_attr_get_payload_len(a);
	} else if (mnl_attr_get_type(a) == NDA_LLADDR) {
		n->lladdr = mnl_attr_get_payload(a);
		n->llen = mnl_attr_get_payload_len(a);
	}
	return MNL_CB_OK;
}

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	struct nl_ask *q = data;
	struct neigh_attrs n = { 0 };

	if (nd->ndm_ifindex != q->ifindex || nd->ndm_family != q->family)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*nd), neigh_attr, &n);
	if (n.dst && n.dlen == q->iplen && !memcmp(n.dst, q->ip, q->iplen) && n.lladdr && n.llen == 6 &&
	    (nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP))) {
		memcpy(q->mac, n.lladdr, 6);
		q->state = nd->ndm_state;
		q->found = true;
	}
	return MNL_CB_OK;
}

/* nl_talk - one rtnetlink request and its replies through cb. 0 or -errno. */
static int nl_talk(struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = req->nlmsg_seq, portid;
	int ret = 0;
	ssize_t n;

	struct timeval tv = { .tv_sec = 1 }; /* the kernel answers at once: never wait long */

	if (!nl)
		return -errno;
	(void)setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 || mnl_socket_sendto(nl, req, req->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	while ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
		if (ret <= MNL_CB_STOP)
			break;
	}
	ret = ret < 0 ? -errno : 0;
out:
	mnl_socket_close(nl);
	return ret;
}

/* next_hop - the route to q->ip: its device into q->oif, its gateway (if any) into q->gw. */
static int next_hop(struct nl_ask *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rt;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK; /* the ack ends the replies */
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtm_family = (unsigned char)q->family;
	rt->rtm_dst_len = (unsigned char)(q->iplen * 8);
	mnl_attr_put(nlh, RTA_DST, q->iplen, q->ip);
	return nl_talk(nlh, route_cb, q);
}

/* neigh_lookup - the neighbour entry of q->ip on q->ifindex into q->mac (q->found). */
static int neigh_lookup(struct nl_ask *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = (uint8_t)q->family;
	nd->ndm_ifindex = q->ifindex;
	q->found = false;
	return nl_talk(nlh, neigh_cb, q);
}

/* poke - one datagram to the next hop's discard port: the kernel resolves its MAC to send it. */
static void poke(const struct nl_ask *q)
{
	struct sockaddr_storage to = { 0 };
	socklen_t len;
	int fd = socket(q->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (q->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&to;

		s->sin_family = AF_INET;
		s->sin_port = htons(9);
		memcpy(&s->sin_addr, q->ip, 4);
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&to;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(9);
		memcpy(&s->sin6_addr, q->ip, 16);
		len = sizeof(*s);
	}
	(void)sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&to, len);
	close(fd);
}

int bp_neigh_mac(int ifindex, const struct sockaddr_storage *peer, uint8_t mac[6], int timeout_ms)
{
	struct nl_ask q = { .family = peer->ss_family, .ifindex = ifindex };
	char dev[IF_NAMESIZE] = "?", text[INET6_ADDRSTRLEN] = "?";
	int ret;

	q.ip = ip_of(peer, &q.iplen);
	if (!q.ip)
		return bp_err_set(-EAFNOSUPPORT, "xsk: the peer is neither IPv4 nor IPv6");
	if_indextoname((unsigned)ifindex, dev);
	inet_ntop(q.family, q.ip, text, sizeof(text));
	ret = next_hop(&q);
	if (ret || !q.found)
		return bp_err_set(ret ? ret : -ENETUNREACH, "xsk: no route to %s: %s", text,
				  strerror(ret ? -ret : ENETUNREACH));
	if (q.oif && q.oif != ifindex)
		return bp_err_set(-ENETUNREACH, "xsk: the route to %s leaves by another device than %s", text, dev);
	if (q.has_gw) {
		q.ip = q.gw; /* frames go to the router */
		inet_ntop(q.family, q.ip, text, sizeof(text));
	}
	for (int waited = 0;; waited += 5) {
		ret = neigh_lookup(&q);
		if (ret)
			return bp_err_set(ret, "xsk: reading the neighbour table: %s", strerror(-ret));
		if (q.found) {
			memcpy(mac, q.mac, 6);
			return 0;
		}
		if (waited >= timeout_ms)
			break;
		if (waited % 500 == 0)
			poke(&q);
		usleep(5000);
	}
	return bp_err_set(-EHOSTUNREACH, "xsk: no MAC for %s on %s after %d ms (is the peer up?)", text, dev,
			  timeout_ms);
}
