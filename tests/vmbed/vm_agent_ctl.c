/* SPDX-License-Identifier: MIT */
/*
 * vm_agent_ctl - one agent session that changes what compare does not (channels, per-NAPI
 * settings, coalescing more than once), for the VM bed tests; it runs inside a guest.
 *
 *   vm_agent_ctl HOST:PORT KEYFILE end|hold|until=FILE REQ...
 *     REQ: channels=DEV=SETTINGS | napi=ID=SETTINGS | coalesce=DEV=SETTINGS
 *          (SETTINGS as the agent takes them: combined=1; defer-hard-irqs=2,...)
 *
 * Each request is sent in order in one session (each journalled by the agent before it
 * changes anything) and its answer printed as "TYPE WHAT: now SETTINGS". Then
 * "end": BYE (the agent restores), prints "restored N", exit 0; "hold": prints "HOLDING"
 * and waits to be killed (the agent sees the session vanish and restores); "until=FILE":
 * prints "HOLDING", waits for FILE to exist, then ends as "end" does.
 * Exit 1 with one line when the agent refuses or cannot be reached; 2 bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/remote/agent_client.h"

/* request - one REQ sent and answered: 0, or 1 with a line on stderr. */
static int request(struct agent_conn *a, const char *req)
{
	static struct ctl_msg m, reply;
	char kind[16], what[64], settings[CTL_MAX_TEXT + 1], err[512];
	const char *p = strchr(req, '='), *q = p ? strchr(p + 1, '=') : NULL;
	uint16_t type;

	if (!p || !q || p - req >= (int)sizeof(kind) || q - p - 1 >= (int)sizeof(what)) {
		fprintf(stderr, "vm_agent_ctl: '%s': want channels|napi|coalesce=WHAT=SETTINGS\n", req);
		return 2;
	}
	snprintf(kind, sizeof(kind), "%.*s", (int)(p - req), req);
	snprintf(what, sizeof(what), "%.*s", (int)(q - p - 1), p + 1);
	if (!strcmp(kind, "channels"))
		type = CTL_CHANNELS;
	else if (!strcmp(kind, "napi"))
		type = CTL_NAPI;
	else if (!strcmp(kind, "coalesce"))
		type = CTL_COALESCE;
	else {
		fprintf(stderr, "vm_agent_ctl: '%s': unknown kind %s\n", req, kind);
		return 2;
	}
	ctl_msg_init(&m, type);
	if (type == CTL_NAPI)
		ctl_put_u64(&m, CTL_T_NAPI_ID, strtoull(what, NULL, 10));
	else
		ctl_put_text(&m, CTL_T_DEV, what);
	ctl_put_u64(&m, CTL_T_FLAGS, CTL_F_SET);
	ctl_put_text(&m, CTL_T_SETTINGS, q + 1);
	if (agent_call(a, &m, type, &reply, err, sizeof(err))) {
		fprintf(stderr, "vm_agent_ctl: %s: %s\n", req, err);
		return 1;
	}
	if (ctl_get_text(&reply, CTL_T_SETTINGS, settings, sizeof(settings)))
		snprintf(settings, sizeof(settings), "(not said)");
	printf("%s %s: now %s\n", kind, what, settings);
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_remote_opts o;
	struct agent_conn a;
	char err[512];
	unsigned restored = 0;
	int rc;

	if (argc < 5 || (strcmp(argv[3], "end") && strcmp(argv[3], "hold") && strncmp(argv[3], "until=", 6))) {
		fprintf(stderr, "usage: vm_agent_ctl HOST:PORT KEYFILE end|hold|until=FILE REQ...\n");
		return 2;
	}
	agent_remote_defaults(&o);
	snprintf(o.remote, sizeof(o.remote), "%s", argv[1]);
	snprintf(o.key_file, sizeof(o.key_file), "%s", argv[2]);
	if (agent_open(&a, &o, err, sizeof(err))) {
		fprintf(stderr, "vm_agent_ctl: %s\n", err);
		return 1;
	}
	for (int i = 4; i < argc; i++)
		if ((rc = request(&a, argv[i]))) {
			agent_close(&a, NULL, NULL, 0);
			return rc;
		}
	fflush(stdout);
	if (!strcmp(argv[3], "hold")) {
		printf("HOLDING\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strncmp(argv[3], "until=", 6)) {
		printf("HOLDING\n");
		fflush(stdout);
		while (access(argv[3] + 6, F_OK))
			usleep(100000);
	}
	if (agent_close(&a, &restored, err, sizeof(err))) {
		fprintf(stderr, "vm_agent_ctl: closing: %s\n", err);
		return 1;
	}
	printf("restored %u\n", restored);
	return 0;
}
