#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rr.sh - issue 3's benchmark over the veth test bed, client on CPU 0 and server on
# CPU 1: the reference table (flows 1, 15, 30, 60, one thread per side on a 2-CPU
# machine) for each mode through `busypoll compare`, beside the floor, sockperf
# ping-pong (epoll:block should be at least as fast at 1 flow), and a re-arming
# neper-style design at 15 flows (busypoll rr should beat it). Figures for reading,
# never pass/fail.
#
# usage: rr.sh [SECONDS_PER_CELL]      (default 3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
build=${BUILD:-$here/../build}
bp=$build/busypoll
[[ -x $bp && -x $build/bench/bench_rearm ]] || { echo "rr.sh: build first (make build)" >&2; exit 2; }

echo "== the floor (raw recv spin, 1 byte)"
BENCH_FLOOR=$build/bench/bench_floor "$here/floor.sh" -n 100000 2>/dev/null

echo "== sockperf ping-pong, 1 byte TCP, full RTT (Debian's sockperf)"
if command -v sockperf >/dev/null; then
	"$here/netns-pair.sh" \
		"sockperf sr --tcp -i \"\$BP_SERVER_ADDR\" -p 11111" \
		"sockperf pp --tcp -i \"\$BP_SERVER_ADDR\" -p 11111 -t $secs -m 14 --full-rtt 2>&1 | grep -E 'avg-rtt|percentile (50|99)\.000'" 2>/dev/null || true
else
	echo "sockperf not installed (apt-get install sockperf)"
fi

echo "== busypoll rr epoll:block vs a re-arming design (neper tcp_rr's), 15 flows, 1 thread"
# Side by side on one test bed, alternating three times: this VM flips between two
# speeds from run to run, so figures from separate beds do not compare.
bed=rr$$
"$bp" testbed up --name "$bed" >/dev/null
trap '"$bp" testbed down --name "$bed" >/dev/null 2>&1 || true' EXIT
srv=$(ip netns exec "bp-$bed-b" ip -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
for i in 1 2 3; do
	ip netns exec "bp-$bed-b" taskset -c 1 "$build/bench/bench_rearm" --server --bind "$srv" --port 7201 &
	sleep 0.3
	ip netns exec "bp-$bed-a" taskset -c 0 "$build/bench/bench_rearm" --client "$srv" --port 7201 -F 15 -l "$secs"
	wait
	ip netns exec "bp-$bed-b" "$bp" rr --server --bind "$srv" --port 7202 --cpus 1 -q &
	rr_pid=$!
	sleep 0.3
	ip netns exec "bp-$bed-a" "$bp" rr --client "$srv" --port 7202 --cpus 0 -F 15 -l "$secs" --warmup 0.3 \
		--format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("busypoll rr epoll:block     flows 15  %.0f transactions/s" % d["tps"])'
	kill "$rr_pid"
	wait "$rr_pid" 2>/dev/null || true
done
"$bp" testbed down --name "$bed" >/dev/null
trap - EXIT

echo "== the reference table: busypoll compare, flows 1,15,30,60"
"$bp" compare --flows 1,15,30,60 -l "$secs" --warmup 0.5 -q \
	--modes "epoll:block;epoll:napi,usecs=64,budget=8;epoll:spin;epoll:hybrid,period=100;uring:block;uring:napi,usecs=64;uring:spin"
