/* SPDX-License-Identifier: MIT */
/*
 * busypoll target: run the NVMe/TCP target until SIGINT/SIGTERM/SIGHUP; per-queue
 * counters on stdout on SIGUSR1 and at exit, and a control session when our
 * parent gave us one (--control-fd). Signals are blocked in every thread and read
 * by the main thread from a signalfd, so printing never happens inside a handler
 * and the loop threads are never interrupted by them.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "net/xps.h"
#include "tools/common/commands.h"
#include "tools/harness/server.h"
#include "tools/target/target.h"

/* Does interface address a serve listen (the same address, or listen is the wildcard)? */
static bool listens_on(const struct sockaddr_storage *listen, const struct sockaddr *a)
{
	if (!a || a->sa_family != listen->ss_family)
		return false;
	if (a->sa_family == AF_INET) {
		struct in_addr l = ((const struct sockaddr_in *)listen)->sin_addr;

		return l.s_addr == htonl(INADDR_ANY) || l.s_addr == ((const struct sockaddr_in *)a)->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct in6_addr *l = &((const struct sockaddr_in6 *)listen)->sin6_addr;

		return IN6_IS_ADDR_UNSPECIFIED(l) || !memcmp(l, &((const struct sockaddr_in6 *)a)->sin6_addr, sizeof(*l));
	}
	return false;
}

/*
 * The queues a reply leaves on, for each device the target listens on: the tx->rx
 * mapping (XPS by receive queue; symmetric with `busypoll testbed up --queues N`),
 * and the SO_PRIORITY every accepted socket gets.
 */
static void describe_queues(const struct bp_nvmet_cfg *c)
{
	struct ifaddrs *ifs = NULL;
	char line[1024] = "", seen[1024] = " ";
	size_t o = 0;

	if (getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i && o < sizeof(line) - 1; i = i->ifa_next) {
			char key[IF_NAMESIZE + 2], map[512];
			int rxq[64], n;

			if (!listens_on(&c->listen, i->ifa_addr) || !(i->ifa_flags & IFF_UP))
				continue;
			snprintf(key, sizeof(key), " %s ", i->ifa_name);
			if (strstr(seen, key) || strlen(seen) + strlen(key) >= sizeof(seen))
				continue;
			strcat(seen, key + 1);
			n = bp_xps_read(i->ifa_name, rxq, 64);
			if (n <= 1) {
				o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s: %s", o ? "; " : "", i->ifa_name,
						      n == 1 ? "1 queue" : "queues unknown");
			} else {
				bool symmetric = bp_xps_format(rxq, n, map, sizeof(map));

				o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s: %s (%s)", o ? "; " : "", i->ifa_name,
						      map, symmetric ? "symmetric"
						      : "not symmetric: replies may leave on another queue");
			}
		}
		freeifaddrs(ifs);
	}
	if (c->so_priority >= 0)
		fprintf(stderr, "busypoll target:   queues: %s; SO_PRIORITY %d on every queue's socket\n",
			o ? line : "no device found", c->so_priority);
	else
		fprintf(stderr, "busypoll target:   queues: %s; SO_PRIORITY not set (--priority N)\n",
			o ? line : "no device found");
}

static void describe(const struct target_opts *o, struct bp_nvmet *t)
{
	const struct bp_nvmet_cfg *c = &o->cfg;
	char addr[80];

	bp_format_addr((const struct sockaddr *)&c->listen, addr, sizeof(addr));
	if (strrchr(addr, ':') && bp_nvmet_port(t))
		snprintf(strrchr(addr, ':') + 1, sizeof(addr) - (size_t)(strrchr(addr, ':') + 1 - addr), "%u",
			 bp_nvmet_port(t));
	char poll[32] = "off";

	if (c->poll_period_us)
		snprintf(poll, sizeof(poll), "%u us", c->poll_period_us);
	fprintf(stderr, "busypoll target: listening on %s, nqn %s, %d namespace%s, %d thread%s, mode %s, "
		"poll period %s, queue depth %u, max %u I/O queues per controller%s\n",
		addr, c->nqn, c->n_ns, c->n_ns == 1 ? "" : "s", c->threads, c->threads == 1 ? "" : "s",
		o->mode_text, poll, c->queue_depth, c->max_queues,
		c->n_allow ? ", hosts restricted (--allow-host)" : ", any host");
	describe_queues(c);
	for (int i = 0; i < c->n_ns; i++) {
		struct bp_nvmet_ns_info ni;
		struct stat st;

		if (bp_nvmet_ns_info(t, i, &ni))
			break;
		if (ni.kind == BP_NVMET_NS_RAM) {
			fprintf(stderr, "busypoll target:   nsid %u: ram, %llu bytes, %u-byte blocks\n", ni.nsid,
				(unsigned long long)ni.size, ni.block_size);
			continue;
		}
		fprintf(stderr, "busypoll target:   nsid %u: %s %s, %llu bytes, %u-byte blocks, %s%s%s%s%s, storage "
			"depth %u per thread", ni.nsid, ni.blockdev ? "block device" : "file", ni.desc + 5,
			(unsigned long long)ni.size, ni.block_size, ni.direct ? "O_DIRECT" : "page cache",
			ni.read_only ? ", read-only" : "", ni.write_cache ? ", volatile write cache" : "",
			ni.write_zeroes ? ", Write Zeroes" : "",
			ni.deallocate ? (ni.dealloc_zeroes ? ", deallocate (reads zeros)" : ", deallocate") : "",
			c->io_depth);
		/* a namespace that is only the start of its file says so */
		if (!ni.blockdev && stat(c->ns[i].path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > ni.size)
			fprintf(stderr, " (the first %llu bytes of its %llu: size=)", (unsigned long long)ni.size,
				(unsigned long long)st.st_size);
		fputc('\n', stderr);
	}
	fflush(stderr);
}

/*
 * serve - until SIGINT, SIGTERM or SIGHUP (or the control peer going away):
 * counters on SIGUSR1, and the control session's messages as they come. The
 * signals arrive on a signalfd, so nothing is printed inside a handler.
 */
static void serve(struct bp_nvmet *t, const struct target_opts *o, const sigset_t *set)
{
	struct target_ctl *ctl = NULL;
	int sfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);

	if (o->control_fd >= 0 && (ctl = calloc(1, sizeof(*ctl))) != NULL)
		ctl->fd = o->control_fd;
	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = ctl ? ctl->fd : -1, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (sfd < 0) {
			/* no signalfd: take the signals synchronously, as before */
			siginfo_t info;
			int sig = sigwaitinfo(set, &info);

			if (sig == SIGUSR1)
				target_print_counters(stdout, t, o);
			else if (sig > 0)
				break;
			continue;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents && target_control(t, o, ctl)) {
			bp_tool_error("target", "the control session ended; stopping");
			break;
		}
		if (!(p[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo == SIGUSR1)
			target_print_counters(stdout, t, o);
		else
			break;
	}
	if (sfd >= 0)
		close(sfd);
	if (ctl)
		close(ctl->fd);
	free(ctl);
}

/* block_signals - the stop and counter signals into set, blocked (SIGPIPE ignored). */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* start - the target listening into *t; an exit status, the error said when it is not 0. */
static int start(const struct target_opts *o, struct bp_nvmet **t)
{
	char err[512];
	int ret = bp_nvmet_start(&o->cfg, t);

	if (ret == -EADDRINUSE || ret == -EADDRNOTAVAIL ||
	    (ret == -EACCES && strstr(bp_last_error(), "--listen"))) {
		/* where it cannot listen, in the words every busypoll server uses (tools/harness/server.h) */
		srv_bind_error(ret, "--listen", (const struct sockaddr *)&o->cfg.listen,
			       "another target? pick another port", err, sizeof(err));
		bp_tool_error("target", "%s", err);
		return BP_EXIT_USAGE;
	}
	if (ret)
		bp_tool_error("target", "%s", bp_last_error());
	return bp_exit_for(ret);
}

int cmd_target(int argc, char **argv)
{
	struct target_opts o;
	struct bp_nvmet *t;
	char err[512];
	sigset_t set;
	int ret = target_parse_opts(argc, argv, &o, err, sizeof(err));

	if (ret)
		return bp_opts_exit("target", ret, err);
	block_signals(&set); /* before any thread starts, so every thread inherits the mask */
	if ((ret = start(&o, &t)))
		return ret;
	if (!o.quiet)
		describe(&o, t);
	serve(t, &o, &set);
	target_print_counters(stdout, t, &o);
	bp_nvmet_stop(t);
	return BP_EXIT_OK;
}
