/* SPDX-License-Identifier: MIT */
/* Two hosts: two namespaces and a real sshd in the second (bpt_twohost.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/loop.h>

#include "bpt_agent.h"
#include "bpt_faults.h"
#include "bpt_twohost.h"
#include "tools/remote/agent_client.h"
#include "bptest.h"

#define SSHD "/usr/sbin/sshd" /* sshd re-executes itself: it needs its absolute path */

static bool have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	BPT_CHECK(fd >= 0, "open(%s): %s", path, strerror(errno));
	BPT_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write(%s)", path);
	close(fd);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	BPT_CHECK(f, "fopen(%s): %s", path, strerror(errno));
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void keygen(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ssh-keygen -q -t ed25519 -N '' -C busypoll-test -f '%s'", path);
	BPT_CHECK(system(cmd) == 0, "%s failed", cmd);
}

/* Can A open a TCP connection to sshd in B? (the only way the test talks to it) */
static bool sshd_answers(const struct bpt_twohost *h)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(h->ssh_port) };
	int home, fd, ok;

	inet_pton(AF_INET, h->tb.addr[1], &a.sin_addr);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&h->tb, 0) == 0, "%s", bp_last_error());
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	return ok;
}

void bpt_twohost_up(struct bpt_twohost *h, const char *name)
{
	char path[3][160], text[4096], pub[1024];
	pid_t parent = getpid();
	struct stat st;

	bpt_require_root("the two-host test");
	if (access(SSHD, X_OK) || !have("ssh") || !have("ssh-keygen")) {
		fprintf(stderr, "SKIP: needs OpenSSH (apt-get install openssh-server openssh-client)\n");
		exit(BPT_SKIP);
	}
	memset(h, 0, sizeof(*h));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&h->tb, name, 1, false) == 0, "%s", bp_last_error());
	bpt_tmpdir("twohost", h->dir, sizeof(h->dir));
	/* sshd's privilege separation directory: made if missing, never removed (shared) */
	if (stat("/run/sshd", &st) != 0)
		BPT_CHECK(mkdir("/run/sshd", 0755) == 0 || errno == EEXIST, "mkdir /run/sshd: %s",
			  strerror(errno));
	h->ssh_port = (uint16_t)(20000 + getpid() % 40000);

	snprintf(path[0], sizeof(path[0]), "%s/host_key", h->dir);
	snprintf(path[1], sizeof(path[1]), "%s/client_key", h->dir);
	keygen(path[0]);
	keygen(path[1]);
	/* the one authorized key */
	snprintf(path[2], sizeof(path[2]), "%s/client_key.pub", h->dir);
	read_file(path[2], pub, sizeof(pub));
	snprintf(path[2], sizeof(path[2]), "%s/authorized_keys", h->dir);
	write_file(path[2], pub, 0600);
	snprintf(text, sizeof(text),
		 "ListenAddress %s\nPort %u\nHostKey %s\nPidFile none\nAuthorizedKeysFile %s\n"
		 "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
		 "PermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\nPrintMotd no\n"
		 "PermitUserEnvironment no\nX11Forwarding no\nLogLevel INFO\n",
		 h->tb.addr[1], h->ssh_port, path[0], path[2]);
	snprintf(path[2], sizeof(path[2]), "%s/sshd_config", h->dir);
	write_file(path[2], text, 0600);
	/* A trusts exactly B's host key, at B's address and port */
	snprintf(text, sizeof(text), "%s/host_key.pub", h->dir);
	read_file(text, pub, sizeof(pub));
	snprintf(text, sizeof(text), "[%s]:%u %s", h->tb.addr[1], h->ssh_port, pub);
	snprintf(path[0], sizeof(path[0]), "%s/known_hosts", h->dir);
	write_file(path[0], text, 0600);
	snprintf(text, sizeof(text),
		 "Host " BPT_SSH_HOST "\n  HostName %s\n  Port %u\n  User root\n  IdentityFile %s\n"
		 "  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n"
		 "  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 10\n  LogLevel ERROR\n",
		 h->tb.addr[1], h->ssh_port, path[1], path[0]);
	snprintf(h->ssh_config, sizeof(h->ssh_config), "%s/ssh_config", h->dir);
	write_file(h->ssh_config, text, 0600);

	snprintf(h->sshd_log, sizeof(h->sshd_log), "%s/sshd.log", h->dir);
	h->sshd = fork();
	BPT_CHECK(h->sshd >= 0, "fork: %s", strerror(errno));
	if (h->sshd == 0) {
		int log = open(h->sshd_log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		bpt_die_with_parent(parent);
		dup2(log, STDERR_FILENO);
		/* -D: no daemon, -e: log to stderr; ip netns exec: B's network and sysfs */
		execlp("ip", "ip", "netns", "exec", h->tb.ns[1], SSHD, "-D", "-e", "-f", path[2],
		       (char *)NULL);
		_exit(127);
	}
	bpt_reap_at_exit(h->sshd);
	for (int i = 0; i < 500 && !sshd_answers(h); i++) {
		BPT_CHECK(waitpid(h->sshd, NULL, WNOHANG) == 0, "sshd exited at start: see %s",
			  h->sshd_log);
		bpt_sleep_ms(10);
	}
	BPT_CHECK(sshd_answers(h), "sshd in %s does not answer on %s:%u", h->tb.ns[1], h->tb.addr[1],
		  h->ssh_port);
}

void bpt_twohost_ssh_argv(const struct bpt_twohost *h, const char *remote_cmd, const char **argv)
{
	int n = 0;

	argv[n++] = "ip";
	argv[n++] = "netns";
	argv[n++] = "exec";
	argv[n++] = h->tb.ns[0];
	argv[n++] = "ssh";
	argv[n++] = "-F";
	argv[n++] = h->ssh_config;
	argv[n++] = BPT_SSH_HOST;
	argv[n++] = remote_cmd;
	argv[n] = NULL;
}

void bpt_twohost_remote(const struct bpt_twohost *h, bool ns_a, const char *agent_cmd, struct agent_remote_opts *o)
{
	agent_remote_defaults(o);
	snprintf(o->remote, sizeof(o->remote), "%s", BPT_SSH_HOST);
	snprintf(o->host, sizeof(o->host), "%s", h->tb.addr[1]);
	snprintf(o->ssh, sizeof(o->ssh), "%s%s%sssh -F %s", ns_a ? "ip netns exec " : "", ns_a ? h->tb.ns[0] : "",
		 ns_a ? " " : "", h->ssh_config);
	snprintf(o->agent_cmd, sizeof(o->agent_cmd), "%s", agent_cmd);
}

void bpt_twohost_down(struct bpt_twohost *h)
{
	if (h->sshd > 0) {
		kill(h->sshd, SIGTERM);
		waitpid(h->sshd, NULL, 0);
		bpt_reaped(h->sshd);
		h->sshd = 0;
	}
	BPT_CHECK(bp_testbed_down(&h->tb) == 0, "%s", bp_last_error());
}
