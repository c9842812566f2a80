#!/usr/bin/env python3
"""Seeds for the NVMe/TCP fuzz targets from a Linux host's captures.

usage: fuzz/extract_nvme_pdus.py [CAPTURE.pcapng...]
(default: tests/unit/data/nvme-tcp/*.pcapng). Reassembles each TCP connection to
port 4420 per direction (Ethernet, IPv4 or IPv6; retransmitted bytes dropped), cuts
the streams into PDUs by their PDU length, and writes one seed per distinct PDU shape (direction, digests, type, layout,
command opcode) of at most 4200 bytes:
  fuzz/corpus/nvme_pdu/   one PDU each, behind the 4-byte framing config that the
                          target fuzz_nvme_pdu.c reads (direction, state, digests, limits);
                          a data PDU longer than that (the captures' 64 KiB H2CData) is
                          kept with its data cut to 512 bytes (lengths and digests made
                          to match), and TermReqs, which a good session never has, are
                          made in both directions, with and without digests negotiated
  fuzz/corpus/nvme_target/  each connection's host-to-target bytes, the first 16 KiB
                          of whole PDUs (admin queue: all of it), with Connects naming
                          the first capture's host and CC asking for CSS 0 (digests
                          recomputed), so they run against fuzz_nvme_target.c's target
  fuzz/corpus/nvme_host/  controller answers for fuzz_nvme_host.c: made ones that match
                          its commands (digests on and off, R2T or in-capsule writes),
                          and each capture's admin queue answers, their command ids
                          moved onto the harness's commands so they run past the
                          Connect's CapsuleResp
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
STREAM_MAX = 16384


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
                if len(pdu) > MAX_SEED and typ in (6, 7):
                    pdu = shrink_data_pdu(pdu, 512)
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
    for to_target in (True, False):
        for dg in (False, True):
            flags = (CFG_TARGET if to_target else 0) | CFG_CONNECTED | \
                    ((CFG_HDGST | CFG_DDGST) if dg else 0)
            # the offending header a receiver would copy: an H2CData's / C2HData's
            bad = bytes([6 if to_target else 7, 4, 24, 0]) + struct.pack("<I", 24 + 512) + bytes(16)
            seed = bytes([flags, 0, LIMIT_8K, LIMIT_1M]) + term_pdu(2 if to_target else 3, 1, 8, bad)
            fn = os.path.join(outdir, "made-termreq-%s%s" % ("h2c" if to_target else "c2h", "-digests" if dg else ""))
            if not os.path.exists(fn):
                with open(fn, "wb") as f:
                    f.write(seed)
                written += 1
    print("nvme_pdu: %d new seeds in %s" % (written, outdir))
    write_streams(paths)


def shrink_data_pdu(pdu, n):
    """An H2CData/C2HData PDU with its data cut to n bytes: DATAL, PLEN and digests to match."""
    flags, hlen, pdo = pdu[1], pdu[2], pdu[3]
    hdr = bytearray(pdu[:hlen])
    data = pdu[pdo:pdo + n]
    struct.pack_into("<I", hdr, 16, n)                       # DATAL
    plen = pdo + n + (4 if flags & 2 else 0)
    struct.pack_into("<I", hdr, 4, plen)
    out = bytes(hdr)
    if flags & 1:
        out += struct.pack("<I", crc32c(out))
    out += bytes(pdo - len(out))                             # padding up to PDO, as captured
    out += data + (struct.pack("<I", crc32c(data)) if flags & 2 else b"")
    return out


def term_pdu(typ, fes, fei, bad):
    """An H2CTermReq (2) or C2HTermReq (3): FES, FEI, the offending header; no digests."""
    hdr = bytearray(24)
    struct.pack_into("<BBBBIHI", hdr, 0, typ, 0, 24, 0, 24 + len(bad), fes, fei)
    return bytes(hdr) + bad


def cut(data, limit):
    """The whole PDUs of data that fit in limit bytes."""
    out = b""
    for pdu in pdus(data):
        if len(out) + len(pdu) > limit:
            break
        out += pdu
    return out


def crc32c(data, crc=0):
    table = crc32c.table
    if table is None:
        table = crc32c.table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c.table = None

# fuzz_nvme_target.c's standing controller (cntlid 1) belongs to the first capture's host.
HOSTNQN = b"nqn.2014-08.org.nvmexpress:uuid:ae5e84c2-aa4a-415b-88b3-69bda852630a"
HOSTID = bytes.fromhex("c9e829df7a234dfe8ca4f839f0f4aada")


def redigest(pdu):
    """Recompute a CapsuleCmd's header and data digests after an edit."""
    pdu = bytearray(pdu)
    flags, hlen, pdo = pdu[1], pdu[2], pdu[3]
    if flags & 1:
        struct.pack_into("<I", pdu, hlen, crc32c(pdu[:hlen]))
    if flags & 2 and pdo and len(pdu) > pdo + 4:
        struct.pack_into("<I", pdu, len(pdu) - 4, crc32c(pdu[pdo:len(pdu) - 4]))
    return bytes(pdu)


def for_our_target(pdu):
    """A host PDU made to fit fuzz_nvme_target.c's target: Connects name its standing
    controller's host, and CC asks for the NVM command set (CSS 0; the captured hosts
    saw a Linux target that offers CSS 110b, which this one does not)."""
    if pdu[0] != 4 or len(pdu) < 72:
        return pdu
    sqe = bytearray(pdu[8:72])
    if sqe[0] == 0x7F and sqe[4] == 0x01 and pdu[3] and len(pdu) >= pdu[3] + 1024:
        data = bytearray(pdu[pdu[3]:pdu[3] + 1024])
        data[0:16] = HOSTID
        data[512:768] = HOSTNQN.ljust(256, b"\0")
        return redigest(pdu[:pdu[3]] + bytes(data) + pdu[pdu[3] + 1024:])
    if sqe[0] == 0x7F and sqe[4] == 0x00 and struct.unpack_from("<I", sqe, 44)[0] == 0x14:
        cc = struct.unpack_from("<I", sqe, 48)[0]
        struct.pack_into("<I", sqe, 48, cc & ~0x70)
        return redigest(pdu[:8] + bytes(sqe) + pdu[72:])
    return pdu


def write_streams(paths):
    """nvme_target: each host-to-target stream (its first 16 KiB of whole PDUs), as
    fuzz_nvme_target.c sends it on a new connection, made to fit its target."""
    outdir = os.path.join(HERE, "corpus", "nvme_target")
    os.makedirs(outdir, exist_ok=True)
    written = 0
    for path in paths:
        name = os.path.basename(path).replace(".pcapng", "")
        for i, (key, data) in enumerate(streams(path).items()):
            if key[3] != PORT:
                continue
            seed = b"".join(for_our_target(p) for p in pdus(cut(data, STREAM_MAX)))
            fn = os.path.join(outdir, "%s-q%d" % (name, i // 2))
            with open(fn, "wb") as f:
                f.write(seed)
            written += 1
    print("nvme_target: %d streams in %s" % (written, outdir))
    write_host_seeds(paths)


def c2h_pdu(typ, flags, hdr_fields, data=b"", hdgst=False, ddgst=False):
    """A controller-to-host PDU with PDA 0: header (hlen 24 or 128), digests, data."""
    hlen = 128 if typ == 1 else 24
    hdr = bytearray(hlen)
    hdr[8:8 + len(hdr_fields)] = hdr_fields
    flags |= (1 if hdgst else 0) | (2 if ddgst and data else 0)
    pdo = hlen + (4 if hdgst else 0) if data else 0
    plen = (pdo if data else hlen + (4 if hdgst else 0)) + len(data) + (4 if ddgst and data else 0)
    struct.pack_into("<BBBBI", hdr, 0, typ, flags, hlen, pdo, plen)
    out = bytes(hdr)
    if hdgst:
        out += struct.pack("<I", crc32c(out))
    if data:
        out += data + (struct.pack("<I", crc32c(data)) if ddgst else b"")
    return out


def icresp(digest):
    return c2h_pdu(1, 0, struct.pack("<HBBI", 0, 0, digest, 131072))


def rsp(cid, status=0, result=0, hd=False):
    return c2h_pdu(5, 0, struct.pack("<QHHHH", result, 1, 0, cid, status << 1), hdgst=hd)


def c2h(cid, data, last=True, success=False, hd=False, dd=False):
    flags = (4 if last else 0) | (8 if success else 0)
    return c2h_pdu(7, flags, struct.pack("<HHII", cid, 0, 0, len(data)), data, hd, dd)


def r2t(cid, ttag, off, length, hd=False):
    return c2h_pdu(9, 0, struct.pack("<HHII", cid, ttag, off, length), hdgst=hd)


def write_host_seeds(paths):
    """nvme_host: controller answers for fuzz_nvme_host.c: [flags][u16 n][n bytes][rest].
    Its CIDs: Connect 0x1000, then the 4 KiB read 0x2000, the write 0x1001, the flush
    0x1002, the 512-byte read 0x1003."""
    outdir = os.path.join(HERE, "corpus", "nvme_host")
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for flags in (0x00, 0x03, 0x10, 0x20, 0x33):
        hd, dd = bool(flags & 1), bool(flags & 2)
        first = icresp(flags & 3) + rsp(0x1000, result=1, hd=hd)
        rest = c2h(0x2000, bytes(range(256)) * 16, hd=hd, dd=dd) + rsp(0x2000, hd=hd)
        if not flags & 0x20:
            rest += r2t(0x1001, 3, 0, 8192, hd=hd)
        rest += rsp(0x1001, hd=hd) + rsp(0x1002, hd=hd)
        rest += c2h(0x1003, b"\xa5" * 512, success=True, hd=hd, dd=dd)
        seed = bytes([flags]) + struct.pack("<H", len(first)) + first + rest
        with open(os.path.join(outdir, "answers-%02x" % flags), "wb") as f:
            f.write(seed)
        n += 1
    # A Linux target's own first answers (ICResp, Connect's response with our CID) and
    # what followed.
    for path in paths:
        name = os.path.basename(path).replace(".pcapng", "")
        for key, data in streams(path).items():
            if key[1] != PORT:
                continue
            ps = list(pdus(cut(data, STREAM_MAX)))
            digest = ps[0][11] & 3 if ps and ps[0][0] == 1 else 0
            if len(ps) > 1 and ps[1][0] == 5:  # the Connect's response: our Connect's CID
                r = bytearray(ps[1])
                struct.pack_into("<H", r, 20, 0x1000)
                if r[1] & 1:
                    struct.pack_into("<I", r, 24, crc32c(r[:24]))
                ps[1] = bytes(r)
            first = b"".join(ps[:2])
            seed = bytes([digest]) + struct.pack("<H", len(first)) + first + b"".join(harness_answers(ps[2:]))
            with open(os.path.join(outdir, "%s-admin" % name), "wb") as f:
                f.write(seed)
            n += 1
            break
    print("nvme_host: %d seeds in %s" % (n, outdir))


def with_cid(pdu, off, cid):
    """pdu with the command id at byte off set to cid (header digest recomputed)."""
    p = bytearray(pdu)
    struct.pack_into("<H", p, off, cid)
    if p[1] & 1:
        struct.pack_into("<I", p, p[2], crc32c(p[:p[2]]))
    return bytes(p)


def harness_answers(ps):
    """A Linux target's answers after the Connect, moved onto fuzz_nvme_host.c's
    commands: its first 4 KiB C2HData and CapsuleResp answer the 4 KiB read (0x2000),
    the next two CapsuleResps the 8 KiB write (after a made R2T: 0x1001) and the
    flush (0x1002), and the next C2HData, cut to 512 bytes, and CapsuleResp the
    512-byte read (0x1003). Without this the captured command ids match nothing and
    the host gives up at the first CapsuleResp."""
    data = [p for p in ps if p[0] == 7]
    rsps = [p for p in ps if p[0] == 5]
    if len(data) < 2 or len(rsps) < 4:
        return ps
    hd = bool(data[0][1] & 1)
    out = [with_cid(data[0], 8, 0x2000), with_cid(rsps[-2], 20, 0x2000)]
    out += [r2t(0x1001, 3, 0, 8192, hd=hd), with_cid(rsps[0], 20, 0x1001), with_cid(rsps[1], 20, 0x1002)]
    out += [with_cid(shrink_data_pdu(data[1], 512), 8, 0x1003), with_cid(rsps[-1], 20, 0x1003)]
    return out


if __name__ == "__main__":
    args = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "tests/unit/data/nvme-tcp/*.pcapng")))
    if not args:
        sys.exit("no captures given and none in tests/unit/data/nvme-tcp/")
    main(args)
