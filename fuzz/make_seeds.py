#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/{mode,rr_proto,pingpong_proto,control}/ (run from anywhere).

The seeds are small valid and near-valid inputs, so the fuzzer starts from the
accepted paths; the files are committed, this only documents where they came from.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


MODES = [
    "epoll:block", "epoll:napi", "epoll:napi,usecs=64,budget=8,prefer",
    "epoll:napi,usecs=0,prefer=1", "epoll:spin", "epoll:hybrid,period=100",
    "epoll:suspend,usecs=0,budget=64,defer=100,gro-flush=20000,suspend=2000000",
    "uring:block,setup=defer", "uring:napi,usecs=64,prefer,tracking=static,setup=coop",
    "uring:spin,setup=plain", "uring:hybrid,period=100,setup=defer",
    "uring:sqpoll,idle=1000,napi=0", "uring:sqpoll,napi=10000",
    # refusals, one per kind of message
    "epoll:napi,usecs=99999999999999999999", "epoll:napi,budget=-1", "epoll:napi,usecs=0",
    "epoll:napi,foo=1", "uring:sqpoll,setup=plain", "epoll:suspend,prefer", "epoll:napi,,",
    "epoll:napi,usecs=1,usecs=2", "uring:napi,tracking=sometimes", "epoll", "bogus:block",
    "epoll:block,usecs=1", "epoll:napi,prefer=2", "epoll: napi",
]

MAGIC = 0x52525042


def hello(kind=0, flags=0, req=64, resp=64, run_id=0x1122334455667788, flow=1, version=2):
    return struct.pack("<IHBBIIQII", MAGIC, version, kind, flags, req, resp, run_id, flow, 0)


CTL_MAGIC = 0x54435042


def ctl_u64(tag, v):
    return struct.pack("<HHQ", tag, 8, v & 0xFFFFFFFFFFFFFFFF)


def ctl_text(tag, t):
    t = t.encode() if isinstance(t, str) else t
    return struct.pack("<HH", tag, len(t)) + t


def ctl_record(tag, body):
    return struct.pack("<HH", tag, len(body)) + body


def ctl(typ, body=b"", seq=1, version=1, flags=0):
    return struct.pack("<IBBHII", CTL_MAGIC, version, flags, typ, len(body), seq) + body


def evidence():
    b = ctl_text(5, "epoll:napi,usecs=64,budget=8") + ctl_u64(7, 2)
    for i, tag in enumerate(range(32, 45)):
        b += ctl_u64(tag, 1000 + i)
    b += ctl_u64(50, 7)  # helper CPU
    b += ctl_u64(45, 8193) + ctl_u64(45, 8194)
    b += ctl_record(46, ctl_u64(47, 1234) + ctl_text(48, "rr-server-0") + ctl_u64(49, 900))
    b += ctl_record(46, ctl_u64(47, 1240) + ctl_text(48, "iou-sqp-1234") + ctl_u64(49, 7))
    return b


PP_MAGIC = 0x47505042


def pp_hdr(typ, length, seq=7, flags=0, client_ts=123456789, srv=(0, 0, 0), prev_seq=0):
    return struct.pack("<IBBHIIQQIIQ", PP_MAGIC, 2, typ, flags, length, srv[0], seq, client_ts,
                       srv[1], srv[2], prev_seq)


if __name__ == "__main__":
    for i, m in enumerate(MODES):
        write("mode", "%02d" % i, m)
    # rr_proto: first byte selects the record (0 hello, 1 ack)
    write("rr_proto", "hello-data", b"\0" + hello())
    write("rr_proto", "hello-bad-version", b"\0" + hello(version=1))
    write("rr_proto", "ack-ok", b"\1" + struct.pack("<IHHII", MAGIC, 2, 0, 8193, 0))
    write("rr_proto", "ack-busy", b"\1" + struct.pack("<IHHII", MAGIC, 2, 6, 0, 0))
    # control: whole messages, back to back as a stream would carry them
    rr_hello = ctl_text(1, "rr") + ctl_u64(2, 42) + ctl_u64(96, 64) + ctl_u64(97, 64) + ctl_u64(8, 1)
    write("control", "hello-rr", ctl(1, rr_hello))
    write("control", "hello-ok", ctl(2, ctl_text(1, "rr") + ctl_text(5, "epoll:block") + ctl_u64(7, 1) +
                                     ctl_u64(6, -1)))
    write("control", "error", ctl(3, ctl_u64(3, 16) + ctl_text(4, "server at its limit")))
    write("control", "start-stop", ctl(4, seq=2) + ctl(6, seq=3))
    write("control", "evidence", ctl(7, evidence()))
    write("control", "set-mode", ctl(8, ctl_text(5, "uring:napi,usecs=100") + ctl_u64(8, 2)))
    write("control", "queues", ctl(7, evidence() + ctl_record(128, ctl_u64(129, 3) + ctl_text(134, "127.0.0.1:40000") +
                                                        ctl_u64(135, 1000))))
    write("control", "bad-int-length", ctl(4, struct.pack("<HHI", 2, 4, 7)))
    write("control", "nested-record", ctl(7, ctl_record(46, ctl_record(46, b""))))
    write("control", "cut-short", ctl(1, rr_hello)[:-3])
    # pingpong_proto: (sel >> 1) % 5 = wanted type (0 any), bit 0 = a whole datagram
    write("pingpong_proto", "request-stream", b"\x00" + pp_hdr(1, 64) + bytes(range(16)))
    write("pingpong_proto", "request-dgram", b"\x03" + pp_hdr(1, 48))
    write("pingpong_proto", "reply", b"\x04" + pp_hdr(2, 48, flags=5, srv=(10, 20, 30), prev_seq=6))
    write("pingpong_proto", "bad-length", b"\x00" + pp_hdr(1, 47))
    write("pingpong_proto", "old-control-type", b"\x00" + pp_hdr(3, 48))
