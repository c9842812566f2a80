/* SPDX-License-Identifier: MIT */
/* One agent session: the (temporary) request dispatcher and the journalled changes (session.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/nic.h>

#include "tools/agent/session.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"
#include "tools/common/nic_text.h"
#include "tools/common/options.h"

#define WORDS_MAX 4
#define REQUESTS "hello, path, napi-get, napi-set, knob-get, knob-set, coalesce-get, " \
		 "coalesce-set, channels-get, channels-set, bye"

void session_start(struct session *s, const struct agent_cfg *cfg, const char *peer)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->journal.fd = s->journal.lock_fd = -1;
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
	agent_log(s->peer, "session started");
}

__attribute__((format(printf, 3, 4)))
static size_t answer(char *reply, const char *status, const char *fmt, ...)
{
	int n = snprintf(reply, SESSION_REPLY_MAX, "%s", status);
	va_list ap;

	if (fmt && *fmt) {
		reply[n++] = ' ';
		va_start(ap, fmt);
		n += vsnprintf(reply + n, SESSION_REPLY_MAX - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return (size_t)n < SESSION_REPLY_MAX ? (size_t)n : SESSION_REPLY_MAX - 1;
}

static size_t error(char *reply, int rc, const char *why)
{
	return answer(reply, "error", "%d %s", -rc, why);
}

/* The journal, opened at the first change of the session. */
static int journal(struct session *s, char *err, size_t errlen)
{
	if (s->journal.fd >= 0)
		return 0;
	return journal_open(&s->journal, s->cfg->state_dir, s->peer, agent_log_journal, s->peer, err,
			    errlen);
}

static int parse_id(const char *w, uint32_t *id)
{
	uint64_t v;
	bool neg;

	if (tool_parse_u64(w, &v, &neg) || v == 0 || v > UINT32_MAX)
		return -EINVAL;
	*id = (uint32_t)v;
	return 0;
}

/* ---- the requests ---- */

static size_t do_path(const char *dev, char *reply)
{
	static struct bp_path_report r; /* one session at a time runs a request */
	size_t len = 0;
	char *text = NULL;
	struct emit e = { .kind = EMIT_JSON };
	int rc = bp_path_report(dev, &r);

	if (rc)
		return error(reply, rc, bp_last_error());
	e.out = open_memstream(&text, &len);
	if (!e.out)
		return error(reply, -ENOMEM, "out of memory");
	em_begin(&e, NULL, false);
	path_emit(&e, &r);
	em_end(&e);
	fclose(e.out);
	len = answer(reply, "ok", "%s", text);
	free(text);
	return len;
}

static size_t do_napi(struct session *s, const char *verb, const char *id_text, const char *list,
		      char *reply)
{
	char err[256], text[192];
	bp_napi_settings set;
	struct bp_napi_info info;
	uint32_t id;
	int rc;

	if (parse_id(id_text, &id))
		return error(reply, -EINVAL, "not a NAPI id");
	if (!strcmp(verb, "napi-get")) {
		if ((rc = bp_napi_get(id, &info)))
			return error(reply, rc, bp_last_error());
		nic_format_napi(&info, text, sizeof(text));
		return answer(reply, "ok", "%s", text);
	}
	if (!list || nic_parse_napi(list, &set, err, sizeof(err)))
		return error(reply, -EINVAL, list ? err : "napi-set ID key=value[,key=value]");
	if ((rc = journal(s, err, sizeof(err))) ||
	    (rc = journal_change_napi(&s->journal, id, &set, err, sizeof(err))))
		return error(reply, rc, err);
	s->changes++;
	nic_format_napi(&set, text, sizeof(text));
	agent_log(s->peer, "napi %" PRIu32 " set %s", id, text);
	return answer(reply, "ok", NULL);
}

static size_t do_knob(struct session *s, const char *verb, const char *dev, const char *arg,
		      char *reply)
{
	struct napi_knobs k = { 0 };
	char err[256];
	uint64_t v;
	int rc;

	if (!arg)
		return error(reply, -EINVAL, "knob-get DEV KNOB, knob-set DEV KNOB=VALUE");
	if (!strcmp(verb, "knob-get")) {
		if ((rc = bp_dev_get_knob(dev, arg, &v)))
			return error(reply, rc, bp_last_error());
		return answer(reply, "ok", "%" PRIu64, v);
	}
	if (napi_parse_knob(arg, &k, err, sizeof(err)))
		return error(reply, -EINVAL, err);
	for (int i = 0; i < NAPI_NKNOBS; i++) {
		if (!k.has[i])
			continue;
		if ((rc = journal(s, err, sizeof(err))) ||
		    (rc = journal_change_knob(&s->journal, dev, napi_knob_names[i], k.value[i], err,
					      sizeof(err))))
			return error(reply, rc, err);
		s->changes++;
		agent_log(s->peer, "%s %s set to %" PRIu64, dev, napi_knob_names[i], k.value[i]);
	}
	return answer(reply, "ok", NULL);
}

static size_t do_coalesce(struct session *s, const char *verb, const char *dev, const char *list,
			  char *reply)
{
	struct bp_nic_coalesce c;
	char err[256], text[192];
	int rc;

	if (!strcmp(verb, "coalesce-get")) {
		if ((rc = bp_nic_coalesce_get(dev, &c)))
			return error(reply, rc, bp_last_error());
		nic_format_coalesce(&c, text, sizeof(text));
		return answer(reply, "ok", "%s", text);
	}
	if (!list || nic_parse_coalesce(list, &c, err, sizeof(err)))
		return error(reply, -EINVAL, list ? err : "coalesce-set DEV key=value[,key=value]");
	if ((rc = journal(s, err, sizeof(err))) ||
	    (rc = journal_change_coalesce(&s->journal, dev, &c, err, sizeof(err))))
		return error(reply, rc, err);
	s->changes++;
	agent_log(s->peer, "%s coalescing set %s", dev, list);
	return answer(reply, "ok", NULL);
}

static size_t do_channels(struct session *s, const char *verb, const char *dev, const char *list,
			  char *reply)
{
	struct bp_nic_channels ch, max;
	char err[256], text[192], mtext[192];
	int rc;

	if (!strcmp(verb, "channels-get")) {
		if ((rc = bp_nic_channels_get(dev, &ch)))
			return error(reply, rc, bp_last_error());
		max = ch;
		memcpy(max.count, ch.max, sizeof(max.count));
		nic_format_channels(&ch, text, sizeof(text));
		nic_format_channels(&max, mtext, sizeof(mtext));
		return answer(reply, "ok", "%s max %s", text, mtext);
	}
	if (!list || nic_parse_channels(list, &ch, err, sizeof(err)))
		return error(reply, -EINVAL, list ? err : "channels-set DEV kind=N[,kind=N]");
	if ((rc = journal(s, err, sizeof(err))) ||
	    (rc = journal_change_channels(&s->journal, dev, &ch, err, sizeof(err))))
		return error(reply, rc, err);
	s->changes++;
	agent_log(s->peer, "%s channels set %s", dev, list);
	return answer(reply, "ok", NULL);
}

/* ---- the dispatcher (TEMPORARY: see session.h) ---- */

size_t session_handle(struct session *s, const void *req, size_t len, char *reply, bool *end)
{
	char line[1024], *w[WORDS_MAX] = { 0 }, *save = NULL;
	int n = 0;

	*end = false;
	s->requests++;
	if (len >= sizeof(line) || memchr(req, '\0', len))
		return error(reply, -EINVAL, "a request is one line of text, under 1024 bytes");
	memcpy(line, req, len);
	line[len] = '\0';
	for (char *t = strtok_r(line, " \n", &save); t && n < WORDS_MAX; t = strtok_r(NULL, " \n", &save))
		w[n++] = t;
	if (n == 0)
		return error(reply, -EINVAL, "an empty request");
	if (!strcmp(w[0], "hello"))
		return answer(reply, "ok", "busypoll-agent 1 pid=%d cpus=%s", (int)getpid(),
			      s->cfg->cpus_text[0] ? s->cfg->cpus_text : "any");
	if (!strcmp(w[0], "bye")) {
		int failed;

		*end = true;
		failed = session_end(s, "the client said bye");
		if (failed)
			return error(reply, -EIO, "not everything could be restored (see the agent's log)");
		return answer(reply, "ok", "restored %u", s->changes);
	}
	if (n < 2)
		return error(reply, -EINVAL, "unknown request or missing argument (" REQUESTS ")");
	if (!strcmp(w[0], "path"))
		return do_path(w[1], reply);
	if (!strcmp(w[0], "napi-get") || !strcmp(w[0], "napi-set"))
		return do_napi(s, w[0], w[1], w[2], reply);
	if (!strcmp(w[0], "knob-get") || !strcmp(w[0], "knob-set"))
		return do_knob(s, w[0], w[1], w[2], reply);
	if (!strcmp(w[0], "coalesce-get") || !strcmp(w[0], "coalesce-set"))
		return do_coalesce(s, w[0], w[1], w[2], reply);
	if (!strcmp(w[0], "channels-get") || !strcmp(w[0], "channels-set"))
		return do_channels(s, w[0], w[1], w[2], reply);
	return error(reply, -EINVAL, "unknown request (" REQUESTS ")");
}

int session_end(struct session *s, const char *why)
{
	int failed;

	if (s->ended)
		return 0;
	s->ended = true;
	failed = journal_finish(&s->journal, agent_log_journal, s->peer);
	agent_log(s->peer, "session ended (%s): %u request(s), %u change(s)%s", why, s->requests,
		  s->changes, failed ? ", NOT all restored" : s->changes ? ", all restored" : "");
	return failed;
}
