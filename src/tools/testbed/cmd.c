/* SPDX-License-Identifier: MIT */
/*
 * busypoll testbed up|down|status [--name N] [--queues N] [--threaded] [--format table|json]
 * busypoll testbed up --vm [--nic e1000e|virtio] [--queues N] [--name N]
 * busypoll testbed exec a|b [--name N] -- CMD...
 *
 * A place where kernel busy polling really engages: two network namespaces joined
 * by a veth pair with GRO on (libbusypoll's bp_testbed_*). The namespaces carry the
 * library's "bp-" prefix, so a user's own namespaces are never touched: `up`
 * refuses a name that exists, `down` removes only the two namespaces of that name.
 *
 * `status` enters each namespace in turn (this thread only, then back) to read
 * the device's state and its NAPIs' settings over netlink.
 *
 * With --vm (or for status, down and exec, a bed of that name that is a VM bed) the
 * bed is two qemu guests with a real NIC driver each: vm.h hands the action to the
 * bed's script, which says what it made on stdout.
 *
 * Exit: 0; 1 when building, reading or removing fails; 2 for bad input (the bed
 * named is missing, or already there), when not root, and for the errors of
 * cmd.h's table (bp_exit_for).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include "tools/bed/testbed.h"
#include "tools/testbed/vm.h"
#include "net/xps.h"

#include "tools/common/commands.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/opt.h"
#include "tools/common/values.h"

#define SUB "testbed"
#define DEFAULT_NAME "busypoll"
/* the mode the suggested rr commands use: the plain kernel busy-poll one */
#define SUGGESTED_MODE "epoll:napi"

enum tb_action { TB_UP, TB_DOWN, TB_STATUS, TB_EXEC };
enum tb_nic { TB_NIC_E1000E, TB_NIC_VIRTIO };
static const char *const nic_names[] = { "e1000e", "virtio", NULL };

struct tb_cli {
	TOOL_COMMON;              /* quiet, format */
	enum tb_action act;
	char name[BP_TESTBED_NAME_MAX + 1];
	int queues;
	bool threaded;
	bool vm;
	int nic;        /* enum tb_nic */
	char side[2];   /* exec: "a" or "b" */
};

/* ---- command line ---- */

static int parse_name(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct tb_cli *c = base;

	/* checked here, before anything is touched (the library checks it again) */
	if (!*v || strlen(v) > BP_TESTBED_NAME_MAX || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
								"0123456789_-") != strlen(v))
		return tool_fail(err, errlen, "%s '%s': 1..%d characters of A-Z a-z 0-9 _ -", name, v,
				 BP_TESTBED_NAME_MAX);
	snprintf(c->name, sizeof(c->name), "%s", v);
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct opt_spec tb_specs[] = {
	{ .name = "name", .kind = OPT_CUSTOM, .parse = parse_name, .arg = "N",
	  .help = "the bed's name: 1.." STR(BP_TESTBED_NAME_MAX) " of A-Z a-z 0-9 _ -", .dflt = DEFAULT_NAME },
	{ .name = "queues", .kind = OPT_INT, OPT_FIELD(struct tb_cli, queues), .lo = 1, .hi = BP_TESTBED_MAX_QUEUES,
	  .arg = "N", .help = "up: receive/transmit queues (= NAPIs) per end, 1.." STR(BP_TESTBED_MAX_QUEUES)
			      ";\ntx queue i sends what came in on rx queue i (XPS)",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "threaded", .kind = OPT_FLAG, OPT_FIELD(struct tb_cli, threaded),
	  .help = "up: threaded NAPI on both ends" },
	{ .name = "vm", .kind = OPT_FLAG, OPT_FIELD(struct tb_cli, vm),
	  .help = "up: two qemu guests with a real NIC driver instead of two namespaces\n"
		  "(docs/vm-bed.md); status, down and exec find a VM bed by its name" },
	{ .name = "nic", .kind = OPT_CHOICE, OPT_FIELD(struct tb_cli, nic), .choices = nic_names,
	  .arg = "MODEL", .help = "up --vm: the guests' NIC: e1000e (one queue, ITR behind rx-usecs)\n"
				  "or virtio (virtio-net, --queues queue pairs)", .dflt = OPT_DFLT_FIELD },
};

/* tb_check - the action, and the options only up takes. */
static int tb_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct tb_cli *c = base;

	if (seen->npos < 1)
		return tool_fail(err, errlen, "up, down, status or exec? see busypoll testbed --help");
	if (!strcmp(seen->pos[0], "up"))
		c->act = TB_UP;
	else if (!strcmp(seen->pos[0], "down"))
		c->act = TB_DOWN;
	else if (!strcmp(seen->pos[0], "status"))
		c->act = TB_STATUS;
	else if (!strcmp(seen->pos[0], "exec"))
		c->act = TB_EXEC;
	else
		return tool_fail(err, errlen, "unknown action '%s' (up, down, status or exec)", seen->pos[0]);
	if (c->act == TB_EXEC) {
		if (seen->npos < 2 || (strcmp(seen->pos[1], "a") && strcmp(seen->pos[1], "b")))
			return tool_fail(err, errlen, "exec: which guest, a or b? (busypoll testbed exec a -- CMD...)");
		snprintf(c->side, sizeof(c->side), "%s", seen->pos[1]);
	} else if (seen->npos > 1) {
		return tool_fail(err, errlen, "unexpected argument '%s' (a name goes with --name)", seen->pos[1]);
	}
	if (c->act != TB_UP && (c->vm || opt_given(seen, "nic")))
		return tool_fail(err, errlen, "%s only applies to up (status, down and exec find a VM bed by its name)",
				 c->vm ? "--vm" : "--nic");
	if (opt_given(seen, "nic") && !c->vm)
		return tool_fail(err, errlen, "--nic is for a VM bed: add --vm");
	if (c->vm && c->threaded)
		return tool_fail(err, errlen, "--threaded is for the namespace bed; in a VM bed set it per NAPI "
				 "(busypoll testbed exec a -- busypoll napi set ...)");
	if (c->vm && c->nic == TB_NIC_E1000E && c->queues > 1)
		return tool_fail(err, errlen, "--queues %d: e1000e has one queue; --nic virtio has several", c->queues);
	if (c->act != TB_UP && (opt_given(seen, "queues") || c->threaded))
		return tool_fail(err, errlen, "%s only applies to up (status shows what up made)",
				 opt_given(seen, "queues") ? "--queues" : "--threaded");
	return 0;
}

static const struct opt_table tb_table = OPT_TABLE(tb_specs, tb_check);

static const struct opt_cmd tb_cmd = {
	.name = "testbed",
	.usage = "usage: busypoll testbed up|down|status [options]\n"
		 "       busypoll testbed up --vm [--nic e1000e|virtio] [--queues N] [options]\n"
		 "       busypoll testbed exec a|b [--name N] -- CMD...\n"
		 "\n"
		 "A test bed where kernel busy polling really engages (loopback has no NAPI):\n"
		 "two network namespaces, bp-NAME-a and bp-NAME-b, joined by a veth pair with\n"
		 "GRO on, so each receive queue has a NAPI instance. Addresses come from a\n"
		 "private /30 that exists only inside the two namespaces. Needs root.\n"
		 "\n"
		 "  up                   build it; refuses if either namespace exists already\n"
		 "  down                 remove exactly the two namespaces `up` made\n"
		 "  status               both ends: namespace, device, address, NAPI ids and each\n"
		 "                       NAPI's settings, and how to run rr across it\n"
		 "  exec a|b -- CMD...   run CMD in guest a or b of a VM bed (sh -c; its output\n"
		 "                       and exit status come back)\n"
		 "\n"
		 "With --vm: two qemu guests (KVM when /dev/kvm opens, else TCG, whose timings are\n"
		 "not the hardware's) with a real NIC driver each, cabled through taps in a\n"
		 "namespace the bed owns; busypoll and ethtool are in the guests (docs/vm-bed.md).\n\n",
	.epilog = "\nA bed whose `testbed up` was killed half way, or a `busypoll compare` bed whose\n"
		  "process is gone, is removed by the next `testbed` command (said on stderr).\n"
		  "\nExit status: 0 done, 1 the kernel refused or failed, 2 bad input (an option, a\n"
		  "bed that exists already or does not exist, not root), 130 interrupted.\n",
	.max_positional = 2,
	.options_after_positional = true,
};

/* Returns 0, 1 after --help, or -EINVAL with one line in err. */
static int parse_cli(int argc, char **argv, struct tb_cli *c, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &c->common },
		{ &tb_table, c },
	};

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", DEFAULT_NAME);
	c->queues = 1;
	return opt_parse(&tb_cmd, layers, 2, argc, argv, NULL, err, errlen);
}

/* ---- reading a bed ---- */

struct end_state {
	int gro;        /* 1 on, 0 off, -1 unknown */
	int up;         /* IFF_UP: 1, 0, -1 unknown */
	int xps[BP_TESTBED_MAX_QUEUES];  /* the rx queue of each tx queue (xps_rxqs); -1 any */
	int nxps;       /* tx queues; -1 unknown */
	struct bp_napi_info napi[BP_TESTBED_MAX_QUEUES];
	int nnapi;
};

/* GRO and link state of dev, in the calling thread's namespace (best effort: -1). */
static void link_state(const char *dev, struct end_state *st)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	st->gro = st->up = -1;
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		st->up = (ifr.ifr_flags & IFF_UP) != 0;
	ifr.ifr_data = (void *)&ev;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		st->gro = ev.data != 0;
	close(fd);
}

/* Enter ns[side], read its device and NAPIs, come back. 0 or -errno (bp_last_error). */
static int read_end(const struct bp_testbed *tb, int side, struct end_state *st)
{
	int saved, rc, rc2;

	if ((rc = bp_netns_save(&saved)))
		return rc;
	rc = bp_testbed_enter(tb, side);
	if (!rc) {
		link_state(tb->dev[side], st);
		rc = bp_napi_list(tb->ifindex[side], st->napi, BP_TESTBED_MAX_QUEUES);
		if (rc >= 0) {
			st->nnapi = rc > BP_TESTBED_MAX_QUEUES ? BP_TESTBED_MAX_QUEUES : rc;
			rc = 0;
		}
	}
	/* coming back matters more than the read: the caller goes on in its namespace */
	rc2 = bp_netns_restore(saved);
	if (!rc && !rc2)
		st->nxps = bp_netns_xps_read(tb->ns[side], tb->dev[side], st->xps, BP_TESTBED_MAX_QUEUES);
	return rc ? rc : rc2;
}

/* ---- printing ---- */

/*
 * self_command - how the user should invoke this very program: "busypoll" when
 * PATH finds this binary under that name, else its absolute path, so that the
 * printed commands work when pasted (e.g. from a build directory).
 */
static void self_command(char *buf, size_t len)
{
	char self[PATH_MAX], cand[PATH_MAX];
	const char *path = getenv("PATH");
	struct stat me, st;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	snprintf(buf, len, "busypoll");
	if (n <= 0 || stat("/proc/self/exe", &me))
		return;
	self[n] = '\0';
	for (const char *p = path ? path : ""; *p;) {
		size_t dl = strcspn(p, ":");

		if (dl && (size_t)snprintf(cand, sizeof(cand), "%.*s/busypoll", (int)dl, p) < sizeof(cand) &&
		    stat(cand, &st) == 0) {
			/* the first match is what the shell would run */
			if (st.st_dev == me.st_dev && st.st_ino == me.st_ino)
				return;
			break;
		}
		p += dl;
		if (*p == ':')
			p++;
	}
	snprintf(buf, len, "%s", self);
}

struct commands {
	/* room for a full path to this program plus the arguments */
	char server[PATH_MAX + 256], client[PATH_MAX + 256], tune[PATH_MAX + 256], down[PATH_MAX + 256];
};

static void make_commands(const struct bp_testbed *tb, uint32_t server_napi, struct commands *cm)
{
	char self[PATH_MAX], name_opt[64] = "", id[16] = "ID";
	/* pin the two ends apart: a shared CPU turns the comparison into a scheduler test */
	bool pin = sysconf(_SC_NPROCESSORS_ONLN) >= 2;

	self_command(self, sizeof(self));
	if (strcmp(tb->name, DEFAULT_NAME))
		snprintf(name_opt, sizeof(name_opt), " --name %s", tb->name);
	if (server_napi)
		snprintf(id, sizeof(id), "%" PRIu32, server_napi);
	snprintf(cm->server, sizeof(cm->server), "ip netns exec %s %s rr --server%s --mode %s",
		 tb->ns[1], self, pin ? " --cpus 1" : "", SUGGESTED_MODE);
	snprintf(cm->client, sizeof(cm->client), "ip netns exec %s %s rr --client %s%s --mode %s",
		 tb->ns[0], self, tb->addr[1], pin ? " --cpus 0" : "", SUGGESTED_MODE);
	snprintf(cm->tune, sizeof(cm->tune),
		 "%s napi set %s defer-hard-irqs=2 gro-flush-timeout=200000 --netns %s", self, id,
		 tb->ns[1]);
	snprintf(cm->down, sizeof(cm->down), "%s testbed down%s", self, name_opt);
}

static const char *tristate(int v, const char *yes, const char *no)
{
	return v < 0 ? "?" : v ? yes : no;
}

static void print_table(FILE *out, const struct bp_testbed *tb, const struct end_state st[2],
			const struct commands *cm)
{
	fprintf(out, "test bed '%s': %d queue%s per end, threaded NAPI %s\n", tb->name, tb->queues,
		tb->queues == 1 ? "" : "s", tb->threaded ? "on" : "off");
	fprintf(out, "%-5s%-*s %-8s %-18s %-8s %-4s %s\n", "SIDE", (int)sizeof(tb->ns[0]) / 2,
		"NAMESPACE", "DEVICE", "ADDRESS", "IFINDEX", "GRO", "STATE");
	for (int i = 0; i < 2; i++) {
		char addr[INET_ADDRSTRLEN + 4];

		snprintf(addr, sizeof(addr), "%s/%d", tb->addr[i], BP_TESTBED_PREFIX_LEN);
		fprintf(out, "%-5c%-*s %-8s %-18s %-8" PRIu32 " %-4s %s\n", 'a' + i,
			(int)sizeof(tb->ns[0]) / 2, tb->ns[i], tb->dev[i], addr, tb->ifindex[i],
			tristate(st[i].gro, "on", "off"), tristate(st[i].up, "up", "down"));
	}
	for (int i = 0; i < 2; i++) {
		char map[BP_TESTBED_MAX_QUEUES * 16];
		bool symmetric;

		if (st[i].nxps <= 0) {
			fprintf(out, "%-5ctx->rx queues: ? (xps_rxqs not readable)\n", 'a' + i);
			continue;
		}
		symmetric = bp_xps_format(st[i].xps, st[i].nxps, map, sizeof(map));
		fprintf(out, "%-5ctx->rx queues: %s (%s)\n", 'a' + i, map,
			symmetric ? "symmetric: a reply leaves on its request's queue" : "not symmetric");
	}
	fprintf(out, "\nNAPI instances (timeouts in ns):\n");
	napi_table_header(out, "SIDE");
	for (int i = 0; i < 2; i++) {
		char side[2] = { (char)('a' + i), '\0' };

		for (int j = 0; j < st[i].nnapi; j++)
			napi_table_row(out, side, &st[i].napi[j], tb->dev[i]);
		if (st[i].nnapi == 0)
			fprintf(out, "%-5s(none: is GRO on and the link up?)\n", side);
	}
	fprintf(out, "\nrun the two ends (same mode on both; server in b, client in a):\n"
		"  %s\n  %s\n", cm->server, cm->client);
	fprintf(out, "tune a NAPI:  %s\nremove it:    %s\n", cm->tune, cm->down);
}

/* em_end_record - one end of the bed (side a or b) as a json object or a csv row. */
static void em_end_record(struct emit *e, const struct bp_testbed *tb, const struct end_state *st, int i)
{
	char side[2] = { (char)('a' + i), '\0' };

	em_begin(e, NULL, false);
	em_string(e, "bed", tb->name, sizeof(tb->name));
	em_string(e, "side", side, sizeof(side));
	em_string(e, "netns", tb->ns[i], sizeof(tb->ns[i]));
	em_string(e, "device", tb->dev[i], sizeof(tb->dev[i]));
	em_string(e, "address", tb->addr[i], sizeof(tb->addr[i]));
	em_u64(e, "ifindex", tb->ifindex[i]);
	if (st->gro < 0)
		em_null(e, "gro");
	else
		em_bool(e, "gro", st->gro);
	if (st->up < 0)
		em_null(e, "up");
	else
		em_bool(e, "up", st->up);
	if (e->kind == EMIT_JSON) {
		em_array_begin(e, "napi");
		for (int j = 0; j < st->nnapi; j++) {
			em_begin(e, NULL, false);
			napi_emit(e, &st->napi[j], NULL);
			em_end(e);
		}
		em_array_end(e);
	} else {
		int64_t ids[BP_TESTBED_MAX_QUEUES];

		for (int j = 0; j < st->nnapi; j++)
			ids[j] = st->napi[j].id;
		em_list(e, "napi_ids", ids, (size_t)st->nnapi);
	}
	{
		int64_t rxq[BP_TESTBED_MAX_QUEUES];
		size_t n = st->nxps > 0 ? (size_t)st->nxps : 0;

		/* the rx queue each tx queue sends for (XPS); -1 any */
		for (size_t j = 0; j < n; j++)
			rxq[j] = st->xps[j];
		em_list(e, "xps_rxqs", rxq, n);
	}
	em_end(e);
}

/* print_json - the bed, its two ends with their NAPIs, and the commands to use it. */
static void print_json(FILE *out, const struct bp_testbed *tb, const struct end_state st[2],
		       const struct commands *cm)
{
	struct emit e = { .kind = EMIT_JSON, .out = out };

	em_begin(&e, NULL, false);
	em_string(&e, "name", tb->name, sizeof(tb->name));
	em_int(&e, "queues", tb->queues);
	em_bool(&e, "threaded", tb->threaded);
	em_int(&e, "prefix_len", BP_TESTBED_PREFIX_LEN);
	em_array_begin(&e, "ends");
	for (int i = 0; i < 2; i++)
		em_end_record(&e, tb, &st[i], i);
	em_array_end(&e);
	em_begin(&e, "commands", false);
	em_string(&e, "server", cm->server, sizeof(cm->server));
	em_string(&e, "client", cm->client, sizeof(cm->client));
	em_string(&e, "tune", cm->tune, sizeof(cm->tune));
	em_string(&e, "down", cm->down, sizeof(cm->down));
	em_end(&e);
	em_end(&e);
	fputc('\n', out);
}

/* print_csv - a header and one row per end (its NAPI ids as one field). */
static void print_csv(FILE *out, const struct bp_testbed *tb, const struct end_state st[2])
{
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };

	em_end_record(&e, tb, &st[0], 0);
	fputc('\n', out);
	for (int i = 0; i < 2; i++) {
		e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
		em_end_record(&e, tb, &st[i], i);
		fputc('\n', out);
	}
}

/* ---- actions ---- */

static int show(const struct bp_testbed *tb, enum tool_format format)
{
	struct end_state st[2];
	struct commands cm;
	int rc;

	memset(st, 0, sizeof(st));
	for (int i = 0; i < 2; i++)
		if ((rc = read_end(tb, i, &st[i]))) {
			bp_tool_error(SUB, "test bed '%s', %s: %s", tb->name, tb->ns[i], bp_last_error());
			return bp_exit_for(rc);
		}
	make_commands(tb, st[1].nnapi ? st[1].napi[0].id : 0, &cm);
	if (format == TOOL_FORMAT_JSON)
		print_json(stdout, tb, st, &cm);
	else if (format == TOOL_FORMAT_CSV)
		print_csv(stdout, tb, st);
	else
		print_table(stdout, tb, st, &cm);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

/* The name as the user would type it in a suggested command. */
static const char *name_opt(const char *name, char *buf, size_t len)
{
	if (!strcmp(name, DEFAULT_NAME))
		buf[0] = '\0';
	else
		snprintf(buf, len, " --name %s", name);
	return buf;
}

/*
 * Block the signals a user ends a command with while the bed is being built or
 * removed, so that neither is left half done: a Ctrl-C still reaches the `ip`
 * children (same process group), which makes bp_testbed_up fail and remove what
 * it made; the caller then sees the signal pending.
 */
static void block_signals(bool block, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(block ? SIG_BLOCK : SIG_SETMASK, block ? &set : old, block ? old : NULL);
}

static bool signal_pending(void)
{
	sigset_t set;

	if (sigpending(&set))
		return false;
	return sigismember(&set, SIGINT) || sigismember(&set, SIGTERM) || sigismember(&set, SIGHUP);
}

static int do_up(const struct tb_cli *c)
{
	struct bp_testbed tb;
	sigset_t old;
	char nopt[64];
	int rc;

	block_signals(true, &old);
	/* who builds it, until it is built: a SIGKILL half way leaves a bed the next testbed removes */
	if ((rc = bp_testbed_mark_building(c->name, true)) != 0) {
		block_signals(false, &old);
		bp_tool_error(SUB, "%s", bp_last_error());
		return BP_EXIT_FAIL;
	}
	rc = bp_testbed_up(&tb, c->name, c->queues, c->threaded);
	bp_testbed_mark_building(c->name, false);
	if (signal_pending()) {
		/* the user asked to stop: leave nothing behind, then die as asked */
		if (!rc)
			bp_testbed_down(&tb);
		bp_tool_error(SUB, "interrupted; test bed '%s' not built", c->name);
		return BP_EXIT_INTERRUPTED; /* the pending signal stays blocked: exit, not killed */
	}
	block_signals(false, &old);
	if (rc == -EEXIST) {
		bp_tool_error(SUB, "test bed '%s' already exists; `busypoll testbed down%s` removes it",
			      c->name, name_opt(c->name, nopt, sizeof(nopt)));
		return BP_EXIT_USAGE;
	}
	if (rc) {
		bp_tool_error(SUB, "%s", bp_last_error());
		return bp_exit_for(rc);
	}
	if (c->format == TOOL_FORMAT_TABLE)
		printf("test bed '%s' is up\n\n", tb.name);
	return show(&tb, c->format);
}

static int do_status(const struct tb_cli *c)
{
	struct bp_testbed tb;
	char nopt[64];
	int rc = bp_testbed_open(&tb, c->name);

	if (rc == -ENOENT) {
		name_opt(c->name, nopt, sizeof(nopt));
		if (bp_testbed_exists(c->name))
			bp_tool_error(SUB, "test bed '%s' is incomplete (%s); `busypoll testbed down%s` "
				      "removes what is left", c->name, bp_last_error(), nopt);
		else
			bp_tool_error(SUB, "no test bed '%s'; `busypoll testbed up%s` builds it", c->name,
				      nopt);
		return BP_EXIT_USAGE;
	}
	if (rc) {
		bp_tool_error(SUB, "%s", bp_last_error());
		return bp_exit_for(rc);
	}
	return show(&tb, c->format);
}

/* pids whose network namespace is the one named ns (best effort; main threads only). */
static int ns_users(const char *ns, pid_t *pids, int max)
{
	char path[PATH_MAX];
	struct stat nst, st;
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	if (stat(path, &nst) || !(dir = opendir("/proc")))
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", d->d_name);
		if (stat(path, &st) == 0 && st.st_dev == nst.st_dev && st.st_ino == nst.st_ino) {
			if (n < max)
				pids[n] = (pid_t)atoi(d->d_name);
			n++;
		}
	}
	closedir(dir);
	return n;
}

/*
 * A namespace outlives its name while a process is inside it (and so does its end
 * of the veth): say so, or the user thinks `down` left nothing behind.
 */
static void warn_users(const struct bp_testbed *tb)
{
	for (int i = 0; i < 2; i++) {
		pid_t pids[4];
		char list[96] = "";
		size_t off = 0;
		int n = ns_users(tb->ns[i], pids, 4);

		if (n == 0)
			continue;
		for (int j = 0; j < n && j < 4 && off < sizeof(list); j++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d", j ? " " : "",
						(int)pids[j]);
		bp_tool_error(SUB, "note: %d process%s still in %s (pid %s%s); that namespace and its "
			      "veth end live until %s", n, n == 1 ? "" : "es", tb->ns[i], list,
			      n > 4 ? " ..." : "", n == 1 ? "it exits" : "they exit");
	}
}

/* walk_removed - {"name": the bed, "removed": true}. */
static void walk_removed(struct emit *e, const void *name)
{
	em_begin(e, NULL, false);
	em_string(e, "name", name, BP_TESTBED_NAME_MAX + 1);
	em_bool(e, "removed", true);
	em_end(e);
}

static int do_down(const struct tb_cli *c)
{
	struct bp_testbed tb;
	bool whole;
	sigset_t old;
	int rc;

	/* a whole bed: its namespaces are known, so who still uses them can be told */
	whole = bp_testbed_open(&tb, c->name) == 0;
	if (whole)
		warn_users(&tb);
	block_signals(true, &old);
	rc = whole ? bp_testbed_down(&tb) : bp_testbed_down_by_name(c->name);
	block_signals(false, &old);
	if (rc == -ENOENT) {
		bp_tool_error(SUB, "no test bed '%s'; nothing to remove", c->name);
		return BP_EXIT_USAGE;
	}
	if (rc) {
		bp_tool_error(SUB, "%s", bp_last_error());
		return bp_exit_for(rc);
	}
	if (c->format != TOOL_FORMAT_TABLE) {
		emit_one(stdout, c->format == TOOL_FORMAT_CSV, walk_removed, c->name);
	} else {
		printf("test bed '%s' removed%s\n", c->name, whole ? "" : " (it was incomplete)");
	}
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

/* stale_found - a bed left by a process that is gone, removed: said on stderr (not in a json document). */
static void stale_found(void *ctx, const char *line)
{
	const struct tb_cli *c = ctx;

	if (!c->quiet)
		bp_tool_error(SUB, "%s", line);
}

/*
 * vm_action - a VM bed's up, status, down or exec, run by its script (vm.h). cmd is
 * what followed "--" (exec's command, ncmd words). Returns the exit status.
 */
static int vm_action(const struct tb_cli *c, char **cmd, int ncmd)
{
	static const char *const act[] = { [TB_UP] = "up", [TB_DOWN] = "down", [TB_STATUS] = "status",
					   [TB_EXEC] = "exec" };
	const char *fmt = c->format == TOOL_FORMAT_JSON ? "json" : "table";
	char self[PATH_MAX], queues[16], *args[260];
	ssize_t n;
	int na = 0;

	if (c->format == TOOL_FORMAT_CSV) {
		bp_tool_error(SUB, "--format csv: a VM bed says table or json");
		return BP_EXIT_USAGE;
	}
	switch (c->act) {
	case TB_UP:
		/* this very program goes into the guests */
		if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
			bp_tool_error(SUB, "cannot find this program's own file (/proc/self/exe): %s",
				      n < 0 ? strerror(errno) : "empty");
			return BP_EXIT_FAIL;
		}
		self[n] = '\0';
		snprintf(queues, sizeof(queues), "%d", c->queues);
		args[na++] = (char *)nic_names[c->nic];
		args[na++] = queues;
		args[na++] = self;
		args[na++] = (char *)fmt;
		break;
	case TB_STATUS:
		args[na++] = (char *)fmt;
		break;
	case TB_DOWN:
		break;
	case TB_EXEC:
		if (ncmd > 256) {
			bp_tool_error(SUB, "exec: %d words is too many (at most 256)", ncmd);
			return BP_EXIT_USAGE;
		}
		args[na++] = (char *)c->side;
		for (int i = 0; i < ncmd; i++)
			args[na++] = cmd[i];
		break;
	}
	return tb_vm_run(act[c->act], c->name, args, na);
}

int cmd_testbed(int argc, char **argv)
{
	static const char *const why[] = {
		[TB_UP] = "it creates network namespaces",
		[TB_DOWN] = "it removes network namespaces",
		[TB_STATUS] = "it enters the test bed's network namespaces",
		[TB_EXEC] = "it talks to the guests' control ports",
	};
	struct tb_cli c;
	char err[256];
	int dash = argc, rc;

	/* exec's command follows "--" and is the guest's, not ours */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	if ((rc = parse_cli(dash, argv, &c, err, sizeof(err))))
		return bp_opts_exit(SUB, rc, err);
	if (c.act == TB_EXEC && dash >= argc - 1) {
		bp_tool_error(SUB, "exec: no command; busypoll testbed exec %s -- CMD...", c.side);
		return BP_EXIT_USAGE;
	}
	if (c.act != TB_EXEC && dash < argc) {
		bp_tool_error(SUB, "unexpected '--' (only exec takes a command after it)");
		return BP_EXIT_USAGE;
	}
	if (geteuid() != 0) {
		bp_tool_error(SUB, "needs root (%s); run it with sudo", why[c.act]);
		return BP_EXIT_USAGE;
	}
	if (c.vm || (c.act != TB_UP && tb_vm_exists(c.name)))
		return vm_action(&c, argv + dash + 1, dash < argc ? argc - dash - 1 : 0);
	if (c.act == TB_EXEC) {
		bp_tool_error(SUB, "no VM test bed '%s'; exec runs in the guests of one (testbed up --vm); in "
			      "the namespace bed use ip netns exec bp-%s-a CMD", c.name, c.name);
		return BP_EXIT_USAGE;
	}
	bp_testbed_reap_stale(stale_found, &c);
	switch (c.act) {
	case TB_UP:
		return do_up(&c);
	case TB_DOWN:
		return do_down(&c);
	case TB_STATUS:
		return do_status(&c);
	case TB_EXEC:
		break;
	}
	return BP_EXIT_FAIL;
}
