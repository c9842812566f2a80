/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP: the PDU layer shared by the target (nvme_target.h) and the host
 * (nvme_host.h), the NVMe constants both sides speak, and CRC32C.
 *
 * Everything here is pure: encoders write into caller buffers, parsers read from
 * caller buffers, nothing allocates and nothing does I/O. All fields on the wire
 * are little-endian; the structs below hold host-order values.
 *
 * Framing contract (bp_nvme_tcp_frame): give it the unconsumed bytes of a stream
 * and the connection's negotiated settings; it says "need more", "here is one
 * whole PDU of N bytes" (header digest checked, data digest checked and reported),
 * or "fatal: answer with a TermReq carrying this FES/FEI and close". A PDU's length
 * is checked against the limits before it is waited for, so a peer can never make
 * a receiver buffer more than the limits allow.
 */
#ifndef BUSYPOLL_NVME_TCP_H
#define BUSYPOLL_NVME_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CRC32C (Castagnoli) ---- */

/*
 * bp_crc32c - CRC32C of len bytes, continuing from crc (0 to start; pass the
 * previous result to continue: crc(a||b) == bp_crc32c(bp_crc32c(0, a), b)).
 * Uses the SSE4.2 instruction when the CPU has it (checked once), else slice-by-8.
 * The NVMe/TCP digest is this value, stored little-endian.
 */
uint32_t bp_crc32c(uint32_t crc, const void *buf, size_t len);
/* The two implementations, for tests and benchmarks. _hw returns _sw's result on a CPU without SSE4.2. */
uint32_t bp_crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t bp_crc32c_hw(uint32_t crc, const void *buf, size_t len);
/* bp_crc32c_impl - "sse4.2" or "slice-by-8": what bp_crc32c uses on this CPU. */
const char *bp_crc32c_impl(void);

/* ---- PDU types, flags, sizes ---- */

enum bp_nvme_tcp_type {
	BP_NVME_TCP_ICREQ = 0x00,
	BP_NVME_TCP_ICRESP = 0x01,
	BP_NVME_TCP_H2C_TERM = 0x02,
	BP_NVME_TCP_C2H_TERM = 0x03,
	BP_NVME_TCP_CMD = 0x04,
	BP_NVME_TCP_RSP = 0x05,
	BP_NVME_TCP_H2C_DATA = 0x06,
	BP_NVME_TCP_C2H_DATA = 0x07,
	BP_NVME_TCP_R2T = 0x09,
};

enum {
	BP_NVME_TCP_F_HDGST = 1u << 0,
	BP_NVME_TCP_F_DDGST = 1u << 1,
	BP_NVME_TCP_F_LAST = 1u << 2,
	BP_NVME_TCP_F_SUCCESS = 1u << 3,
};

/* ICReq/ICResp digest bits. */
enum { BP_NVME_TCP_DIGEST_HDR = 1u << 0, BP_NVME_TCP_DIGEST_DATA = 1u << 1 };

enum {
	BP_NVME_TCP_CH_LEN = 8,
	BP_NVME_TCP_IC_LEN = 128,       /* ICReq and ICResp: hlen == plen */
	BP_NVME_TCP_TERM_HLEN = 24,
	BP_NVME_TCP_TERM_MAX_PLEN = 152, /* 24 + up to 128 bytes of the offending header */
	BP_NVME_TCP_CMD_HLEN = 72,      /* 8 + 64-byte SQE */
	BP_NVME_TCP_RSP_HLEN = 24,      /* 8 + 16-byte CQE */
	BP_NVME_TCP_DATA_HLEN = 24,     /* H2CData, C2HData, R2T */
	BP_NVME_TCP_DIGEST_LEN = 4,
	BP_NVME_TCP_MIN_MAXH2CDATA = 4096,
	BP_NVME_TCP_MAX_PDA = 31,
	/* Longest header plus digest and the largest padding a PDA may ask for. */
	BP_NVME_TCP_MAX_HDR = 128 + 4 + 128,
};

/* Fatal error status (TermReq FES). */
enum bp_nvme_tcp_fes {
	BP_NVME_TCP_FES_INVALID_HEADER = 0x01,   /* FEI = byte offset of the bad field */
	BP_NVME_TCP_FES_PDU_SEQUENCE = 0x02,
	BP_NVME_TCP_FES_HDGST = 0x03,
	BP_NVME_TCP_FES_DATA_OUT_OF_RANGE = 0x04,
	BP_NVME_TCP_FES_DATA_LIMIT = 0x05,       /* also R2T limit exceeded */
	BP_NVME_TCP_FES_UNSUPPORTED_PARAM = 0x06,
};

/* bp_nvme_tcp_type_name - "CapsuleCmd" etc., "unknown" otherwise. */
const char *bp_nvme_tcp_type_name(uint8_t type);
/* bp_nvme_tcp_fes_name - "invalid PDU header field" etc. */
const char *bp_nvme_tcp_fes_name(uint16_t fes);

/* ---- common header ---- */

struct bp_nvme_tcp_ch {
	uint8_t type, flags, hlen, pdo;
	uint32_t plen;
};

void bp_nvme_tcp_ch_encode(uint8_t *buf, const struct bp_nvme_tcp_ch *ch);
/* bp_nvme_tcp_ch_decode - the 8 bytes at buf (no checks). */
void bp_nvme_tcp_ch_decode(const uint8_t *buf, struct bp_nvme_tcp_ch *ch);

/* ---- framing ---- */

/* What one end of a connection accepts: set from ICReq/ICResp. */
struct bp_nvme_tcp_rx_cfg {
	bool is_target;      /* accept host-to-controller PDUs (else controller-to-host) */
	bool connected;      /* the IC exchange is done: IC PDUs are now out of sequence */
	bool hdgst, ddgst;   /* negotiated digests */
	uint8_t pda;         /* the alignment this end asked for: data at a multiple of (pda+1)*4 */
	uint32_t max_cmd_data;  /* target: in-capsule data accepted in a CapsuleCmd */
	uint32_t max_data;      /* target: H2CData data per PDU (maxh2cdata); host: C2HData per PDU */
};

/* A framed PDU: pointers into the caller's buffer. */
struct bp_nvme_tcp_pdu {
	struct bp_nvme_tcp_ch ch;
	const uint8_t *hdr;   /* hlen bytes, starting with the common header */
	const uint8_t *data;  /* at pdo; NULL when the PDU carries none */
	uint32_t data_len;
	bool ddgst_bad;       /* a data digest was present and did not match (not fatal) */
};

/* Why a PDU was refused: answer with a TermReq (fes, fei, hdr) and close. */
struct bp_nvme_tcp_err {
	uint16_t fes;
	uint32_t fei;
	char msg[96];         /* one line for the log */
};

/*
 * bp_nvme_tcp_frame - look at the start of buf (len bytes of a stream).
 * Returns the PDU's length (plen) when a whole valid PDU is there (*pdu filled),
 * 0 when more bytes are needed (the length seen so far is within the limits), or
 * -EPROTO with *err filled: wrong type for this direction or state, header length,
 * PDO, PDU length, digest flags against what was negotiated, a length beyond the
 * limits, or a header digest mismatch. A data digest mismatch is not an error here:
 * the PDU is returned with ddgst_bad set (the command fails, the queue lives).
 */
int bp_nvme_tcp_frame(const uint8_t *buf, size_t len, const struct bp_nvme_tcp_rx_cfg *cfg,
		      struct bp_nvme_tcp_pdu *pdu, struct bp_nvme_tcp_err *err);

/*
 * bp_nvme_tcp_hdr_len - bytes from the PDU start to its data: hlen, the header
 * digest, then padding up to a multiple of (pda+1)*4 (only for PDUs with data).
 */
uint32_t bp_nvme_tcp_hdr_len(uint8_t hlen, bool hdgst, uint8_t pda, bool has_data);

/* ---- ICReq / ICResp ---- */

struct bp_nvme_tcp_ic {
	uint16_t pfv;       /* 0 = NVMe/TCP 1.0 */
	uint8_t pda;        /* ICReq: HPDA; ICResp: CPDA */
	uint8_t digest;     /* BP_NVME_TCP_DIGEST_* */
	uint32_t maxdata;   /* ICReq: MAXR2T (0's based); ICResp: MAXH2CDATA */
};
/* Encode a 128-byte ICReq (type 0) or ICResp (type 1). Returns 128. */
size_t bp_nvme_tcp_ic_encode(uint8_t *buf, uint8_t type, const struct bp_nvme_tcp_ic *ic);
void bp_nvme_tcp_ic_decode(const uint8_t *hdr, struct bp_nvme_tcp_ic *ic);

/* ---- CapsuleCmd / CapsuleResp ---- */

/*
 * bp_nvme_tcp_cmd_encode - header of a CapsuleCmd carrying the 64-byte sqe and
 * data_len bytes of in-capsule data: CH, SQE, header digest, padding. The caller
 * sends the data after it, then the data digest when ddgst && data_len.
 * Returns the header length (== pdo when data_len, else plen minus nothing).
 */
size_t bp_nvme_tcp_cmd_encode(uint8_t *buf, const uint8_t sqe[64], uint32_t data_len, bool hdgst,
			      bool ddgst, uint8_t pda);

/* The 16-byte completion queue entry. */
struct bp_nvme_cqe {
	uint64_t result;    /* dwords 0 and 1 */
	uint16_t sqhd, sqid, cid;
	uint16_t status;    /* the status field: SC | SCT<<8 | CRD<<11 | M<<13 | DNR<<14 (no phase bit) */
};
/* Returns 24 or 28 (with header digest). */
size_t bp_nvme_tcp_rsp_encode(uint8_t *buf, const struct bp_nvme_cqe *cqe, bool hdgst);
void bp_nvme_cqe_decode(const uint8_t cqe16[16], struct bp_nvme_cqe *cqe);
void bp_nvme_cqe_encode(uint8_t cqe16[16], const struct bp_nvme_cqe *cqe);

/* ---- H2CData / C2HData / R2T ---- */

struct bp_nvme_tcp_data {
	uint16_t cccid;     /* the command's CID */
	uint16_t ttag;      /* transfer tag (R2T, H2CData); 0 in C2HData */
	uint32_t offset;    /* DATAO / R2TO */
	uint32_t length;    /* DATAL / R2TL */
};
/*
 * bp_nvme_tcp_data_encode - header of an H2CData/C2HData PDU (type) whose data
 * follows: CH (flags: digests as negotiated plus extra_flags, LAST/SUCCESS),
 * fields, header digest, padding to pda. Returns the header length (pdo).
 */
size_t bp_nvme_tcp_data_encode(uint8_t *buf, uint8_t type, const struct bp_nvme_tcp_data *d,
			       uint8_t extra_flags, bool hdgst, bool ddgst, uint8_t pda);
/* R2T: no data. Returns 24 or 28. */
size_t bp_nvme_tcp_r2t_encode(uint8_t *buf, const struct bp_nvme_tcp_data *d, bool hdgst);
/* Fields of an H2CData, C2HData or R2T header. */
void bp_nvme_tcp_data_decode(const uint8_t *hdr, struct bp_nvme_tcp_data *d);

/* ---- TermReq ---- */

/*
 * bp_nvme_tcp_term_encode - an H2CTermReq/C2HTermReq (type) with fes/fei and up to
 * 128 bytes of the offending PDU header. Returns the PDU length (24..152).
 */
size_t bp_nvme_tcp_term_encode(uint8_t *buf, uint8_t type, uint16_t fes, uint32_t fei,
			       const uint8_t *bad_hdr, size_t bad_len);
struct bp_nvme_tcp_term {
	uint16_t fes;
	uint32_t fei;
	const uint8_t *bad_hdr;  /* the copied header, in the PDU */
	size_t bad_len;
};
void bp_nvme_tcp_term_decode(const struct bp_nvme_tcp_pdu *pdu, struct bp_nvme_tcp_term *t);

/* ---- digests ---- */

/* Append the 4-byte digest of (data, len) at out. Returns 4. */
size_t bp_nvme_tcp_put_digest(uint8_t *out, const void *data, size_t len);

/* ======== NVMe: the commands and statuses both ends speak ======== */

/* The 64-byte submission queue entry: raw bytes with accessors (always little-endian on the wire). */
enum {
	BP_NVME_SQE_LEN = 64,
	BP_NVME_CQE_LEN = 16,
};

/* Opcodes. */
enum {
	/* admin */
	BP_NVME_ADM_GET_LOG_PAGE = 0x02,
	BP_NVME_ADM_IDENTIFY = 0x06,
	BP_NVME_ADM_ABORT = 0x08,
	BP_NVME_ADM_SET_FEATURES = 0x09,
	BP_NVME_ADM_GET_FEATURES = 0x0a,
	BP_NVME_ADM_ASYNC_EVENT = 0x0c,
	BP_NVME_ADM_KEEP_ALIVE = 0x18,
	BP_NVME_FABRICS = 0x7f,
	/* NVM */
	BP_NVME_CMD_FLUSH = 0x00,
	BP_NVME_CMD_WRITE = 0x01,
	BP_NVME_CMD_READ = 0x02,
	BP_NVME_CMD_WRITE_ZEROES = 0x08,
	BP_NVME_CMD_DSM = 0x09,       /* Dataset Management */
};

/* Read/Write dword 12, Write Zeroes dword 12, Dataset Management dword 11. */
enum {
	BP_NVME_RW_FUA = 1u << 30,        /* Force Unit Access: durable when it completes */
	BP_NVME_WZ_DEAC = 1u << 25,       /* Write Zeroes: the blocks may be deallocated */
	BP_NVME_DSM_AD = 1u << 2,         /* Dataset Management: deallocate the ranges */
	BP_NVME_DSM_RANGE_LEN = 16,       /* one range: context attributes le32, blocks le32, slba le64 */
	BP_NVME_DSM_MAX_RANGES = 256,
};

/* Fabrics command types (SQE byte 4). */
enum {
	BP_NVMF_PROP_SET = 0x00,
	BP_NVMF_CONNECT = 0x01,
	BP_NVMF_PROP_GET = 0x04,
	BP_NVMF_AUTH_SEND = 0x05,
	BP_NVMF_AUTH_RECV = 0x06,
	BP_NVMF_DISCONNECT = 0x08,
};

/* Controller properties (offsets). */
enum {
	BP_NVME_REG_CAP = 0x00,
	BP_NVME_REG_VS = 0x08,
	BP_NVME_REG_CC = 0x14,
	BP_NVME_REG_CSTS = 0x1c,
};

/* Identify CNS values. */
enum {
	BP_NVME_ID_CNS_NS = 0x00,
	BP_NVME_ID_CNS_CTRL = 0x01,
	BP_NVME_ID_CNS_NS_ACTIVE_LIST = 0x02,
	BP_NVME_ID_CNS_NS_DESC_LIST = 0x03,
	BP_NVME_ID_CNS_CS_NS = 0x05,
	BP_NVME_ID_CNS_CS_CTRL = 0x06,
};

/* Log pages. */
enum {
	BP_NVME_LOG_ERROR = 0x01,
	BP_NVME_LOG_SMART = 0x02,
	BP_NVME_LOG_FW_SLOT = 0x03,
	BP_NVME_LOG_CMD_EFFECTS = 0x05,
	BP_NVME_LOG_DISC = 0x70,
};

/* Features. */
enum {
	BP_NVME_FEAT_ARBITRATION = 0x01,
	BP_NVME_FEAT_POWER_MGMT = 0x02,
	BP_NVME_FEAT_TEMP_THRESH = 0x04,
	BP_NVME_FEAT_ERR_RECOVERY = 0x05,
	BP_NVME_FEAT_VOLATILE_WC = 0x06,
	BP_NVME_FEAT_NUM_QUEUES = 0x07,
	BP_NVME_FEAT_IRQ_COALESCE = 0x08,
	BP_NVME_FEAT_IRQ_CONFIG = 0x09,
	BP_NVME_FEAT_WRITE_ATOMIC = 0x0a,
	BP_NVME_FEAT_ASYNC_EVENT = 0x0b,
	BP_NVME_FEAT_KATO = 0x0f,
	BP_NVME_FEAT_HOST_ID = 0x81,
};

/* Status codes: the status field is SC | SCT << 8 | DNR << 14. */
#define BP_NVME_SCT(sct, sc) ((uint16_t)(((sct) << 8) | (sc)))
enum {
	BP_NVME_DNR = 0x4000,
	BP_NVME_SC_SUCCESS = 0x00,
	BP_NVME_SC_INVALID_OPCODE = 0x01,
	BP_NVME_SC_INVALID_FIELD = 0x02,
	BP_NVME_SC_CMDID_CONFLICT = 0x03,
	BP_NVME_SC_DATA_XFER_ERROR = 0x04,
	BP_NVME_SC_INTERNAL = 0x06,
	BP_NVME_SC_ABORT_REQ = 0x07,
	BP_NVME_SC_INVALID_NS = 0x0b,
	BP_NVME_SC_CMD_SEQ_ERROR = 0x0c,
	BP_NVME_SC_SGL_INVALID_LAST = 0x0d,
	BP_NVME_SC_SGL_INVALID_COUNT = 0x0e,
	BP_NVME_SC_SGL_INVALID_DATA = 0x0f,   /* Data SGL Length Invalid */
	BP_NVME_SC_SGL_INVALID_TYPE = 0x11,
	BP_NVME_SC_SGL_INVALID_OFFSET = 0x16,
	BP_NVME_SC_NS_WRITE_PROTECTED = 0x20,
	BP_NVME_SC_TRANSIENT_TR_ERR = 0x22,
	BP_NVME_SC_LBA_RANGE = 0x80,
	BP_NVME_SC_CAP_EXCEEDED = 0x81,
	BP_NVME_SC_NS_NOT_READY = 0x82,
	/* command specific (SCT 1) */
	BP_NVME_SC_INVALID_LOG_PAGE = BP_NVME_SCT(1, 0x09),
	BP_NVME_SC_FEAT_NOT_SAVEABLE = BP_NVME_SCT(1, 0x0d),
	BP_NVME_SC_FEAT_NOT_CHANGEABLE = BP_NVME_SCT(1, 0x0e),
	BP_NVME_SC_CONNECT_FORMAT = BP_NVME_SCT(1, 0x80),
	BP_NVME_SC_CONNECT_CTRL_BUSY = BP_NVME_SCT(1, 0x81),
	BP_NVME_SC_CONNECT_INVALID_PARAM = BP_NVME_SCT(1, 0x82),
	BP_NVME_SC_CONNECT_RESTART_DISC = BP_NVME_SCT(1, 0x83),
	BP_NVME_SC_CONNECT_INVALID_HOST = BP_NVME_SCT(1, 0x84),
	/* media errors (SCT 2) */
	BP_NVME_SC_WRITE_FAULT = BP_NVME_SCT(2, 0x80),
	BP_NVME_SC_READ_ERROR = BP_NVME_SCT(2, 0x81),
};

/* bp_nvme_status_str - "Invalid Field in Command (sct 0 sc 0x02, DNR)" into buf; returns buf. */
char *bp_nvme_status_str(uint16_t status, char *buf, size_t len);

/* Connect: the 1024-byte data and the result's invalid-parameter locator. */
enum {
	BP_NVMF_CONNECT_DATA_LEN = 1024,
	BP_NVMF_NQN_LEN = 256,          /* field size; the NQN itself is at most 223 bytes */
	BP_NVMF_NQN_MAX = 223,
	BP_NVMF_CD_HOSTID = 0,
	BP_NVMF_CD_CNTLID = 16,
	BP_NVMF_CD_SUBNQN = 256,
	BP_NVMF_CD_HOSTNQN = 512,
	BP_NVMF_CATTR_DISABLE_SQFLOW = 1u << 2,
};
/* Connect result for "invalid parameter": IATTR (1 = in the data) | IPO (byte offset). */
#define BP_NVMF_IPO(in_data, offset) ((uint32_t)((in_data) ? 1u << 16 : 0) | (uint32_t)(offset))

#define BP_NVME_DISC_NQN "nqn.2014-08.org.nvmexpress.discovery"

/* SGL descriptor types in SQE bytes 24..39 (byte 39 = type << 4 | subtype). */
enum {
	BP_NVME_SGL_DATA_BLOCK_OFFSET = 0x01,  /* in-capsule data (type 0, subtype 1) */
	BP_NVME_SGL_TRANSPORT_BLOCK = 0x5a,    /* transport data block (type 5, subtype 0xa) */
	BP_NVME_SQE_FLAG_SGL = 0x40,           /* SQE byte 1: PSDT = SGL */
};

/* Accessors over the raw SQE bytes. */
static inline uint8_t bp_nvme_sqe_opc(const uint8_t *s) { return s[0]; }
static inline uint16_t bp_nvme_sqe_cid(const uint8_t *s) { return (uint16_t)(s[2] | s[3] << 8); }
static inline uint32_t bp_nvme_sqe_dw(const uint8_t *s, int dw)
{
	const uint8_t *p = s + 4 * dw;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t bp_nvme_sqe_nsid(const uint8_t *s) { return bp_nvme_sqe_dw(s, 1); }
/* SGL length (bytes 32..35) and type (byte 39). */
static inline uint32_t bp_nvme_sqe_sgl_len(const uint8_t *s) { return bp_nvme_sqe_dw(s, 8); }
static inline uint8_t bp_nvme_sqe_sgl_type(const uint8_t *s) { return s[39]; }
static inline uint64_t bp_nvme_sqe_sgl_addr(const uint8_t *s)
{
	return (uint64_t)bp_nvme_sqe_dw(s, 6) | (uint64_t)bp_nvme_sqe_dw(s, 7) << 32;
}

/*
 * bp_nvme_sqe_init - zero the SQE and set opcode, PSDT = SGL, cid, nsid and an SGL
 * for data_len bytes: in-capsule (Data Block, Offset 0) or transport (0x5A).
 */
void bp_nvme_sqe_init(uint8_t *s, uint8_t opc, uint16_t cid, uint32_t nsid, uint32_t data_len,
		      bool in_capsule);
static inline void bp_nvme_sqe_set_dw(uint8_t *s, int dw, uint32_t v)
{
	uint8_t *p = s + 4 * dw;

	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline void bp_nvme_sqe_set_cid(uint8_t *s, uint16_t cid)
{
	s[2] = (uint8_t)cid;
	s[3] = (uint8_t)(cid >> 8);
}

#ifdef __cplusplus
}
#endif
#endif /* BUSYPOLL_NVME_TCP_H */
