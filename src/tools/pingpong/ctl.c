/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong client: its end of the control session (contract in
 * tools/pingpong/pingpong.h, protocol in tools/harness/control.h). Blocking
 * request and reply on the main thread, between runs only: nothing here ever
 * overlaps a measured round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pingpong/pingpong.h"

/* call - one request of type req and its reply of type want (both on the heap: 64 KiB each). */
static int call(struct ctl_session *ctl, struct ctl_msg *m, uint16_t want, char *err, size_t errlen)
{
	return ctl_call(ctl, &m[0], want, &m[1], err, errlen);
}

int pp_ctl_hello(struct ctl_session *ctl, struct pp_server_info *info, char *err, size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int64_t cpu = -1;
	uint64_t delay = 0;
	int ret;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ctl_msg_init(&m[0], CTL_HELLO);
	ctl_put_text(&m[0], CTL_T_TOOL, "pingpong");
	ret = call(ctl, m, CTL_HELLO_OK, err, errlen);
	if (ret == -EPROTO)
		snprintf(err, errlen, "%s is not a busypoll pingpong server (bad answer to the hello)", ctl->peer);
	if (!ret) {
		memset(info, 0, sizeof(*info));
		ctl_get_text(&m[1], CTL_T_MODE, info->mode, sizeof(info->mode));
		ctl_get_i64(&m[1], CTL_T_CPU, &cpu);
		ctl_get_u64(&m[1], CTL_T_PP_DELAY_US, &delay);
		info->cpu = cpu >= -1 && cpu < 65536 ? (int)cpu : -1;
		info->delay_us = delay <= UINT32_MAX ? (uint32_t)delay : 0;
	}
	free(m);
	return ret;
}

int pp_ctl_open(struct ctl_session *ctl, const struct sockaddr *addr, socklen_t addrlen, int timeout_ms,
		struct pp_server_info *info, char *err, size_t errlen)
{
	int ret = ctl_session_open(ctl, addr, addrlen, timeout_ms, "is `busypoll pingpong --server` running there?",
				   err, errlen);

	if (ret)
		return ret;
	ret = pp_ctl_hello(ctl, info, err, errlen);
	if (ret)
		ctl_session_close(ctl);
	return ret;
}

int pp_ctl_set_mode(struct ctl_session *ctl, const char *mode, bool timestamps, char now[PP_MODE_LEN], char *err,
		    size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_msg_init(&m[0], CTL_SET_MODE);
	ctl_put_text(&m[0], CTL_T_MODE, mode);
	ctl_put_u64(&m[0], CTL_T_FLAGS, timestamps ? CTL_F_TIMESTAMPS : 0);
	ret = call(ctl, m, CTL_MODE_SET, err, errlen);
	if (!ret && ctl_get_text(&m[1], CTL_T_MODE, now, PP_MODE_LEN))
		now[0] = 0;
	free(m);
	return ret;
}

int pp_ctl_start(struct ctl_session *ctl, char *err, size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_msg_init(&m[0], CTL_START);
	ret = call(ctl, m, CTL_STARTED, err, errlen);
	free(m);
	return ret;
}

int pp_ctl_stop(struct ctl_session *ctl, struct evidence *server, uint32_t *napi_id, char *err, size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	uint64_t napi = 0;
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_msg_init(&m[0], CTL_STOP);
	ret = call(ctl, m, CTL_EVIDENCE, err, errlen);
	if (!ret && ev_decode(&m[1], server)) {
		snprintf(err, errlen, "server %s sent evidence that does not decode", ctl->peer);
		ret = -EPROTO;
	}
	if (!ret) {
		ctl_get_u64(&m[1], CTL_T_PP_NAPI_ID, &napi);
		*napi_id = napi <= UINT32_MAX ? (uint32_t)napi : 0;
	}
	free(m);
	return ret;
}
