/* SPDX-License-Identifier: MIT */
/*
 * Two hosts (tests/lib/bpt_twohost.h): host A and host B are the test bed's two
 * namespaces, a real sshd runs in B, and everything is driven from A over TCP.
 *   - `ssh hostb busypoll agent --stdio` reaches the agent: hello, and the path
 *     report of B's veth end, which says it has no IRQs (a virtual device) because
 *     the agent, like any program sshd starts in B, sees B's sysfs;
 *   - a standing agent in B (--listen, the key) gives the same report, byte for
 *     byte: both paths speak the same protocol;
 *   - a change made through ssh, then the ssh client SIGKILLed mid-session: sshd
 *     drops the session, the agent sees its stdin end and restores the NAPI's
 *     settings (read back from the kernel), its journal removed.
 * Not root, or no OpenSSH: skipped (77).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>

#include "bpt_agent.h"
#include "bpt_faults.h"
#include "bpt_twohost.h"
#include "bptest.h"
#include "tools/common/remote.h"

static struct bpt_twohost h;
static char state[160], key[160];
static char report_ssh[16384], report_tcp[16384];

static struct remote ssh_agent(void)
{
	char cmd[512], err[256];
	const char *argv[16];
	struct remote r;

	snprintf(cmd, sizeof(cmd), "%s agent --stdio --state-dir %s", bpt_busypoll(), state);
	bpt_twohost_ssh_argv(&h, cmd, argv);
	BPT_CHECK(remote_spawn(&r, (char *const *)argv, "hostb (ssh)", 20000, err, sizeof(err)) == 0,
		  "%s", err);
	return r;
}

static void call(struct remote *r, const char *req, char *reply, size_t cap, const char *want)
{
	char err[256];

	BPT_CHECK(remote_call(r, req, reply, cap, err, sizeof(err)) == 0, "%s: %s", req, err);
	BPT_CHECK(!strncmp(reply, want, strlen(want)), "%s: '%.200s', wanted '%s...'", req, reply, want);
}

static uint32_t napi_of_b(void)
{
	uint32_t id;

	BPT_CHECK(bp_testbed_napi_ids(&h.tb, 1, &id, 1) == 1, "one NAPI on B");
	return id;
}

static void napi_values(uint32_t id, struct bp_napi_info *n)
{
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&h.tb, 1) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_napi_get(id, n) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
}

static void over_ssh(void)
{
	struct remote r = ssh_agent();
	char req[64], reply[256];

	call(&r, "hello", reply, sizeof(reply), "ok busypoll-agent 1 ");
	snprintf(req, sizeof(req), "path %s", h.tb.dev[1]);
	call(&r, req, report_ssh, sizeof(report_ssh), "ok {");
	BPT_CHECK(strstr(report_ssh, "\"driver\": \"veth\""), "%s", report_ssh);
	BPT_CHECK(strstr(report_ssh, "\"irqs_note\": \"no IRQs: bpvb is a virtual device"), "%s",
		  report_ssh);
	call(&r, "bye", reply, sizeof(reply), "ok restored 0");
	BPT_CHECK(remote_close(&r) == 0, "ssh ... busypoll agent --stdio did not exit 0");
	printf("ok: ssh reaches the agent; the path report of B's end says it has no IRQs\n");
}

static void over_tcp(void)
{
	char listen[64], hostport[64], err[256], reply[256], req[64];
	const char *args[] = { "--listen", listen, "--key-file", key, "--state-dir", state, NULL };
	struct bpt_agent a;
	struct remote r;
	int home;

	snprintf(listen, sizeof(listen), "%s:0", h.tb.addr[1]);
	bpt_agent_start(&a, h.tb.ns[1], false, args);
	bpt_agent_wait_listening(&a, 5000);
	snprintf(hostport, sizeof(hostport), "%s:%u", h.tb.addr[1], a.port);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&h.tb, 0) == 0, "%s", bp_last_error());
	BPT_CHECK(remote_connect(&r, hostport, key, 5000, err, sizeof(err)) == 0, "%s", err);
	call(&r, "hello", reply, sizeof(reply), "ok busypoll-agent 1 ");
	snprintf(req, sizeof(req), "path %s", h.tb.dev[1]);
	call(&r, req, report_tcp, sizeof(report_tcp), "ok {");
	remote_close(&r);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	BPT_CHECK(!strcmp(report_ssh, report_tcp), "the two paths differ:\n%s\n%s", report_ssh, report_tcp);
	BPT_CHECK(bpt_agent_end(&a, SIGTERM, 5000) == 0, "the standing agent's exit");
	printf("ok: a standing agent in B gives the same report over TCP with the key\n");
}

static void client_killed(void)
{
	uint32_t id = napi_of_b();
	struct bp_napi_info before, n;
	struct remote r = ssh_agent();
	char req[128], reply[256];
	int status;

	napi_values(id, &before);
	snprintf(req, sizeof(req), "napi-set %u defer-hard-irqs=4,gro-flush-timeout=80000", id);
	call(&r, req, reply, sizeof(reply), "ok");
	napi_values(id, &n);
	BPT_CHECK(n.defer_hard_irqs == 4 && n.gro_flush_timeout_ns == 80000, "not changed");
	/* the client dies mid-session: its TCP connection to sshd goes with it */
	kill(r.child, SIGKILL);
	waitpid(r.child, &status, 0);
	r.child = 0;
	remote_close(&r);
	/* sshd ends the session; the agent restores: wait for the kernel to show it */
	for (int i = 0; i < 1000; i++) {
		napi_values(id, &n);
		if (n.defer_hard_irqs == before.defer_hard_irqs &&
		    n.gro_flush_timeout_ns == before.gro_flush_timeout_ns)
			break;
		bpt_sleep_ms(10);
	}
	BPT_CHECK(n.defer_hard_irqs == before.defer_hard_irqs &&
		  n.gro_flush_timeout_ns == before.gro_flush_timeout_ns,
		  "not restored after the ssh client died: defer %u gro-flush %llu", n.defer_hard_irqs,
		  (unsigned long long)n.gro_flush_timeout_ns);
	printf("ok: the ssh client SIGKILLed mid-session: the agent restored the NAPI\n");
}

int main(void)
{
	char name[32], cmd[512];

	bpt_busypoll();
	bpt_testbed_name("ssh", name, sizeof(name));
	bpt_twohost_up(&h, name);
	/* journals beside the keys: bpt_rmdir_at_exit removes files, not subdirectories */
	snprintf(state, sizeof(state), "%s", h.dir);
	snprintf(key, sizeof(key), "%s/agent.key", h.dir);
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' >/dev/null", bpt_busypoll(), key);
	BPT_CHECK(system(cmd) == 0, "--new-key");

	over_ssh();
	over_tcp();
	client_killed();

	bpt_twohost_down(&h);
	printf("ok\n");
	return 0;
}
