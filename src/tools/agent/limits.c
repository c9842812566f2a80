/* SPDX-License-Identifier: MIT */
/* The operator's limits on what a session starts (contract in tools/agent/limits.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "tools/agent/limits.h"
#include "tools/common/values.h"
#include "tools/target/target.h"

/* The target options a key holder may give; the rest (--control-fd, --help, ...) are the agent's. */
static const char *const target_allowed[] = {
	"listen", "nqn", "ns", "io-depth", "allow-host", "threads", "cpus", "mode", "poll-period-us",
	"priority", "max-queues", "queue-depth", "max-conns", "connect-timeout-ms", "max-transfer",
	"inline-data", "log-level", NULL,
};

/* mem_total - MemTotal from /proc/meminfo in bytes, 0 unknown. */
static uint64_t mem_total(void)
{
	char line[128];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %" SCNu64 " kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

void limits_defaults(struct agent_cfg *cfg)
{
	uint64_t quarter = mem_total() / 4;

	cfg->max_servers = LIMITS_DEFAULT_SERVERS;
	cfg->max_target_ram = quarter && quarter < LIMITS_RAM_CAP ? quarter : LIMITS_RAM_CAP;
}

int limits_parse_listen(struct agent_cfg *cfg, const char *name, const char *text, char *err, size_t errlen)
{
	char buf[sizeof(cfg->target_listen_text)], *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return tool_fail(err, errlen, "%s: at most %zu characters", name, sizeof(buf) - 1);
	snprintf(buf, sizeof(buf), "%s", text);
	cfg->ntarget_listen = 0;
	for (char *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		struct sockaddr_storage *ss = &cfg->target_listen[cfg->ntarget_listen];
		socklen_t len;

		if (cfg->ntarget_listen == AGENT_MAX_TLISTEN)
			return tool_fail(err, errlen, "%s: at most %d addresses", name, AGENT_MAX_TLISTEN);
		memset(ss, 0, sizeof(*ss));
		if (inet_pton(AF_INET, a, &((struct sockaddr_in *)ss)->sin_addr) == 1)
			ss->ss_family = AF_INET;
		else if (inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
			ss->ss_family = AF_INET6;
		else
			return tool_fail(err, errlen, "%s %s: '%s' is not an IPv4 or IPv6 address (no port, no name)",
					 name, text, a);
		(void)len;
		cfg->ntarget_listen++;
	}
	if (!cfg->ntarget_listen)
		return tool_fail(err, errlen, "%s: give ADDR[,ADDR...]", name);
	snprintf(cfg->target_listen_text, sizeof(cfg->target_listen_text), "%s", text);
	return 0;
}

void limits_describe(const struct agent_cfg *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "limits: servers on CPUs %s, at most %d at once; a target: at most %" PRIu64 " MiB of RAM, "
		 "on loopback or %s, --allow-host required", cfg->cpus_text[0] ? cfg->cpus_text : "any",
		 cfg->max_servers, cfg->max_target_ram >> 20,
		 cfg->target_listen_text[0] ? cfg->target_listen_text : "the address the client reached");
}

bool limits_affinity(const struct agent_cfg *cfg, cpu_set_t *set)
{
	CPU_ZERO(set);
	for (int i = 0; i < cfg->ncpus; i++)
		if (cfg->cpus[i] >= 0 && cfg->cpus[i] < CPU_SETSIZE)
			CPU_SET(cfg->cpus[i], set);
	return cfg->ncpus > 0;
}

/* reach_from - the local address the kernel uses toward addr (a UDP connect sends nothing). */
static int reach_from(const struct sockaddr_storage *addr, socklen_t len, struct sockaddr_storage *out)
{
	socklen_t ol = sizeof(*out);
	int fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)addr, len) < 0 || getsockname(fd, (struct sockaddr *)out, &ol) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int limits_reached(const char *peer, struct sockaddr_storage *out)
{
	const char *ssh = getenv("SSH_CONNECTION");
	struct sockaddr_storage p;
	socklen_t len;
	char a[4][64];

	memset(out, 0, sizeof(*out));
	if (!strncmp(peer, "ssh", 3)) {
		/* "client-ip client-port server-ip server-port": the server address is the one reached */
		if (!ssh || sscanf(ssh, "%63s %63s %63s %63s", a[0], a[1], a[2], a[3]) != 4)
			return -ENOENT;
		if (inet_pton(AF_INET, a[2], &((struct sockaddr_in *)out)->sin_addr) == 1)
			out->ss_family = AF_INET;
		else if (inet_pton(AF_INET6, a[2], &((struct sockaddr_in6 *)out)->sin6_addr) == 1)
			out->ss_family = AF_INET6;
		else
			return -ENOENT;
		return 0;
	}
	if (bp_parse_addr(peer, 0, &p, &len) || (p.ss_family != AF_INET && p.ss_family != AF_INET6))
		return -ENOENT;
	return reach_from(&p, len, out) ? -ENOENT : 0;
}

/* same_host - a and b the same address (ports aside). */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return a->ss_family == AF_INET6 && !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
						   &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

static bool loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	return a->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

/* listen_allowed - may an agent-started target listen on a? */
static bool listen_allowed(const struct agent_cfg *cfg, const struct sockaddr_storage *reached,
			   const struct sockaddr_storage *a)
{
	if (loopback(a))
		return true;
	for (int i = 0; i < cfg->ntarget_listen; i++)
		if (same_host(&cfg->target_listen[i], a))
			return true;
	return !cfg->ntarget_listen && reached && reached->ss_family && same_host(reached, a);
}

/* own_options - the key holder's words name only the options a target may be given by it. */
static int own_options(char **w, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		size_t len;
		bool ok = false;

		if (w[i][0] != '-')
			continue; /* a value */
		if (strncmp(w[i], "--", 2))
			return tool_fail(err, errlen, "SERVER_START target: %s: the agent takes only long options of the "
					 "target in its arguments", w[i]);
		len = strcspn(w[i] + 2, "=");
		for (int k = 0; target_allowed[k] && !ok; k++)
			ok = strlen(target_allowed[k]) == len && !strncmp(target_allowed[k], w[i] + 2, len);
		if (!ok)
			return tool_fail(err, errlen, "SERVER_START target: %.*s is not an option the agent passes to a "
					 "target (it takes --listen, --nqn, --ns, --allow-host, --mode, --cpus, ...)",
					 (int)(len + 2), w[i]);
	}
	return 0;
}

int limits_check_target(const struct agent_cfg *cfg, const struct sockaddr_storage *reached, char **words, int n,
			int own_n, char *err, size_t errlen)
{
	static struct target_opts o; /* large; one request at a time */
	char perr[400], where[80];
	uint64_t ram = 0;
	int rc;

	if ((rc = own_options(words + 1, own_n, err, errlen)))
		return rc;
	rc = target_parse_opts(n, words, &o, perr, sizeof(perr));
	if (rc)
		return tool_fail(err, errlen, "SERVER_START target: %s", rc == 1 ? "no --help here" : perr);
	for (int i = 0; i < o.cfg.ncpus; i++) {
		bool in = false;

		for (int k = 0; k < cfg->ncpus && !in; k++)
			in = cfg->cpus[k] == o.cfg.cpus[i];
		if (cfg->ncpus && !in)
			return tool_fail(err, errlen, "SERVER_START target: --cpus: CPU %d is not one the agent may use "
					 "(its --cpus %s)", o.cfg.cpus[i], cfg->cpus_text);
	}
	for (int i = 0; i < o.cfg.n_ns; i++)
		if (o.cfg.ns[i].kind == BP_NVMET_NS_RAM)
			ram += o.cfg.ns[i].size;
	if (ram > cfg->max_target_ram)
		return tool_fail(err, errlen, "SERVER_START target: %" PRIu64 " MiB of RAM namespaces, more than the agent "
				 "allows (--max-target-ram %" PRIu64 "M)", ram >> 20, cfg->max_target_ram >> 20);
	if (!listen_allowed(cfg, reached, &o.cfg.listen)) {
		bp_format_addr((const struct sockaddr *)&o.cfg.listen, where, sizeof(where));
		return tool_fail(err, errlen, "SERVER_START target: --listen %s: not an address the agent lets a target "
				 "listen on (loopback, or %s%s)", where,
				 cfg->ntarget_listen ? "its --target-listen " : "the address the client reached; the agent's "
				 "--target-listen allows others", cfg->target_listen_text);
	}
	if (!o.cfg.n_allow)
		return tool_fail(err, errlen, "SERVER_START target: give --allow-host HOSTNQN: a target the agent starts "
				 "serves only the hosts it names");
	return 0;
}
