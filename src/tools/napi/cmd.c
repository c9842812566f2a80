/* SPDX-License-Identifier: MIT */
/*
 * busypoll napi list|get ID|set ID key=value... [--device DEV] [--netns NS] [--format F]
 * busypoll napi get|set --device DEV [knob=value...]
 *
 * The per-NAPI settings over the netdev generic netlink family (libbusypoll's
 * bp_napi_*), and the device-wide sysfs knobs. --netns moves this (single-threaded)
 * process into a named namespace first, so netlink and if_indextoname answer for
 * that namespace; sysfs does not follow setns, so knobs there go through
 * bp_netns_dev_*_knob, which mounts the namespace's own sysfs in a child.
 *
 * Exit: 0; 1 when the kernel call fails; 2 for bad input (what was named does not
 * exist: a NAPI id, a namespace, a device) and for what this kernel or process
 * cannot do (no privilege, a setting the kernel lacks), like every subcommand.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include "tools/bed/testbed.h"

#include "tools/common/commands.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/opt.h"
#include "tools/common/values.h"

#define SUB "napi"

enum napi_action { ACT_LIST, ACT_GET, ACT_SET };

struct napi_cli {
	TOOL_COMMON;              /* quiet, format */
	enum napi_action act;
	bool have_id;
	uint32_t id;
	char device[IFNAMSIZ];    /* "" none */
	char netns[256];          /* "" none */
	bp_napi_settings set;     /* ACT_SET with an ID */
	struct napi_knobs knobs;  /* ACT_SET with --device */
};

/* ---- command line ---- */

static int parse_id(const char *s, uint32_t *id, char *err, size_t errlen)
{
	uint64_t v;
	bool neg;

	if (tool_parse_u64(s, &v, &neg) || v == 0 || v > UINT32_MAX)
		return tool_fail(err, errlen, "'%s' is not a NAPI id (a whole number 1..%" PRIu32
				   "; `busypoll napi list` shows them)", s, UINT32_MAX);
	*id = (uint32_t)v;
	return 0;
}

static int parse_device(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			size_t errlen)
{
	struct napi_cli *c = base;

	if (!*v || strlen(v) >= IFNAMSIZ || strchr(v, '/'))
		return tool_fail(err, errlen, "%s '%s' is not a device name", name, v);
	snprintf(c->device, sizeof(c->device), "%s", v);
	return 0;
}

static int parse_netns(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	struct napi_cli *c = base;

	if (!*v || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, "..") || strlen(v) >= sizeof(c->netns))
		return tool_fail(err, errlen, "%s '%s' is not a namespace name", name, v);
	snprintf(c->netns, sizeof(c->netns), "%s", v);
	return 0;
}

static const struct opt_spec napi_specs[] = {
	{ .name = "netns", .kind = OPT_CUSTOM, .parse = parse_netns, .arg = "NS",
	  .help = "act inside named network namespace NS (ip netns), e.g.\na test bed end: --netns bp-busypoll-b (needs root)" },
	{ .name = "device", .kind = OPT_CUSTOM, .parse = parse_device, .arg = "DEV",
	  .help = "the device (its name in that namespace)" },
};

/* napi_check - the action and its arguments, from the positionals. */
static int napi_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct napi_cli *c = base;
	int pos = 0, rc;

	if (pos >= seen->npos)
		return tool_fail(err, errlen, "list, get or set? see busypoll napi --help");
	if (!strcmp(seen->pos[pos], "list"))
		c->act = ACT_LIST;
	else if (!strcmp(seen->pos[pos], "get"))
		c->act = ACT_GET;
	else if (!strcmp(seen->pos[pos], "set"))
		c->act = ACT_SET;
	else
		return tool_fail(err, errlen, "unknown action '%s' (list, get or set)", seen->pos[pos]);
	pos++;

	if (c->act == ACT_LIST) {
		if (pos < seen->npos)
			return tool_fail(err, errlen, "list takes no arguments, not '%s' (a device: --device DEV)",
					 seen->pos[pos]);
		return 0;
	}
	/* get/set: a NAPI id, or the device-wide knobs of --device */
	if (pos < seen->npos && !strchr(seen->pos[pos], '=')) {
		if (c->device[0])
			return tool_fail(err, errlen, "give a NAPI id or --device DEV, not both");
		if ((rc = parse_id(seen->pos[pos], &c->id, err, errlen)))
			return rc;
		c->have_id = true;
		pos++;
	}
	if (!c->have_id && !c->device[0])
		return tool_fail(err, errlen, "%s needs a NAPI id (see `busypoll napi list`) or --device DEV",
				 c->act == ACT_GET ? "get" : "set");
	if (c->act == ACT_GET) {
		if (pos < seen->npos)
			return tool_fail(err, errlen, "get takes one id, not '%s' too", seen->pos[pos]);
		return 0;
	}
	if (pos >= seen->npos)
		return tool_fail(err, errlen, "set needs at least one %s", c->have_id ?
				 "key=value (e.g. defer-hard-irqs=2 gro-flush-timeout=200000)" :
				 "knob=value (e.g. gro_flush_timeout=200000)");
	for (; pos < seen->npos; pos++) {
		rc = c->have_id ? napi_parse_setting(seen->pos[pos], &c->set, err, errlen)
				: napi_parse_knob(seen->pos[pos], &c->knobs, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static const struct opt_table napi_table = OPT_TABLE(napi_specs, napi_check);

static const struct opt_cmd napi_cmd = {
	.name = "napi",
	.usage = "usage: busypoll napi list [--device DEV] [options]\n"
		 "       busypoll napi get ID [options]\n"
		 "       busypoll napi set ID key=value... [options]\n"
		 "       busypoll napi get --device DEV [options]\n"
		 "       busypoll napi set --device DEV knob=value... [options]\n"
		 "\n"
		 "Per-NAPI settings over the kernel's netdev netlink family (Linux 6.13+ to set),\n"
		 "and the device-wide sysfs knobs. Timeouts are in nanoseconds.\n"
		 "\n"
		 "  list                 every NAPI instance of the namespace (of DEV with\n"
		 "                       --device)\n"
		 "  get ID               one NAPI instance\n"
		 "  set ID key=value...  change it (needs CAP_NET_ADMIN); keys:\n"
		 "                         defer-hard-irqs=N       0..2147483647\n"
		 "                         gro-flush-timeout=NS\n"
		 "                         irq-suspend-timeout=NS  (needs the two above to act)\n"
		 "                         threaded=0|1\n"
		 "  get --device DEV     the device-wide sysfs knobs of DEV\n"
		 "  set --device DEV knob=value...  napi_defer_hard_irqs=N gro_flush_timeout=NS\n"
		 "                       (writing one sets it for every NAPI of DEV)\n\n",
	.epilog = "\n`set` prints the settings as they are afterwards.\n"
		  "\nExit status: 0 done, 1 the kernel refused or failed, 2 bad input (an option, a\n"
		  "NAPI id, device or namespace that does not exist, no permission).\n",
	.max_positional = 64,
	.options_after_positional = true, /* "set ID k=v --netns NS" */
};

/* Returns 0, 1 after --help, or -EINVAL with one line in err. */
static int parse_cli(int argc, char **argv, struct napi_cli *c, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &c->common },
		{ &napi_table, c },
	};

	memset(c, 0, sizeof(*c));
	return opt_parse(&napi_cmd, layers, 2, argc, argv, NULL, err, errlen);
}

/* ---- running ---- */

/* Report a failed library call with its message; privilege failures say what to do. */
static int lib_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		bp_tool_error(SUB, "%s; run it with sudo", bp_last_error());
	else
		bp_tool_error(SUB, "%s", bp_last_error());
	return bp_exit_for(err);
}

/*
 * A missing NAPI id: the kernel only finds ids of the socket's namespace, so an id
 * read from a test bed's `status` is "missing" without --netns. Say that.
 */
static int napi_error(const struct napi_cli *c, int err)
{
	if (err == -ENOENT && !c->netns[0]) {
		bp_tool_error(SUB, "%s; for a namespace's NAPIs add --netns NS (e.g. --netns "
			      "bp-busypoll-b)", bp_last_error());
		return BP_EXIT_USAGE; /* what was named does not exist: bad input */
	}
	return lib_error(err);
}

/* em_netns - the namespace the command acted in, null for its own. */
static void em_netns(struct emit *e, const struct napi_cli *c)
{
	if (c->netns[0])
		em_string(e, "netns", c->netns, sizeof(c->netns));
	else
		em_null(e, "netns");
}

/* napi_record - one NAPI as a json object or a csv row: the namespace, then its fields. */
static void napi_record(struct emit *e, const struct napi_cli *c, const struct bp_napi_info *n)
{
	char dev[IF_NAMESIZE] = "";

	if (n && !if_indextoname(n->ifindex, dev))
		dev[0] = '\0';
	em_begin(e, NULL, false);
	em_netns(e, c);
	napi_emit(e, n, dev);
	em_end(e);
}

/*
 * print_napis - the NAPIs in c's format: json one object (get/set) or
 * {"netns", "napi": [...]} (list); csv a header and a row each; a table.
 */
static void print_napis(FILE *out, const struct napi_cli *c, const struct bp_napi_info *v, int n, bool list)
{
	static const struct bp_napi_info none;
	struct emit e = { .out = out, .kind = EMIT_JSON };

	if (c->format == TOOL_FORMAT_JSON && !list) {
		napi_record(&e, c, &v[0]);
		fputc('\n', out);
	} else if (c->format == TOOL_FORMAT_JSON) {
		em_begin(&e, NULL, false);
		em_netns(&e, c);
		em_array_begin(&e, "napi");
		for (int i = 0; i < n; i++) {
			char dev[IF_NAMESIZE] = "";

			if (!if_indextoname(v[i].ifindex, dev))
				dev[0] = '\0';
			em_begin(&e, NULL, false);
			napi_emit(&e, &v[i], dev);
			em_end(&e);
		}
		em_array_end(&e);
		em_end(&e);
		fputc('\n', out);
	} else if (c->format == TOOL_FORMAT_CSV) {
		e.kind = EMIT_CSV_HEADER;
		napi_record(&e, c, &none);
		fputc('\n', out);
		for (int i = 0; i < n; i++) {
			e = (struct emit){ .out = out, .kind = EMIT_CSV_ROW };
			napi_record(&e, c, &v[i]);
			fputc('\n', out);
		}
	} else if (n == 0) {
		/* not an error, but worth a why: it is the usual surprise */
		fprintf(out, "no NAPI instances %s%s (loopback has none; veth has them with GRO on)\n",
			c->device[0] ? "on " : "in this network namespace", c->device);
	} else {
		napi_table_header(out, NULL);
		for (int i = 0; i < n; i++) {
			char dev[IF_NAMESIZE] = "";

			if (!if_indextoname(v[i].ifindex, dev))
				dev[0] = '\0';
			napi_table_row(out, NULL, &v[i], dev);
		}
	}
}

/* Every NAPI of the namespace (ifindex 0) or of one device. */
static int do_list(const struct napi_cli *c, uint32_t ifindex)
{
	struct bp_napi_info *v = NULL;
	size_t cap = 64;
	int n;

	/* the list can grow between two dumps: retry with what the kernel said */
	for (int tries = 0;; tries++) {
		struct bp_napi_info *nv = realloc(v, cap * sizeof(*v));

		if (!nv) {
			free(v);
			bp_tool_error(SUB, "out of memory");
			return BP_EXIT_FAIL;
		}
		v = nv;
		n = bp_napi_list(ifindex, v, cap);
		if (n < 0) {
			free(v);
			return lib_error(n);
		}
		if ((size_t)n <= cap || tries == 3)
			break;
		cap = (size_t)n + 16;
	}
	if ((size_t)n > cap)
		n = (int)cap;
	print_napis(stdout, c, v, n, true);
	free(v);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

static int do_get(const struct napi_cli *c)
{
	struct bp_napi_info n;
	int rc = bp_napi_get(c->id, &n);

	if (rc)
		return napi_error(c, rc);
	print_napis(stdout, c, &n, 1, false);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

static int do_set(const struct napi_cli *c)
{
	int rc = bp_napi_set(c->id, &c->set);

	if (rc)
		return napi_error(c, rc);
	return do_get(c);
}

/* Knobs are read and written where the device is: our sysfs, or the namespace's. */
static int knob_io(const struct napi_cli *c, int knob, bool set, uint64_t *v)
{
	const char *name = napi_knob_names[knob];

	if (c->netns[0])
		return set ? bp_netns_dev_set_knob(c->netns, c->device, name, *v)
			   : bp_netns_dev_get_knob(c->netns, c->device, name, v);
	return set ? bp_dev_set_knob(c->device, name, *v) : bp_dev_get_knob(c->device, name, v);
}

struct knobs_view {
	const struct napi_cli *c;
	uint32_t ifindex;
	const uint64_t *v;
};

/* walk_knobs - the device, its namespace and its knobs as one record. */
static void walk_knobs(struct emit *e, const void *arg)
{
	const struct knobs_view *k = arg;

	em_begin(e, NULL, false);
	em_netns(e, k->c);
	em_string(e, "device", k->c->device, sizeof(k->c->device));
	em_u64(e, "ifindex", k->ifindex);
	em_begin(e, "knobs", false);
	for (int i = 0; i < NAPI_NKNOBS; i++)
		em_u64(e, napi_knob_names[i], k->v[i]);
	em_end(e);
	em_end(e);
}

/* print_knobs - the device-wide knobs in c's format. */
static void print_knobs(FILE *out, const struct napi_cli *c, uint32_t ifindex, const uint64_t *v)
{
	struct knobs_view k = { c, ifindex, v };

	if (c->format != TOOL_FORMAT_TABLE) {
		emit_one(out, c->format == TOOL_FORMAT_CSV, walk_knobs, &k);
		return;
	}
	fprintf(out, "%-15s %-20s %s\n", "DEVICE", "NAPI_DEFER_HARD_IRQS", "GRO_FLUSH_TIMEOUT");
	fprintf(out, "%-15s %-20" PRIu64 " %" PRIu64 "\n", c->device, v[NAPI_KNOB_DEFER], v[NAPI_KNOB_GRO_FLUSH]);
}

static int do_knobs(const struct napi_cli *c, uint32_t ifindex)
{
	uint64_t v[NAPI_NKNOBS];
	int rc;

	for (int i = 0; c->act == ACT_SET && i < NAPI_NKNOBS; i++) {
		uint64_t val = c->knobs.value[i];

		if (!c->knobs.has[i])
			continue;
		if ((rc = knob_io(c, i, true, &val))) {
			if (rc == -EACCES || rc == -EPERM)
				bp_tool_error(SUB, "writing %s of %s needs root (CAP_NET_ADMIN): %s; run "
					      "it with sudo", napi_knob_names[i], c->device,
					      bp_last_error());
			else
				bp_tool_error(SUB, "%s", bp_last_error());
			return bp_exit_for(rc);
		}
	}
	for (int i = 0; i < NAPI_NKNOBS; i++)
		if ((rc = knob_io(c, i, false, &v[i])))
			return lib_error(rc);
	print_knobs(stdout, c, ifindex, v);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

int cmd_napi(int argc, char **argv)
{
	struct napi_cli c;
	char err[256];
	uint32_t ifindex = 0;
	int rc = parse_cli(argc, argv, &c, err, sizeof(err));

	if (rc)
		return bp_opts_exit(SUB, rc, err);
	/*
	 * For good: this process only ever acts in one namespace. Entering first also
	 * lets if_nametoindex check --device where it lives.
	 */
	if (c.netns[0] && (rc = bp_netns_enter(c.netns))) {
		if (rc == -EPERM) {
			bp_tool_error(SUB, "--netns needs root (entering a network namespace needs "
				      "CAP_SYS_ADMIN); run it with sudo");
			return BP_EXIT_USAGE;
		}
		if (rc == -ENOENT) {
			bp_tool_error(SUB, "--netns %s: no such network namespace (`ip netns list` shows them)",
				      c.netns);
			return BP_EXIT_USAGE;
		}
		return lib_error(rc);
	}
	if (c.device[0]) {
		ifindex = if_nametoindex(c.device);
		if (!ifindex) {
			bp_tool_error(SUB, "--device %s: no such device%s%s", c.device,
				      c.netns[0] ? " in network namespace " : "", c.netns);
			return BP_EXIT_USAGE;
		}
	}
	if (c.act == ACT_LIST)
		return do_list(&c, ifindex);
	if (!c.have_id)
		return do_knobs(&c, ifindex);
	return c.act == ACT_GET ? do_get(&c) : do_set(&c);
}
