#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# xsk.sh - issue 27's benchmark: the AF_XDP rung beside the socket path, on the veth
# test bed, one flow, 64 B UDP requests and responses, client on CPU 0 and server on
# CPU 1 (compare's defaults), the modes alternated round by round in one run:
#
#   1. busypoll compare --udp over epoll:block, epoll:napi, epoll:spin, xsk:block,
#      xsk:napi, xsk:spin: per mode the median over the rounds of P50, P99 and CPU
#      per transaction (both sides, every thread); then per round xsk:spin's P50 over
#      the best socket mode's P50 in that round, and the median of those ratios (the
#      goal: 0.9 or less)
#   2. busypoll pingpong --matrix (none / client / both) for xsk:napi and xsk:spin (the
#      polling xsk modes), the server switched by its agent in namespace b
#
# Run it alone: flock /tmp/bp-heavy.lock bench/xsk.sh. Figures for reading, never
# pass/fail.
#
# usage: xsk.sh [ROUNDS [SECONDS_PER_RUN [PINGPONG_RUNS]]]   (defaults 7, 2, 5)
#   The binary is $BUILD/busypoll (BUILD default ../build). Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-7}
per_run=${2:-2}
pp_runs=${3:-5}
build=${BUILD:-$here/../build}
bp=$(cd "$build" && pwd)/busypoll
[[ -x $bp ]] || { echo "xsk.sh: build first (make build), or set BUILD" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "xsk.sh: needs root (the veth test bed, XDP)" >&2; exit 77; }
out=$(mktemp -d)
bed=bx$$
cleanup() {
	"$bp" testbed down --name "$bed" >/dev/null 2>&1 || true
	rm -rf "$out"
}
trap cleanup EXIT

modes="epoll:block;epoll:napi,usecs=64,budget=8;epoll:spin;xsk:block;xsk:napi,usecs=64,budget=8;xsk:spin"
echo "== compare --udp, 1 flow, 64 B, $rounds rounds of $per_run s, modes alternated"
echo "   $bp compare --udp -Q 64 -R 64 --flows 1 --runs $rounds -l $((rounds * per_run)) --modes '$modes'"
"$bp" compare --udp -Q 64 -R 64 --flows 1 --runs "$rounds" -l $((rounds * per_run)) --warmup 0.5 \
	--modes "$modes" --format json >"$out/cmp.json"
python3 - "$out/cmp.json" <<'EOF'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
cells = {c["client_mode"]: c for c in d["cells"]}
def med(v): return statistics.median(v) if v else float("nan")
print("%-32s %8s %8s %10s %12s %s" % ("mode", "P50 us", "P99 us", "CPU us/tx", "BPRx/tx c/s", "AF_XDP (client)"))
for m, c in cells.items():
    s = c["samples"]
    x = c.get("client_xsk") or {}
    print("%-32s %8.2f %8.2f %10.2f %5.2f/%-5.2f %s" % (m, med([r["latency_us"]["p50"] for r in s]),
          med([r["latency_us"]["p99"] for r in s]), med([r["cpu_us_per_tx"] for r in s]),
          c["client_busy_poll_rx_per_tx"], c["server_busy_poll_rx_per_tx"],
          "%s, rx dropped %d, ring full %d" % (x["binding"], x["rx_dropped"], x["rx_ring_full"]) if x else "-"))
sock = [m for m in cells if m.startswith("epoll:")]
spin = cells.get("xsk:spin")
if spin:
    n = min(len(cells[m]["samples"]) for m in cells)
    ratios, best_names = [], []
    for k in range(n):
        best = min(sock, key=lambda m: cells[m]["samples"][k]["latency_us"]["p50"])
        best_names.append(best)
        ratios.append(spin["samples"][k]["latency_us"]["p50"] / cells[best]["samples"][k]["latency_us"]["p50"])
    print("xsk:spin P50 / the best socket mode's P50, per round: " + " ".join("%.2f" % r for r in ratios))
    print("  best socket mode per round: " + " ".join(best_names))
    r = med(ratios)
    print("  median %.2f (goal 0.90 or less): %s" % (r, "met" if r <= 0.9 else "missed"))
EOF

echo
echo "== pingpong --matrix (none / client / both), 64 B UDP, $pp_runs runs x 5000 round trips per row"
"$bp" testbed up --name "$bed" >/dev/null
addr=$(ip -n "bp-$bed-b" -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
mkdir -p "$out/agent"
for m in "xsk:napi,usecs=64,budget=8" xsk:spin; do
	echo "-- $m"
	echo "   ip netns exec bp-$bed-a $bp pingpong --client $addr --cpus 0 --server-cpus 1 --matrix --mode $m" \
		"--runs $pp_runs -n 5000 --remote bp-$bed-b --ssh 'ip netns exec' --agent-cmd '$bp agent --stdio ...'"
	ip netns exec "bp-$bed-a" "$bp" pingpong --client "$addr" --cpus 0 --server-cpus 1 --matrix --mode "$m" \
		--runs "$pp_runs" -n 5000 --remote "bp-$bed-b" --ssh "ip netns exec" \
		--agent-cmd "$bp agent --stdio --state-dir $out/agent" -q >"$out/pp.txt" 2>&1 ||
		echo "   (failed: $(tail -1 "$out/pp.txt"))"
	sed -n '/client mode/,/^$/p;/AF_XDP/p' "$out/pp.txt"
done
