/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP PDUs against a real Linux host talking to the kernel target (nvmet):
 * every PDU of both captures (plain, and header+data digests) must frame with
 * our parser under the settings its ICReq negotiated, and our encoders must
 * reproduce its bytes exactly (reserved bytes and digests included). Then every
 * malformed case a target must refuse, with the FES/FEI it must answer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dirent.h>

#include <busypoll/nvme/tcp.h>

#include "bpt_pcapng.h"
#include "base/bytes.h"

#define FIXTURES BP_TEST_DATA "/nvme-tcp/"

struct seen {
	unsigned by_type[16];
	unsigned total;
	unsigned digests_checked;
};

/* Re-encode one framed PDU with our encoders and compare every byte of its header. */
static void reencode(const struct bp_nvme_tcp_pdu *p, bool hd, bool dd, struct seen *sn)
{
	uint8_t buf[BP_NVME_TCP_MAX_HDR + 64];
	size_t n = 0, cmp = 0;

	switch (p->ch.type) {
	case BP_NVME_TCP_ICREQ:
	case BP_NVME_TCP_ICRESP: {
		struct bp_nvme_tcp_ic ic;

		bp_nvme_tcp_ic_decode(p->hdr, &ic);
		n = bp_nvme_tcp_ic_encode(buf, p->ch.type, &ic);
		cmp = 128;
		break;
	}
	case BP_NVME_TCP_CMD:
		n = bp_nvme_tcp_cmd_encode(buf, p->hdr + 8, p->data_len, hd, dd, 0);
		cmp = p->data_len ? p->ch.pdo : p->ch.plen;
		assert_int_equal(n, cmp);
		break;
	case BP_NVME_TCP_RSP: {
		struct bp_nvme_cqe cqe;

		bp_nvme_cqe_decode(p->hdr + 8, &cqe);
		n = bp_nvme_tcp_rsp_encode(buf, &cqe, hd);
		cmp = p->ch.plen;
		break;
	}
	case BP_NVME_TCP_C2H_DATA:
	case BP_NVME_TCP_H2C_DATA: {
		struct bp_nvme_tcp_data d;

		bp_nvme_tcp_data_decode(p->hdr, &d);
		assert_int_equal(d.length, p->data_len);
		n = bp_nvme_tcp_data_encode(buf, p->ch.type, &d,
					    p->ch.flags & (BP_NVME_TCP_F_LAST | BP_NVME_TCP_F_SUCCESS), hd, dd, 0);
		cmp = p->ch.pdo;
		break;
	}
	case BP_NVME_TCP_R2T: {
		struct bp_nvme_tcp_data d;

		bp_nvme_tcp_data_decode(p->hdr, &d);
		n = bp_nvme_tcp_r2t_encode(buf, &d, hd);
		cmp = p->ch.plen;
		break;
	}
	default:
		fail_msg("unexpected PDU type %u in a capture", p->ch.type);
	}
	assert_true(n >= cmp);
	assert_memory_equal(buf, p->hdr, cmp);
	/* The data digest we compute is the one on the wire (framing checked it too). */
	if (dd && p->data_len) {
		uint8_t dg[4];

		bp_nvme_tcp_put_digest(dg, p->data, p->data_len);
		assert_memory_equal(dg, p->data + p->data_len, 4);
		sn->digests_checked++;
	}
	if (hd && p->ch.type != BP_NVME_TCP_ICREQ && p->ch.type != BP_NVME_TCP_ICRESP)
		sn->digests_checked++;
}

/* Frame a whole direction of one connection; returns the digests the ICReq negotiated. */
static void walk(const struct bpt_tcp_stream *s, bool is_target, uint8_t *digest, struct seen *sn)
{
	struct bp_nvme_tcp_rx_cfg cfg = {
		.is_target = is_target,
		.max_cmd_data = 16384,
		.max_data = 4u << 20,
	};
	size_t off = 0;

	while (off < s->len) {
		struct bp_nvme_tcp_pdu p;
		struct bp_nvme_tcp_err err;
		int n = bp_nvme_tcp_frame(s->data + off, s->len - off, &cfg, &p, &err);

		if (n < 0)
			fail_msg("PDU at offset %zu of %u->%u refused: %s", off, s->sport, s->dport, err.msg);
		assert_true(n > 0);
		assert_false(p.ddgst_bad);
		reencode(&p, cfg.hdgst, cfg.ddgst, sn);
		if (p.ch.type == BP_NVME_TCP_ICREQ || p.ch.type == BP_NVME_TCP_ICRESP) {
			struct bp_nvme_tcp_ic ic;

			bp_nvme_tcp_ic_decode(p.hdr, &ic);
			assert_int_equal(ic.pfv, 0);
			assert_int_equal(ic.pda, 0);
			if (p.ch.type == BP_NVME_TCP_ICREQ)
				*digest = ic.digest;
			else
				assert_int_equal(ic.digest, *digest); /* the target echoes exactly */
			if (p.ch.type == BP_NVME_TCP_ICRESP) {
				assert_int_equal(ic.maxdata % 4, 0);
				assert_true(ic.maxdata >= 4096);
			}
			cfg.connected = true;
			cfg.hdgst = *digest & BP_NVME_TCP_DIGEST_HDR;
			cfg.ddgst = *digest & BP_NVME_TCP_DIGEST_DATA;
		}
		sn->by_type[p.ch.type & 15]++;
		sn->total++;
		off += (size_t)n;
	}
	assert_int_equal(off, s->len);
}

static void check_capture(const char *file, bool digests)
{
	struct bpt_pcap cap;
	struct seen sn = { 0 };
	int conns = 0;

	assert_int_equal(bpt_pcapng_streams(file, &cap), 0);
	for (size_t i = 0;; i++) {
		struct bpt_tcp_stream *h2c = bpt_pcap_find(&cap, 4420, i), *c2h;
		uint8_t digest = 0;

		if (!h2c)
			break;
		c2h = bpt_pcap_reverse(&cap, h2c);
		assert_non_null(c2h);
		/* The host's side first: its ICReq says what the target must accept. */
		walk(h2c, true, &digest, &sn);
		assert_int_equal(digest, digests ? 3 : 0);
		walk(c2h, false, &digest, &sn);
		conns++;
	}
	bpt_pcap_free(&cap);
	/* The same PDUs as the one-line-per-PDU listing beside the capture. */
	assert_int_equal(conns, 3);
	assert_int_equal(sn.total, 94);
	assert_int_equal(sn.by_type[BP_NVME_TCP_ICREQ], 3);
	assert_int_equal(sn.by_type[BP_NVME_TCP_ICRESP], 3);
	assert_int_equal(sn.by_type[BP_NVME_TCP_CMD], 35);
	assert_int_equal(sn.by_type[BP_NVME_TCP_RSP], 34);
	assert_int_equal(sn.by_type[BP_NVME_TCP_C2H_DATA], 17);
	assert_int_equal(sn.by_type[BP_NVME_TCP_R2T], 1);
	assert_int_equal(sn.by_type[BP_NVME_TCP_H2C_DATA], 1);
	if (digests)
		assert_true(sn.digests_checked > 90);
	else
		assert_int_equal(sn.digests_checked, 0);
}

static void test_capture_plain(void **state) { check_capture(FIXTURES "linux-host-connect.pcapng", false); }
static void test_capture_digests(void **state) { check_capture(FIXTURES "linux-host-connect-digests.pcapng", true); }

/* Specific fields of the captured PDUs, decoded. */
static void test_capture_fields(void **state)
{
	struct bpt_pcap cap;
	struct bpt_tcp_stream *q0, *q1;
	struct bp_nvme_tcp_rx_cfg cfg = { .is_target = true, .max_cmd_data = 16384, .max_data = 1u << 22 };
	struct bp_nvme_tcp_pdu p;
	struct bp_nvme_tcp_err err;
	const uint8_t *sqe;
	size_t off;
	int n;

	assert_int_equal(bpt_pcapng_streams(FIXTURES "linux-host-connect-digests.pcapng", &cap), 0);
	q0 = bpt_pcap_find(&cap, 4420, 0);
	/* ICReq: hpda 0, both digests, maxr2t 0 */
	n = bp_nvme_tcp_frame(q0->data, q0->len, &cfg, &p, &err);
	assert_int_equal(n, 128);
	assert_int_equal(q0->data[11], 3);
	off = (size_t)n;
	cfg.connected = cfg.hdgst = cfg.ddgst = true;
	/* Connect: flags 0x03, pdo 76, plen 1104, qid 0, sqsize 31, kato 5000, 1024 B data. */
	n = bp_nvme_tcp_frame(q0->data + off, q0->len - off, &cfg, &p, &err);
	assert_int_equal(n, 1104);
	assert_int_equal(p.ch.flags, 3);
	assert_int_equal(p.ch.pdo, 76);
	assert_int_equal(p.data_len, 1024);
	sqe = p.hdr + 8;
	assert_int_equal(bp_nvme_sqe_opc(sqe), BP_NVME_FABRICS);
	assert_int_equal(sqe[4], BP_NVMF_CONNECT);
	assert_int_equal(bp_get_le16(sqe + 42), 0);
	assert_int_equal(bp_get_le16(sqe + 44), 31);
	assert_int_equal(bp_get_le32(sqe + 48), 5000);
	assert_int_equal(bp_nvme_sqe_sgl_type(sqe), BP_NVME_SGL_DATA_BLOCK_OFFSET);
	assert_int_equal(bp_nvme_sqe_sgl_len(sqe), 1024);
	assert_int_equal(bp_get_le16(p.data + BP_NVMF_CD_CNTLID), 0xffff);
	assert_string_equal((const char *)p.data + BP_NVMF_CD_SUBNQN, "nqn.2024-01.io.example:sub1");
	assert_memory_equal(p.data + BP_NVMF_CD_HOSTNQN, "nqn.2014-08.org.nvmexpress:uuid:", 32);
	/* The admin queue's CapsuleResp to it carries the cntlid in the result. */
	{
		struct bpt_tcp_stream *r = bpt_pcap_reverse(&cap, q0);
		struct bp_nvme_tcp_rx_cfg hc = { .max_data = 1u << 22 };
		struct bp_nvme_cqe cqe;

		n = bp_nvme_tcp_frame(r->data, r->len, &hc, &p, &err);
		assert_int_equal(n, 128);
		hc.connected = hc.hdgst = hc.ddgst = true;
		n = bp_nvme_tcp_frame(r->data + 128, r->len - 128, &hc, &p, &err);
		assert_int_equal(n, 28);
		bp_nvme_cqe_decode(p.hdr + 8, &cqe);
		assert_int_equal(cqe.status, 0);
		assert_int_equal(cqe.cid, bp_nvme_sqe_cid(q0->data + 128 + 8));
		assert_true((cqe.result & 0xffff) != 0xffff);
	}
	/* q1's 64 KiB write: R2T then one H2CData with LAST, ttag echoed. */
	q1 = bpt_pcap_find(&cap, 4420, 1);
	for (off = 0; off < q1->len; off += (size_t)n) {
		struct bp_nvme_tcp_rx_cfg c1 = cfg;

		c1.connected = off > 0;
		n = bp_nvme_tcp_frame(q1->data + off, q1->len - off, &c1, &p, &err);
		assert_true(n > 0);
		if (p.ch.type == BP_NVME_TCP_H2C_DATA) {
			struct bp_nvme_tcp_data d;

			bp_nvme_tcp_data_decode(p.hdr, &d);
			assert_int_equal(p.ch.flags, 0x07);
			assert_int_equal(d.offset, 0);
			assert_int_equal(d.length, 65536);
			assert_int_equal(p.ch.plen, 65568);
		}
	}
	bpt_pcap_free(&cap);
}

/* ---- CRC32C ---- */

static void test_crc32c_vectors(void **state)
{
	uint8_t zeros[32] = { 0 }, ones[32], inc[32];

	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++)
		inc[i] = (uint8_t)i;
	/* RFC 3720 (iSCSI) B.4 test vectors, and the classic check value. */
	assert_int_equal(bp_crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(bp_crc32c(0, zeros, 32), 0x8a9136aa);
	assert_int_equal(bp_crc32c(0, ones, 32), 0x62a8ab43);
	assert_int_equal(bp_crc32c(0, inc, 32), 0x46dd794e);
	assert_int_equal(bp_crc32c_sw(0, "123456789", 9), 0xe3069283);
	assert_int_equal(bp_crc32c_hw(0, "123456789", 9), 0xe3069283);
	assert_int_equal(bp_crc32c(0, "", 0), 0);
}

static void test_crc32c_impls_agree(void **state)
{
	static uint8_t buf[70000];
	uint32_t x = 12345;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	/* Every alignment and tail length, and chaining in pieces. */
	for (size_t start = 0; start < 9; start++)
		for (size_t len = 0; len < 300; len++)
			assert_int_equal(bp_crc32c_sw(0, buf + start, len), bp_crc32c_hw(0, buf + start, len));
	assert_int_equal(bp_crc32c_sw(0, buf, sizeof(buf)), bp_crc32c_hw(0, buf, sizeof(buf)));
	{
		uint32_t whole = bp_crc32c(0, buf, sizeof(buf));
		uint32_t part = bp_crc32c(bp_crc32c(bp_crc32c(0, buf, 13), buf + 13, 4096), buf + 4109,
					  sizeof(buf) - 4109);

		assert_int_equal(whole, part);
	}
	print_message("crc32c implementation here: %s\n", bp_crc32c_impl());
}

/* ---- malformed PDUs: what a target must refuse, and how ---- */

static struct bp_nvme_tcp_rx_cfg tgt_cfg(bool hd, bool dd)
{
	struct bp_nvme_tcp_rx_cfg c = { .is_target = true, .connected = true, .hdgst = hd, .ddgst = dd,
					.max_cmd_data = 8192, .max_data = 131072 };
	return c;
}

static int frame_err(const uint8_t *b, size_t len, struct bp_nvme_tcp_rx_cfg c, struct bp_nvme_tcp_err *err)
{
	struct bp_nvme_tcp_pdu p;

	return bp_nvme_tcp_frame(b, len, &c, &p, err);
}

static size_t good_cmd(uint8_t *b, uint32_t data_len, bool hd, bool dd)
{
	uint8_t sqe[64];
	size_t h;

	bp_nvme_sqe_init(sqe, BP_NVME_CMD_WRITE, 7, 1, data_len, true);
	h = bp_nvme_tcp_cmd_encode(b, sqe, data_len, hd, dd, 0);
	if (!data_len)
		return h;
	memset(b + h, 0xab, data_len);
	if (dd)
		bp_nvme_tcp_put_digest(b + h + data_len, b + h, data_len);
	return h + data_len + (dd ? 4 : 0);
}

static void expect(const uint8_t *b, size_t len, struct bp_nvme_tcp_rx_cfg c, uint16_t fes, uint32_t fei)
{
	struct bp_nvme_tcp_err err;
	int r = frame_err(b, len, c, &err);

	if (r != -EPROTO)
		fail_msg("expected a refusal (fes %u fei %u), got %d", fes, fei, r);
	assert_int_equal(err.fes, fes);
	assert_int_equal(err.fei, fei);
	assert_true(err.msg[0] != 0);
}

static void test_malformed(void **state)
{
	uint8_t b[16384];
	struct bp_nvme_tcp_err err;
	struct bp_nvme_tcp_pdu p;
	struct bp_nvme_tcp_rx_cfg c = tgt_cfg(false, false);
	size_t n;

	/* A good one frames. */
	n = good_cmd(b, 512, false, false);
	assert_int_equal(bp_nvme_tcp_frame(b, n, &c, &p, &err), (int)n);
	/* Partial: need more, never an error, at every cut. */
	for (size_t cut = 0; cut < n; cut++)
		assert_int_equal(bp_nvme_tcp_frame(b, cut, &c, &p, &err), 0);

	/* Bad PDU type: unknown, and one only a controller sends. */
	b[0] = 0x08;
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 0);
	b[0] = BP_NVME_TCP_RSP;
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 0);
	b[0] = 0xff;
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 0);

	/* Header length. */
	n = good_cmd(b, 512, false, false);
	b[2] = 64;
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 2);

	/* PDU data offset: not where the data must start. */
	n = good_cmd(b, 512, false, false);
	b[3] = 76;
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 3);
	/* PDO beyond plen. */
	n = good_cmd(b, 0, false, false);
	b[3] = 200;
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 3);

	/* PDU length: in-capsule data beyond the limit is refused before it is waited for. */
	n = good_cmd(b, 512, false, false);
	bp_put_le32(b + 4, 72 + 8193);
	expect(b, 8, c, BP_NVME_TCP_FES_DATA_LIMIT, 0);
	bp_put_le32(b + 4, 0xffffffffu);
	expect(b, 8, c, BP_NVME_TCP_FES_DATA_LIMIT, 0);
	/* A CapsuleResp-sized PDU length on an ICReq. */
	{
		struct bp_nvme_tcp_ic ic = { 0 };
		struct bp_nvme_tcp_rx_cfg pre = tgt_cfg(false, false);

		pre.connected = false;
		bp_nvme_tcp_ic_encode(b, BP_NVME_TCP_ICREQ, &ic);
		assert_int_equal(bp_nvme_tcp_frame(b, 128, &pre, &p, &err), 128);
		bp_put_le32(b + 4, 24);
		expect(b, 128, pre, BP_NVME_TCP_FES_INVALID_HEADER, 4);
		/* An ICReq once connected: out of sequence. */
		bp_put_le32(b + 4, 128);
		expect(b, 128, c, BP_NVME_TCP_FES_PDU_SEQUENCE, 0);
		/* A command before the ICReq: out of sequence. */
		n = good_cmd(b, 0, false, false);
		expect(b, n, pre, BP_NVME_TCP_FES_PDU_SEQUENCE, 0);
	}

	/* Digest flags against what was negotiated. */
	n = good_cmd(b, 512, true, false);
	expect(b, n, c, BP_NVME_TCP_FES_INVALID_HEADER, 1);        /* HDGSTF set, not negotiated */
	n = good_cmd(b, 512, false, false);
	expect(b, n, tgt_cfg(true, false), BP_NVME_TCP_FES_INVALID_HEADER, 1); /* negotiated, flag clear */
	n = good_cmd(b, 512, false, false);
	expect(b, n, tgt_cfg(false, true), BP_NVME_TCP_FES_INVALID_HEADER, 1); /* DDGSTF clear with data */

	/* Header digest mismatch: fatal. */
	n = good_cmd(b, 512, true, true);
	assert_int_equal(frame_err(b, n, tgt_cfg(true, true), &err), (int)n);
	b[20] ^= 1;
	expect(b, n, tgt_cfg(true, true), BP_NVME_TCP_FES_HDGST, 0);

	/* Data digest mismatch: framed, flagged, not fatal. */
	n = good_cmd(b, 512, true, true);
	b[100] ^= 0x10;
	{
		struct bp_nvme_tcp_rx_cfg cd = tgt_cfg(true, true);

		assert_int_equal(bp_nvme_tcp_frame(b, n, &cd, &p, &err), (int)n);
		assert_true(p.ddgst_bad);
	}

	/* H2CData: DATAL disagreeing with the PDU, data beyond maxh2cdata, no data. */
	{
		struct bp_nvme_tcp_data d = { .cccid = 7, .ttag = 1, .offset = 0, .length = 1024 };
		size_t h = bp_nvme_tcp_data_encode(b, BP_NVME_TCP_H2C_DATA, &d, BP_NVME_TCP_F_LAST, false, false, 0);

		memset(b + h, 0x5a, 1024);
		assert_int_equal(frame_err(b, h + 1024, c, &err), (int)(h + 1024));
		bp_put_le32(b + 16, 1000);
		expect(b, h + 1024, c, BP_NVME_TCP_FES_INVALID_HEADER, 16);
		d.length = 131072 + 4;
		h = bp_nvme_tcp_data_encode(b, BP_NVME_TCP_H2C_DATA, &d, 0, false, false, 0);
		expect(b, h, c, BP_NVME_TCP_FES_DATA_LIMIT, 0);
		d.length = 0;
		h = bp_nvme_tcp_data_encode(b, BP_NVME_TCP_H2C_DATA, &d, 0, false, false, 0);
		expect(b, h, c, BP_NVME_TCP_FES_INVALID_HEADER, 4);
	}

	/* TermReq longer than 152. */
	n = bp_nvme_tcp_term_encode(b, BP_NVME_TCP_H2C_TERM, 1, 0, NULL, 0);
	assert_int_equal(n, 24);
	assert_int_equal(frame_err(b, n, c, &err), 24);
	bp_put_le32(b + 4, 153);
	expect(b, 153, c, BP_NVME_TCP_FES_INVALID_HEADER, 4);
}

static void test_term_round_trip(void **state)
{
	uint8_t b[256], bad[200];
	struct bp_nvme_tcp_rx_cfg c = { .is_target = false, .connected = true };
	struct bp_nvme_tcp_pdu p;
	struct bp_nvme_tcp_err err;
	struct bp_nvme_tcp_term t;
	size_t n;

	for (size_t i = 0; i < sizeof(bad); i++)
		bad[i] = (uint8_t)i;
	n = bp_nvme_tcp_term_encode(b, BP_NVME_TCP_C2H_TERM, BP_NVME_TCP_FES_INVALID_HEADER, 3, bad, sizeof(bad));
	assert_int_equal(n, 152); /* the copied header is cut at 128 bytes */
	assert_int_equal(b[0], 3);
	assert_int_equal(b[2], 24);
	assert_int_equal(b[3], 0);
	assert_int_equal(bp_get_le32(b + 4), 152);
	assert_int_equal(bp_get_le16(b + 8), 1);
	assert_int_equal(bp_get_le32(b + 10), 3);
	for (int i = 14; i < 24; i++)
		assert_int_equal(b[i], 0);
	assert_int_equal(bp_nvme_tcp_frame(b, n, &c, &p, &err), 152);
	bp_nvme_tcp_term_decode(&p, &t);
	assert_int_equal(t.fes, 1);
	assert_int_equal(t.fei, 3);
	assert_int_equal(t.bad_len, 128);
	assert_memory_equal(t.bad_hdr, bad, 128);
}

static void test_padding_and_status(void **state)
{
	uint8_t b[300], sqe[64];
	char s[96];
	struct bp_nvme_tcp_data d = { .cccid = 1, .length = 100 };

	/* A host that asks for HPDA 7 gets C2HData whose data starts at a multiple of 32. */
	assert_int_equal(bp_nvme_tcp_data_encode(b, BP_NVME_TCP_C2H_DATA, &d, BP_NVME_TCP_F_LAST, true, true, 7), 32);
	assert_int_equal(b[3], 32);
	assert_int_equal(bp_get_le32(b + 4), 32 + 100 + 4);
	assert_int_equal(bp_nvme_tcp_hdr_len(72, false, 0, true), 72);
	assert_int_equal(bp_nvme_tcp_hdr_len(72, true, 3, true), 80);
	assert_int_equal(bp_nvme_tcp_hdr_len(72, true, 3, false), 76);
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_READ, 0x101a, 1, 4096, false);
	assert_int_equal(sqe[1], 0x40);
	assert_int_equal(sqe[39], 0x5a);
	assert_int_equal(bp_nvme_sqe_cid(sqe), 0x101a);
	/* Status field on the wire is shifted past the phase bit. */
	{
		struct bp_nvme_cqe cqe = { .cid = 3, .status = BP_NVME_SC_LBA_RANGE | BP_NVME_DNR }, back;
		uint8_t raw[16];

		bp_nvme_cqe_encode(raw, &cqe);
		assert_int_equal(bp_get_le16(raw + 14), (0x80 | 0x4000) << 1);
		bp_nvme_cqe_decode(raw, &back);
		assert_int_equal(back.status, cqe.status);
	}
	bp_nvme_status_str(BP_NVME_SC_CONNECT_INVALID_HOST | BP_NVME_DNR, s, sizeof(s));
	assert_string_equal(s, "Connect Invalid Host (sct 1 sc 0x84, DNR)");
}

/*
 * The nvme_pdu fuzz corpus covers every PDU type, each seed framing as one whole
 * PDU under its own config (fuzz_nvme_pdu.c's 4-byte prefix): the captures' 64 KiB
 * H2CData once fell to the seed size limit and left the fuzzer without one.
 */
#define CORPUS BP_TEST_DATA "/../../../fuzz/corpus/nvme_pdu"

static void test_fuzz_corpus_types(void **state)
{
	static const uint32_t limits[] = { 0, 4096, 8192, 65536, 131072, 1u << 20, 1u << 24, 0x7fffffffu };
	static const uint8_t want[] = { BP_NVME_TCP_ICREQ, BP_NVME_TCP_ICRESP, BP_NVME_TCP_H2C_TERM,
					BP_NVME_TCP_C2H_TERM, BP_NVME_TCP_CMD, BP_NVME_TCP_RSP,
					BP_NVME_TCP_H2C_DATA, BP_NVME_TCP_C2H_DATA, BP_NVME_TCP_R2T };
	static uint8_t b[8192];
	bool seen[256] = { false };
	DIR *d = opendir(CORPUS);
	struct dirent *e;
	int seeds = 0;

	if (!d)
		fail_msg("%s: %s", CORPUS, strerror(errno));
	while ((e = readdir(d))) {
		char path[1024];
		struct bp_nvme_tcp_rx_cfg cfg;
		struct bp_nvme_tcp_pdu pdu;
		struct bp_nvme_tcp_err err;
		FILE *f;
		size_t n;
		int r;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, e->d_name);
		f = fopen(path, "rb");
		assert_non_null(f);
		n = fread(b, 1, sizeof(b), f);
		fclose(f);
		assert_true(n > 4 && n < sizeof(b));
		cfg = (struct bp_nvme_tcp_rx_cfg){ .is_target = b[0] & 1, .connected = b[0] & 2, .hdgst = b[0] & 4,
						  .ddgst = b[0] & 8, .pda = b[1] & 31, .max_cmd_data = limits[b[2] & 7],
						  .max_data = limits[b[3] & 7] };
		r = bp_nvme_tcp_frame(b + 4, n - 4, &cfg, &pdu, &err);
		if (r != (int)(n - 4) || pdu.ddgst_bad)
			fail_msg("seed %s: frames as %d of %zu bytes (%s)", e->d_name, r, n - 4, r < 0 ? err.msg : "");
		seen[pdu.ch.type] = true;
		seeds++;
	}
	closedir(d);
	assert_true(seeds > 0);
	for (size_t i = 0; i < sizeof(want); i++)
		if (!seen[want[i]])
			fail_msg("the nvme_pdu corpus has no %s seed", bp_nvme_tcp_type_name(want[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_plain),
		cmocka_unit_test(test_capture_digests),
		cmocka_unit_test(test_capture_fields),
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_crc32c_impls_agree),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_term_round_trip),
		cmocka_unit_test(test_padding_and_status),
		cmocka_unit_test(test_fuzz_corpus_types),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
