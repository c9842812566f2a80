#!/usr/bin/env python3
"""Seeds for the NVMe/TCP fuzz targets from a Linux host's captures.

usage: fuzz/extract_nvme_pdus.py [CAPTURE.pcapng...]
(default: tests/unit/data/nvme-tcp/*.pcapng). Reassembles each TCP connection to
port 4420 per direction (Ethernet, IPv4 or IPv6; retransmitted bytes dropped), cuts
the streams into PDUs by their PDU length, and writes one seed per distinct PDU shape (direction, digests, type, layout,
command opcode) of at most 4200 bytes:
  fuzz/corpus/nvme_pdu/   one PDU each, behind the 4-byte framing config that the
                          target fuzz_nvme_pdu.c reads (direction, state, digests, limits)
The files are committed; this documents where they came from.
"""
import glob
import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PORT = 4420

# The config prefix of fuzz_nvme_pdu.c: flags byte, pda, then an index into its
# limits table for in-capsule data and for data per H2CData/C2HData PDU.
CFG_TARGET, CFG_CONNECTED, CFG_HDGST, CFG_DDGST = 1, 2, 4, 8
LIMIT_8K, LIMIT_1M = 2, 5
MAX_SEED = 4200  # PDUs up to 4 KiB of data: keeps the seeds and max_len small


def pcapng_packets(path):
    d = open(path, "rb").read()
    off = 0
    while off + 12 <= len(d):
        btype, blen = struct.unpack_from("<II", d, off)
        if blen < 12:
            raise ValueError("%s: bad block length at %d" % (path, off))
        if btype == 6:  # Enhanced Packet Block
            caplen = struct.unpack_from("<I", d, off + 20)[0]
            yield d[off + 28:off + 28 + caplen]
        off += blen


def tcp_segment(frame):
    if len(frame) < 14:
        return None
    eth = struct.unpack_from("!H", frame, 12)[0]
    p = 14
    if eth == 0x0800:
        ihl = (frame[p] & 15) * 4
        if frame[p + 9] != 6:
            return None
        total = struct.unpack_from("!H", frame, p + 2)[0]
        src, dst = frame[p + 12:p + 16], frame[p + 16:p + 20]
        ip_end = p + total
        p += ihl
    elif eth == 0x86DD:
        if frame[p + 6] != 6:
            return None
        plen = struct.unpack_from("!H", frame, p + 4)[0]
        src, dst = frame[p + 8:p + 24], frame[p + 24:p + 40]
        ip_end = p + 40 + plen
        p += 40
    else:
        return None
    sport, dport, seq = struct.unpack_from("!HHI", frame, p)
    doff = (frame[p + 12] >> 4) * 4
    flags = frame[p + 13]
    return (src, sport, dst, dport), seq, flags, frame[p + doff:ip_end]


def streams(path):
    """{(src, sport, dst, dport): bytes} in order of first appearance."""
    out, nxt = {}, {}
    for frame in pcapng_packets(path):
        seg = tcp_segment(frame)
        if not seg:
            continue
        key, seq, flags, payload = seg
        if PORT not in (key[1], key[3]):
            continue
        if flags & 0x02:  # SYN
            nxt[key] = (seq + 1) & 0xFFFFFFFF
            out.setdefault(key, bytearray())
            continue
        if key not in nxt or not payload:
            continue
        delta = (seq - nxt[key]) & 0xFFFFFFFF
        if delta >= 0x80000000:  # retransmission, maybe partly new
            skip = (nxt[key] - seq) & 0xFFFFFFFF
            if skip >= len(payload):
                continue
            payload, seq = payload[skip:], nxt[key]
        elif delta:
            raise ValueError("%s: gap in a stream" % path)
        out[key] += payload
        nxt[key] = (seq + len(payload)) & 0xFFFFFFFF
    return out


def pdus(data):
    off = 0
    while off + 8 <= len(data):
        plen = struct.unpack_from("<I", data, off + 4)[0]
        if plen < 8 or off + plen > len(data):
            break
        yield bytes(data[off:off + plen])
        off += plen


def main(paths):
    outdir = os.path.join(HERE, "corpus", "nvme_pdu")
    os.makedirs(outdir, exist_ok=True)
    written = 0
    shapes = set()
    for path in paths:
        name = os.path.basename(path).replace(".pcapng", "")
        for key, data in streams(path).items():
            to_target = key[3] == PORT
            seen_ic = False
            hd = dd = False
            for pdu in pdus(data):
                typ = pdu[0]
                if typ in (0, 1):  # ICReq / ICResp: digests negotiated here
                    digest = pdu[11]
                    hd, dd = bool(digest & 1), bool(digest & 2)
                    seen_ic = True
                flags = (CFG_TARGET if to_target else 0) | \
                        (CFG_CONNECTED if seen_ic and typ not in (0, 1) else 0) | \
                        (CFG_HDGST if hd and typ not in (0, 1) else 0) | \
                        (CFG_DDGST if dd and typ not in (0, 1) else 0)
                # One seed per shape: direction, digests, PDU type and layout, and for a
                # command its opcode, fabrics type and low byte of CDW10 (CNS, LID, FID).
                shape = (flags, bytes(pdu[:4]), min(len(pdu), 4096) // 512)
                if typ == 4:
                    shape += (pdu[8], pdu[12], pdu[48])
                if shape in shapes or len(pdu) > MAX_SEED:
                    continue
                shapes.add(shape)
                seed = bytes([flags, 0, LIMIT_8K, LIMIT_1M]) + pdu
                h = hashlib.sha1(seed).hexdigest()[:12]
                fn = os.path.join(outdir, "%s-%02x-%s" % (name, typ, h))
                if not os.path.exists(fn):
                    with open(fn, "wb") as f:
                        f.write(seed)
                    written += 1
    print("nvme_pdu: %d new seeds in %s" % (written, outdir))


if __name__ == "__main__":
    args = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "tests/unit/data/nvme-tcp/*.pcapng")))
    if not args:
        sys.exit("no captures given and none in tests/unit/data/nvme-tcp/")
    main(args)
