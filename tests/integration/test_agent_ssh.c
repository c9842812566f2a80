/* SPDX-License-Identifier: MIT */
/*
 * Two hosts (tests/lib/bpt_twohost.h): host A and host B are the test bed's two
 * namespaces, a real sshd runs in B, and everything is driven from A over TCP.
 *   - `ssh hostb busypoll agent --stdio` reaches the agent: HELLO, and the path
 *     report of B's veth end, which says it has no IRQs (a virtual device) because
 *     the agent, like any program sshd starts in B, sees B's sysfs;
 *   - a standing agent in B (--listen, the key) gives the same report, asked by
 *     the device's address this time: both paths speak the same protocol; with it
 *     the device's GRO and TSO as B has them (the diagnosis's facts);
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
#include "tools/remote/agent_client.h"

static struct bpt_twohost h;
static char state[160], key[160];
static struct bp_path_report report_ssh, report_tcp;

static void ssh_agent(struct agent_conn *c)
{
	struct agent_remote_opts o;
	char cmd[512], err[512];

	snprintf(cmd, sizeof(cmd), "%s agent --stdio --state-dir %s", bpt_busypoll(), state);
	bpt_twohost_remote(&h, true, cmd, &o);
	BPT_CHECK(agent_open(c, &o, err, sizeof(err)) == 0, "%s", err);
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
	struct agent_conn c;
	unsigned restored = 1;
	char err[512];

	ssh_agent(&c);
	BPT_CHECK(c.hello.pid > 0 && c.hello.kernel[0], "the agent's HELLO_OK");
	BPT_CHECK(agent_path(&c, h.tb.dev[1], NULL, &report_ssh, NULL, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(!strcmp(report_ssh.driver.driver, "veth"), "driver %s", report_ssh.driver.driver);
	BPT_CHECK(!strncmp(report_ssh.why[BP_PATH_IRQS], "no IRQs: bpvb is a virtual device", 33), "%s",
		  report_ssh.why[BP_PATH_IRQS]);
	BPT_CHECK(agent_close(&c, &restored, err, sizeof(err)) == 0 && restored == 0, "BYE: %s", err);
	BPT_CHECK(c.exit_status == 0, "ssh ... busypoll agent --stdio exited %d", c.exit_status);
	printf("ok: ssh reaches the agent; the path report of B's end says it has no IRQs\n");
}

static void over_tcp(void)
{
	char listen[64], err[512];
	const char *args[] = { "--listen", listen, "--key-file", key, "--state-dir", state, NULL };
	struct agent_remote_opts o;
	struct bpt_agent a;
	struct agent_conn c;
	struct aw_features feat;
	int home;

	snprintf(listen, sizeof(listen), "%s:0", h.tb.addr[1]);
	bpt_agent_start(&a, h.tb.ns[1], false, args);
	bpt_agent_wait_listening(&a, 5000);
	agent_remote_defaults(&o);
	snprintf(o.remote, sizeof(o.remote), "%s:%u", h.tb.addr[1], a.port);
	snprintf(o.key_file, sizeof(o.key_file), "%s", key);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&h.tb, 0) == 0, "%s", bp_last_error());
	BPT_CHECK(agent_open(&c, &o, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(agent_path(&c, NULL, h.tb.addr[1], &report_tcp, &feat, err, sizeof(err)) == 0, "%s", err);
	agent_close(&c, NULL, NULL, 0);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	/* the same report whichever way in (and by device or by its address) */
	BPT_CHECK(!memcmp(&report_ssh, &report_tcp, sizeof(report_ssh)), "the two paths' reports differ");
	/* the device's GRO and TSO as B has them: the bed's veth, GRO on and TSO off */
	BPT_CHECK(feat.gro == DIAG_ON && feat.tso == DIAG_OFF, "B's GRO %d and TSO %d, not on (1) and off (0)",
		  feat.gro, feat.tso);
	BPT_CHECK(bpt_agent_end(&a, SIGTERM, 5000) == 0, "the standing agent's exit");
	printf("ok: a standing agent in B gives the same report over TCP with the key, B's GRO and TSO\n");
}

static void client_killed(void)
{
	uint32_t id = napi_of_b();
	struct bp_napi_info before, n;
	struct agent_conn c;
	char err[512];
	int status;

	napi_values(id, &before);
	ssh_agent(&c);
	BPT_CHECK(agent_napi(&c, id, "defer-hard-irqs=4,gro-flush-timeout=80000", &n, err, sizeof(err)) == 0, "%s",
		  err);
	BPT_CHECK(n.defer_hard_irqs == 4 && n.gro_flush_timeout_ns == 80000, "the agent's answer");
	napi_values(id, &n);
	BPT_CHECK(n.defer_hard_irqs == 4 && n.gro_flush_timeout_ns == 80000, "not changed");
	/* the client dies mid-session: its TCP connection to sshd goes with it */
	kill(c.r.child, SIGKILL);
	waitpid(c.r.child, &status, 0);
	c.r.child = 0;
	c.open = false;
	agent_close(&c, NULL, NULL, 0);
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
