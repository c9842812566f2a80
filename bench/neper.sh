#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# neper.sh - issue 16's benchmark over one veth test bed, client on CPU 0 in side a,
# server on CPU 1 in side b, one thread per side:
#
#   15 flows   neper tcp_rr and `busypoll rr` in each of MODES, alternated ROUNDS
#              times in one run (this VM changes speed from run to run, so only
#              figures from one run compare), medians of the rounds;
#              targets: the best busypoll mode >= 1.4x neper's transactions/s,
#              epoll:block >= 1.2x;
#   1 flow     the round-trip floor (bench/floor.sh: raw recv spin) and each
#              busy-poll mode's P50, alternated the same way;
#              target: the best busy-poll P50 <= the floor's.
#
# neper is built from its source ($NEPER_SRC, default shared/peers/neper beside the
# repository or beside the folder of its worktree) into $BUILD/neper, never into the
# source tree and never committed. Figures are for reading: the script says whether each target was met
# and exits 0 either way (1 when a run failed, 2 bad usage, 77 cannot run here).
#
# usage: neper.sh [SECONDS_PER_CELL] [ROUNDS]       (default 3 and 3)
#   MODES='epoll:block;...'   the busypoll modes at 15 flows (';' separated); an entry
#                             may start with VAR=VALUE words for both sides, e.g. what
#                             each io_uring feature buys:
#     MODES='uring:block;BP_URING_FEATURES=none uring:block;BP_URING_FEATURES=-multishot uring:block'
#   BUSY_MODES='...'          the busy-poll modes at 1 flow
#   Smoke it with: neper.sh 0.5 1
# uring:sqpoll,spin is not in the default list: rr pins each loop before it makes its
# ring, so the SQ thread shares the loop's CPU and the two spinners take turns.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
rounds=${2:-3}
build=${BUILD:-$here/../build}
build=$(cd "$build" && pwd)
bp=$build/busypoll
neper_src=${NEPER_SRC:-}
if [[ -z $neper_src ]]; then
	# ../shared beside the repository (or beside a worktree's parent folder)
	for candidate in "$here/../../shared/peers/neper" "$here/../../../shared/peers/neper"; do
		[[ -f $candidate/tcp_rr.c ]] && neper_src=$candidate && break
	done
fi
modes=${MODES:-"epoll:block;epoll:napi,usecs=64,budget=8;epoll:spin;uring:block;uring:napi,usecs=64;uring:spin"}
busy_modes=${BUSY_MODES:-"epoll:napi,usecs=64,budget=8;epoll:spin;uring:napi,usecs=64;uring:spin"}

[[ $secs =~ ^[0-9]+(\.[0-9]+)?$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
	{ echo "neper.sh: usage: neper.sh [SECONDS_PER_CELL] [ROUNDS]" >&2; exit 2; }
[[ -x $bp && -x $build/bench/bench_floor ]] || { echo "neper.sh: build first (make build)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "neper.sh: cannot run here: the veth test bed needs root" >&2; exit 77; }
[[ -n $neper_src && -f $neper_src/tcp_rr.c ]] ||
	{ echo "neper.sh: no neper source in $neper_src (set NEPER_SRC)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "neper.sh: cannot run here: needs python3" >&2; exit 77; }

# ---- neper, built into the build folder ----
neper_dir=$build/neper
if [[ ! -x $neper_dir/tcp_rr || -n $(find "$neper_src" -newer "$neper_dir/tcp_rr" -name '*.[ch]' -print -quit) ]]; then
	rm -rf "$neper_dir"
	cp -r "$neper_src" "$neper_dir"
	make -s -C "$neper_dir" tcp_rr >/dev/null || { echo "neper.sh: building neper failed" >&2; exit 1; }
fi
neper=$neper_dir/tcp_rr

# ---- the bed ----
bed=nb$$
srvpid=
cleanup() {
	[[ -n $srvpid ]] && kill "$srvpid" 2>/dev/null && wait "$srvpid" 2>/dev/null
	"$bp" testbed down --name "$bed" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$bp" testbed up --name "$bed" >/dev/null
ns_a=bp-$bed-a
ns_b=bp-$bed-b
srv=$(ip netns exec "$ns_b" ip -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
port=7400
results=$(mktemp)
trap 'cleanup; rm -f "$results"' EXIT

# wait_listen PORT: until something listens on TCP PORT in side b (5 s at most)
wait_listen() {
	for _ in $(seq 100); do
		ip netns exec "$ns_b" ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	echo "neper.sh: nothing listens on port $1" >&2
	return 1
}

# record CELL VALUE: one figure of one round
record() { echo "$1	$2" >>"$results"; }

neper_cell() {
	local out len
	len=$(python3 -c 'import math,sys; print(max(1, math.ceil(float(sys.argv[1]))))' "$secs") # whole seconds
	port=$((port + 2))
	ip netns exec "$ns_b" taskset -c 1 "$neper" -F 15 -T 1 -C "$port" -P $((port + 1)) --nolog >/dev/null &
	srvpid=$!
	wait_listen "$port"
	out=$(ip netns exec "$ns_a" taskset -c 0 "$neper" -c -H "$srv" -F 15 -T 1 -C "$port" -P $((port + 1)) \
		-l "$len" --nolog 2>/dev/null | sed -n 's/^throughput=//p')
	wait "$srvpid" || true
	srvpid=
	[[ -n $out ]] || { echo "neper.sh: neper tcp_rr printed no throughput" >&2; return 1; }
	record "15 neper tcp_rr" "$out"
}

# rr_cell FLOWS ENTRY: busypoll rr, both sides in ENTRY's mode (after its VAR=VALUE
# words, set for both sides); records tps (15 flows) or P50 (1 flow)
rr_cell() {
	local flows=$1 mode=$2 json words
	read -r -a words <<<"$2"
	mode=${words[-1]}
	unset 'words[-1]'
	port=$((port + 2))
	ip netns exec "$ns_b" env "${words[@]}" "$bp" rr --server --bind "$srv" --port "$port" --cpus 1 -q \
		--mode "$mode" &
	srvpid=$!
	wait_listen "$port"
	json=$(ip netns exec "$ns_a" env "${words[@]}" "$bp" rr --client "$srv" --port "$port" --cpus 0 \
		-F "$flows" -T 1 -l "$secs" --warmup 0.5 --mode "$mode" --format json)
	kill "$srvpid"
	wait "$srvpid" 2>/dev/null || true
	srvpid=
	if ((flows == 15)); then
		record "15 busypoll rr $2" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tps"])' <<<"$json")"
	else
		record "1 busypoll rr $2" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["latency_us"]["p50"])' <<<"$json")"
	fi
}

floor_cell() {
	local json
	port=$((port + 2))
	ip netns exec "$ns_b" taskset -c 1 "$build/bench/bench_floor" --server --bind "$srv" --port "$port" --cpu 1 &
	srvpid=$!
	wait_listen "$port"
	json=$(ip netns exec "$ns_a" "$build/bench/bench_floor" --client "$srv" --port "$port" --cpu 0 \
		-n 50000 --format json)
	wait "$srvpid" 2>/dev/null || true
	srvpid=
	record "1 floor" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["p50_us"])' <<<"$json")"
}

IFS=';' read -r -a mode_list <<<"$modes"
IFS=';' read -r -a busy_list <<<"$busy_modes"
echo "== neper.sh: $rounds round(s), ${secs} s per cell, client CPU 0 / server CPU 1, test bed $bed"
for ((r = 1; r <= rounds; r++)); do
	echo "-- round $r"
	neper_cell
	for m in "${mode_list[@]}"; do rr_cell 15 "$m"; done
	floor_cell
	for m in "${busy_list[@]}"; do rr_cell 1 "$m"; done
done

# ---- medians and the targets ----
python3 - "$results" <<'EOF'
import statistics, sys
cells = {}
for line in open(sys.argv[1]):
    name, value = line.rstrip("\n").split("\t")
    cells.setdefault(name, []).append(float(value))
med = {k: statistics.median(v) for k, v in cells.items()}
neper = med["15 neper tcp_rr"]
print("\n15 flows, transactions/s (median of %d)" % len(cells["15 neper tcp_rr"]))
print("  %-44s %10.0f  %s" % ("neper tcp_rr", neper, " ".join("%.0f" % x for x in cells["15 neper tcp_rr"])))
rr = {k[len("15 busypoll rr "):]: v for k, v in med.items() if k.startswith("15 busypoll rr ")}
for m, v in rr.items():
    print("  %-44s %10.0f  %.2fx neper" % ("busypoll rr " + m, v, v / neper))
best = max(rr, key=rr.get)
print("  best busypoll mode %s: %.2fx neper (target 1.4x: %s)" %
      (best, rr[best] / neper, "met" if rr[best] >= 1.4 * neper else "missed"))
if "epoll:block" in rr:
    print("  epoll:block: %.2fx neper (target 1.2x: %s)" %
          (rr["epoll:block"] / neper, "met" if rr["epoll:block"] >= 1.2 * neper else "missed"))
floor = med["1 floor"]
p50 = {k[len("1 busypoll rr "):]: v for k, v in med.items() if k.startswith("1 busypoll rr ")}
print("\n1 flow, P50 round trip in us (median)")
print("  %-44s %10.2f" % ("floor (raw recv spin)", floor))
for m, v in p50.items():
    print("  %-44s %10.2f" % ("busypoll rr " + m, v))
if p50:
    best = min(p50, key=p50.get)
    print("  best busy-poll P50 %s: %.2f us vs floor %.2f us (target <= floor: %s)" %
          (best, p50[best], floor, "met" if p50[best] <= floor else "missed"))
EOF
