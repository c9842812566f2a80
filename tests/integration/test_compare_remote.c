/* SPDX-License-Identifier: MIT */
/*
 * The main job between two hosts (tests/lib/bpt_twohost.h: the test bed's two
 * namespaces, a real sshd in B, everything driven from A over TCP):
 *   - `busypoll compare --remote` over two modes, through ssh and through a
 *     standing agent with the key, gives the same csv columns and json cell keys
 *     as the local compare on a test bed, and the busy-poll mode's proof
 *     (BusyPollRxPackets per transaction) on both ends, by either path;
 *   - the diagnosis on B: TSO on over veth, the server's line names it on B's device
 *     (the agent reads its device's GRO and TSO; the header shows both ends');
 *   - coalescing on veth: --coalesce rx-usecs=0 and --coalesce-matrix say, in the
 *     header and in json, that neither end can change it, and the run completes;
 *   - --rates through the agent: a cell per offered rate (the open loop is the
 *     client's; the server on B is the same), none failed;
 *   - restore: epoll:suspend sets B's (and A's) NAPI settings (json's napi_ran_at
 *     shows both ends at the suspend mode's settings); they are back after
 *     a normal end, after compare is SIGKILLed mid-run (its ssh, and its own agent,
 *     see their input end), and after the standing agent is SIGKILLed mid-run and
 *     started again (its journal); the servers it ran are gone each time;
 *   - tune --remote through the standing agent: the search between the two hosts, the
 *     server on B proven, the recipe and the coalescing out of the space with why, B
 *     restored after;
 *   - pingpong --remote --matrix through the standing agent proves the server
 *     busy polled only in its busy row; perf --remote starts each target
 *     configuration on B through ssh and reads its counters.
 * Checks on the documents are made by python3 (json, csv). Not root, or no
 * OpenSSH or python3: skipped (77).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>

#include "bpt_agent.h"
#include "bpt_faults.h"
#include "bpt_testbed.h"
#include "bpt_twohost.h"
#include "bptest.h"

#define MODES "epoll:block;epoll:napi,usecs=64,budget=8"
#define BUSY "epoll:napi,usecs=64,budget=8"

static struct bpt_twohost h;
static char dir[64], state_ssh[64], state_tcp[64], key[128], checker[128];
static char ssh_cmd[512], agent_cmd[512], hostport[96];
static struct bpt_agent standing;

/* The document checks, in python3: each subcommand exits 1 with why on stderr. */
static const char *const CHECKER =
	"import csv, json, sys\n"
	"what, files = sys.argv[1], sys.argv[2:]\n"
	"def rows(p): return list(csv.DictReader(open(p)))\n"
	"def fail(m): print(m, file=sys.stderr); sys.exit(1)\n"
	"if what == 'columns':\n"
	"    a, b = [open(p).readline() for p in files]\n"
	"    if a != b: fail('csv columns differ:\\n' + a + b)\n"
	"elif what == 'proof':\n"
	"    for r in rows(files[0]):\n"
	"        if r['failed'] != 'false': fail('a cell failed: ' + r['error'])\n"
	"        c, s = float(r['client_busy_poll_rx_per_tx']), float(r['server_busy_poll_rx_per_tx'])\n"
	"        if r['label'] == '" BUSY "' and (c < 0.01 or s < 0.01): fail('no proof: %s %s' % (c, s))\n"
	"        if r['label'] == 'epoll:block' and (c or s): fail('epoll:block busy polled: %s %s' % (c, s))\n"
	"elif what == 'keys':\n"
	"    a, b = [json.load(open(p)) for p in files]\n"
	"    if set(a['cells'][0]) != set(b['cells'][0]): fail('json cell keys differ')\n"
	"elif what == 'veth':\n"
	"    d = json.load(open(files[0]))\n"
	"    if len(d['ends']) != 2 or not d['cells']: fail('no ends or no cells')\n"
	"    for e in d['ends']:\n"
	"        c = e['coalesce']\n"
	"        if c['supported'] or 'veth driver has no interrupt coalescing' not in c['note']: fail(str(c))\n"
	"        for r in c['for_run']:\n"
	"            if r['setting'] != 'as found' and (r['applied'] or not r['result'].startswith('not applied')):\n"
	"                fail(str(r))\n"
	"        if not e['served_napi_ids'] or not e['napi']: fail('no NAPI: ' + str(e))\n"
	"        if (e['gro'], e['tso']) != (True, False): fail('the bed is GRO on, TSO off: ' + str((e['gro'], e['tso'])))\n"
	"    if any(c['failed'] for c in d['cells']): fail('a cell failed')\n"
	"    if not d['remote']['restored_server']: fail('B restored nothing: ' + str(d['remote']))\n"
	"elif what == 'tso':\n"
	"    d = json.load(open(files[0]))\n"
	"    if d['ends'][1]['tso'] is not True: fail('B reports TSO %r, it is on' % d['ends'][1]['tso'])\n"
	"    w = d['cells'][0]['diagnosis']['server']\n"
	"    if not w or not w.startswith('server on the remote host: TSO is on for bpvb'): fail('server diagnosis: %r' % w)\n"
	"elif what == 'tune':\n"
	"    d = json.load(open(files[0]))\n"
	"    if not d['remote'] or not d['path'].startswith('two hosts: '): fail('not between two hosts: ' + d['path'])\n"
	"    if not d['met'] or not d['confirmed']: fail('a 100 ms goal not met and confirmed: %s' % d['verdict'])\n"
	"    if 'no interrupt coalescing' not in (d['coalescing_note'] or ''): fail('coalescing: %r' % d['coalescing_note'])\n"
	"    c = {x['label']: x for x in d['candidates']}\n"
	"    r = [x for x in d['candidates'] if x['role'] == 'tuned-recipe']\n"
	"    if len(r) != 1 or not r[0]['failed'] or 'not measured with --remote' not in r[0]['error']: fail(str(r))\n"
	"    s = c.get('epoll:suspend,usecs=30,budget=64,defer=100,gro-flush=20000,suspend=2000000')\n"
	"    if not s or s['failed'] or not s['samples']: fail('epoll:suspend not measured: ' + str(s))\n"
	"    if not max(x['busy_poll_rx_per_tx'] for x in s['samples']) >= 0.01: fail('no proof on both ends: ' + str(s['samples']))\n"
	"    if any(x['coalesce'] for x in d['candidates']): fail('coalescing in the space of a veth path')\n"
	"elif what == 'rates':\n"
	"    d = json.load(open(files[0]))\n"
	"    got = [(c['offered_rate'], c['closed_loop'], c['failed']) for c in d['cells']]\n"
	"    if got != [(2000, False, False), (None, True, False)]: fail('cells: ' + str(got))\n"
	"    if any(not c['tps'] for c in d['cells']): fail('a cell without transactions')\n"
	"elif what == 'pingpong':\n"
	"    d = json.load(open(files[0]))\n"
	"    if not d['server']['agent']: fail('no agent')\n"
	"    s = {r['row']: r['server']['busy_poll_rx_per_tx'] for r in d['rows']}\n"
	"    if s['both ends'] < 0.5 or s['client only'] or s['no busy polling']: fail(str(s))\n"
	"elif what == 'ranat':\n"
	"    d = json.load(open(files[0]))\n"
	"    for c in d['cells']:\n"
	"        n = c['napi_ran_at']\n"
	"        if not n or sorted({x['end'] for x in n}) != ['client', 'server']: fail('napi_ran_at ends: ' + str(n))\n"
	"        if any(not x['defer_hard_irqs'] or not x['irq_suspend_timeout_ns'] for x in n):\n"
	"            fail('napi_ran_at is not the suspend mode\\'s settings: ' + str(n))\n"
	"elif what == 'end-b':\n"
	"    e = json.load(open(files[0]))['ends'][1]\n"
	"    n, want = e['napi'][0], tuple(int(x) for x in files[1:4])\n"
	"    got = (n['defer_hard_irqs'], n['gro_flush_timeout_ns'], n['irq_suspend_timeout_ns'])\n"
	"    if got != want: fail('the header shows B as %s, not as restored %s' % (got, want))\n"
	"    for k, v in (('sysctl_busy_poll', files[4]), ('sysctl_busy_read', files[5])):\n"
	"        if v == 'null':\n"
	"            if e[k] is not None or not e['sysctl_note']: fail('%s: %r, note %r: not readable there, null and why' % (k, e[k], e['sysctl_note']))\n"
	"        elif e[k] != int(v): fail('%s: %r, B has %s' % (k, e[k], v))\n"
	"elif what == 'perf':\n"
	"    d = json.load(open(files[0]))\n"
	"    if len(d['sweep']) != 2: fail('not one point per configuration: %d' % len(d['sweep']))\n"
	"    for r in d['sweep']:\n"
	"        t = r['target_counters']\n"
	"        if not t or not t['queues'] or not t['commands']: fail('no target counters: ' + str(r))\n";

/* spawn - `[ip netns exec NS] $BUSYPOLL ARGS...` (args NULL-terminated) with stdout and stderr into files. */
static pid_t spawn(const char *ns, const char *const args[], const char *out, const char *err)
{
	const char *argv[64];
	pid_t parent = getpid(), pid;
	int n = 0;

	if (ns) {
		argv[n++] = "ip";
		argv[n++] = "netns";
		argv[n++] = "exec";
		argv[n++] = ns;
	}
	argv[n++] = bpt_busypoll();
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	BPT_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		bpt_die_with_parent(parent);
		dup2(o, STDOUT_FILENO);
		dup2(e, STDERR_FILENO);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	bpt_reap_at_exit(pid);
	return pid;
}

/* finish - wait up to timeout_ms; its exit status (128+N for a signal), -1 when it had to be killed. */
static int finish(pid_t pid, int timeout_ms)
{
	int status = 0;

	for (int waited = 0; waitpid(pid, &status, WNOHANG) != pid; waited += 10) {
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			bpt_reaped(pid);
			return -1;
		}
		bpt_sleep_ms(10);
	}
	bpt_reaped(pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* said - the last lines a failed command wrote on stderr, for the test's own output. */
static const char *said(const char *err)
{
	static char buf[2048];
	FILE *f = fopen(err, "re");
	size_t n = 0;

	if (f) {
		fseek(f, 0, SEEK_END);
		if (ftell(f) > (long)sizeof(buf) - 1)
			fseek(f, -(long)sizeof(buf) + 1, SEEK_END);
		else
			fseek(f, 0, SEEK_SET);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* check - the python checker's verdict on files. */
static void check(const char *what, const char *a, const char *b)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "python3 '%s' %s '%s' %s%s%s", checker, what, a, b ? "'" : "", b ? b : "",
		 b ? "'" : "");
	BPT_CHECK(system(cmd) == 0, "%s: %s %s", what, a, b ? b : "");
}

/* compare_remote - compare --remote (ssh: via != NULL, else the standing agent) with extra args; its exit. */
static int compare_remote(bool ssh, const char *const extra[], const char *out, const char *err, int timeout_ms)
{
	const char *args[40] = { "compare", "--server-addr", h.tb.addr[1], "--flows", "1", "-l", "0.5", "--warmup",
				 "0.1" };
	int n = 9;

	args[n++] = "--remote";
	if (ssh) {
		args[n++] = BPT_SSH_HOST;
		args[n++] = "--ssh";
		args[n++] = ssh_cmd;
		args[n++] = "--agent-cmd";
		args[n++] = agent_cmd;
	} else {
		args[n++] = hostport;
		args[n++] = "--key-file";
		args[n++] = key;
	}
	for (int i = 0; extra[i]; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	return finish(spawn(h.tb.ns[0], args, out, err), timeout_ms);
}

static void napi_values(int side, struct bp_napi_info *n)
{
	uint32_t id;
	int home;

	BPT_CHECK(bp_testbed_napi_ids(&h.tb, side, &id, 1) == 1, "one NAPI on %c", 'a' + side);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&h.tb, side) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_napi_get(id, n) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
}

/*
 * host_sysctl - net.core.NAME as the host holds it, into buf: busy_poll and busy_read are
 * the first network namespace's alone (B, a namespace, has no such file; its agent reads
 * them in the first one), read here where the test runs; "null" where it cannot be read.
 */
static void host_sysctl(const char *name, char *buf, size_t len)
{
	char path[96];
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/core/%s", name);
	f = fopen(path, "re");
	if (!f)
		err = errno;
	else if (!fgets(buf, (int)len, f))
		err = EIO;
	if (f)
		fclose(f);
	if (err)
		snprintf(buf, len, "null");
	buf[strcspn(buf, "\n")] = 0;
}

static bool same_napi(const struct bp_napi_info *a, const struct bp_napi_info *b)
{
	return a->defer_hard_irqs == b->defer_hard_irqs && a->gro_flush_timeout_ns == b->gro_flush_timeout_ns &&
	       a->irq_suspend_timeout_ns == b->irq_suspend_timeout_ns;
}

/* wait_napi - until side's NAPI is (back, when want is true) as *ref, or timeout_ms. */
static bool wait_napi(int side, const struct bp_napi_info *ref, bool want, int timeout_ms)
{
	struct bp_napi_info n;

	for (int waited = 0; waited <= timeout_ms; waited += 20) {
		napi_values(side, &n);
		if (same_napi(&n, ref) == want)
			return true;
		bpt_sleep_ms(20);
	}
	return false;
}

/* server_pid - the pid of the last server an agent said it started, in a log file (0: none). */
static int server_pid(const char *log)
{
	char buf[1 << 16];
	const char *p, *last = NULL;
	FILE *f = fopen(log, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	for (p = strstr(buf, " started: rr, pid "); p; p = strstr(p + 1, " started: rr, pid "))
		last = p;
	return last ? atoi(last + strlen(" started: rr, pid ")) : 0;
}

static bool gone(int pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	for (int waited = 0; waited < 30000; waited += 20) {
		if (access(path, F_OK) != 0)
			return true;
		bpt_sleep_ms(20);
	}
	return false;
}

static void start_standing(void)
{
	char listen[64];
	const char *args[] = { "--listen", listen, "--key-file", key, "--state-dir", state_tcp, NULL };

	snprintf(listen, sizeof(listen), "%s:0", h.tb.addr[1]);
	bpt_agent_start(&standing, h.tb.ns[1], false, args);
	bpt_agent_wait_listening(&standing, 5000);
	snprintf(hostport, sizeof(hostport), "%s:%u", h.tb.addr[1], standing.port);
}

/* 1. the same columns and a proof on both ends, local and by both paths */
static void columns_and_proof(void)
{
	char lcsv[96], ljson[96], rcsv[96], rjson[96], err[96];
	const char *local[] = { "compare", "--modes", MODES, "--flows", "1", "-l", "0.5", "--warmup", "0.1", "-q",
				"--format", NULL, NULL };
	const char *csv[] = { "--modes", MODES, "-q", "--format", "csv", NULL };
	const char *json[] = { "--modes", MODES, "-q", "--format", "json", NULL };

	path_in(lcsv, sizeof(lcsv), "local.csv");
	path_in(ljson, sizeof(ljson), "local.json");
	path_in(rcsv, sizeof(rcsv), "remote.csv");
	path_in(rjson, sizeof(rjson), "remote.json");
	path_in(err, sizeof(err), "err");
	/* the local compare, on a test bed of its own */
	local[11] = "csv";
	BPT_CHECK(finish(spawn(NULL, local, lcsv, err), 60000) == 0, "local compare (csv)");
	local[11] = "json";
	BPT_CHECK(finish(spawn(NULL, local, ljson, err), 60000) == 0, "local compare (json)");

	BPT_CHECK(compare_remote(true, csv, rcsv, err, 60000) == 0, "compare --remote through ssh: %s", said(err));
	check("columns", lcsv, rcsv);
	check("proof", rcsv, NULL);
	printf("ok: compare --remote through ssh: the local compare's columns, the proof on both ends\n");
	BPT_CHECK(compare_remote(false, csv, rcsv, err, 60000) == 0, "compare --remote to the standing agent: %s",
		  said(err));
	check("columns", lcsv, rcsv);
	check("proof", rcsv, NULL);
	BPT_CHECK(compare_remote(false, json, rjson, err, 60000) == 0, "compare --remote --format json");
	check("keys", ljson, rjson);
	printf("ok: compare --remote to a standing agent with the key: the same columns and json keys, the proof\n");
}

/* tso - TSO on or off on both ends' veth (in each namespace), by ethtool as a user does it. */
static void tso(bool on)
{
	char cmd[200];

	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "ip netns exec %s ethtool -K %s tso %s", h.tb.ns[i], h.tb.dev[i],
			 on ? "on" : "off");
		BPT_CHECK(system(cmd) == 0, "%s failed", cmd);
	}
}

/*
 * 1b. the diagnosis on the remote end: with TSO on over veth, a busy-poll cell shows no busy
 * polling, and the server's line names TSO on B's device, a fact only B's agent can read
 */
static void remote_tso(void)
{
	char out[96], err[96];
	const char *busy[] = { "--modes", BUSY, "--format", "json", "-q", NULL };

	path_in(out, sizeof(out), "tso.json");
	path_in(err, sizeof(err), "tso.err");
	tso(true);
	BPT_CHECK(compare_remote(false, busy, out, err, 60000) == 0, "compare --remote with TSO on: %s", said(err));
	tso(false);
	check("tso", out, NULL);
	printf("ok: TSO on over veth: the server's diagnosis names TSO on B's device, as B's agent read it\n");
}

/* 2. coalescing on veth: said so, and the run completes */
static void coalescing_on_veth(void)
{
	char out[96], err[96];
	const char *one[] = { "--modes", "epoll:block", "--coalesce", "rx-usecs=0", "-q", "--format", "json", NULL };
	const char *matrix[] = { "--modes", "epoll:block", "--coalesce-matrix", "-q", NULL };

	path_in(out, sizeof(out), "coal.json");
	path_in(err, sizeof(err), "err");
	BPT_CHECK(compare_remote(false, one, out, err, 60000) == 0, "--coalesce on veth");
	check("veth", out, NULL);
	path_in(out, sizeof(out), "coal.txt");
	BPT_CHECK(compare_remote(true, matrix, out, err, 60000) == 0, "--coalesce-matrix on veth");
	BPT_CHECK(bpt_file_has(out, "client coalescing: not supported (coalesce-get bpva: the veth driver has no "
			       "interrupt coalescing)") &&
		  bpt_file_has(out, "server coalescing: not supported (coalesce-get bpvb: the veth driver has no "
			       "interrupt coalescing)") &&
		  bpt_file_has(out, "not run at rx-usecs=0: neither end can change its coalescing") &&
		  bpt_file_has(out, "epoll:block  "), "the header does not say it");
	printf("ok: coalescing on veth: unsupported in the header and json, the runs complete\n");
}

/* 2b. the open loop through the agent: every mode at every offered rate, the server there */
static void rates_through_the_agent(void)
{
	char out[96], err[96];
	const char *rates[] = { "--modes", "epoll:block", "--rates", "2000,max", "-q", "--format", "json", NULL };

	path_in(out, sizeof(out), "rates.json");
	path_in(err, sizeof(err), "err");
	BPT_CHECK(compare_remote(false, rates, out, err, 60000) == 0, "compare --remote --rates: %s", said(err));
	check("rates", out, NULL);
	printf("ok: compare --remote --rates 2000,max: a cell per offered rate, the server on B\n");
}

/* local_agent_of - the pid of compare's own agent (its child `busypoll agent --stdio -q`), 0 none yet. */
static pid_t local_agent_of(pid_t compare)
{
	char path[64], buf[512];
	pid_t found = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;

	BPT_CHECK(d, "/proc: %s", strerror(errno));
	while (!found && (de = readdir(d))) {
		pid_t pid = atoi(de->d_name), ppid = 0;
		FILE *f;
		size_t n;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (!(f = fopen(path, "re")))
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		if (!strrchr(buf, ')') || sscanf(strrchr(buf, ')') + 1, " %*c %d", &ppid) != 1 || ppid != compare)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		if (!(f = fopen(path, "re")))
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			buf[i] = buf[i] ? buf[i] : ' ';
		buf[n] = 0;
		if (strstr(buf, " agent --stdio -q"))
			found = pid;
	}
	closedir(d);
	return found;
}

/*
 * the header describes the run that ran: compare and its own agent SIGKILLed together
 * leave A's NAPI changed and journalled; the next compare's agent restores it at its
 * start, and the header's client end shows the NAPI as restored, not as the dead run left it
 */
static void header_after_restore(const struct bp_napi_info *a0)
{
	char out[96], log[96];
	const char *plain[] = { "--modes", "epoll:block", "--format", "json", "-q", NULL };
	char cmd[400];
	pid_t pid, la = 0;

	path_in(out, sizeof(out), "after-restore.json");
	path_in(log, sizeof(log), "after-restore.log");
	pid = spawn(h.tb.ns[0], (const char *const[]){ "compare", "--server-addr", h.tb.addr[1], "--flows", "1",
						       "--remote", hostport, "--key-file", key, "--modes",
						       "epoll:suspend", "-l", "60", NULL },
		    out, log);
	BPT_CHECK(wait_napi(0, a0, false, 20000), "epoll:suspend did not set A's NAPI settings");
	for (int waited = 0; !(la = local_agent_of(pid)) && waited < 5000; waited += 20)
		bpt_sleep_ms(20);
	BPT_CHECK(la > 0, "compare %d has no agent of its own", pid);
	kill(la, SIGKILL);
	kill(pid, SIGKILL);
	BPT_CHECK(finish(pid, 5000) == 128 + SIGKILL, "compare did not die of SIGKILL");
	BPT_CHECK(gone(la), "compare's agent %d outlived its SIGKILL", la);
	BPT_CHECK(!wait_napi(0, a0, true, 200), "A's NAPI restored with its agent killed: it cannot have been");
	BPT_CHECK(compare_remote(false, plain, out, log, 60000) == 0, "compare after the kill: %s", said(log));
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))[\"ends\"][0]; n = e[\"napi\"][0]; "
		 "sys.exit(0 if (n[\"defer_hard_irqs\"], n[\"gro_flush_timeout_ns\"], n[\"irq_suspend_timeout_ns\"]) == "
		 "(%u, %llu, %llu) else \"the header shows A as the killed run left it: %%s\" %% n)' '%s'",
		 a0->defer_hard_irqs, (unsigned long long)a0->gro_flush_timeout_ns,
		 (unsigned long long)a0->irq_suspend_timeout_ns, out);
	BPT_CHECK(system(cmd) == 0, "the header's client end is not as restored (%s)", out);
	BPT_CHECK(wait_napi(0, a0, true, 5000), "A's NAPI not restored by the next compare's agent");
	printf("ok: compare and its agent SIGKILLed: the next header shows A's NAPI as restored\n");
}

/*
 * the header describes the run that ran, on end B: after the standing agent was SIGKILLed
 * mid-run and started again (restoring from its journal), the next compare's header shows
 * B's NAPI as restored, not as the dead session left it, and B's net.core.busy_poll and
 * busy_read as its host holds them (the first namespace's: B has none of its own), or null
 * with why where they cannot be read; never -1
 */
static void header_after_agent_restart(const struct bp_napi_info *b0)
{
	const char *plain[] = { "--modes", "epoll:block", "--format", "json", "-q", NULL };
	char out[96], log[96], dhi[24], gft[24], ist[24], bp[24], br[24], cmd[600];

	path_in(out, sizeof(out), "after-agent.json");
	path_in(log, sizeof(log), "after-agent.log");
	BPT_CHECK(compare_remote(false, plain, out, log, 60000) == 0, "compare after the agent's restart: %s", said(log));
	snprintf(dhi, sizeof(dhi), "%u", b0->defer_hard_irqs);
	snprintf(gft, sizeof(gft), "%llu", (unsigned long long)b0->gro_flush_timeout_ns);
	snprintf(ist, sizeof(ist), "%llu", (unsigned long long)b0->irq_suspend_timeout_ns);
	host_sysctl("busy_poll", bp, sizeof(bp));
	host_sysctl("busy_read", br, sizeof(br));
	snprintf(cmd, sizeof(cmd), "python3 '%s' end-b '%s' %s %s %s %s %s", checker, out, dhi, gft, ist, bp, br);
	BPT_CHECK(system(cmd) == 0, "end B in the header after the agent's restart (%s)", out);
	printf("ok: after the agent's restart the header shows B's NAPI as restored and its host's sysctls "
	       "(%s, %s)\n", bp, br);
}

/* 3. restore: normal end, compare SIGKILLed, the agent SIGKILLed and restarted */
static void restores(void)
{
	struct bp_napi_info a0, b0;
	char out[96], log[96];
	const char *suspend[] = { "--modes", "epoll:suspend", "--format", "json", NULL };
	const char *longer[] = { "--modes", "epoll:suspend", "-l", "60", NULL };
	const char *args[40];
	pid_t pid;
	int n = 0, srv;

	path_in(out, sizeof(out), "restore.json");
	path_in(log, sizeof(log), "restore.log");
	napi_values(0, &a0);
	napi_values(1, &b0);
	BPT_CHECK(compare_remote(true, suspend, out, log, 60000) == 0, "compare --remote epoll:suspend");
	BPT_CHECK(bpt_file_has(log, "server 1 started: rr"), "the agent did not start a server");
	check("ranat", out, NULL);
	BPT_CHECK(wait_napi(1, &b0, true, 5000) && wait_napi(0, &a0, true, 5000), "not restored after a normal end");
	printf("ok: after a normal end both ends' NAPI settings are as before\n");

	/* compare SIGKILLed mid-run: its ssh sees its stdin end, so does its own agent */
	args[n++] = "compare";
	args[n++] = "--server-addr";
	args[n++] = h.tb.addr[1];
	args[n++] = "--flows";
	args[n++] = "1";
	args[n++] = "--remote";
	args[n++] = BPT_SSH_HOST;
	args[n++] = "--ssh";
	args[n++] = ssh_cmd;
	args[n++] = "--agent-cmd";
	args[n++] = agent_cmd;
	for (int i = 0; longer[i]; i++)
		args[n++] = longer[i];
	args[n] = NULL;
	pid = spawn(h.tb.ns[0], args, out, log);
	BPT_CHECK(wait_napi(1, &b0, false, 20000) && wait_napi(0, &a0, false, 20000),
		  "epoll:suspend did not set both ends' NAPI settings");
	srv = server_pid(log);
	BPT_CHECK(srv > 0, "no server pid in the log");
	/* ip netns exec execs: pid is compare itself */
	kill(pid, SIGKILL);
	BPT_CHECK(finish(pid, 5000) == 128 + SIGKILL, "compare did not die of SIGKILL");
	BPT_CHECK(wait_napi(1, &b0, true, 10000), "B's NAPI not restored after compare was SIGKILLed");
	BPT_CHECK(wait_napi(0, &a0, true, 10000), "A's NAPI not restored after compare was SIGKILLed");
	BPT_CHECK(gone(srv), "the server %d outlived its session", srv);
	printf("ok: compare SIGKILLed mid-run: both ends restored, the server gone\n");
	header_after_restore(&a0);

	/* the standing agent SIGKILLed mid-run: nothing restores until it starts again */
	pid = spawn(h.tb.ns[0], (const char *const[]){ "compare", "--server-addr", h.tb.addr[1], "--flows", "1",
						       "--remote", hostport, "--key-file", key, "--modes",
						       "epoll:suspend", "-l", "60", NULL },
		    out, log);
	BPT_CHECK(wait_napi(1, &b0, false, 20000), "epoll:suspend did not set B's NAPI settings");
	BPT_CHECK(bpt_agent_wait_log(&standing, " started: rr, pid ", 5000), "no server start in the agent's log");
	srv = atoi(strstr(standing.log, " started: rr, pid ") + strlen(" started: rr, pid "));
	BPT_CHECK(bpt_agent_end(&standing, SIGKILL, 5000) == 128 + SIGKILL, "the agent did not die of SIGKILL");
	BPT_CHECK(gone(srv), "the server %d outlived its agent", srv);
	BPT_CHECK(finish(pid, 30000) == 1, "compare did not fail when the agent died");
	BPT_CHECK(wait_napi(0, &a0, true, 10000), "A's NAPI not restored after its run failed");
	BPT_CHECK(!wait_napi(1, &b0, true, 200), "B's NAPI restored with no agent alive: it cannot have been");
	start_standing();
	BPT_CHECK(bpt_agent_wait_log(&standing, "is gone; restoring what it changed", 5000),
		  "the restarted agent did not restore");
	BPT_CHECK(wait_napi(1, &b0, true, 5000), "B's NAPI not restored by the restarted agent");
	printf("ok: the agent SIGKILLed mid-run and started again: B's NAPI restored from its journal\n");
	header_after_agent_restart(&b0);
}

/*
 * 5. a host another session holds: while one compare runs through the standing agent, a
 * second is refused before any cell (exit 2, one line on stderr naming the holder, nothing
 * on stdout); the first runs on and restores as always
 */
static void busy_host(void)
{
	struct bp_napi_info b0;
	char out[96], log[96], out2[96], err2[96];
	const char *plain[] = { "--modes", "epoll:block", "-q", NULL };
	FILE *f;
	char line[1024];
	int lines = 0;
	pid_t pid;

	path_in(out, sizeof(out), "holder.txt");
	path_in(log, sizeof(log), "holder.log");
	path_in(out2, sizeof(out2), "busy.txt");
	path_in(err2, sizeof(err2), "busy.err");
	napi_values(1, &b0);
	pid = spawn(h.tb.ns[0], (const char *const[]){ "compare", "--server-addr", h.tb.addr[1], "--flows", "1",
						       "--remote", hostport, "--key-file", key, "--modes",
						       "epoll:suspend", "-l", "60", NULL },
		    out, log);
	BPT_CHECK(wait_napi(1, &b0, false, 20000), "epoll:suspend did not set B's NAPI settings");
	BPT_CHECK(compare_remote(false, plain, out2, err2, 60000) == 2,
		  "a compare against a host another session holds did not exit 2: %s", said(err2));
	f = fopen(err2, "re");
	BPT_CHECK(f, "%s: %s", err2, strerror(errno));
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	BPT_CHECK(lines == 1, "the refusal is %d lines, not one: %s", lines, said(err2));
	BPT_CHECK(bpt_file_has(err2, "is busy: ") && bpt_file_has(err2, "another session is changing this host's settings (pid ") &&
			  bpt_file_has(err2, "no cell was run"),
		  "the refusal does not name the holder: %s", said(err2));
	f = fopen(out2, "re");
	BPT_CHECK(f && fgetc(f) == EOF, "a refused compare printed on stdout (a header?): %s", out2);
	fclose(f);
	kill(pid, SIGTERM);
	BPT_CHECK(finish(pid, 30000) == 130, "the holding compare did not end with 130 on SIGTERM: %s", said(log));
	BPT_CHECK(wait_napi(1, &b0, true, 10000), "B's NAPI not restored after the holder ended");
	printf("ok: a host another session holds: the second compare refused before any cell, naming the holder\n");
}

/*
 * 6. tune --remote through the standing agent: the search and its confirmation between the
 * two namespaces, each candidate's server on B; the json says two hosts, the answer met and
 * confirmed, epoll:suspend proven on both ends (B's server busy polled), tuned's recipe not
 * measured with why, the coalescing not in the space (veth has none) with why; B's NAPI as
 * before once it ends, and after tune is SIGKILLed mid-run
 */
static void tune_remote(void)
{
	struct bp_napi_info b0;
	char out[96], err[96];
	pid_t pid;
	int rc;

	path_in(out, sizeof(out), "tune.json");
	path_in(err, sizeof(err), "tune.err");
	napi_values(1, &b0);
	rc = finish(spawn(h.tb.ns[0], (const char *const[]){ "tune", "--remote", hostport, "--key-file", key,
							      "--server-addr", h.tb.addr[1], "--goal", "p99=100ms",
							      "--modes", "epoll:block;epoll:suspend", "--budget", "10s",
							      "--format", "json", "-q", NULL },
			   out, err),
		    120000);
	BPT_CHECK(rc == 0, "tune --remote exited %d: %s", rc, said(err));
	check("tune", out, NULL);
	BPT_CHECK(wait_napi(1, &b0, true, 5000), "B's NAPI not as before after tune --remote");
	printf("ok: tune --remote: the search and confirmation with the server on B, proven, B restored\n");

	/* SIGKILLed mid-run: the standing agent sees its session end and puts B's NAPI back */
	pid = spawn(h.tb.ns[0], (const char *const[]){ "tune", "--remote", hostport, "--key-file", key,
						       "--server-addr", h.tb.addr[1], "--goal", "p99=100ms",
						       "--modes", "epoll:suspend", "--budget", "120s", "-q", NULL },
		    out, err);
	BPT_CHECK(wait_napi(1, &b0, false, 20000), "tune's epoll:suspend did not set B's NAPI settings: %s", said(err));
	kill(pid, SIGKILL);
	BPT_CHECK(finish(pid, 5000) == 128 + SIGKILL, "tune did not die of SIGKILL");
	BPT_CHECK(wait_napi(1, &b0, true, 10000), "B's NAPI not restored after tune --remote was SIGKILLed");
	printf("ok: tune --remote SIGKILLed mid-run: B's NAPI restored by its agent\n");
}

/* free_port_in_b - a TCP port nothing in B listens on now (bound to 0 and let go). */
static uint16_t free_port_in_b(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int home, fd;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&h.tb, 1) == 0, "%s", bp_last_error());
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	BPT_CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		  getsockname(fd, (struct sockaddr *)&a, &len) == 0, "a free port in B: %s", strerror(errno));
	close(fd);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	return ntohs(a.sin_port);
}

/* 4. pingpong --remote (standing agent) and perf --remote (ssh) */
static void pingpong_and_perf(void)
{
	char out[96], err[96], port[16];
	const char *pp[] = { "pingpong", "--client", h.tb.addr[1], "--remote", hostport, "--key-file", key,
			     "--matrix", "--mode", BUSY, "-n", "500", "--runs", "1", "--warmup-count", "50",
			     "--cpus", "0", "--server-cpus", "1", "--format", "json", "-q", NULL };
	char target[64];
	const char *perf[] = { "perf", "--target", target, "--nqn", "nqn.2024-01.io.busypoll:twohost",
			       "--remote", BPT_SSH_HOST, "--ssh", ssh_cmd, "--agent-cmd", agent_cmd,
			       "--spawn-target", "--ns ram:16M", "--target-config", "--mode epoll:block",
			       "--target-config", "--mode " BUSY, "--runtime", "0.5", "--iodepth", "2",
			       "--format", "json", "-q", NULL };

	path_in(out, sizeof(out), "pp.json");
	path_in(err, sizeof(err), "err");
	BPT_CHECK(finish(spawn(h.tb.ns[0], pp, out, err), 60000) == 0, "pingpong --remote: %s", said(err));
	check("pingpong", out, NULL);
	printf("ok: pingpong --remote --matrix: the agent's server busy polled in its busy row only\n");
	snprintf(port, sizeof(port), "%u", free_port_in_b());
	snprintf(target, sizeof(target), "%s:%s", h.tb.addr[1], port);
	path_in(out, sizeof(out), "perf.json");
	BPT_CHECK(finish(spawn(h.tb.ns[0], perf, out, err), 60000) == 0, "perf --remote: %s", said(err));
	check("perf", out, NULL);
	printf("ok: perf --remote: each target configuration started on B, its counters read\n");
}

int main(void)
{
	char cmd[512], name[32];
	FILE *f;

	bpt_busypoll();
	if (system("command -v python3 >/dev/null 2>&1")) {
		fprintf(stderr, "SKIP: python3 is not installed\n");
		return BPT_SKIP;
	}
	bpt_testbed_name("cmr", name, sizeof(name));
	bpt_twohost_up(&h, name);
	bpt_tmpdir("cmp-remote", dir, sizeof(dir));
	bpt_tmpdir("cmp-remote-ssh", state_ssh, sizeof(state_ssh));
	bpt_tmpdir("cmp-remote-tcp", state_tcp, sizeof(state_tcp));
	snprintf(key, sizeof(key), "%s/agent.key", dir);
	snprintf(checker, sizeof(checker), "%s/check.py", dir);
	f = fopen(checker, "we");
	BPT_CHECK(f && fputs(CHECKER, f) >= 0 && fclose(f) == 0, "cannot write %s", checker);
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' >/dev/null", bpt_busypoll(), key);
	BPT_CHECK(system(cmd) == 0, "--new-key");
	snprintf(ssh_cmd, sizeof(ssh_cmd), "ssh -F %s", h.ssh_config);
	snprintf(agent_cmd, sizeof(agent_cmd), "%s agent --stdio --state-dir %s", bpt_busypoll(), state_ssh);
	start_standing();

	columns_and_proof();
	remote_tso();
	coalescing_on_veth();
	rates_through_the_agent();
	restores();
	busy_host();
	tune_remote();
	pingpong_and_perf();

	BPT_CHECK(bpt_agent_end(&standing, SIGTERM, 5000) == 0, "the standing agent's exit");
	bpt_twohost_down(&h);
	printf("ok\n");
	return 0;
}
