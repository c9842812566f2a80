/* SPDX-License-Identifier: MIT */
/*
 * Fabrics commands: Connect (admin and I/O queues), Property Get/Set (CAP, VS,
 * CC, CSTS with enable, reset and shutdown), and the dispatch of every command to
 * its family. Statuses and invalid-parameter locators follow nvmet, which is what
 * the Linux host's error messages expect.
 */
#include <stdlib.h>
#include <string.h>

#include "nvme/target/internal.h"
#include "base/bytes.h"

#define NVME_VS_1_3 0x00010300u
#define CC_EN(cc) ((cc) & 1u)
#define CC_CSS(cc) (((cc) >> 4) & 7u)
#define CC_MPS(cc) (((cc) >> 7) & 0xfu)
#define CC_AMS(cc) (((cc) >> 11) & 7u)
#define CC_SHN(cc) (((cc) >> 14) & 3u)
#define CC_IOSQES(cc) (((cc) >> 16) & 0xfu)
#define CC_IOCQES(cc) (((cc) >> 20) & 0xfu)
#define CSTS_RDY 1u
#define CSTS_CFS 2u
#define CSTS_SHST_MASK (3u << 2)

bool nvmet_host_allowed(const struct bp_nvmet *t, const char *hostnqn)
{
	if (!t->cfg.n_allow)
		return true;
	for (int i = 0; i < t->cfg.n_allow; i++)
		if (!strcmp(t->cfg.allow_hosts[i], hostnqn))
			return true;
	return false;
}

/* A 256-byte NQN field holding a NUL-terminated NQN of 1..223 bytes. */
static bool nqn_field_ok(const uint8_t *f)
{
	size_t n = strnlen((const char *)f, BP_NVMF_NQN_LEN);

	return n > 0 && n <= BP_NVMF_NQN_MAX;
}

static void connect_fail(struct nvmet_queue *q, struct nvmet_cmd *cmd, uint16_t status, uint32_t result,
			 const char *why, const char *hostnqn)
{
	nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s: Connect refused: %s%s%s", q->peer, why,
		  hostnqn ? "; host " : "", hostnqn ? hostnqn : "");
	nvmet_complete(q, cmd, status, result);
}

static void exec_connect(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *cd, uint32_t cd_len)
{
	struct bp_nvmet *t = q->t;
	const uint8_t *sqe = cmd->sqe;
	uint16_t recfmt = bp_get_le16(sqe + 40), qid = bp_get_le16(sqe + 42), sqsize = bp_get_le16(sqe + 44);
	uint8_t cattr = sqe[46];
	uint32_t kato = bp_get_le32(sqe + 48), result = 0, len;
	const char *subnqn, *hostnqn;
	struct nvmet_ctrl *c = NULL;
	uint16_t status;
	bool disc;

	if (q->state != Q_WAIT_CONNECT) {
		nvmet_complete(q, cmd, BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR, 0);
		return;
	}
	status = nvmet_check_sgl(q, cmd, cd_len, true, &len);
	if (!status && (len != BP_NVMF_CONNECT_DATA_LEN || cd_len < BP_NVMF_CONNECT_DATA_LEN))
		status = BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR;
	if (status) {
		connect_fail(q, cmd, status, 0, "Connect without its 1024 bytes of in-capsule data", NULL);
		return;
	}
	if (recfmt != 0) {
		connect_fail(q, cmd, BP_NVME_SC_CONNECT_FORMAT | BP_NVME_DNR, BP_NVMF_IPO(0, 40),
			     "unknown record format", NULL);
		return;
	}
	if (!nqn_field_ok(cd + BP_NVMF_CD_SUBNQN)) {
		connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR,
			     BP_NVMF_IPO(1, BP_NVMF_CD_SUBNQN), "malformed subsystem NQN", NULL);
		return;
	}
	if (!nqn_field_ok(cd + BP_NVMF_CD_HOSTNQN)) {
		connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR,
			     BP_NVMF_IPO(1, BP_NVMF_CD_HOSTNQN), "malformed host NQN", NULL);
		return;
	}
	subnqn = (const char *)cd + BP_NVMF_CD_SUBNQN;
	hostnqn = (const char *)cd + BP_NVMF_CD_HOSTNQN;
	disc = !strcmp(subnqn, BP_NVME_DISC_NQN);
	if (!disc && strcmp(subnqn, t->cfg.nqn)) {
		char why[600];

		snprintf(why, sizeof(why), "unknown subsystem %.223s (this target serves %.223s)", subnqn, t->cfg.nqn);
		connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR,
			     BP_NVMF_IPO(1, BP_NVMF_CD_SUBNQN), why, hostnqn);
		return;
	}
	if (!disc && !nvmet_host_allowed(t, hostnqn)) {
		connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_HOST | BP_NVME_DNR,
			     BP_NVMF_IPO(1, BP_NVMF_CD_HOSTNQN), "host not allowed (--allow-host)", hostnqn);
		return;
	}
	if (!sqsize || (uint32_t)sqsize + 1 > (qid ? t->cfg.queue_depth : NVMET_ADMIN_DEPTH)) {
		connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR, BP_NVMF_IPO(0, 44),
			     qid ? "sqsize beyond --queue-depth" : "admin sqsize beyond 32 entries", hostnqn);
		return;
	}
	if (qid == 0) {
		if (bp_get_le16(cd + BP_NVMF_CD_CNTLID) != 0xffff) {
			connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR,
				     BP_NVMF_IPO(1, BP_NVMF_CD_CNTLID), "static controller id (only dynamic 0xffff)",
				     hostnqn);
			return;
		}
		if (nvmet_queue_set_depth(q, (uint32_t)sqsize + 1) ||
		    !(c = nvmet_ctrl_create(t, q, cd, disc, kato))) {
			connect_fail(q, cmd, BP_NVME_SC_INTERNAL, 0, "out of memory", hostnqn);
			return;
		}
		result = c->cntlid;
	} else {
		if (disc) {
			connect_fail(q, cmd, BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR, BP_NVMF_IPO(0, 42),
				     "I/O queue on the discovery controller", hostnqn);
			return;
		}
		q->qid = qid; /* the ctrl records it; set before attach */
		status = nvmet_ctrl_attach_ioq(t, q, cd, qid, &result, &c);
		if (status) {
			char why[96];

			snprintf(why, sizeof(why), "I/O queue %u for controller %u: %s", qid,
				 bp_get_le16(cd + BP_NVMF_CD_CNTLID),
				 status == (BP_NVME_SC_CONNECT_CTRL_BUSY | BP_NVME_DNR) ? "queue already connected"
				 : (result == BP_NVMF_IPO(0, 42)) ? "qid beyond the queues granted"
				 : "no such live controller for this host");
			q->qid = 0;
			connect_fail(q, cmd, status, result, why, hostnqn);
			return;
		}
		if (nvmet_queue_set_depth(q, (uint32_t)sqsize + 1)) {
			q->ctrl = c;
			nvmet_ctrl_detach(q);
			connect_fail(q, cmd, BP_NVME_SC_INTERNAL, 0, "out of memory", hostnqn);
			return;
		}
		q->rx.max_cmd_data = t->cfg.inline_data;
	}
	q->ctrl = c;
	q->qid = qid;
	q->sqhd = (uint16_t)(1 % q->depth); /* the Connect took an entry */
	q->sqflow_off = cattr & BP_NVMF_CATTR_DISABLE_SQFLOW;
	q->state = Q_LIVE;
	bp_timer_stop(bp_conn_loop(q->conn), &q->connect_timer); /* keep-alive takes over */
	q->st.cntlid = c->cntlid;
	q->st.qid = qid;
	snprintf(q->st.hostnqn, sizeof(q->st.hostnqn), "%s", c->hostnqn);
	nvmet_log(t, BP_NVMET_LOG_INFO, "%s: %s connected: cntlid %u qid %u depth %u%s%s%s", q->peer,
		  c->hostnqn, c->cntlid, qid, q->depth, disc ? " (discovery)" : "",
		  q->hdgst ? " hdgst" : "", q->ddgst ? " ddgst" : "");
	nvmet_complete(q, cmd, 0, result);
}

static void exec_prop_get(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ctrl *c = q->ctrl;
	bool eight = cmd->sqe[40] & 1;
	uint32_t off = bp_get_le32(cmd->sqe + 44);
	uint64_t v;

	if (eight && off == BP_NVME_REG_CAP)
		v = nvmet_ctrl_cap(q->t, c);
	else if (!eight && off == BP_NVME_REG_VS)
		v = NVME_VS_1_3;
	else if (!eight && off == BP_NVME_REG_CC)
		v = c->cc;
	else if (!eight && off == BP_NVME_REG_CSTS)
		v = atomic_load(&c->csts);
	else {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	nvmet_complete(q, cmd, 0, v);
}

/* Drop outstanding AERs without an answer: a reset aborts them on the host too. */
static void drop_aers(struct nvmet_queue *q)
{
	for (uint32_t i = 0; i < q->ncmds; i++)
		if (q->cmds[i].state == CMD_AER)
			nvmet_cmd_free(q, &q->cmds[i]);
}

static void exec_prop_set(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ctrl *c = q->ctrl;
	uint32_t off = bp_get_le32(cmd->sqe + 44), old, cc, csts;
	bool shutdown = false;

	if ((cmd->sqe[40] & 1) || off != BP_NVME_REG_CC) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	old = c->cc;
	cc = (uint32_t)bp_get_le64(cmd->sqe + 48);
	c->cc = cc;
	csts = atomic_load(&c->csts);
	if (CC_EN(cc) && !CC_EN(old)) {
		bool bad = CC_MPS(cc) != 0 || CC_AMS(cc) != 0 || (CC_CSS(cc) != 0 && CC_CSS(cc) != 7) ||
			   (!c->discovery && (CC_IOSQES(cc) != 6 || CC_IOCQES(cc) != 4));

		if (bad)
			nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (cntlid %u): CC 0x%08x asks for what we lack "
				  "(MPS 4K, SQE 64, CQE 16, NVM command set); controller fatal status", q->peer,
				  c->cntlid, cc);
		csts = bad ? CSTS_CFS : CSTS_RDY;
	} else if (!CC_EN(cc) && CC_EN(old)) {
		/* Controller reset: the I/O queues go, the admin queue stays. */
		csts = 0;
		nvmet_ctrl_kill_ioqs(c);
		drop_aers(q);
	}
	if (CC_SHN(cc) && !CC_SHN(old)) {
		shutdown = true;
		nvmet_log(q->t, BP_NVMET_LOG_INFO, "%s (cntlid %u): shutdown", q->peer, c->cntlid);
	} else if (!CC_SHN(cc) && CC_SHN(old)) {
		csts &= ~CSTS_SHST_MASK;
	}
	atomic_store(&c->csts, csts);
	/* A host shutting down expects its data on stable storage: SHST says when it is. */
	if (shutdown)
		nvmet_ctrl_shutdown(c, q);
	nvmet_complete(q, cmd, 0, 0);
}

void nvmet_exec_fabrics(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len)
{
	uint8_t fctype = cmd->sqe[4];

	if (fctype == BP_NVMF_CONNECT) {
		exec_connect(q, cmd, data, data_len);
		return;
	}
	if (q->state != Q_LIVE) {
		nvmet_complete(q, cmd, BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR, 0);
		return;
	}
	if (q->qid == 0 && fctype == BP_NVMF_PROP_GET)
		exec_prop_get(q, cmd);
	else if (q->qid == 0 && fctype == BP_NVMF_PROP_SET)
		exec_prop_set(q, cmd);
	else
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR, 0);
}

uint16_t nvmet_check_sgl(struct nvmet_queue *q, struct nvmet_cmd *cmd, uint32_t data_len, bool host_to_ctrl,
			 uint32_t *len)
{
	const uint8_t *s = cmd->sqe;
	uint8_t type = bp_nvme_sqe_sgl_type(s);

	*len = bp_nvme_sqe_sgl_len(s);
	if ((s[1] & 0xc0) != BP_NVME_SQE_FLAG_SGL)
		return BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR; /* fabrics carry SGLs, never PRPs */
	if (type == BP_NVME_SGL_DATA_BLOCK_OFFSET) {
		if (!host_to_ctrl)
			return BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR;
		if (bp_nvme_sqe_sgl_addr(s) != 0)
			return BP_NVME_SC_SGL_INVALID_OFFSET | BP_NVME_DNR; /* ICDOFF is 0 */
		if (*len > data_len)
			return BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR;
	} else if (type == BP_NVME_SGL_TRANSPORT_BLOCK) {
		if (data_len)
			return BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR; /* data in the capsule, SGL says elsewhere */
	} else if (*len || data_len) {
		return BP_NVME_SC_SGL_INVALID_TYPE | BP_NVME_DNR;
	}
	if (*len > q->t->cfg.max_transfer)
		return BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR; /* beyond MDTS */
	return 0;
}

void nvmet_exec(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len)
{
	uint8_t opc = bp_nvme_sqe_opc(cmd->sqe);

	if (opc == BP_NVME_FABRICS) {
		nvmet_exec_fabrics(q, cmd, data, data_len);
		return;
	}
	if (q->state != Q_LIVE) {
		/* A command on a queue that is not connected: the spec's answer is this status. */
		if (!(q->logged & LOGGED_SEQ)) {
			q->logged |= LOGGED_SEQ;
			nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s: opcode 0x%02x before Connect; Command Sequence Error "
				  "(logged once per queue)", q->peer, opc);
		}
		nvmet_complete(q, cmd, BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR, 0);
		return;
	}
	if (!(atomic_load(&q->ctrl->csts) & CSTS_RDY) && !(q->qid == 0 && opc == BP_NVME_ADM_KEEP_ALIVE)) {
		nvmet_complete(q, cmd, BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR, 0);
		return;
	}
	if (q->qid == 0)
		nvmet_exec_admin(q, cmd);
	else
		nvmet_exec_io(q, cmd, data, data_len);
}
