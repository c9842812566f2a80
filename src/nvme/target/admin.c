/* SPDX-License-Identifier: MIT */
/*
 * Admin commands: Identify (controller, namespace, active namespace list,
 * namespace descriptors, the NVM command set's CNS 5/6), Get Log Page (error,
 * SMART as zeros, firmware slots, command effects, the discovery log on the
 * discovery controller), Set/Get Features, Keep Alive, Asynchronous Event
 * Request (kept outstanding), Abort (answered "not aborted").
 *
 * Identify values are chosen for the Linux host (reference notes, section 3):
 * no ANA (cmic bit 3 clear) and no command-effects log bit, so it does not ask
 * for what it does not need; VS 1.3 so it reads the namespace descriptors;
 * KAS non-zero (fabrics require keep alive); ICDOFF 0; SGLs with in-capsule
 * offsets. What the namespaces can do is said as it is: a volatile write cache
 * (VWC, so the host sends Flush) where one has one, Write Zeroes and Dataset
 * Management (ONCS) where they do something, deallocated blocks reading as zeros
 * (DLFEAT), a read-only namespace write protected (NSATTR), the block size the
 * device needs (LBADS).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvme/target/internal.h"
#include "base/bytes.h"

#define ID_SIZE 4096
#define AERL 3                       /* 4 outstanding AERs */
#define OAES_NS_ATTR (1u << 8)       /* Namespace Attribute Notices (as nvmet) */
#define BP_VERSION_STR "0.6"

static void put_str(uint8_t *dst, const char *s, size_t field)
{
	size_t n = strlen(s);

	memset(dst, ' ', field); /* ASCII fields are space padded */
	memcpy(dst, s, n < field ? n : field);
}

static uint8_t *admin_buf(struct nvmet_queue *q)
{
	if (!q->bounce)
		q->bounce = malloc(NVMET_BOUNCE_SIZE);
	if (q->bounce)
		memset(q->bounce, 0, ID_SIZE);
	return q->bounce;
}

static uint8_t mdts_of(uint32_t max_transfer)
{
	uint8_t m = 0;

	while ((4096u << m) < max_transfer)
		m++;
	return m;
}

/* Any namespace with a volatile write cache (VWC present: the host sends Flush). */
static bool any_vwc(const struct bp_nvmet *t)
{
	for (int i = 0; i < t->n_ns; i++)
		if (t->ns[i].vwc)
			return true;
	return false;
}

/*
 * ONCS: Write Zeroes when every namespace can zero (the host would send it to any);
 * Dataset Management when some namespace deallocates (elsewhere it is a no-op, as
 * deallocation is advisory, and DLFEAT says what reads return).
 */
static uint16_t oncs_of(const struct bp_nvmet *t)
{
	bool zero = t->n_ns > 0, dealloc = false;

	for (int i = 0; i < t->n_ns; i++) {
		zero &= t->ns[i].can_zero || t->ns[i].readonly;
		dealloc |= t->ns[i].can_dealloc;
	}
	return (uint16_t)((dealloc ? 1u << 2 : 0) | (zero ? 1u << 3 : 0));
}

/* The smallest block size of the namespaces (Write Zeroes limits are in blocks). */
static uint32_t min_lba_shift(const struct bp_nvmet *t)
{
	uint32_t m = 12;

	for (int i = 0; i < t->n_ns; i++)
		if (t->ns[i].lba_shift < m)
			m = t->ns[i].lba_shift;
	return m;
}

static void id_ctrl(struct nvmet_queue *q, uint8_t *id)
{
	struct bp_nvmet *t = q->t;
	struct nvmet_ctrl *c = q->ctrl;

	put_str(id + 4, t->serial, 20);
	put_str(id + 24, "busypoll target", 40);
	put_str(id + 64, BP_VERSION_STR, 8);
	id[72] = 6;                                 /* RAB */
	id[76] = c->discovery ? 0 : 0x03;           /* CMIC: multi-port, multi-controller; no ANA */
	id[77] = mdts_of(t->cfg.max_transfer);      /* MDTS, in 4 KiB units as a power of two */
	bp_put_le16(id + 78, c->cntlid);
	bp_put_le32(id + 80, 0x00010300);           /* VER 1.3 */
	bp_put_le32(id + 92, c->discovery ? 0 : OAES_NS_ATTR);
	bp_put_le32(id + 96, 1);                    /* CTRATT: 128-bit host identifier */
	id[111] = c->discovery ? 2 : 1;             /* CNTRLTYPE: discovery / I/O */
	id[258] = 3;                                /* ACL */
	id[259] = AERL;
	id[260] = 0x03;                             /* FRMW: one slot, read-only */
	id[261] = 0x04;                             /* LPA: extended data for Get Log Page */
	bp_put_le16(id + 320, NVMET_KAS);           /* KAS: 100 ms units */
	id[512] = 0x66;                             /* SQES */
	id[513] = 0x44;                             /* CQES */
	bp_put_le16(id + 514, (uint16_t)(c->discovery ? NVMET_ADMIN_DEPTH : t->cfg.queue_depth)); /* MAXCMD */
	bp_put_le32(id + 516, c->discovery ? 0 : (uint32_t)t->n_ns);                              /* NN */
	bp_put_le16(id + 520, c->discovery ? 0 : oncs_of(t));                                     /* ONCS */
	id[525] = !c->discovery && any_vwc(t) ? 0x01 : 0; /* VWC present: Flush reaches the device */
	bp_put_le32(id + 536, (1u << 0) | (1u << 20)); /* SGLS: SGLs, in-capsule data offsets */
	snprintf((char *)id + 768, 256, "%s", c->subnqn);
	/* Fabrics: capsule sizes in 16-byte units (SQE + in-capsule data), ICDOFF 0, one SGL descriptor. */
	bp_put_le32(id + 1792, (64 + (c->discovery ? NVMET_ADMIN_INLINE : t->cfg.inline_data)) / 16);
	bp_put_le32(id + 1796, 1);
	bp_put_le16(id + 1800, 0);
	id[1803] = 1;                               /* MSDBD */
}

static void id_ns(const struct nvmet_ns *ns, uint8_t *id)
{
	bp_put_le64(id + 0, ns->nblocks);           /* NSZE */
	bp_put_le64(id + 8, ns->nblocks);           /* NCAP */
	bp_put_le64(id + 16, ns->nblocks);          /* NUSE */
	id[25] = 0;                                 /* NLBAF: one format */
	id[26] = 0;                                 /* FLBAS: format 0 */
	id[30] = 1;                                 /* NMIC: may be shared (multi-controller) */
	/* DLFEAT: deallocated blocks read as zeros, and Write Zeroes may deallocate (DEAC) */
	id[33] = ns->can_dealloc && ns->dealloc_zeroes ? 0x01 | 0x08 : 0;
	bp_put_le64(id + 48, ns->size);             /* NVMCAP (low 8 of 16 bytes) */
	id[99] = ns->readonly ? 0x01 : 0;           /* NSATTR: write protected */
	memcpy(id + 104, ns->nguid, 16);
	id[128 + 2] = (uint8_t)ns->lba_shift;       /* LBAF0: no metadata, LBADS */
}

static size_t ns_descs(const struct nvmet_ns *ns, uint8_t *d)
{
	size_t o = 0;

	d[o] = 2;  /* NGUID */
	d[o + 1] = 16;
	memcpy(d + o + 4, ns->nguid, 16);
	o += 20;
	d[o] = 3;  /* UUID */
	d[o + 1] = 16;
	memcpy(d + o + 4, ns->uuid, 16);
	o += 20;
	d[o] = 4;  /* CSI: NVM */
	d[o + 1] = 1;
	d[o + 4] = 0;
	o += 8;
	return o;
}

static struct nvmet_ns *ns_of(struct bp_nvmet *t, uint32_t nsid)
{
	return nsid >= 1 && nsid <= (uint32_t)t->n_ns ? &t->ns[nsid - 1] : NULL;
}

static void identify(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct bp_nvmet *t = q->t;
	uint32_t dw10 = bp_nvme_sqe_dw(cmd->sqe, 10), nsid = bp_nvme_sqe_nsid(cmd->sqe), len;
	uint8_t cns = (uint8_t)dw10, csi = (uint8_t)(bp_nvme_sqe_dw(cmd->sqe, 11) >> 24);
	uint16_t status = nvmet_check_sgl(q, cmd, 0, false, &len);
	struct nvmet_ns *ns = ns_of(t, nsid);
	uint8_t *id;

	if (status) {
		nvmet_complete(q, cmd, status, 0);
		return;
	}
	id = admin_buf(q);
	if (!id) {
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	if (q->ctrl->discovery && cns != BP_NVME_ID_CNS_CTRL) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	switch (cns) {
	case BP_NVME_ID_CNS_CTRL:
		id_ctrl(q, id);
		break;
	case BP_NVME_ID_CNS_NS:
		if (!ns) {
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_NS | BP_NVME_DNR, 0);
			return;
		}
		id_ns(ns, id);
		break;
	case BP_NVME_ID_CNS_NS_ACTIVE_LIST:
		if (nsid >= 0xfffffffeu) {
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_NS | BP_NVME_DNR, 0);
			return;
		}
		for (uint32_t i = nsid + 1, n = 0; i <= (uint32_t)t->n_ns && n < 1024; i++, n++)
			bp_put_le32(id + 4 * n, i);
		break;
	case BP_NVME_ID_CNS_NS_DESC_LIST:
		if (!ns) {
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_NS | BP_NVME_DNR, 0);
			return;
		}
		ns_descs(ns, id);
		break;
	case BP_NVME_ID_CNS_CS_CTRL:
	case BP_NVME_ID_CNS_CS_NS:
		/* The NVM command set's own structures: zeros, but for the limits below. */
		if (csi != 0 || (cns == BP_NVME_ID_CNS_CS_NS && !ns)) {
			nvmet_complete(q, cmd, (csi ? BP_NVME_SC_INVALID_FIELD : BP_NVME_SC_INVALID_NS) | BP_NVME_DNR, 0);
			return;
		}
		/*
		 * WZSL: a Write Zeroes may cover all the 65536 blocks its NLB field can say
		 * (in 4 KiB units, a power of two). DMRL, DMRSL, DMSL 0: no limit on the
		 * ranges of a Dataset Management but the 256 its NR field can say.
		 */
		if (cns == BP_NVME_ID_CNS_CS_CTRL && (oncs_of(t) & (1u << 3)))
			id[1] = (uint8_t)(16 + min_lba_shift(t) - 12);
		break;
	default:
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	nvmet_send_c2h(q, cmd, id, len < ID_SIZE ? len : ID_SIZE, len);
}

/* ---- log pages ---- */

static size_t disc_log(struct nvmet_queue *q, uint8_t *b)
{
	struct bp_nvmet *t = q->t;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char addr[64] = "", port[32];
	uint8_t *e = b + 1024;
	bool listed = nvmet_host_allowed(t, q->ctrl->hostnqn);

	memset(b, 0, 2048);
	bp_put_le64(b, 1);                  /* GENCTR: the log never changes */
	bp_put_le64(b + 8, listed ? 1 : 0); /* NUMREC: our subsystem, for hosts allowed into it */
	if (!listed)
		return 1024;
	/* A wildcard listener is reported as the address this host reached us on (as nvmet). */
	if (getsockname(bp_conn_fd(q->conn), (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
		else if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
	}
	snprintf(port, sizeof(port), "%u", t->port);
	e[0] = 3;                                   /* TRTYPE: TCP */
	e[1] = ss.ss_family == AF_INET6 ? 2 : 1;    /* ADRFAM: IPv4 / IPv6 */
	e[2] = 2;                                   /* SUBTYPE: NVM subsystem */
	e[3] = 0;                                   /* TREQ: secure channel not specified */
	bp_put_le16(e + 4, 1);                      /* PORTID */
	bp_put_le16(e + 6, 0xffff);                 /* CNTLID: dynamic */
	bp_put_le16(e + 8, NVMET_ADMIN_DEPTH);      /* ASQSZ */
	snprintf((char *)e + 32, 32, "%s", port);
	snprintf((char *)e + 256, 256, "%s", t->cfg.nqn);
	snprintf((char *)e + 512, 256, "%s", addr);
	e[768] = 0;                                 /* TSAS: no security */
	return 2048;
}

static size_t effects_log(uint8_t *b)
{
	static const uint8_t admin[] = { 0x02, 0x06, 0x08, 0x09, 0x0a, 0x0c, 0x18 };

	memset(b, 0, 4096);
	for (size_t i = 0; i < sizeof(admin); i++)
		bp_put_le32(b + 4 * admin[i], 1);                   /* CSUPP */
	bp_put_le32(b + 1024 + 4 * BP_NVME_CMD_FLUSH, 1);
	bp_put_le32(b + 1024 + 4 * BP_NVME_CMD_WRITE, 1 | 2);   /* CSUPP, LBCC */
	bp_put_le32(b + 1024 + 4 * BP_NVME_CMD_READ, 1);
	bp_put_le32(b + 1024 + 4 * BP_NVME_CMD_WRITE_ZEROES, 1 | 2);
	bp_put_le32(b + 1024 + 4 * BP_NVME_CMD_DSM, 1 | 2);
	return 4096;
}

static void get_log_page(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	const uint8_t *s = cmd->sqe;
	uint32_t dw10 = bp_nvme_sqe_dw(s, 10), dw11 = bp_nvme_sqe_dw(s, 11), sgl_len;
	uint8_t lid = (uint8_t)dw10;
	uint64_t numd = ((uint64_t)(dw11 & 0xffff) << 16 | dw10 >> 16) + 1, len = numd * 4;
	uint64_t off = (uint64_t)bp_nvme_sqe_dw(s, 13) << 32 | bp_nvme_sqe_dw(s, 12);
	uint16_t status = nvmet_check_sgl(q, cmd, 0, false, &sgl_len);
	uint8_t *b;
	size_t size;

	if (status) {
		nvmet_complete(q, cmd, status, 0);
		return;
	}
	if (sgl_len != len) {
		nvmet_complete(q, cmd, BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR, 0);
		return;
	}
	if (off & 3) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	b = admin_buf(q);
	if (!b) {
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	if (q->ctrl->discovery != (lid == BP_NVME_LOG_DISC)) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_LOG_PAGE | BP_NVME_DNR, 0);
		return;
	}
	switch (lid) {
	case BP_NVME_LOG_ERROR:
		size = 64;          /* one entry, all zeros: no errors to report */
		break;
	case BP_NVME_LOG_SMART:
		size = 512;         /* zeros: no health data behind a ram or file namespace */
		break;
	case BP_NVME_LOG_FW_SLOT:
		size = 512;
		b[0] = 1;           /* AFI: slot 1 active */
		put_str(b + 8, BP_VERSION_STR, 8);
		break;
	case BP_NVME_LOG_CMD_EFFECTS:
		size = effects_log(b);
		break;
	case BP_NVME_LOG_DISC:
		size = disc_log(q, b);
		break;
	default:
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_LOG_PAGE | BP_NVME_DNR, 0);
		return;
	}
	if (off > size) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	memmove(b, b + off, size - off);
	size -= off;
	/* Asked for more than the page holds: the rest reads as zeros. */
	nvmet_send_c2h(q, cmd, b, size < len ? size : len, (uint32_t)len);
}

/* ---- features ---- */

static void set_features(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ctrl *c = q->ctrl;
	struct bp_nvmet *t = q->t;
	uint32_t dw10 = bp_nvme_sqe_dw(cmd->sqe, 10), dw11 = bp_nvme_sqe_dw(cmd->sqe, 11);
	uint8_t fid = (uint8_t)dw10;
	uint64_t result = 0;

	if (dw10 & (1u << 31)) {
		nvmet_complete(q, cmd, BP_NVME_SC_FEAT_NOT_SAVEABLE | BP_NVME_DNR, 0);
		return;
	}
	if (c->discovery && fid != BP_NVME_FEAT_KATO && fid != BP_NVME_FEAT_ASYNC_EVENT) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	switch (fid) {
	case BP_NVME_FEAT_NUM_QUEUES: {
		uint32_t nsqr = dw11 & 0xffff, ncqr = dw11 >> 16, want, grant;

		if (nsqr == 0xffff || ncqr == 0xffff) {
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
			return;
		}
		want = (nsqr > ncqr ? nsqr : ncqr) + 1;
		grant = want < t->cfg.max_queues ? want : t->cfg.max_queues;
		pthread_mutex_lock(&c->lock);
		c->nr_io_queues = (uint16_t)grant;
		pthread_mutex_unlock(&c->lock);
		result = (grant - 1) | (uint64_t)(grant - 1) << 16;
		break;
	}
	case BP_NVME_FEAT_ASYNC_EVENT:
		c->aen_cfg = dw11 & (c->discovery ? 0 : OAES_NS_ATTR);
		break;
	case BP_NVME_FEAT_KATO:
		c->kato_ms = dw11;
		nvmet_ctrl_keep_alive(c);
		break;
	case BP_NVME_FEAT_VOLATILE_WC:
		/* Turned off, every write goes durable (FUA); with no cache to turn, the feature is not there. */
		if (!any_vwc(t)) {
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
			return;
		}
		atomic_store(&c->feat_vwc, dw11 & 1);
		break;
	case BP_NVME_FEAT_TEMP_THRESH:
		c->feat_temp = dw11;
		break;
	case BP_NVME_FEAT_ARBITRATION:
		c->feat_arb = dw11;
		break;
	case BP_NVME_FEAT_POWER_MGMT:
		if (dw11 & 0x1f) { /* only power state 0 exists */
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
			return;
		}
		c->feat_power = dw11;
		break;
	case BP_NVME_FEAT_ERR_RECOVERY:
		c->feat_err = dw11;
		break;
	case BP_NVME_FEAT_IRQ_COALESCE:
	case BP_NVME_FEAT_WRITE_ATOMIC:
		break; /* accepted, meaningless on fabrics */
	case BP_NVME_FEAT_HOST_ID:
		/* The host identifier came with Connect and cannot change on fabrics (as nvmet). */
		nvmet_complete(q, cmd, BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR, 0);
		return;
	default:
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	nvmet_complete(q, cmd, 0, result);
}

static void get_features(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ctrl *c = q->ctrl;
	struct bp_nvmet *t = q->t;
	uint32_t dw10 = bp_nvme_sqe_dw(cmd->sqe, 10), dw11 = bp_nvme_sqe_dw(cmd->sqe, 11);
	uint8_t fid = (uint8_t)dw10, sel = (uint8_t)((dw10 >> 8) & 7);
	uint64_t v;

	if (sel == 3) { /* supported capabilities: changeable, not saveable, not per namespace */
		nvmet_complete(q, cmd, 0, 1u << 2);
		return;
	}
	switch (fid) {
	case BP_NVME_FEAT_NUM_QUEUES: {
		uint32_t n = c->nr_io_queues ? c->nr_io_queues : t->cfg.max_queues;

		v = (n - 1) | (uint64_t)(n - 1) << 16;
		break;
	}
	case BP_NVME_FEAT_ASYNC_EVENT: v = c->aen_cfg; break;
	case BP_NVME_FEAT_KATO: v = c->kato_ms; break;
	case BP_NVME_FEAT_VOLATILE_WC: v = any_vwc(t) ? atomic_load(&c->feat_vwc) : 0; break;
	case BP_NVME_FEAT_TEMP_THRESH: v = c->feat_temp; break;
	case BP_NVME_FEAT_ARBITRATION: v = c->feat_arb; break;
	case BP_NVME_FEAT_POWER_MGMT: v = c->feat_power; break;
	case BP_NVME_FEAT_ERR_RECOVERY: v = c->feat_err; break;
	case BP_NVME_FEAT_IRQ_COALESCE:
	case BP_NVME_FEAT_WRITE_ATOMIC: v = 0; break;
	case BP_NVME_FEAT_HOST_ID: {
		uint32_t len, want = (dw11 & 1) ? 16 : 8;
		uint16_t st = nvmet_check_sgl(q, cmd, 0, false, &len);

		if (!st && len != want)
			st = BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR;
		if (st) {
			nvmet_complete(q, cmd, st, 0);
			return;
		}
		nvmet_send_c2h(q, cmd, c->hostid, want, want);
		return;
	}
	default:
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	nvmet_complete(q, cmd, 0, v);
}

static void async_event(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < q->ncmds; i++)
		n += q->cmds[i].state == CMD_AER;
	if (n > AERL) {
		nvmet_complete(q, cmd, BP_NVME_SCT(1, 0x05) | BP_NVME_DNR, 0); /* AER Limit Exceeded */
		return;
	}
	/* Kept outstanding: namespaces never change while we run, so there is nothing to report. */
	cmd->state = CMD_AER;
	q->pass_ops++;
}

void nvmet_exec_admin(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	uint8_t opc = bp_nvme_sqe_opc(cmd->sqe);

	/* Any admin command proves the host alive; Keep Alive is only the explicit form. */
	nvmet_ctrl_keep_alive(q->ctrl);
	switch (opc) {
	case BP_NVME_ADM_IDENTIFY:
		identify(q, cmd);
		break;
	case BP_NVME_ADM_GET_LOG_PAGE:
		get_log_page(q, cmd);
		break;
	case BP_NVME_ADM_SET_FEATURES:
		set_features(q, cmd);
		break;
	case BP_NVME_ADM_GET_FEATURES:
		get_features(q, cmd);
		break;
	case BP_NVME_ADM_KEEP_ALIVE:
		nvmet_complete(q, cmd, 0, 0);
		break;
	case BP_NVME_ADM_ASYNC_EVENT:
		async_event(q, cmd);
		break;
	case BP_NVME_ADM_ABORT:
		if (q->ctrl->discovery)
			nvmet_complete(q, cmd, BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR, 0);
		else
			nvmet_complete(q, cmd, 0, 1); /* bit 0 set: not aborted (we finish every command) */
		break;
	default:
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR, 0);
		break;
	}
}
