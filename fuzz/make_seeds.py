#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/{mode,rr_proto,pingpong_proto,control}/ (run from anywhere).

control/agent-*: the two-host agent's requests and replies (tools/link/agent_wire.h).

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
    # control, the agent's messages: tags from tools/harness/control.h (SERVER 160.., NAPI 184.., path 200..)
    napi = (ctl_u64(184, 8193) + ctl_u64(185, 2) + ctl_u64(186, -1) + ctl_u64(187, -1) + ctl_u64(188, 2) +
            ctl_u64(189, 200000) + ctl_u64(190, 0) + ctl_u64(191, 0) + ctl_u64(192, 0x3c))
    write("control", "agent-hello-ok", ctl(2, ctl_text(1, "agent") + ctl_text(174, "0.9.0") + ctl_u64(9, 4242) +
                                           ctl_text(170, "hostb") + ctl_text(11, "6.18.0") +
                                           ctl_u64(173, 4026531840) + ctl_u64(171, 0) + ctl_u64(172, -1) +
                                           ctl_u64(6, 1) + ctl_u64(6, 3)))
    write("control", "agent-requests",
          ctl(11, ctl_text(1, "rr") + ctl_text(5, "epoll:napi,usecs=64") + ctl_text(10, "10.0.0.2") +
              ctl_u64(167, 0) + ctl_u64(6, 1) + ctl_u64(7, 1) + ctl_u64(175, -1), seq=2) +
          ctl(13, ctl_u64(160, 1), seq=3) +
          ctl(14, ctl_u64(184, 8193) + ctl_u64(8, 1) + ctl_text(162, "defer-hard-irqs=2,gro-flush-timeout=200000"),
              seq=4) +
          ctl(15, ctl_text(161, "eth0") + ctl_text(164, "gro_flush_timeout") + ctl_u64(165, 0) + ctl_u64(8, 1),
              seq=5) +
          ctl(16, ctl_text(161, "eth0") + ctl_text(162, "rx-usecs=0,adaptive-rx=off") + ctl_u64(8, 1), seq=6) +
          ctl(17, ctl_text(161, "eth0") + ctl_text(162, "combined=4") + ctl_u64(8, 1), seq=7) +
          ctl(18, ctl_text(10, "10.0.0.2"), seq=8) + ctl(10, ctl_u64(160, 1), seq=9) + ctl(20, seq=10))
    write("control", "agent-napi", ctl(14, napi))
    write("control", "agent-server-info", ctl(12, ctl_u64(160, 1) + ctl_text(1, "rr") + ctl_u64(9, 777) +
                                              ctl_text(10, "10.0.0.2:40000") + ctl_u64(167, 40000) +
                                              ctl_text(5, "epoll:block") + ctl_u64(6, 1) + ctl_u64(168, -1)))
    path = (ctl_text(161, "eth0") + ctl_u64(200, 2) + ctl_text(201, "mlx5_core") + ctl_text(202, "6.18") +
            ctl_text(203, "16.35") + ctl_text(204, "0000:3b:00.0") + ctl_text(205, "combined=2") +
            ctl_text(163, "combined=8") + ctl_text(206, "rx-usecs=8,rx-frames=128,adaptive-rx=on") +
            ctl_u64(207, 2) + ctl_u64(208, 2) + ctl_u64(209, 2) +
            ctl_record(210, ctl_u64(211, 0) + ctl_u64(212, 0) + ctl_u64(184, 8193)) +
            ctl_record(210, ctl_u64(211, 0) + ctl_u64(212, 1) + ctl_u64(184, 8193)) +
            ctl_record(213, napi) + ctl_record(213, napi.replace(ctl_u64(184, 8193), ctl_u64(184, 8194))) +
            ctl_record(214, ctl_u64(215, 98) + ctl_u64(184, 8193) + ctl_text(216, "mlx5_comp0@pci:0000:3b:00.0") +
                       ctl_text(217, "0-1") + ctl_text(218, "1")) +
            ctl_record(219, ctl_u64(220, 5) + ctl_u64(3, 0) + ctl_text(4, "no IRQs: a virtual device")))
    write("control", "agent-path", ctl(19, path))
    write("control", "agent-path-napi-count-short", ctl(19, path.replace(ctl_u64(209, 2), ctl_u64(209, 1))))
    write("control", "agent-bye", ctl(20, ctl_u64(169, 3)))
    # pingpong_proto: (sel >> 1) % 5 = wanted type (0 any), bit 0 = a whole datagram
    write("pingpong_proto", "request-stream", b"\x00" + pp_hdr(1, 64) + bytes(range(16)))
    write("pingpong_proto", "request-dgram", b"\x03" + pp_hdr(1, 48))
    write("pingpong_proto", "reply", b"\x04" + pp_hdr(2, 48, flags=5, srv=(10, 20, 30), prev_seq=6))
    write("pingpong_proto", "bad-length", b"\x00" + pp_hdr(1, 47))
    write("pingpong_proto", "old-control-type", b"\x00" + pp_hdr(3, 48))
