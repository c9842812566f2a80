/* SPDX-License-Identifier: MIT */
/* The agent's structures in control messages (contract in tools/link/agent_wire.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/link/agent_wire.h"
#include "tools/common/nic_text.h"

/* ---- a NAPI ---- */

void aw_napi_put(struct ctl_msg *m, const struct bp_napi_info *n)
{
	ctl_put_u64(m, CTL_T_NAPI_ID, n->id);
	ctl_put_u64(m, CTL_T_N_IFINDEX, n->ifindex);
	ctl_put_i64(m, CTL_T_N_IRQ, n->irq);
	ctl_put_i64(m, CTL_T_N_PID, n->pid);
	ctl_put_u64(m, CTL_T_N_DEFER, n->defer_hard_irqs);
	ctl_put_u64(m, CTL_T_N_GRO_FLUSH, n->gro_flush_timeout_ns);
	ctl_put_u64(m, CTL_T_N_IRQ_SUSPEND, n->irq_suspend_timeout_ns);
	ctl_put_u64(m, CTL_T_N_THREADED, n->threaded);
	ctl_put_u64(m, CTL_T_N_HAS, n->has);
}

void aw_napi_record(struct ctl_msg *m, uint16_t tag, const struct bp_napi_info *n)
{
	size_t rec = ctl_record_begin(m, tag);

	aw_napi_put(m, n);
	ctl_record_end(m, rec);
}

/* get32 - a u32 field of [val, val+len) (or an i32 when sgn). */
static int get32(const uint8_t *val, size_t len, uint16_t tag, bool sgn, uint32_t *out)
{
	uint64_t v;

	if (ctl_rec_u64(val, len, tag, &v))
		return -EPROTO;
	if (sgn ? ((int64_t)v < INT32_MIN || (int64_t)v > INT32_MAX) : v > UINT32_MAX)
		return -EPROTO;
	*out = (uint32_t)v;
	return 0;
}

int aw_napi_get(const uint8_t *val, size_t len, struct bp_napi_info *n)
{
	uint32_t irq, pid;

	memset(n, 0, sizeof(*n));
	if (get32(val, len, CTL_T_NAPI_ID, false, &n->id) || get32(val, len, CTL_T_N_IFINDEX, false, &n->ifindex) ||
	    get32(val, len, CTL_T_N_IRQ, true, &irq) || get32(val, len, CTL_T_N_PID, true, &pid) ||
	    get32(val, len, CTL_T_N_DEFER, false, &n->defer_hard_irqs) ||
	    ctl_rec_u64(val, len, CTL_T_N_GRO_FLUSH, &n->gro_flush_timeout_ns) ||
	    ctl_rec_u64(val, len, CTL_T_N_IRQ_SUSPEND, &n->irq_suspend_timeout_ns) ||
	    get32(val, len, CTL_T_N_THREADED, false, &n->threaded) || get32(val, len, CTL_T_N_HAS, false, &n->has))
		return -EPROTO;
	n->irq = (int32_t)irq;
	n->pid = (int32_t)pid;
	return 0;
}

/* ---- the path report ---- */

void aw_path_put(struct ctl_msg *m, const struct bp_path_report *r)
{
	char text[256];

	ctl_msg_init(m, CTL_PATH);
	ctl_put_text(m, CTL_T_DEV, r->dev);
	ctl_put_u64(m, CTL_T_P_IFINDEX, r->ifindex);
	ctl_put_text(m, CTL_T_P_DRIVER, r->driver.driver);
	ctl_put_text(m, CTL_T_P_DRIVER_VERSION, r->driver.version);
	ctl_put_text(m, CTL_T_P_FIRMWARE, r->driver.firmware);
	ctl_put_text(m, CTL_T_P_BUS, r->driver.bus);
	nic_format_channels(&r->channels, text, sizeof(text));
	ctl_put_text(m, CTL_T_P_CHANNELS, text);
	{
		struct bp_nic_channels max = r->channels;

		memcpy(max.count, r->channels.max, sizeof(max.count));
		nic_format_channels(&max, text, sizeof(text));
		ctl_put_text(m, CTL_T_MAX, text);
	}
	nic_format_coalesce(&r->coalesce, text, sizeof(text));
	ctl_put_text(m, CTL_T_P_COALESCE, text);
	ctl_put_u64(m, CTL_T_P_RX_QUEUES, r->rx_queues);
	ctl_put_u64(m, CTL_T_P_TX_QUEUES, r->tx_queues);
	ctl_put_u64(m, CTL_T_P_N_NAPI, r->n_napi);
	for (size_t i = 0; i < r->n_queues && i < BP_PATH_MAX; i++) {
		size_t rec = ctl_record_begin(m, CTL_T_P_QUEUE);

		ctl_put_u64(m, CTL_T_P_Q_ID, r->queue[i].id);
		ctl_put_u64(m, CTL_T_P_Q_TX, r->queue[i].tx);
		ctl_put_u64(m, CTL_T_NAPI_ID, r->queue[i].napi_id);
		ctl_record_end(m, rec);
	}
	for (size_t i = 0; i < r->n_napi && i < BP_PATH_MAX; i++)
		aw_napi_record(m, CTL_T_P_NAPI, &r->napi[i]);
	for (size_t i = 0; i < r->n_irqs && i < BP_PATH_MAX; i++) {
		const struct bp_path_irq *q = &r->irq[i];
		size_t rec = ctl_record_begin(m, CTL_T_P_IRQ);

		ctl_put_i64(m, CTL_T_P_I_IRQ, q->irq);
		ctl_put_u64(m, CTL_T_NAPI_ID, q->napi_id);
		ctl_put_text(m, CTL_T_P_I_NAME, q->name);
		ctl_put_text(m, CTL_T_P_I_AFFINITY, q->affinity);
		ctl_put_text(m, CTL_T_P_I_EFFECTIVE, q->effective);
		ctl_record_end(m, rec);
	}
	for (int s = 0; s < BP_PATH_SECTIONS; s++) {
		size_t rec;

		if (!r->err[s] && !r->why[s][0])
			continue;
		rec = ctl_record_begin(m, CTL_T_P_SECTION);
		ctl_put_u64(m, CTL_T_P_S_ID, (uint64_t)s);
		ctl_put_u64(m, CTL_T_ERRNO, (uint64_t)(r->err[s] < 0 ? -r->err[s] : r->err[s]));
		ctl_put_text(m, CTL_T_REASON, r->why[s]);
		ctl_record_end(m, rec);
	}
}

/* text_field - a text field of the body into buf, or -EPROTO when it is missing. */
static int text_field(const struct ctl_msg *m, uint16_t tag, char *buf, size_t len)
{
	return ctl_get_text(m, tag, buf, len) ? -EPROTO : 0;
}

/* path_record - one of the report's repeated records into r. */
static int path_record(uint16_t tag, const uint8_t *val, size_t len, struct bp_path_report *r, size_t *napis)
{
	uint32_t v32;
	uint64_t v;

	switch (tag) {
	case CTL_T_P_QUEUE: {
		struct bp_path_queue *q = &r->queue[r->n_queues];

		if (r->n_queues == BP_PATH_MAX)
			return 0; /* kept at most BP_PATH_MAX, as the report itself does */
		if (get32(val, len, CTL_T_P_Q_ID, false, &q->id) || ctl_rec_u64(val, len, CTL_T_P_Q_TX, &v) || v > 1 ||
		    get32(val, len, CTL_T_NAPI_ID, false, &q->napi_id))
			return -EPROTO;
		q->tx = v;
		r->n_queues++;
		return 0;
	}
	case CTL_T_P_NAPI:
		if (*napis >= r->n_napi || *napis >= BP_PATH_MAX)
			return -EPROTO; /* more records than the count says, or than a report keeps */
		return aw_napi_get(val, len, &r->napi[(*napis)++]);
	case CTL_T_P_IRQ: {
		struct bp_path_irq *q = &r->irq[r->n_irqs];

		if (r->n_irqs == BP_PATH_MAX)
			return 0;
		if (get32(val, len, CTL_T_P_I_IRQ, true, &v32) || get32(val, len, CTL_T_NAPI_ID, false, &q->napi_id) ||
		    ctl_rec_text(val, len, CTL_T_P_I_NAME, q->name, sizeof(q->name)) ||
		    ctl_rec_text(val, len, CTL_T_P_I_AFFINITY, q->affinity, sizeof(q->affinity)) ||
		    ctl_rec_text(val, len, CTL_T_P_I_EFFECTIVE, q->effective, sizeof(q->effective)))
			return -EPROTO;
		q->irq = (int)(int32_t)v32;
		r->n_irqs++;
		return 0;
	}
	case CTL_T_P_SECTION:
		if (ctl_rec_u64(val, len, CTL_T_P_S_ID, &v) || v >= BP_PATH_SECTIONS ||
		    get32(val, len, CTL_T_ERRNO, false, &v32) || v32 > 4095 ||
		    ctl_rec_text(val, len, CTL_T_REASON, r->why[v], sizeof(r->why[v])))
			return -EPROTO;
		r->err[v] = -(int)v32;
		return 0;
	default:
		return 0;
	}
}

int aw_path_get(const struct ctl_msg *m, struct bp_path_report *r)
{
	struct bp_nic_channels max;
	struct ctl_iter it;
	const uint8_t *val;
	char text[CTL_MAX_TEXT + 1], err[160];
	uint16_t tag;
	size_t len, napis = 0;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	if (text_field(m, CTL_T_DEV, r->dev, sizeof(r->dev)) || ctl_get_u64(m, CTL_T_P_IFINDEX, &v) || v > UINT32_MAX)
		return -EPROTO;
	r->ifindex = (uint32_t)v;
	if (text_field(m, CTL_T_P_DRIVER, r->driver.driver, sizeof(r->driver.driver)) ||
	    text_field(m, CTL_T_P_DRIVER_VERSION, r->driver.version, sizeof(r->driver.version)) ||
	    text_field(m, CTL_T_P_FIRMWARE, r->driver.firmware, sizeof(r->driver.firmware)) ||
	    text_field(m, CTL_T_P_BUS, r->driver.bus, sizeof(r->driver.bus)))
		return -EPROTO;
	/* the settings as the command line writes them, read back by the same parsers */
	if (text_field(m, CTL_T_P_CHANNELS, text, sizeof(text)) ||
	    (text[0] && nic_parse_channels(text, &r->channels, err, sizeof(err))))
		return -EPROTO;
	if (text_field(m, CTL_T_MAX, text, sizeof(text)) ||
	    (text[0] && nic_parse_channels(text, &max, err, sizeof(err))) ||
	    (text[0] ? max.has : 0) != r->channels.has)
		return -EPROTO;
	if (r->channels.has)
		memcpy(r->channels.max, max.count, sizeof(max.count));
	if (text_field(m, CTL_T_P_COALESCE, text, sizeof(text)) ||
	    (text[0] && nic_parse_coalesce(text, &r->coalesce, err, sizeof(err))))
		return -EPROTO;
	if (ctl_get_u64(m, CTL_T_P_RX_QUEUES, &v) || v > UINT32_MAX)
		return -EPROTO;
	r->rx_queues = (uint32_t)v;
	if (ctl_get_u64(m, CTL_T_P_TX_QUEUES, &v) || v > UINT32_MAX)
		return -EPROTO;
	r->tx_queues = (uint32_t)v;
	if (ctl_get_u64(m, CTL_T_P_N_NAPI, &v) || v > 1u << 20)
		return -EPROTO;
	r->n_napi = (size_t)v;
	ctl_iter_body(&it, m);
	while (ctl_next(&it, &tag, &val, &len))
		if (path_record(tag, val, len, r, &napis))
			return -EPROTO;
	/* as many NAPI records as the count says, up to what a report keeps */
	return napis == (r->n_napi < BP_PATH_MAX ? r->n_napi : BP_PATH_MAX) ? 0 : -EPROTO;
}

/* ---- the device's GRO and TSO ---- */

void aw_features_put(struct ctl_msg *m, const struct aw_features *f)
{
	if (f->gro != DIAG_UNKNOWN)
		ctl_put_u64(m, CTL_T_P_GRO, f->gro == DIAG_ON);
	if (f->tso != DIAG_UNKNOWN)
		ctl_put_u64(m, CTL_T_P_TSO, f->tso == DIAG_ON);
}

/* feature_get - one feature from m: absent DIAG_UNKNOWN; 0 or -EPROTO (not 0 or 1). */
static int feature_get(const struct ctl_msg *m, uint16_t tag, enum diag_tri *t)
{
	uint64_t v;

	*t = DIAG_UNKNOWN;
	if (ctl_get_u64(m, tag, &v))
		return 0;
	if (v > 1)
		return -EPROTO;
	*t = v ? DIAG_ON : DIAG_OFF;
	return 0;
}

int aw_features_get(const struct ctl_msg *m, struct aw_features *f)
{
	if (feature_get(m, CTL_T_P_GRO, &f->gro) || feature_get(m, CTL_T_P_TSO, &f->tso))
		return -EPROTO;
	return 0;
}

/* ---- the agent's HELLO_OK ---- */

void aw_hello_put(struct ctl_msg *m, const struct aw_hello *h)
{
	ctl_msg_init(m, CTL_HELLO_OK);
	ctl_put_text(m, CTL_T_TOOL, "agent");
	ctl_put_text(m, CTL_T_VERSION, h->version);
	ctl_put_u64(m, CTL_T_PID, h->pid);
	ctl_put_text(m, CTL_T_HOSTNAME, h->hostname);
	ctl_put_text(m, CTL_T_KERNEL, h->kernel);
	ctl_put_u64(m, CTL_T_NETNS, h->netns);
	/* an unreadable sysctl is left out, and why said: no value stands for unknown on the wire */
	if (h->busy_poll >= 0)
		ctl_put_i64(m, CTL_T_BUSY_POLL, h->busy_poll);
	if (h->busy_read >= 0)
		ctl_put_i64(m, CTL_T_BUSY_READ, h->busy_read);
	if (h->sysctl_why[0])
		ctl_put_text(m, CTL_T_NOTE, h->sysctl_why);
	for (int i = 0; i < h->ncpus && i < AW_MAX_CPUS; i++)
		ctl_put_i64(m, CTL_T_CPU, h->cpus[i]);
}

int aw_cpus(const uint8_t *val, size_t len, int *cpus, int max)
{
	struct ctl_iter it;
	const uint8_t *v;
	uint16_t tag;
	size_t l;
	int n = 0;

	ctl_iter_record(&it, val, len);
	while (ctl_next(&it, &tag, &v, &l))
		if (tag == CTL_T_CPU && l == 8 && n < max) {
			int64_t c = (int64_t)ctl_val_u64(v);

			cpus[n++] = c >= -1 && c < 65536 ? (int)c : -1;
		}
	return n;
}

int aw_hello_get(const struct ctl_msg *m, struct aw_hello *h)
{
	char tool[16];
	int64_t bp = -1, br = -1;
	uint64_t pid;

	memset(h, 0, sizeof(*h));
	if (m->type != CTL_HELLO_OK || ctl_get_text(m, CTL_T_TOOL, tool, sizeof(tool)) || strcmp(tool, "agent") ||
	    ctl_get_u64(m, CTL_T_PID, &pid) || pid > INT32_MAX ||
	    text_field(m, CTL_T_VERSION, h->version, sizeof(h->version)) ||
	    text_field(m, CTL_T_HOSTNAME, h->hostname, sizeof(h->hostname)) ||
	    text_field(m, CTL_T_KERNEL, h->kernel, sizeof(h->kernel)) || ctl_get_u64(m, CTL_T_NETNS, &h->netns))
		return -EPROTO;
	/* absent: unreadable there (an agent before this one sent -1 for that) */
	if (ctl_get_i64(m, CTL_T_BUSY_POLL, &bp))
		bp = -1;
	if (ctl_get_i64(m, CTL_T_BUSY_READ, &br))
		br = -1;
	h->pid = (uint32_t)pid;
	h->busy_poll = bp >= 0 && bp <= INT32_MAX ? (int)bp : -1;
	h->busy_read = br >= 0 && br <= INT32_MAX ? (int)br : -1;
	if (ctl_get_text(m, CTL_T_NOTE, h->sysctl_why, sizeof(h->sysctl_why)))
		h->sysctl_why[0] = 0;
	if ((h->busy_poll < 0 || h->busy_read < 0) && !h->sysctl_why[0])
		snprintf(h->sysctl_why, sizeof(h->sysctl_why), "the agent there could not read it");
	h->ncpus = aw_cpus(m->body, m->len, h->cpus, AW_MAX_CPUS);
	return 0;
}
