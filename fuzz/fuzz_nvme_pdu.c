/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP PDU layer (include/busypoll/nvme/tcp.h) on a byte stream from a peer.
 * Input: 4 config bytes, then the stream.
 *   byte 0: bit 0 receive as the target (else the host), bit 1 the IC exchange is
 *           done, bit 2 header digest, bit 3 data digest
 *   byte 1: PDA (mod 32)
 *   byte 2, 3: in-capsule data limit and data-per-PDU limit, indexes into limits[]
 * The stream is framed PDU by PDU, as a receiver does, until "need more" or an error.
 * Properties:
 *  - the framer never reads past the bytes at hand (exact-size buffer);
 *  - "need more" is only said for a PDU whose length is within the limits (a peer
 *    can never make the receiver buffer more than they allow);
 *  - an error is -EPROTO with a known FES and a terminated one-line message, and
 *    the TermReq built from it (offending header included) frames as a TermReq on
 *    the other side;
 *  - a framed PDU is of a type this end may receive, lies inside the stream, its
 *    data (if any) lies inside the PDU at PDO and within the limit, and every
 *    prefix of it says "need more", never an error;
 *  - the fields decode and, where the encoder covers them, re-encode to the same
 *    bytes (IC, CapsuleCmd header, R2T, CapsuleResp);
 *  - CRC32C in hardware and in software agree on every header and data seen.
 */
#include <errno.h>
#include <string.h>

#include <busypoll/nvme/tcp.h>

#include "fuzz.h"

static const uint32_t limits[] = { 0, 4096, 8192, 65536, 131072, 1u << 20, 1u << 24, 0x7fffffffu };
#define N_LIMITS (sizeof(limits) / sizeof(limits[0]))

static bool type_for(uint8_t type, bool is_target)
{
	if (is_target)
		return type == BP_NVME_TCP_ICREQ || type == BP_NVME_TCP_H2C_TERM ||
		       type == BP_NVME_TCP_CMD || type == BP_NVME_TCP_H2C_DATA;
	return type == BP_NVME_TCP_ICRESP || type == BP_NVME_TCP_C2H_TERM || type == BP_NVME_TCP_RSP ||
	       type == BP_NVME_TCP_C2H_DATA || type == BP_NVME_TCP_R2T;
}

static void check_crc(const uint8_t *p, size_t n)
{
	FUZZ_CHECK(bp_crc32c_sw(0, p, n) == bp_crc32c_hw(0, p, n), "CRC32C hw and sw differ over %zu bytes", n);
	if (n > 1) /* continuation: crc(a||b) == crc(crc(a), b) */
		FUZZ_CHECK(bp_crc32c(bp_crc32c(0, p, n / 2), p + n / 2, n - n / 2) == bp_crc32c(0, p, n),
			   "CRC32C continuation differs");
}

/* The TermReq a receiver sends for err must frame on the other side as a TermReq. */
static void check_term_reply(const struct bp_nvme_tcp_rx_cfg *cfg, const struct bp_nvme_tcp_err *err,
			     const uint8_t *bad, size_t bad_len)
{
	uint8_t *t = malloc(BP_NVME_TCP_TERM_MAX_PLEN);
	struct bp_nvme_tcp_rx_cfg peer = *cfg;
	struct bp_nvme_tcp_pdu pdu;
	struct bp_nvme_tcp_err e2;
	struct bp_nvme_tcp_term term;
	size_t n;
	int r;

	if (!t)
		abort();
	n = bp_nvme_tcp_term_encode(t, cfg->is_target ? BP_NVME_TCP_C2H_TERM : BP_NVME_TCP_H2C_TERM,
				    err->fes, err->fei, bad, bad_len);
	FUZZ_CHECK(n >= BP_NVME_TCP_TERM_HLEN && n <= BP_NVME_TCP_TERM_MAX_PLEN, "TermReq of %zu bytes", n);
	peer.is_target = !cfg->is_target;
	r = bp_nvme_tcp_frame(t, n, &peer, &pdu, &e2);
	FUZZ_CHECK(r == (int)n, "our own TermReq does not frame: %d (%s)", r, r < 0 ? e2.msg : "");
	bp_nvme_tcp_term_decode(&pdu, &term);
	FUZZ_CHECK(term.fes == err->fes && term.fei == err->fei, "TermReq fes/fei changed");
	FUZZ_CHECK(term.bad_len == (bad_len < 128 ? bad_len : 128), "TermReq carries %zu of %zu header bytes",
		   term.bad_len, bad_len);
	FUZZ_CHECK(!term.bad_len || !memcmp(term.bad_hdr, bad, term.bad_len), "TermReq header bytes differ");
	free(t);
}

static void check_fields(const struct bp_nvme_tcp_rx_cfg *cfg, const struct bp_nvme_tcp_pdu *pdu)
{
	const uint8_t *h = pdu->hdr;
	uint8_t out[BP_NVME_TCP_MAX_HDR + 64];
	bool hd = pdu->ch.flags & BP_NVME_TCP_F_HDGST;

	switch (pdu->ch.type) {
	case BP_NVME_TCP_ICREQ:
	case BP_NVME_TCP_ICRESP: {
		struct bp_nvme_tcp_ic ic;

		bp_nvme_tcp_ic_decode(h, &ic);
		bp_nvme_tcp_ic_encode(out, pdu->ch.type, &ic);
		/* The decoder does not look at the reserved bytes (flags, 16..127). */
		FUZZ_CHECK(!memcmp(out, h, 1) && !memcmp(out + 2, h + 2, 14), "IC does not re-encode");
		break;
	}
	case BP_NVME_TCP_CMD: {
		size_t n = bp_nvme_tcp_cmd_encode(out, h + 8, pdu->data_len, hd, cfg->ddgst, cfg->pda);

		FUZZ_CHECK(n == (pdu->data_len ? pdu->ch.pdo : pdu->ch.plen), "CapsuleCmd header length %zu", n);
		FUZZ_CHECK(!memcmp(out, h, 1) && !memcmp(out + 2, h + 2, BP_NVME_TCP_CMD_HLEN - 2),
			   "CapsuleCmd does not re-encode");
		if (!(h[1] & ~(BP_NVME_TCP_F_HDGST | BP_NVME_TCP_F_DDGST)) && hd)
			FUZZ_CHECK(!memcmp(out + BP_NVME_TCP_CMD_HLEN, h + BP_NVME_TCP_CMD_HLEN, 4),
				   "CapsuleCmd header digest differs");
		break;
	}
	case BP_NVME_TCP_RSP: {
		struct bp_nvme_cqe cqe;

		bp_nvme_cqe_decode(h + 8, &cqe);
		bp_nvme_tcp_rsp_encode(out, &cqe, hd);
		/* The phase bit (status bit 0) is dropped: meaningless on fabrics. */
		FUZZ_CHECK(!memcmp(out + 8, h + 8, 14) && out[22] == (h[22] & 0xfe) && out[23] == h[23],
			   "CapsuleResp CQE does not re-encode");
		break;
	}
	case BP_NVME_TCP_R2T:
	case BP_NVME_TCP_H2C_DATA:
	case BP_NVME_TCP_C2H_DATA: {
		struct bp_nvme_tcp_data d;

		bp_nvme_tcp_data_decode(h, &d);
		if (pdu->ch.type != BP_NVME_TCP_R2T)
			FUZZ_CHECK(d.length == pdu->data_len, "DATAL %u for %u data bytes", d.length, pdu->data_len);
		bp_nvme_tcp_r2t_encode(out, &d, false);
		FUZZ_CHECK(!memcmp(out + 8, h + 8, 12), "data fields do not re-encode");
		break;
	}
	case BP_NVME_TCP_H2C_TERM:
	case BP_NVME_TCP_C2H_TERM: {
		struct bp_nvme_tcp_term t;

		bp_nvme_tcp_term_decode(pdu, &t);
		FUZZ_CHECK(t.bad_len <= 128, "TermReq with %zu header bytes", t.bad_len);
		(void)bp_nvme_tcp_fes_name(t.fes); /* any value: the log prints it */
		break;
	}
	}
}

static void check_pdu(const struct bp_nvme_tcp_rx_cfg *cfg, const uint8_t *buf, size_t len, int n,
		      const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_pdu p2;
	struct bp_nvme_tcp_err e2;
	const size_t prefixes[] = { BP_NVME_TCP_CH_LEN, 20, (size_t)n / 2, (size_t)n - 1 };

	FUZZ_CHECK((size_t)n <= len && (uint32_t)n == pdu->ch.plen && pdu->hdr == buf,
		   "framed %d of %zu bytes, plen %u", n, len, pdu->ch.plen);
	FUZZ_CHECK(type_for(pdu->ch.type, cfg->is_target), "type 0x%02x framed by the wrong end", pdu->ch.type);
	FUZZ_CHECK(pdu->ch.hlen <= (uint32_t)n, "hlen %u beyond plen %d", pdu->ch.hlen, n);
	check_crc(buf, pdu->ch.hlen);
	if (pdu->data) {
		FUZZ_CHECK(pdu->data > buf && pdu->data + pdu->data_len <= buf + n,
			   "data [%td, +%u) outside the PDU of %d", pdu->data - buf, pdu->data_len, n);
		if (pdu->ch.type == BP_NVME_TCP_CMD)
			FUZZ_CHECK(pdu->data_len <= cfg->max_cmd_data, "in-capsule data %u over %u", pdu->data_len,
				   cfg->max_cmd_data);
		else if (pdu->ch.type == BP_NVME_TCP_H2C_DATA || pdu->ch.type == BP_NVME_TCP_C2H_DATA)
			FUZZ_CHECK(pdu->data_len <= cfg->max_data, "data %u over %u", pdu->data_len, cfg->max_data);
		check_crc(pdu->data, pdu->data_len);
	} else {
		FUZZ_CHECK(!pdu->data_len && !pdu->ddgst_bad, "data length without data");
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t k = prefixes[i];

		if (k >= BP_NVME_TCP_CH_LEN && k < (size_t)n) {
			int r = bp_nvme_tcp_frame(buf, k, cfg, &p2, &e2);

			FUZZ_CHECK(r == 0, "a %zu-byte prefix of a valid %d-byte PDU gave %d (%s)", k, n, r,
				   r < 0 ? e2.msg : "");
		}
	}
	check_fields(cfg, pdu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_nvme_tcp_rx_cfg cfg = { 0 };
	uint8_t *stream;
	size_t len, off = 0;
	uint64_t bound;

	if (size < 4)
		return 0;
	cfg.is_target = data[0] & 1;
	cfg.connected = data[0] & 2;
	cfg.hdgst = data[0] & 4;
	cfg.ddgst = data[0] & 8;
	cfg.pda = data[1] % (BP_NVME_TCP_MAX_PDA + 1);
	cfg.max_cmd_data = limits[data[2] % N_LIMITS];
	cfg.max_data = limits[data[3] % N_LIMITS];
	bound = (uint64_t)BP_NVME_TCP_MAX_HDR + BP_NVME_TCP_DIGEST_LEN +
		(cfg.max_cmd_data > cfg.max_data ? cfg.max_cmd_data : cfg.max_data);
	len = size - 4;
	stream = fuzz_dup(data + 4, len);

	while (off < len) {
		struct bp_nvme_tcp_pdu pdu;
		struct bp_nvme_tcp_err err;
		const uint8_t *buf = stream + off;
		size_t avail = len - off;
		int n;

		memset(&err, 0, sizeof(err));
		n = bp_nvme_tcp_frame(buf, avail, &cfg, &pdu, &err);
		if (n == 0) {
			if (avail >= BP_NVME_TCP_CH_LEN) {
				struct bp_nvme_tcp_ch ch;

				bp_nvme_tcp_ch_decode(buf, &ch);
				FUZZ_CHECK(ch.plen <= bound, "waiting for a %u-byte PDU (limits %u/%u)", ch.plen,
					   cfg.max_cmd_data, cfg.max_data);
				FUZZ_CHECK(ch.plen > avail, "need more with %zu of %u bytes at hand", avail, ch.plen);
			}
			break;
		}
		if (n < 0) {
			FUZZ_CHECK(n == -EPROTO, "frame returned %d", n);
			FUZZ_CHECK(strcmp(bp_nvme_tcp_fes_name(err.fes), "unknown error"), "unknown FES %u", err.fes);
			FUZZ_CHECK(memchr(err.msg, 0, sizeof(err.msg)) && err.msg[0] && !strchr(err.msg, '\n'),
				   "error message not one terminated line");
			check_term_reply(&cfg, &err, buf, avail < 128 ? avail : 128);
			break;
		}
		check_pdu(&cfg, buf, avail, n, &pdu);
		/* The state a receiver moves to: after an IC PDU the connection is up. */
		if (pdu.ch.type == BP_NVME_TCP_ICREQ || pdu.ch.type == BP_NVME_TCP_ICRESP)
			cfg.connected = true;
		off += (size_t)n;
	}
	free(stream);
	return 0;
}
