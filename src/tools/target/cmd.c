/* SPDX-License-Identifier: MIT */
/*
 * busypoll target: run the NVMe/TCP target until SIGINT/SIGTERM/SIGHUP; per-queue
 * counters on stdout on SIGUSR1 and at exit, and a control session when our
 * parent gave us one (--control-fd). Signals are blocked in every thread and read
 * by the main thread from a signalfd, so printing never happens inside a handler
 * and the loop threads are never interrupted by them.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/commands.h"
#include "tools/common/server.h"
#include "tools/target/target.h"

/* describe_file - a file namespace as it is served: its size, and how much of the file that is. */
static void describe_file(int nsid, const struct bp_nvmet_ns_spec *s)
{
	struct stat st;
	uint64_t file = stat(s->path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	uint64_t size = s->size ? s->size : file;

	fprintf(stderr, "busypoll target:   nsid %d: file %s, %llu bytes, %u-byte blocks", nsid, s->path,
		(unsigned long long)size, s->block_size);
	if (file > size)
		fprintf(stderr, " (the first %llu bytes of its %llu: size=)", (unsigned long long)size,
			(unsigned long long)file);
	fputc('\n', stderr);
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
	for (int i = 0; i < c->n_ns; i++) {
		const struct bp_nvmet_ns_spec *s = &c->ns[i];

		if (s->kind == BP_NVMET_NS_RAM)
			fprintf(stderr, "busypoll target:   nsid %d: ram, %llu bytes, %u-byte blocks\n", i + 1,
				(unsigned long long)s->size, s->block_size);
		else
			describe_file(i + 1, s);
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

int cmd_target(int argc, char **argv)
{
	struct target_opts o;
	struct bp_nvmet *t;
	char err[512];
	sigset_t set;
	int ret;

	ret = target_parse_opts(argc, argv, &o, err, sizeof(err));
	if (ret == 1)
		return BP_EXIT_OK;
	if (ret) {
		bp_tool_error("target", "%s", err);
		return BP_EXIT_USAGE;
	}
	/* Blocked before any thread starts, so every thread inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	ret = bp_nvmet_start(&o.cfg, &t);
	if (ret == -EADDRINUSE || ret == -EADDRNOTAVAIL ||
	    (ret == -EACCES && strstr(bp_last_error(), "--listen"))) {
		/* where it cannot listen, in the words every busypoll server uses (tools/common/server.h) */
		srv_bind_error(ret, "--listen", (const struct sockaddr *)&o.cfg.listen,
			       "another target? pick another port", err, sizeof(err));
		bp_tool_error("target", "%s", err);
		return BP_EXIT_USAGE;
	}
	if (ret) {
		bp_tool_error("target", "%s", bp_last_error());
		/* Bad input: a port in use, a namespace file that cannot be used, a mode refused. */
		return (ret == -EADDRINUSE || ret == -EINVAL || ret == -ENOENT || ret == -EACCES || ret == -EBUSY ||
			ret == -EPERM || ret == -EOPNOTSUPP || ret == -EADDRNOTAVAIL || ret == -EISDIR)
			       ? BP_EXIT_USAGE : BP_EXIT_FAIL;
	}
	if (!o.quiet)
		describe(&o, t);
	serve(t, &o, &set);
	target_print_counters(stdout, t, &o);
	bp_nvmet_stop(t);
	return BP_EXIT_OK;
}
