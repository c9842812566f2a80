/* SPDX-License-Identifier: MIT */
/* busypoll SUBCOMMAND [options]: the dispatcher. */
#include <stdio.h>
#include <string.h>

#include "tools/common/commands.h"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "modes", cmd_modes, "list every wait mode, its keys and defaults, and whether it works here" },
	{ "rr", cmd_rr, "request/response benchmark (neper tcp_rr class), every wait mode" },
	{ "compare", cmd_compare, "the wait modes side by side on a veth test bed, with the kernel's proof" },
	{ "tune", cmd_tune, "the settings that meet a latency goal at the least CPU, searched and proven" },
	{ "testbed", cmd_testbed, "two namespaces and a veth pair with NAPI: where busy polling engages" },
	{ "napi", cmd_napi, "per-NAPI settings (netdev netlink) and the device-wide sysfs knobs" },
	{ "pingpong", cmd_pingpong, "round trips with a timestamped payload: --matrix, --breakdown" },
	{ "target", cmd_target, "an NVMe/TCP target (nvmet-tcp class) with poll mode, for the Linux host and nvme-cli" },
	{ "perf", cmd_perf, "fio for NVMe/TCP: a userspace initiator, fio's options, every wait mode, --sweep" },
	{ "agent", cmd_agent, "the remote host's side of a two-host run: authenticated, restores what it changes" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: busypoll SUBCOMMAND [options]   (busypoll SUBCOMMAND --help)\n"
		     "       busypoll --version\n\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\n  -h, --help   this text\n  --version    print busypoll's version and exit\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return BP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return BP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("busypoll %s\n", BP_VERSION);
		return BP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "busypoll: unknown subcommand '%s'; run 'busypoll --help' for the list\n", argv[1]);
	return BP_EXIT_USAGE;
}
