/* SPDX-License-Identifier: MIT */
/* One agent session: each control message answered, the changes journalled (session.h). */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/net.h>
#include <busypoll/nic.h>

#include "tools/agent/session.h"
#include "tools/common/cmd.h"
#include "tools/harness/devfeat.h"
#include "tools/harness/evidence.h"
#include "tools/link/agent_wire.h"
#include "tools/common/napi_show.h"
#include "tools/link/netdev.h"
#include "tools/common/nic_text.h"
#include "tools/common/values.h"

/* One message at a time: the agent serves its sessions on one thread. */
static struct ctl_msg msg_in, msg_out;

void session_start(struct session *s, const struct agent_cfg *cfg, const char *peer)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->journal.fd = s->journal.lock_fd = -1;
	s->servers.next_id = 1;
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
	bp_kstats_read(&s->k0);
	s->t0_ns = bp_now_ns();
	agent_info(s->peer, "session started");
}

int session_journal(struct session *s, char *err, size_t errlen)
{
	if (s->journal.fd >= 0)
		return 0;
	return journal_open(&s->journal, s->cfg->state_dir, s->peer, agent_log_journal, s->peer, err, errlen);
}

static bool is_set(const struct ctl_msg *in)
{
	uint64_t flags = 0;

	ctl_get_u64(in, CTL_T_FLAGS, &flags);
	return flags & CTL_F_SET;
}

/* get_dev - the request's device name, checked as a name. 0, or out becomes the refusal. */
static int get_dev(const struct ctl_msg *in, char dev[IFNAMSIZ], struct ctl_msg *out)
{
	char buf[64];

	if (ctl_get_text(in, CTL_T_DEV, buf, sizeof(buf)) || !buf[0] || strlen(buf) >= IFNAMSIZ || strchr(buf, '/')) {
		ctl_error_msg(out, EINVAL, "%s needs a device name (CTL_T_DEV, at most %d bytes)", ctl_type_name(in->type),
			      IFNAMSIZ - 1);
		return -EINVAL;
	}
	snprintf(dev, IFNAMSIZ, "%s", buf);
	return 0;
}

/* get_settings - a change's SETTINGS text. 0, or out becomes the refusal. */
static int get_settings(const struct ctl_msg *in, char *buf, size_t len, const char *form, struct ctl_msg *out)
{
	if (ctl_get_text(in, CTL_T_SETTINGS, buf, len) || !buf[0]) {
		ctl_error_msg(out, EINVAL, "%s with a change needs its settings (%s)", ctl_type_name(in->type), form);
		return -EINVAL;
	}
	return 0;
}

/* changed - a change made: counted and logged. */
static void changed(struct session *s, const char *what, const char *dev, const char *text)
{
	s->changes++;
	agent_info(s->peer, "%s %s set %s", dev, what, text);
}

/* ---- the requests ---- */

static void do_hello(struct session *s, struct ctl_msg *out)
{
	struct aw_hello h = { .pid = (uint32_t)getpid(), .ncpus = s->cfg->ncpus };
	struct bp_host host;
	struct stat st;

	snprintf(h.version, sizeof(h.version), "%s", BP_VERSION);
	bp_host_read(&host);
	snprintf(h.hostname, sizeof(h.hostname), "%s", host.hostname[0] ? host.hostname : "?");
	snprintf(h.kernel, sizeof(h.kernel), "%s", host.kernel);
	if (stat("/proc/self/ns/net", &st) == 0)
		h.netns = st.st_ino;
	h.busy_poll = host.busy_poll; /* BP_UNKNOWN: not sent, and why (agent_wire.h) */
	h.busy_read = host.busy_read;
	snprintf(h.sysctl_why, sizeof(h.sysctl_why), "%s", host.sysctl_why);
	memcpy(h.cpus, s->cfg->cpus, sizeof(int) * (size_t)(h.ncpus < AW_MAX_CPUS ? h.ncpus : AW_MAX_CPUS));
	aw_hello_put(out, &h);
}

static void do_napi(struct session *s, const struct ctl_msg *in, struct ctl_msg *out)
{
	char text[256], err[256];
	struct bp_napi_info info;
	bp_napi_settings set;
	uint64_t id;
	int rc;

	if (ctl_get_u64(in, CTL_T_NAPI_ID, &id) || id == 0 || id > UINT32_MAX) {
		ctl_error_msg(out, EINVAL, "NAPI needs a NAPI id (CTL_T_NAPI_ID, 1 to 4294967295)");
		return;
	}
	if (is_set(in)) {
		if (get_settings(in, text, sizeof(text), "defer-hard-irqs=N,gro-flush-timeout=NS,...", out))
			return;
		if (nic_parse_napi(text, &set, err, sizeof(err))) {
			ctl_error_msg(out, EINVAL, "%s", err);
			return;
		}
		if ((rc = session_journal(s, err, sizeof(err))) ||
		    (rc = journal_change_napi(&s->journal, (uint32_t)id, &set, err, sizeof(err)))) {
			ctl_error_msg(out, rc, "%s", err);
			return;
		}
		nic_format_napi(&set, text, sizeof(text));
		snprintf(err, sizeof(err), "%" PRIu64, id);
		changed(s, "settings", err, text);
	}
	if ((rc = bp_napi_get((uint32_t)id, &info))) {
		ctl_error_msg(out, rc, "%s", bp_last_error());
		return;
	}
	ctl_msg_init(out, CTL_NAPI);
	aw_napi_put(out, &info);
}

/* knob_known - one of the device knobs the agent reads and changes (napi_show.h). */
static bool knob_known(const char *name)
{
	for (int i = 0; i < NAPI_NKNOBS; i++)
		if (!strcmp(name, napi_knob_names[i]))
			return true;
	return false;
}

static void do_knob(struct session *s, const struct ctl_msg *in, struct ctl_msg *out)
{
	char dev[IFNAMSIZ], knob[64], item[96], err[256];
	struct napi_knobs k = { 0 };
	uint64_t v;
	int rc;

	if (get_dev(in, dev, out))
		return;
	if (ctl_get_text(in, CTL_T_KNOB, knob, sizeof(knob)) || !knob[0]) {
		ctl_error_msg(out, EINVAL, "KNOB needs a knob name (napi_defer_hard_irqs or gro_flush_timeout)");
		return;
	}
	/* a read names a knob as a write does: no other attribute of the device (mtu, address) */
	if (!knob_known(knob)) {
		ctl_error_msg(out, EINVAL, "KNOB %s: not a knob the agent reads or changes (napi_defer_hard_irqs or "
			      "gro_flush_timeout)", knob);
		return;
	}
	if (is_set(in)) {
		if (ctl_get_u64(in, CTL_T_VALUE, &v)) {
			ctl_error_msg(out, EINVAL, "KNOB with a change needs its value (CTL_T_VALUE)");
			return;
		}
		/* the same names and ranges as `busypoll napi set --device` */
		snprintf(item, sizeof(item), "%s=%" PRIu64, knob, v);
		if (napi_parse_knob(item, &k, err, sizeof(err))) {
			ctl_error_msg(out, EINVAL, "%s", err);
			return;
		}
		if ((rc = session_journal(s, err, sizeof(err))) ||
		    (rc = journal_change_knob(&s->journal, dev, knob, v, err, sizeof(err)))) {
			ctl_error_msg(out, rc, "%s", err);
			return;
		}
		changed(s, knob, dev, item);
	}
	if ((rc = bp_dev_get_knob(dev, knob, &v))) {
		ctl_error_msg(out, rc, "%s", bp_last_error());
		return;
	}
	ctl_msg_init(out, CTL_KNOB);
	ctl_put_text(out, CTL_T_DEV, dev);
	ctl_put_text(out, CTL_T_KNOB, knob);
	ctl_put_u64(out, CTL_T_VALUE, v);
}

static void do_coalesce(struct session *s, const struct ctl_msg *in, struct ctl_msg *out)
{
	struct bp_nic_coalesce c;
	char dev[IFNAMSIZ], text[256], err[256];
	int rc;

	if (get_dev(in, dev, out))
		return;
	if (is_set(in)) {
		if (get_settings(in, text, sizeof(text), "rx-usecs=N,rx-frames=N,adaptive-rx=on|off,...", out))
			return;
		if (nic_parse_coalesce(text, &c, err, sizeof(err))) {
			ctl_error_msg(out, EINVAL, "%s", err);
			return;
		}
		if ((rc = session_journal(s, err, sizeof(err))) ||
		    (rc = journal_change_coalesce(&s->journal, dev, &c, err, sizeof(err)))) {
			ctl_error_msg(out, rc, "%s", err);
			return;
		}
		changed(s, "coalescing", dev, text);
	}
	if ((rc = bp_nic_coalesce_get(dev, &c))) {
		ctl_error_msg(out, rc, "%s", bp_last_error());
		return;
	}
	nic_format_coalesce(&c, text, sizeof(text));
	ctl_msg_init(out, CTL_COALESCE);
	ctl_put_text(out, CTL_T_DEV, dev);
	ctl_put_text(out, CTL_T_SETTINGS, text);
}

static void do_channels(struct session *s, const struct ctl_msg *in, struct ctl_msg *out)
{
	struct bp_nic_channels ch, max;
	char dev[IFNAMSIZ], text[256], err[256];
	int rc;

	if (get_dev(in, dev, out))
		return;
	if (is_set(in)) {
		if (get_settings(in, text, sizeof(text), "rx=N,tx=N,other=N,combined=N", out))
			return;
		if (nic_parse_channels(text, &ch, err, sizeof(err))) {
			ctl_error_msg(out, EINVAL, "%s", err);
			return;
		}
		if ((rc = session_journal(s, err, sizeof(err))) ||
		    (rc = journal_change_channels(&s->journal, dev, &ch, err, sizeof(err)))) {
			ctl_error_msg(out, rc, "%s", err);
			return;
		}
		changed(s, "channels", dev, text);
	}
	if ((rc = bp_nic_channels_get(dev, &ch))) {
		ctl_error_msg(out, rc, "%s", bp_last_error());
		return;
	}
	max = ch;
	memcpy(max.count, ch.max, sizeof(max.count));
	ctl_msg_init(out, CTL_CHANNELS);
	ctl_put_text(out, CTL_T_DEV, dev);
	nic_format_channels(&ch, text, sizeof(text));
	ctl_put_text(out, CTL_T_SETTINGS, text);
	nic_format_channels(&max, text, sizeof(text));
	ctl_put_text(out, CTL_T_MAX, text);
}

/* dev_of_addr - the device here that has address text (the data path's end on this host). */
static int dev_of_addr(const char *text, char dev[IFNAMSIZ], char *err, size_t errlen)
{
	struct sockaddr_storage a;
	socklen_t len;
	int rc;

	if (bp_parse_addr(text, 0, &a, &len)) {
		snprintf(err, errlen, "PATH_REPORT %s: not an address (%s)", text, bp_last_error());
		return -EINVAL;
	}
	rc = netdev_of_addr(&a, dev);
	if (rc)
		snprintf(err, errlen, "PATH_REPORT %s: no device of this host has that address", text);
	return rc;
}

static void do_path(const struct ctl_msg *in, struct ctl_msg *out)
{
	static struct bp_path_report r; /* one request at a time */
	struct aw_features feat;
	char dev[IFNAMSIZ], addr[128], err[256];
	int rc;

	if (!ctl_get_text(in, CTL_T_ADDR, addr, sizeof(addr)) && addr[0]) {
		if ((rc = dev_of_addr(addr, dev, err, sizeof(err)))) {
			ctl_error_msg(out, rc, "%s", err);
			return;
		}
	} else if (get_dev(in, dev, out)) {
		return;
	}
	if ((rc = bp_path_report(dev, &r))) {
		ctl_error_msg(out, rc, "%s", bp_last_error());
		return;
	}
	aw_path_put(out, &r);
	devfeat_read(dev, &feat.gro, &feat.tso);
	aw_features_put(out, &feat);
	if (out->overflow)
		ctl_error_msg(out, EMSGSIZE, "the path report of %s does not fit one message", dev);
}

static void do_sample(struct session *s, struct ctl_msg *out)
{
	struct evidence ev = { .valid = true };
	struct bp_kstats k1 = { 0 };

	bp_kstats_read(&k1);
	ev_add_kstats(&ev, &s->k0, &k1);
	ev.interval_ns = bp_now_ns() - s->t0_ns;
	servers_evidence(s, &ev);
	ctl_msg_init(out, CTL_EVIDENCE);
	ev_encode(out, &ev);
	ctl_put_u64(out, CTL_T_PID, (uint64_t)getpid());
}

static void do_bye(struct session *s, struct ctl_msg *out)
{
	/* what goes back: every journalled setting, a server's NAPIs kept as found among them */
	unsigned restored = s->journal.entries;

	if (session_end(s, "the client said bye")) {
		ctl_error_msg(out, EIO, "not everything could be restored (see the agent's log)");
		return;
	}
	ctl_msg_init(out, CTL_BYE);
	ctl_put_u64(out, CTL_T_RESTORED, restored);
}

/* for_server - a message the agent relays to one of the session's servers. */
static bool for_server(const struct ctl_msg *in)
{
	uint64_t id;

	return !ctl_get_u64(in, CTL_T_SERVER, &id) &&
	       (in->type == CTL_HELLO || in->type == CTL_START || in->type == CTL_STOP || in->type == CTL_SET_MODE ||
		in->type == CTL_SAMPLE);
}

static void dispatch(struct session *s, const struct ctl_msg *in, struct ctl_msg *out, bool *end)
{
	if (for_server(in)) {
		servers_relay(s, in, out);
		return;
	}
	switch (in->type) {
	case CTL_HELLO: do_hello(s, out); break;
	case CTL_SERVER_START: servers_start(s, in, out); break;
	case CTL_SERVER_STOP: servers_stop(s, in, out); break;
	case CTL_NAPI: do_napi(s, in, out); break;
	case CTL_KNOB: do_knob(s, in, out); break;
	case CTL_COALESCE: do_coalesce(s, in, out); break;
	case CTL_CHANNELS: do_channels(s, in, out); break;
	case CTL_PATH_REPORT: do_path(in, out); break;
	case CTL_SAMPLE: do_sample(s, out); break;
	case CTL_BYE:
		do_bye(s, out);
		*end = true;
		break;
	case CTL_START:
	case CTL_STOP:
	case CTL_SET_MODE:
		ctl_error_msg(out, EINVAL, "%s goes to a server this session started (give its CTL_T_SERVER)",
			      ctl_type_name(in->type));
		break;
	default:
		ctl_error_msg(out, EPROTO, "%s is not a request the agent takes", ctl_type_name(in->type));
		break;
	}
}

size_t session_handle(struct session *s, const void *req, size_t len, uint8_t *reply, bool *end)
{
	const char *why = "";
	int n = ctl_decode(req, len, &msg_in, &why);

	*end = false;
	s->requests++;
	if (n <= 0 || (size_t)n != len) {
		/* the transport framed it whole: garbage inside is refused, the session goes on */
		ctl_error_msg(&msg_out, EPROTO, "not one control message: %s",
			      n == 0 ? "cut short" : n > 0 ? "bytes after its end" : why);
		agent_log(s->peer, "a request refused: %s", n == 0 ? "cut short" : n > 0 ? "bytes after its end" : why);
		msg_out.seq = 0;
	} else {
		dispatch(s, &msg_in, &msg_out, end);
		msg_out.seq = msg_in.seq;
	}
	n = ctl_encode(&msg_out, reply, SESSION_REPLY_MAX);
	if (n < 0) {
		uint32_t seq = msg_out.seq;

		ctl_error_msg(&msg_out, EMSGSIZE, "the answer does not fit one message");
		msg_out.seq = seq;
		n = ctl_encode(&msg_out, reply, SESSION_REPLY_MAX);
	}
	return (size_t)n;
}

int session_end(struct session *s, const char *why)
{
	unsigned kept = s->journal.entries;
	int failed;

	if (s->ended)
		return 0;
	s->ended = true;
	servers_stop_all(s, why);
	failed = journal_finish(&s->journal, agent_log_journal, s->peer);
	(failed ? agent_log : agent_info)(s->peer, "session ended (%s): %u request(s), %u change(s), %u setting(s) "
					  "journalled%s", why, s->requests, s->changes, kept,
					  failed ? ", NOT all restored" : kept ? ", all restored" : "");
	return failed;
}
