#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pingpong.sh - issue 5's benchmark over the veth test bed (netns-pair.sh: server in
# namespace b on CPU 1, client in namespace a on CPU 0, both pinned):
#
#   1. the floor: a raw 1-byte TCP recv(MSG_DONTWAIT) spin (bench/floor.sh)
#   2. sockperf ping-pong (Debian's sockperf: server `sockperf sr`, client
#      `sockperf pp --full-rtt`), UDP and TCP, the same message size
#   3. busypoll pingpong --matrix (no busy polling / client only / both ends) for
#      epoll:napi and uring:napi, UDP and TCP, each row the average of RUNS runs
#   4. one --breakdown matrix (uring:napi, UDP): where the microseconds go
#
# and a summary: epoll:block's P50 against sockperf's on the same path, and each
# busy-poll row's P50 against the floor's. Figures for reading, never pass/fail.
#
# usage: pingpong.sh [RUNS [N [SIZE]]]    (defaults 10 runs, 10000 round trips, 64 B)
#   The binaries come from $BUILD (default ../build): busypoll, bench/bench_floor.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-10}
n=${2:-10000}
size=${3:-64}
build=${BUILD:-$here/../build}
bp=$build/busypoll
floor_bin=$build/bench/bench_floor
[[ -x $bp && -x $floor_bin ]] || { echo "pingpong.sh: build first (make build), or set BUILD" >&2; exit 2; }
bp=$(cd "$(dirname "$bp")" && pwd)/busypoll
command -v python3 >/dev/null || { echo "pingpong.sh: needs python3 for the summary" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
port=12868
secs=$(python3 -c "print(max(3, round($runs * $n * 60e-6)))") # sockperf: about as long as one row

echo "== the floor: raw recv(MSG_DONTWAIT) spin, 1 byte TCP, 100000 round trips"
BENCH_FLOOR=$floor_bin "$here/floor.sh" -n 100000 --format json >"$out/floor.json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("floor  P50 %.2f us  P99 %.2f us  mean %.2f us" % (d["p50_us"], d["p99_us"], d["mean_us"]))' "$out/floor.json"

# One bed for everything else: the servers stay up, the clients run one after another.
# (netns-pair stops the servers 10 s after the client commands end.)
client_cmds="set -e; cd $out"
for proto in udp tcp; do
	flag=; [[ $proto == tcp ]] && flag=--tcp
	client_cmds+="; echo '== sockperf ping-pong $proto, $size B, $secs s'"
	client_cmds+="; sockperf pp $flag -i \"\$BP_SERVER_ADDR\" -p 11111 -t $secs -m $size --full-rtt >sockperf-$proto.txt 2>&1 || true"
	client_cmds+="; grep -E 'avg-rtt|percentile (50|99)\\.000' sockperf-$proto.txt || true"
done
for mode in "epoll:napi" "uring:napi,usecs=100"; do
	for proto in udp tcp; do
		flag=; [[ $proto == tcp ]] && flag=--tcp
		tag=${mode%%:*}-$proto
		client_cmds+="; echo '== busypoll pingpong --matrix --mode $mode $flag'"
		client_cmds+="; $bp pingpong --client \"\$BP_SERVER_ADDR\" --port $port --cpus 0 $flag --size $size -n $n --runs $runs --matrix --mode '$mode' | tee $tag.txt"
	done
done
client_cmds+="; echo '== busypoll pingpong --matrix --mode uring:napi,usecs=100 --breakdown (UDP)'"
client_cmds+="; $bp pingpong --client \"\$BP_SERVER_ADDR\" --port $port --cpus 0 --size $size -n $n --runs $runs --matrix --mode uring:napi,usecs=100 --breakdown | tee breakdown.txt"

"$here/netns-pair.sh" \
	"sockperf sr -i \"\$BP_SERVER_ADDR\" -p 11111 >/dev/null 2>&1 & sockperf sr --tcp -i \"\$BP_SERVER_ADDR\" -p 11111 >/dev/null 2>&1 & exec $bp pingpong --server --bind \"\$BP_SERVER_ADDR\" --port $port --cpus 1 -q" \
	"$client_cmds" 2> >(grep -v 'still running 10 s after\|^netns-pair: server ' >&2)

# The averages of the matrices above, beside the floor and sockperf.
echo "== summary (P50, us; each busypoll row the average of $runs runs)"
python3 - "$out" <<'EOF'
import json, os, re, sys
out = sys.argv[1]
floor = json.load(open(os.path.join(out, "floor.json")))["p50_us"]
def sockperf(proto):
    try:
        t = open(os.path.join(out, "sockperf-%s.txt" % proto)).read()
        m = re.search(r"percentile 50\.000 =\s*([0-9.]+)", t)
        return float(m.group(1)) if m else None
    except OSError:
        return None
def rows(tag):
    try:
        text = open(os.path.join(out, tag + ".txt")).read()
    except OSError:
        return []
    got = []
    for line in text.splitlines():
        for label in ("no busy polling", "client only", "both ends"):
            if line.startswith(label):
                f = line[len(label):].split()
                # client mode, server mode, min, mean, sd, P50, P99, P99.9
                got.append((label, float(f[2 + 1]), float(f[5])))
    return got
print("floor (raw spin, TCP 1 B)                 P50 %7.2f" % floor)
for proto in ("udp", "tcp"):
    s = sockperf(proto)
    print("sockperf ping-pong %-4s                    P50 %s" % (proto, "%7.2f" % s if s else "    n/a"))
for tag in ("epoll-udp", "epoll-tcp", "uring-udp", "uring-tcp"):
    s = sockperf(tag.split("-")[1])
    for label, mean, p50 in rows(tag):
        note = ""
        if label == "no busy polling" and s:
            note = "  vs sockperf %.2fx" % (p50 / s)
        elif label != "no busy polling":
            note = "  vs floor %.2fx" % (p50 / floor)
        print("%-10s %-16s mean %7.2f  P50 %7.2f%s" % (tag, label, mean, p50, note))
EOF
