/* SPDX-License-Identifier: MIT */
/*
 * busypoll napi list|get ID|set ID key=value... [--device DEV] [--netns NS] [--format table|json]
 * busypoll napi get|set --device DEV [knob=value...]
 *
 * The per-NAPI settings over the netdev generic netlink family (libbusypoll's
 * bp_napi_*), and the device-wide sysfs knobs. --netns moves this (single-threaded)
 * process into a named namespace first, so netlink and if_indextoname answer for
 * that namespace; sysfs does not follow setns, so knobs there go through
 * bp_netns_dev_*_knob, which mounts the namespace's own sysfs in a child.
 *
 * Exit: 0; 1 when the kernel call fails or what was named does not exist; 2 for bad
 * input and for what this kernel or process cannot do (no privilege, a setting
 * the kernel lacks), like every busypoll subcommand.
 */
#include <errno.h>
#include <getopt.h>
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
#include "tools/common/options.h"

#define SUB "napi"

enum napi_action { ACT_LIST, ACT_GET, ACT_SET };

struct napi_cli {
	enum napi_action act;
	bool have_id;
	uint32_t id;
	const char *device;
	const char *netns;
	bool json;
	bp_napi_settings set;     /* ACT_SET with an ID */
	struct napi_knobs knobs;  /* ACT_SET with --device */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll napi list [--device DEV] [options]\n"
		"       busypoll napi get ID [options]\n"
		"       busypoll napi set ID key=value... [options]\n"
		"       busypoll napi get --device DEV [options]\n"
		"       busypoll napi set --device DEV knob=value... [options]\n"
		"\n"
		"Per-NAPI settings over the kernel's netdev netlink family (Linux 6.13+ to set),\n"
		"and the device-wide sysfs knobs. Timeouts are in nanoseconds.\n"
		"\n"
		"  list                 every NAPI instance of the namespace (of DEV with --device)\n"
		"  get ID               one NAPI instance\n"
		"  set ID key=value...  change it (needs CAP_NET_ADMIN); keys:\n"
		"                         defer-hard-irqs=N       0..2147483647\n"
		"                         gro-flush-timeout=NS\n"
		"                         irq-suspend-timeout=NS  (needs the two above to act)\n"
		"                         threaded=0|1\n"
		"  get --device DEV     the device-wide sysfs knobs of DEV\n"
		"  set --device DEV knob=value...  napi_defer_hard_irqs=N gro_flush_timeout=NS\n"
		"                       (writing one sets it for every NAPI of DEV)\n"
		"\n"
		"  --netns NS           act inside named network namespace NS (ip netns), e.g.\n"
		"                       a test bed end: --netns bp-busypoll-b (needs root)\n"
		"  --device DEV         the device (its name in that namespace)\n"
		"  --format table|json  output format (default table)\n"
		"  -h, --help           this text\n"
		"\n"
		"`set` prints the settings as they are afterwards.\n");
}

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

/* Returns 0, 1 after --help, or -EINVAL with one line in err. */
static int parse_cli(int argc, char **argv, struct napi_cli *c, char *err, size_t errlen)
{
	enum { OPT_DEVICE = 256, OPT_NETNS, OPT_FORMAT };
	static const struct option opts[] = {
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "netns", required_argument, NULL, OPT_NETNS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, pos, rc;

	memset(c, 0, sizeof(*c));
	optind = 0; /* GNU: full re-initialisation, so a second parse in one process works */
	opterr = 0;
	/* no '+': options may follow the positionals ("set ID k=v --netns NS") */
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 1;
		case OPT_DEVICE:
			if (!*optarg || strlen(optarg) >= IFNAMSIZ || strchr(optarg, '/'))
				return tool_fail(err, errlen, "--device '%s' is not a device name",
						   optarg);
			c->device = optarg;
			break;
		case OPT_NETNS:
			if (!*optarg || strchr(optarg, '/') || !strcmp(optarg, ".") ||
			    !strcmp(optarg, ".."))
				return tool_fail(err, errlen, "--netns '%s' is not a namespace name",
						   optarg);
			c->netns = optarg;
			break;
		case OPT_FORMAT: {
			static const char *const formats[] = { "table", "json", NULL };
			int f = tool_opt_choice("--format", optarg, formats, err, errlen);

			if (f < 0)
				return f;
			c->json = f == 1;
			break;
		}
		case ':': {
			char name[64];

			tool_bad_option_name(argc, argv, opts, name, sizeof(name));
			return tool_fail(err, errlen, "%s needs a value", name);
		}
		default:
			return tool_option_refused("napi", argc, argv, opts, err, errlen);
		}
	}
	pos = optind;
	if (pos >= argc)
		return tool_fail(err, errlen, "list, get or set? see busypoll napi --help");
	if (!strcmp(argv[pos], "list"))
		c->act = ACT_LIST;
	else if (!strcmp(argv[pos], "get"))
		c->act = ACT_GET;
	else if (!strcmp(argv[pos], "set"))
		c->act = ACT_SET;
	else
		return tool_fail(err, errlen, "unknown action '%s' (list, get or set)", argv[pos]);
	pos++;

	if (c->act == ACT_LIST) {
		if (pos < argc)
			return tool_fail(err, errlen, "list takes no arguments, not '%s' (a "
					   "device: --device DEV)", argv[pos]);
		return 0;
	}
	/* get/set: a NAPI id, or the device-wide knobs of --device */
	if (pos < argc && !strchr(argv[pos], '=')) {
		if (c->device)
			return tool_fail(err, errlen, "give a NAPI id or --device DEV, not both");
		if ((rc = parse_id(argv[pos], &c->id, err, errlen)))
			return rc;
		c->have_id = true;
		pos++;
	}
	if (!c->have_id && !c->device)
		return tool_fail(err, errlen, "%s needs a NAPI id (see `busypoll napi list`) or "
				   "--device DEV", c->act == ACT_GET ? "get" : "set");
	if (c->act == ACT_GET) {
		if (pos < argc)
			return tool_fail(err, errlen, "get takes one id, not '%s' too", argv[pos]);
		return 0;
	}
	if (pos >= argc)
		return tool_fail(err, errlen, "set needs at least one %s", c->have_id ?
				   "key=value (e.g. defer-hard-irqs=2 gro-flush-timeout=200000)" :
				   "knob=value (e.g. gro_flush_timeout=200000)");
	for (; pos < argc; pos++) {
		rc = c->have_id ? napi_parse_setting(argv[pos], &c->set, err, errlen)
				: napi_parse_knob(argv[pos], &c->knobs, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- running ---- */

/*
 * The exit status for a failed library call: what this kernel or process cannot
 * do, or input the kernel refused, is a usage problem (2); the rest is a failure.
 */
static int exit_for(int err)
{
	return err == -EPERM || err == -EACCES || err == -EOPNOTSUPP || err == -EINVAL
		       ? BP_EXIT_USAGE
		       : BP_EXIT_FAIL;
}

/* Report a failed library call with its message; privilege failures say what to do. */
static int lib_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		bp_tool_error(SUB, "%s; run it with sudo", bp_last_error());
	else
		bp_tool_error(SUB, "%s", bp_last_error());
	return exit_for(err);
}

/*
 * A missing NAPI id: the kernel only finds ids of the socket's namespace, so an id
 * read from a test bed's `status` is "missing" without --netns. Say that.
 */
static int napi_error(const struct napi_cli *c, int err)
{
	if (err == -ENOENT && !c->netns) {
		bp_tool_error(SUB, "%s; for a namespace's NAPIs add --netns NS (e.g. --netns "
			      "bp-busypoll-b)", bp_last_error());
		return BP_EXIT_FAIL;
	}
	return lib_error(err);
}

static void json_netns(FILE *out, const struct napi_cli *c)
{
	fputs("\"netns\": ", out);
	if (c->netns)
		json_string(out, c->netns, 256);
	else
		fputs("null", out);
}

static void print_one(FILE *out, const struct napi_cli *c, const struct bp_napi_info *n)
{
	char dev[IF_NAMESIZE] = "";

	if (!if_indextoname(n->ifindex, dev))
		dev[0] = '\0';
	if (c->json) {
		fputc('{', out);
		json_netns(out, c);
		fputs(", ", out);
		napi_json_members(out, n, dev);
		fputs("}\n", out);
	} else {
		napi_table_header(out, NULL);
		napi_table_row(out, NULL, n, dev);
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
	if (c->json) {
		printf("{");
		json_netns(stdout, c);
		printf(", \"napi\": [");
		for (int i = 0; i < n; i++) {
			char dev[IF_NAMESIZE] = "";

			if (!if_indextoname(v[i].ifindex, dev))
				dev[0] = '\0';
			printf("%s\n  {", i ? "," : "");
			napi_json_members(stdout, &v[i], dev);
			printf("}");
		}
		printf("%s]}\n", n ? "\n" : "");
	} else if (n == 0) {
		/* not an error, but worth a why: it is the usual surprise */
		printf("no NAPI instances %s%s (loopback has none; veth has them with GRO on)\n",
		       c->device ? "on " : "in this network namespace", c->device ? c->device : "");
	} else {
		napi_table_header(stdout, NULL);
		for (int i = 0; i < n; i++) {
			char dev[IF_NAMESIZE] = "";

			if (!if_indextoname(v[i].ifindex, dev))
				dev[0] = '\0';
			napi_table_row(stdout, NULL, &v[i], dev);
		}
	}
	free(v);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

static int do_get(const struct napi_cli *c)
{
	struct bp_napi_info n;
	int rc = bp_napi_get(c->id, &n);

	if (rc)
		return napi_error(c, rc);
	print_one(stdout, c, &n);
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

	if (c->netns)
		return set ? bp_netns_dev_set_knob(c->netns, c->device, name, *v)
			   : bp_netns_dev_get_knob(c->netns, c->device, name, v);
	return set ? bp_dev_set_knob(c->device, name, *v) : bp_dev_get_knob(c->device, name, v);
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
			return exit_for(rc);
		}
	}
	for (int i = 0; i < NAPI_NKNOBS; i++)
		if ((rc = knob_io(c, i, false, &v[i])))
			return lib_error(rc);
	if (c->json) {
		printf("{");
		json_netns(stdout, c);
		printf(", \"device\": ");
		json_string(stdout, c->device, IF_NAMESIZE);
		printf(", \"ifindex\": %" PRIu32 ", \"knobs\": {", ifindex);
		for (int i = 0; i < NAPI_NKNOBS; i++)
			printf("%s\"%s\": %" PRIu64, i ? ", " : "", napi_knob_names[i], v[i]);
		printf("}}\n");
	} else {
		printf("%-15s %-20s %s\n", "DEVICE", "NAPI_DEFER_HARD_IRQS", "GRO_FLUSH_TIMEOUT");
		printf("%-15s %-20" PRIu64 " %" PRIu64 "\n", c->device, v[NAPI_KNOB_DEFER],
		       v[NAPI_KNOB_GRO_FLUSH]);
	}
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

int cmd_napi(int argc, char **argv)
{
	struct napi_cli c;
	char err[256];
	uint32_t ifindex = 0;
	int rc = parse_cli(argc, argv, &c, err, sizeof(err));

	if (rc == 1)
		return BP_EXIT_OK;
	if (rc) {
		bp_tool_error(SUB, "%s", err);
		return BP_EXIT_USAGE;
	}
	/*
	 * For good: this process only ever acts in one namespace. Entering first also
	 * lets if_nametoindex check --device where it lives.
	 */
	if (c.netns && (rc = bp_netns_enter(c.netns))) {
		if (rc == -EPERM) {
			bp_tool_error(SUB, "--netns needs root (entering a network namespace needs "
				      "CAP_SYS_ADMIN); run it with sudo");
			return BP_EXIT_USAGE;
		}
		if (rc == -ENOENT) {
			bp_tool_error(SUB, "no network namespace '%s' (`ip netns list` shows them)",
				      c.netns);
			return BP_EXIT_FAIL;
		}
		return lib_error(rc);
	}
	if (c.device) {
		ifindex = if_nametoindex(c.device);
		if (!ifindex) {
			bp_tool_error(SUB, "no device '%s'%s%s", c.device,
				      c.netns ? " in network namespace " : "", c.netns ? c.netns : "");
			return BP_EXIT_FAIL;
		}
	}
	if (c.act == ACT_LIST)
		return do_list(&c, ifindex);
	if (!c.have_id)
		return do_knobs(&c, ifindex);
	return c.act == ACT_GET ? do_get(&c) : do_set(&c);
}
