#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for the target that only records what the kernel host sends first.

    icreq_listener.py PORTFILE LOGFILE [SECONDS]

Listens on 127.0.0.1 on a free port (written to PORTFILE), and for every connection reads
the first PDU (up to 128 bytes, 10 s at most), appends one line to LOGFILE:
    icreq len=128 type=0x00 flags=0x00 hlen=128 pdo=0 plen=128 pfv=0 hpda=0 digest=0x03 maxr2t=0
(or "short len=N hex=..." when it is not a whole ICReq), and closes the connection, so that
the host's connect attempt fails at once instead of waiting for an ICResp. Exits after
SECONDS (default 600). Used by test_linux_host.sh with BP_INTEROP_STUB=1 to check the guest
side (boot, NIC, nvme-tcp, the connect string) without busypoll target.
"""
import os
import socket
import struct
import sys
import time


def main():
    portfile, logfile = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + (float(sys.argv[3]) if len(sys.argv) > 3 else 600.0)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    while time.monotonic() < deadline:
        ls.settimeout(max(0.1, min(1.0, deadline - time.monotonic())))
        try:
            c, peer = ls.accept()
        except socket.timeout:
            continue
        c.settimeout(10)
        buf = b""
        try:
            while len(buf) < 128:
                b = c.recv(128 - len(buf))
                if not b:
                    break
                buf += b
        except socket.timeout:
            pass
        c.close()
        if len(buf) == 128:
            typ, flags, hlen, pdo, plen = struct.unpack_from("<BBBBI", buf, 0)
            pfv, hpda, dgst, maxr2t = struct.unpack_from("<HBBI", buf, 8)
            line = ("icreq len=128 type=0x%02x flags=0x%02x hlen=%d pdo=%d plen=%d pfv=%d "
                    "hpda=%d digest=0x%02x maxr2t=%d rsvd_zero=%d peer=%s" %
                    (typ, flags, hlen, pdo, plen, pfv, hpda, dgst, maxr2t,
                     int(not any(buf[16:])), peer[0]))
        else:
            line = "short len=%d hex=%s peer=%s" % (len(buf), buf.hex(), peer[0])
        with open(logfile, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
