/* SPDX-License-Identifier: MIT */
/*
 * The initiator's controller, synchronously: the Linux host's connect order
 * (reference notes, section 4) so a target that works with this works with it:
 * Connect, CAP, CC (EN=0, SQE/CQE sizes), CC.EN=1, CSTS.RDY, VS, Identify, Set
 * Features (number of queues); I/O queues; Identify Namespace; shutdown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <busypoll/nvme/host.h>

#include "base/bytes.h"

#define SYNC_TIMEOUT_MS 10000

int bp_nvmeh_run_until(struct bp_loop *loop, const volatile bool *flag, uint32_t timeout_ms)
{
	uint64_t end = bp_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (!*flag) {
		uint64_t now = bp_now_ns();
		int ret;

		if (now >= end)
			return -ETIMEDOUT;
		ret = bp_loop_run_once(loop, (int64_t)((end - now) / 1000 < 100000 ? (end - now) / 1000 : 100000));
		if (ret < 0)
			return ret;
	}
	return 0;
}

struct sync_wait {
	volatile bool done;
	int err;
	uint16_t status;
	uint64_t result;
};

static void sync_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct sync_wait *w = arg;

	w->err = err;
	if (cqe) {
		w->status = cqe->status;
		w->result = cqe->result;
	}
	w->done = true;
}

int bp_nvmeh_sync(struct bp_nvmeh_queue *q, uint8_t sqe[64], void *buf, uint32_t len, bool to_ctrl,
		  uint64_t *result, uint32_t timeout_ms)
{
	struct sync_wait w = { 0 };
	int ret = bp_nvmeh_submit(q, sqe, buf, len, to_ctrl, sync_done, &w);

	if (ret)
		return bp_set_last_error(ret, "submit: %s", ret == -EBUSY ? "queue full" : bp_nvmeh_queue_error(q));
	ret = bp_nvmeh_run_until(bp_nvmeh_queue_loop(q), &w.done, timeout_ms);
	if (ret) {
		/* Nobody may answer into w after we return: fail the queue, which calls back now. */
		bp_nvmeh_queue_close(q);
		return bp_set_last_error(ret, "command 0x%02x: no answer in %u ms", sqe[0], timeout_ms);
	}
	if (w.err)
		return bp_set_last_error(w.err, "%s", bp_nvmeh_queue_error(q));
	if (result)
		*result = w.result;
	return w.status;
}

int bp_nvmeh_admin_sync(struct bp_nvmeh_ctrl *c, uint8_t sqe[64], void *buf, uint32_t len, bool to_ctrl,
			uint64_t *result)
{
	return bp_nvmeh_sync(c->admin, sqe, buf, len, to_ctrl, result, SYNC_TIMEOUT_MS);
}

int bp_nvmeh_prop_get(struct bp_nvmeh_ctrl *c, uint32_t offset, int size, uint64_t *value)
{
	uint8_t sqe[64];

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0, 0, 0, false);
	sqe[4] = BP_NVMF_PROP_GET;
	sqe[40] = size == 8 ? 1 : 0;
	bp_put_le32(sqe + 44, offset);
	return bp_nvmeh_admin_sync(c, sqe, NULL, 0, false, value);
}

int bp_nvmeh_prop_set(struct bp_nvmeh_ctrl *c, uint32_t offset, uint32_t value)
{
	uint8_t sqe[64];

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0, 0, 0, false);
	sqe[4] = BP_NVMF_PROP_SET;
	sqe[40] = 0;
	bp_put_le32(sqe + 44, offset);
	bp_put_le64(sqe + 48, value);
	return bp_nvmeh_admin_sync(c, sqe, NULL, 0, false, NULL);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int fail(struct bp_nvmeh_ctrl *c, int ret, const char *what)
{
	char s[96];

	if (ret > 0)
		bp_set_last_error(ret, "%s: %s", what, bp_nvme_status_str((uint16_t)ret, s, sizeof(s)));
	else
		bp_set_last_error(ret, "%s: %s", what, bp_last_error());
	snprintf(c->err, sizeof(c->err), "%s", bp_last_error());
	return ret;
}

int bp_nvmeh_ctrl_connect(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
			  const struct bp_nvmeh_opts *o, uint16_t want_io_queues, struct bp_nvmeh_ctrl **cp)
{
	struct bp_nvmeh_ctrl *c = calloc(1, sizeof(*c));
	bool disc = !strcmp(o->subnqn, BP_NVME_DISC_NQN);
	uint64_t v = 0, cc;
	uint8_t sqe[64];
	int ret;

	if (!c)
		return bp_set_last_error(-ENOMEM, "out of memory");
	c->loop = loop;
	memcpy(&c->addr, addr, addrlen);
	c->addrlen = addrlen;
	c->opts = *o;
	ret = bp_nvmeh_queue_open(loop, addr, addrlen, o, 0, 0xffff, 32, &c->admin);
	if (ret) {
		free(c);
		return ret;
	}
	ret = bp_nvmeh_queue_wait_ready(c->admin, SYNC_TIMEOUT_MS);
	if (ret)
		goto out;
	c->cntlid = bp_nvmeh_queue_cntlid(c->admin);
	ret = bp_nvmeh_prop_get(c, BP_NVME_REG_CAP, 8, &c->cap);
	if (ret) {
		fail(c, ret, "Property Get CAP");
		goto out;
	}
	cc = (6u << 16) | (4u << 20); /* IOSQES 64 B, IOCQES 16 B, MPS 4 KiB, NVM command set, EN=0 */
	ret = bp_nvmeh_prop_set(c, BP_NVME_REG_CC, (uint32_t)cc);
	if (!ret)
		ret = bp_nvmeh_prop_set(c, BP_NVME_REG_CC, (uint32_t)cc | 1);
	if (ret) {
		fail(c, ret, "Property Set CC");
		goto out;
	}
	/* Poll CSTS.RDY for up to CAP.TO (500 ms units), as the Linux host does. */
	for (unsigned waited = 0, limit = ((unsigned)(c->cap >> 24) & 0xff) * 500 + 500;; waited++) {
		ret = bp_nvmeh_prop_get(c, BP_NVME_REG_CSTS, 4, &v);
		if (ret) {
			fail(c, ret, "Property Get CSTS");
			goto out;
		}
		if (v & 2) {
			ret = bp_set_last_error(-EIO, "controller fatal status (CSTS.CFS) after enabling");
			goto out;
		}
		if (v & 1)
			break;
		if (waited >= limit) {
			ret = bp_set_last_error(-ETIMEDOUT, "CSTS.RDY not set after %u ms", limit);
			goto out;
		}
		sleep_ms(1);
	}
	ret = bp_nvmeh_prop_get(c, BP_NVME_REG_VS, 4, &v);
	if (ret) {
		fail(c, ret, "Property Get VS");
		goto out;
	}
	c->vs = (uint32_t)v;
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_IDENTIFY, 0, 0, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_ID_CNS_CTRL);
	ret = bp_nvmeh_admin_sync(c, sqe, c->id, sizeof(c->id), false, NULL);
	if (ret) {
		fail(c, ret, "Identify Controller");
		goto out;
	}
	if (bp_get_le16(c->id + 78) != c->cntlid) {
		ret = bp_set_last_error(-EPROTO, "Identify says cntlid %u, Connect said %u", bp_get_le16(c->id + 78),
					c->cntlid);
		goto out;
	}
	c->nn = bp_get_le32(c->id + 516);
	c->incapsule = bp_get_le32(c->id + 1792) >= 4 ? bp_get_le32(c->id + 1792) * 16 - 64 : 0;
	c->max_transfer = c->id[77] ? 4096u << c->id[77] : 0;
	{
		uint32_t mqes = (uint32_t)(c->cap & 0xffff) + 1, maxcmd = bp_get_le16(c->id + 514);
		uint32_t depth = o->io_queue_size;

		if (depth > mqes)
			depth = mqes;
		if (maxcmd && depth > maxcmd)
			depth = maxcmd;
		c->io_depth = (uint16_t)depth;
	}
	if (!disc && want_io_queues) {
		bp_nvme_sqe_init(sqe, BP_NVME_ADM_SET_FEATURES, 0, 0, 0, false);
		bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_FEAT_NUM_QUEUES);
		bp_nvme_sqe_set_dw(sqe, 11, (uint32_t)(want_io_queues - 1) | (uint32_t)(want_io_queues - 1) << 16);
		ret = bp_nvmeh_admin_sync(c, sqe, NULL, 0, false, &v);
		if (ret) {
			fail(c, ret, "Set Features (number of queues)");
			goto out;
		}
		c->nr_io_queues = (uint16_t)(((v & 0xffff) < ((v >> 16) & 0xffff) ? (v & 0xffff) : ((v >> 16) & 0xffff)) + 1);
		if (c->nr_io_queues > want_io_queues)
			c->nr_io_queues = want_io_queues;
	}
	*cp = c;
	return 0;
out:
	snprintf(c->err, sizeof(c->err), "%s", bp_last_error());
	bp_nvmeh_queue_close(c->admin);
	free(c);
	return ret;
}

int bp_nvmeh_ctrl_io_queue(struct bp_nvmeh_ctrl *c, struct bp_loop *loop, uint16_t qid, struct bp_nvmeh_queue **qp)
{
	struct bp_nvmeh_queue *q;
	int ret = bp_nvmeh_queue_open(loop, (struct sockaddr *)&c->addr, c->addrlen, &c->opts, qid, c->cntlid,
				      c->io_depth, &q);

	if (ret)
		return ret;
	ret = bp_nvmeh_queue_wait_ready(q, SYNC_TIMEOUT_MS);
	if (ret) {
		bp_nvmeh_queue_close(q);
		return ret;
	}
	bp_nvmeh_queue_set_incapsule(q, c->incapsule);
	*qp = q;
	return 0;
}

int bp_nvmeh_identify_ns(struct bp_nvmeh_ctrl *c, uint32_t nsid, struct bp_nvmeh_ns_info *info)
{
	uint8_t sqe[64], *id = calloc(1, 4096);
	int ret;

	if (!id)
		return bp_set_last_error(-ENOMEM, "out of memory");
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_IDENTIFY, 0, nsid, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_ID_CNS_NS);
	ret = bp_nvmeh_admin_sync(c, sqe, id, 4096, false, NULL);
	if (!ret) {
		uint8_t flbas = id[26] & 0xf;

		info->nsid = nsid;
		info->nblocks = bp_get_le64(id);
		info->block_size = 1u << id[128 + 4 * flbas + 2];
		memcpy(info->nguid, id + 104, 16);
		info->read_only = id[99] & 1;
		info->dlfeat = id[33];
	}
	free(id);
	return ret;
}

void bp_nvmeh_ctrl_disconnect(struct bp_nvmeh_ctrl *c)
{
	uint64_t cc = 0, csts = 0;

	if (!c)
		return;
	if (bp_nvmeh_queue_state(c->admin) == BP_NVMEH_READY && !bp_nvmeh_prop_get(c, BP_NVME_REG_CC, 4, &cc) &&
	    !bp_nvmeh_prop_set(c, BP_NVME_REG_CC, (uint32_t)((cc & ~(3u << 14)) | (1u << 14)))) {
		for (int i = 0; i < 2000; i++) {
			if (bp_nvmeh_prop_get(c, BP_NVME_REG_CSTS, 4, &csts) || ((csts >> 2) & 3) == 2)
				break;
			sleep_ms(1);
		}
	}
	bp_nvmeh_queue_close(c->admin);
	free(c);
}

void bp_nvmeh_ctrl_close(struct bp_nvmeh_ctrl *c)
{
	if (!c)
		return;
	bp_nvmeh_queue_close(c->admin);
	free(c);
}
