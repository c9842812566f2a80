/* SPDX-License-Identifier: MIT */
/*
 * The operator's limits bind what a key holder starts (issue 22, findings 2, 3, 8),
 * against a standing agent in the bed's second namespace with --cpus 1
 * --max-servers 2 --max-target-ram 64M, reached over TCP from the first:
 *   - an rr server asked for without CPUs runs on the allowed set (its
 *     Cpus_allowed_list in /proc/PID/status), and so does a target;
 *   - a target whose own arguments carry --cpus 0 is refused, naming the limit;
 *   - a target beyond --max-target-ram, one listening on 0.0.0.0 (not the
 *     address the client reached), one without --allow-host, and one given an
 *     option the agent keeps for itself (--control-fd) are refused;
 *   - a target on the address the client reached, with --allow-host, starts;
 *   - a third server is refused at --max-servers 2;
 *   - a KNOB read of an attribute that is no knob (mtu) is refused as a write is.
 * Not root: skipped (77).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/loop.h>

#include "bpt_agent.h"
#include "bpt_testbed.h"
#include "bptest.h"
#include "tools/remote/agent_client.h"
#include "tools/harness/control.h"

static struct bp_testbed tb;
static char dir[64], key[128];
static struct agent_conn c;

/* allowed_list - Cpus_allowed_list of pid into buf ("" when it is gone). */
static const char *allowed_list(uint32_t pid, char *buf, size_t len)
{
	char path[64], line[256];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Cpus_allowed_list: %63s", buf) == 1)
			break;
	if (f)
		fclose(f);
	return buf;
}

/* start - a server: 0 and *out, or the agent's errno with its reason in why. */
static int start(const char *tool, const char *args, struct agent_server *out, char *why, size_t len)
{
	struct agent_server_req r = { .tool = tool, .priority = -1, .args = args };
	int rc = agent_server_start(&c, &r, out, why, len);

	return rc < 0 ? -rc : rc;
}

/* refused - a target with args is refused with a reason that has want in it. */
static void refused(const char *args, const char *want, const char *what)
{
	struct agent_server s;
	char why[512] = "";

	BPT_CHECK(start("target", args, &s, why, sizeof(why)) != 0, "%s: the target started", what);
	BPT_CHECK(strstr(why, want), "%s: refused with '%s', wanted '%s'", what, why, want);
	printf("ok: %s: %s\n", what, why);
}

int main(void)
{
	char name[32], cmd[512], listen[64], hostport[64], args[256], err[512], cpus[64];
	const char *agent_args[] = { "--listen", listen, "--key-file", key, "--state-dir", dir, "--cpus", "1",
				     "--max-servers", "2", "--max-target-ram", "64M", NULL };
	struct agent_remote_opts o;
	struct agent_server rr, target, third;
	struct bpt_agent a;
	struct ctl_msg m, reply;
	int home;

	bpt_require_root("test_agent_limits");
	bpt_busypoll();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "SKIP: needs 2 CPUs\n");
		return BPT_SKIP;
	}
	bpt_testbed_name("agl", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "%s", bp_last_error());
	bpt_tmpdir("agent-limits", dir, sizeof(dir));
	snprintf(key, sizeof(key), "%s/agent.key", dir);
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' >/dev/null", bpt_busypoll(), key);
	BPT_CHECK(system(cmd) == 0, "--new-key");
	snprintf(listen, sizeof(listen), "%s:0", tb.addr[1]);
	bpt_agent_start(&a, tb.ns[1], false, agent_args);
	bpt_agent_wait_listening(&a, 5000);
	BPT_CHECK(strstr(a.log, "limits: servers on CPUs 1, at most 2 at once; a target: at most 64 MiB of RAM"),
		  "the start-up log does not show the limits: %s", a.log);
	snprintf(hostport, sizeof(hostport), "%s:%u", tb.addr[1], a.port);
	agent_remote_defaults(&o);
	snprintf(o.remote, sizeof(o.remote), "%s", hostport);
	snprintf(o.key_file, sizeof(o.key_file), "%s", key);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "%s", bp_last_error());
	BPT_CHECK(agent_open(&c, &o, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());

	/* no CPUs asked for: the allowed set, not every CPU */
	BPT_CHECK(start("rr", NULL, &rr, err, sizeof(err)) == 0, "rr: %s", err);
	BPT_CHECK(!strcmp(allowed_list(rr.pid, cpus, sizeof(cpus)), "1"), "rr server %u runs on CPUs '%s', not 1",
		  rr.pid, cpus);
	printf("ok: an rr server asked for without CPUs runs on the agent's --cpus 1\n");

	snprintf(args, sizeof(args), "--ns ram:16M --listen %s:0 --allow-host nqn.2024-01.io.busypoll:t --cpus 0",
		 tb.addr[1]);
	refused(args, "CPU 0 is not one the agent may use (its --cpus 1)", "--cpus 0 in a target's arguments");
	snprintf(args, sizeof(args), "--ns ram:48M --ns ram:48M --listen %s:0 --allow-host nqn.2024-01.io.busypoll:t",
		 tb.addr[1]);
	refused(args, "96 MiB of RAM namespaces, more than the agent allows (--max-target-ram 64M)",
		"a target beyond --max-target-ram");
	refused("--ns ram:16M --listen 0.0.0.0:0 --allow-host nqn.2024-01.io.busypoll:t",
		"--listen 0.0.0.0:0: not an address the agent lets a target listen on", "a target on 0.0.0.0");
	snprintf(args, sizeof(args), "--ns ram:16M --listen %s:0", tb.addr[1]);
	refused(args, "give --allow-host HOSTNQN", "a target for any host");
	snprintf(args, sizeof(args), "--ns ram:16M --listen %s:0 --allow-host nqn.2024-01.io.busypoll:t --control-fd 9",
		 tb.addr[1]);
	refused(args, "--control-fd is not an option the agent passes", "a target given the agent's own option");

	snprintf(args, sizeof(args), "--ns ram:16M --listen %s:0 --allow-host nqn.2024-01.io.busypoll:t", tb.addr[1]);
	BPT_CHECK(start("target", args, &target, err, sizeof(err)) == 0, "the allowed target: %s", err);
	BPT_CHECK(!strcmp(allowed_list(target.pid, cpus, sizeof(cpus)), "1"), "the target %u runs on CPUs '%s', not 1",
		  target.pid, cpus);
	printf("ok: a target on the address the client reached, with --allow-host, starts on CPU 1\n");
	BPT_CHECK(start("rr", NULL, &third, err, sizeof(err)) == EBUSY && strstr(err, "(--max-servers 2)"),
		  "a third server: '%s'", err);
	printf("ok: a third server refused: %s\n", err);

	ctl_msg_init(&m, CTL_KNOB);
	ctl_put_text(&m, CTL_T_DEV, tb.dev[1]);
	ctl_put_text(&m, CTL_T_KNOB, "mtu");
	BPT_CHECK(agent_call(&c, &m, CTL_KNOB, &reply, err, sizeof(err)) != 0 && strstr(err, "KNOB mtu: not a knob"),
		  "a KNOB read of mtu: '%s'", err);
	printf("ok: a KNOB read of mtu refused: %s\n", err);

	BPT_CHECK(agent_close(&c, NULL, err, sizeof(err)) == 0, "BYE: %s", err);
	BPT_CHECK(bpt_agent_end(&a, SIGTERM, 10000) == 0, "the agent's exit");
	BPT_CHECK(bp_testbed_down(&tb) == 0, "%s", bp_last_error());
	printf("ok\n");
	return 0;
}
