/* SPDX-License-Identifier: MIT */
/*
 * "HOST", "HOST:PORT", "[V6]:PORT" <-> struct sockaddr. One colon means HOST:PORT;
 * more than one without brackets is a bare IPv6 address (so "::1" works, but a port
 * with IPv6 needs brackets, as in URLs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/net.h>

#include "base/error.h"

static int parse_port(const char *text, const char *p, uint16_t *port)
{
	unsigned long v = 0;

	if (!*p)
		return bp_err_set(-EINVAL, "address '%s': empty port", text);
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return bp_err_set(-EINVAL, "address '%s': port is not a number", text);
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			return bp_err_set(-EINVAL, "address '%s': port above 65535", text);
	}
	*port = (uint16_t)v;
	return 0;
}

static int gai_to_errno(int rc)
{
	switch (rc) {
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	default:
		/* EAI_NONAME, EAI_NODATA, EAI_AGAIN, EAI_FAIL...: it does not resolve. */
		return -ENOENT;
	}
}

/*
 * Resolve host (numeric or a name). want_v6: it came in brackets, so only IPv6.
 * A name with both families gives its first IPv4 address: the test bed and the
 * servers here listen on IPv4, and glibc lists ::1 first for "localhost" on many
 * systems, which would then connect to nothing.
 */
static int resolve(const char *text, const char *host, bool want_v6, uint16_t port,
		   struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *pick = NULL;
	int rc;

	hints.ai_family = want_v6 ? AF_INET6 : AF_UNSPEC;
	if (want_v6)
		hints.ai_flags = AI_NUMERICHOST; /* brackets hold an address, never a name */
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		int err = gai_to_errno(rc);
		if (want_v6)
			return bp_err_set(-EINVAL, "address '%s': '%s' is not an IPv6 address", text, host);
		return bp_err_set(err, "getaddrinfo(%s): %s", host, gai_strerror(rc));
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			pick = ai;
			break;
		}
		if (ai->ai_family == AF_INET6 && !pick)
			pick = ai;
	}
	if (!pick || pick->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return bp_err_set(-ENOENT, "getaddrinfo(%s): no IPv4 or IPv6 address", host);
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	*len = pick->ai_addrlen;
	freeaddrinfo(res);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	return 0;
}

int bp_parse_addr(const char *text, uint16_t default_port, struct sockaddr_storage *ss,
		  socklen_t *len)
{
	char host[NI_MAXHOST];
	const char *host_start = text, *port_text = NULL;
	uint16_t port = default_port;
	bool bracket = false;
	size_t hlen;
	int rc;

	if (!text || !*text)
		return bp_err_set(-EINVAL, "address: empty");
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close)
			return bp_err_set(-EINVAL, "address '%s': missing ']'", text);
		if (close[1] == ':')
			port_text = close + 2;
		else if (close[1])
			return bp_err_set(-EINVAL, "address '%s': expected ':PORT' after ']'", text);
		host_start = text + 1;
		hlen = (size_t)(close - host_start);
		bracket = true;
	} else {
		const char *colon = strchr(text, ':');
		if (colon && !strchr(colon + 1, ':')) {
			port_text = colon + 1;
			hlen = (size_t)(colon - text);
		} else {
			hlen = strlen(text); /* no colon, or a bare IPv6 address */
		}
	}
	if (hlen == 0)
		return bp_err_set(-EINVAL, "address '%s': empty host", text);
	if (hlen >= sizeof(host))
		return bp_err_set(-EINVAL, "address '%.40s...': host name too long", text);
	memcpy(host, host_start, hlen);
	host[hlen] = '\0';
	if (port_text && (rc = parse_port(text, port_text, &port)))
		return rc;
	return resolve(text, host, bracket, port, ss, len);
}

char *bp_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];

	if (!buf || !len)
		return buf;
	if (!sa) {
		snprintf(buf, len, "(none)");
		return buf;
	}
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		if (in6->sin6_scope_id) { /* link-local: the interface is part of the address */
			size_t n = strlen(a);
			snprintf(a + n, sizeof(a) - n, "%%%u", in6->sin6_scope_id);
		}
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "(family %u)", sa->sa_family);
	}
	return buf;
}
