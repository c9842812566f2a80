#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# neper.sh - busypoll rr against the leanest program of its path and against neper, over
# one veth test bed (client on CPU 0 in side a, server on CPU 1 in side b, one thread
# per side), every cell alternated ROUNDS times in one run (issues 16 and 25):
#
#   15 flows   bench_lean --backend epoll and --backend uring (the leanest loop of each
#              backend: bench/lean.c), neper tcp_rr, and `busypoll rr` in each of MODES;
#              per round, each rr mode's transactions/s over the lean program of its
#              own backend and over neper's;
#              targets: epoll:block and uring:block >= 0.97x their lean program.
#   1 flow     the round-trip floor (bench/floor.c: a raw recv(MSG_DONTWAIT) spin) and
#              each busy-poll mode of BUSY_MODES; per round, each mode's P50 over the
#              floor's; target: the best busy-poll mode of each backend <= 1.00x.
#
# This VM changes speed from second to second: only ratios of cells run side by side
# mean anything, so each figure printed is the median over the rounds of the per-round
# ratio (with the lowest and highest beside it), never a ratio of medians. The order of
# the cells turns by one every round, so no cell always follows the same one.
#
# neper is built from its source ($NEPER_SRC, default shared/peers/neper beside the
# repository or beside the folder of its worktree) into $BUILD/neper by its own
# Makefile (VPATH: nothing is copied), never into the source tree, never committed.
# Figures are for reading: the script says whether each target was met and exits 0
# either way (1 when a run failed, 2 bad usage, 77 cannot run here). Run it under the
# machine's benchmark lock: flock /tmp/bp-heavy.lock bench/neper.sh
#
# usage: neper.sh [SECONDS_PER_CELL] [ROUNDS]       (default 2 and 7)
#   FLOWS='15 1'              which halves to run (15, 1 or both)
#   MODES='epoll:block;uring:block'   the busypoll modes at 15 flows (';' separated); an
#                             entry may start with VAR=VALUE words for both sides, e.g.
#                             what each io_uring feature buys:
#     MODES='uring:block;BP_URING_FEATURES=none uring:block;BP_URING_FEATURES=-multishot uring:block'
#   BUSY_MODES='...'          the busy-poll modes at 1 flow (default: epoll:spin,
#                             epoll:hybrid and epoll:napi with direct=1 and direct=0,
#                             uring:spin, uring:napi)
#   AA=1                      a second lean epoll cell (and floor cell) in every round: the median of
#                             the per-round ratio of the same program to itself (and its
#                             spread) is what this machine's noise allows to be read
#   KEEP=FILE                 also write every cell's figure there (round, cell, value,
#                             client and server syscalls per transaction)
#   Smoke it with: neper.sh 0.5 1
# uring:sqpoll,spin is not in the default list: rr pins each loop before it makes its
# ring, so the SQ thread shares the loop's CPU and the two spinners take turns.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-2}
rounds=${2:-7}
build=${BUILD:-$here/../build}
build=$(cd "$build" && pwd)
bp=$build/busypoll
lean=$build/bench/bench_lean
floor=$build/bench/bench_floor
neper_src=${NEPER_SRC:-}
if [[ -z $neper_src ]]; then
	# ../shared beside the repository (or beside a worktree's parent folder)
	for candidate in "$here/../../shared/peers/neper" "$here/../../../shared/peers/neper"; do
		[[ -f $candidate/tcp_rr.c ]] && neper_src=$(cd "$candidate" && pwd) && break
	done
fi
flows_run=${FLOWS:-"15 1"}
modes=${MODES:-"epoll:block;uring:block"}
busy_modes=${BUSY_MODES:-"epoll:spin,direct=1;epoll:spin,direct=0;epoll:hybrid,direct=1;epoll:hybrid,direct=0;epoll:napi,usecs=64,budget=8,direct=1;epoll:napi,usecs=64,budget=8,direct=0;uring:spin;uring:napi,usecs=64"}

[[ $secs =~ ^[0-9]+(\.[0-9]+)?$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
	{ echo "neper.sh: usage: neper.sh [SECONDS_PER_CELL] [ROUNDS]" >&2; exit 2; }
[[ $flows_run =~ ^(15|1)( (15|1))?$ ]] || { echo "neper.sh: FLOWS='$flows_run': '15', '1' or '15 1'" >&2; exit 2; }
[[ -x $bp && -x $floor && -x $lean ]] || { echo "neper.sh: build first (make build)" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "neper.sh: cannot run here: the veth test bed needs root" >&2; exit 77; }
[[ -n $neper_src && -f $neper_src/tcp_rr.c ]] ||
	{ echo "neper.sh: no neper source in ${neper_src:-shared/peers/neper} (set NEPER_SRC)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "neper.sh: cannot run here: needs python3" >&2; exit 77; }

# ---- neper, built into the build folder from its own source tree ----
neper_dir=$build/neper
if [[ ! -x $neper_dir/tcp_rr || -n $(find "$neper_src" -newer "$neper_dir/tcp_rr" -name '*.[ch]' -print -quit) ]]; then
	rm -rf "$neper_dir"
	mkdir -p "$neper_dir"
	make -s -C "$neper_dir" -f "$neper_src/Makefile" VPATH="$neper_src" tcp_rr >/dev/null 2>&1 ||
		{ echo "neper.sh: building neper in $neper_dir failed" >&2; exit 1; }
fi
neper=$neper_dir/tcp_rr

# ---- the bed ----
bed=nb$$
srvpid=
results=$(mktemp)
cleanup() {
	[[ -n $srvpid ]] && kill "$srvpid" 2>/dev/null && wait "$srvpid" 2>/dev/null
	"$bp" testbed down --name "$bed" >/dev/null 2>&1 || true
	rm -f "$results"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$bp" testbed up --name "$bed" >/dev/null
ns_a=bp-$bed-a
ns_b=bp-$bed-b
srv=$(ip netns exec "$ns_b" ip -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
port=7400
round=0

# wait_listen PORT: until something listens on TCP PORT in side b (5 s at most)
wait_listen() {
	for _ in $(seq 100); do
		ip netns exec "$ns_b" ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	echo "neper.sh: nothing listens on port $1" >&2
	return 1
}

# server_done: the cell's server exits by itself once the client closed (rr's is stopped)
server_done() {
	wait "$srvpid" 2>/dev/null || true
	srvpid=
}

# record CELL VALUE [SYSCALLS_CLIENT SYSCALLS_SERVER]: one figure of this round
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$1" "$2" "${3:-}" "${4:-}" >>"$results"; }

cell_neper() {
	local out len
	len=$(python3 -c 'import math,sys; print(max(1, math.ceil(float(sys.argv[1]))))' "$secs") # whole seconds
	port=$((port + 2))
	ip netns exec "$ns_b" taskset -c 1 "$neper" -F 15 -T 1 -C "$port" -P $((port + 1)) --nolog >/dev/null &
	srvpid=$!
	wait_listen "$port"
	out=$(ip netns exec "$ns_a" taskset -c 0 "$neper" -c -H "$srv" -F 15 -T 1 -C "$port" -P $((port + 1)) \
		-l "$len" --nolog 2>/dev/null | sed -n 's/^throughput=//p')
	server_done
	[[ -n $out ]] || { echo "neper.sh: neper tcp_rr printed no throughput" >&2; return 1; }
	record "15 neper" "$out"
}

# cell_lean BACKEND [TAG]: bench_lean at 15 flows (TAG: a second cell of the same program)
cell_lean() {
	local json
	port=$((port + 2))
	ip netns exec "$ns_b" "$lean" --server --backend "$1" --bind "$srv" --port "$port" --cpu 1 -F 15 &
	srvpid=$!
	wait_listen "$port"
	json=$(ip netns exec "$ns_a" "$lean" --client "$srv" --backend "$1" --port "$port" --cpu 0 -F 15 \
		-l "$secs" --warmup 0.5 --format json)
	server_done
	record "15 lean $1${2:-}" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tps"])' <<<"$json")"
}

# cell_rr FLOWS ENTRY: busypoll rr, both sides in ENTRY's mode (after its VAR=VALUE
# words, set for both sides); records tps (15 flows) or P50 (1 flow), and both sides'
# syscalls per transaction
cell_rr() {
	local flows=$1 mode json words
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
	server_done
	RR_JSON=$json python3 - "$flows" "$2" "$round" >>"$results" <<'PY'
import json, os, sys
d = json.loads(os.environ["RR_JSON"])
flows, entry, rnd = sys.argv[1], sys.argv[2], sys.argv[3]
value = d["tps"] if flows == "15" else d["latency_us"]["p50"]
sc = lambda side: "%.3f" % d[side]["syscalls_per_tx"] if d.get(side, {}).get("valid") else ""
print("\t".join([rnd, "%s rr %s" % (flows, entry), str(value), sc("client"), sc("server")]))
PY
}

# cell_floor [TAG]: bench_floor (TAG: a second cell of the same program)
cell_floor() {
	local json
	port=$((port + 2))
	ip netns exec "$ns_b" "$floor" --server --bind "$srv" --port "$port" --cpu 1 &
	srvpid=$!
	wait_listen "$port"
	json=$(ip netns exec "$ns_a" "$floor" --client "$srv" --port "$port" --cpu 0 \
		-n 50000 --format json)
	server_done
	record "1 floor${1:-}" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["p50_us"])' <<<"$json")"
}

# ---- the rounds ----
cells=()
IFS=';' read -r -a mode_list <<<"$modes"
IFS=';' read -r -a busy_list <<<"$busy_modes"
if [[ $flows_run == *15* ]]; then
	cells+=("cell_lean|epoll" "cell_lean|uring" "cell_neper")
	[[ -z ${AA:-} ]] || cells+=("cell_lean|epoll| again")
	for m in "${mode_list[@]}"; do cells+=("cell_rr|15|$m"); done
fi
if [[ " $flows_run " == *" 1 "* ]]; then
	cells+=("cell_floor")
	[[ -z ${AA:-} ]] || cells+=("cell_floor| again")
	for m in "${busy_list[@]}"; do cells+=("cell_rr|1|$m"); done
fi
echo "== neper.sh: $rounds round(s) of ${#cells[@]} cells, ${secs} s each, client CPU 0 / server CPU 1, test bed $bed"
for ((round = 1; round <= rounds; round++)); do
	echo "-- round $round"
	n=${#cells[@]}
	for ((i = 0; i < n; i++)); do
		# a cell is FUNCTION|ARG|ARG (an rr entry may hold spaces: VAR=VALUE words)
		IFS='|' read -r -a cell <<<"${cells[$(((i + round - 1) % n))]}"
		"${cell[@]}"
	done
done
[[ -z ${KEEP:-} ]] || cp "$results" "$KEEP"

# ---- medians of per-round ratios, and the targets ----
python3 - "$results" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = {}     # cell -> round -> value
sc = {}     # cell -> list of (client, server) syscalls per transaction
for rnd, cell, value, c, s in rows:
    by.setdefault(cell, {})[int(rnd)] = float(value)
    if c:
        sc.setdefault(cell, []).append((float(c), float(s) if s else float("nan")))

def ratio(a, b):
    """median, min and max over the rounds where both ran of a's value / b's, and how many"""
    rs = [by[a][r] / by[b][r] for r in by.get(a, {}) if r in by.get(b, {}) and by[b][r]]
    if not rs:
        return None
    return statistics.median(rs), min(rs), max(rs), len(rs)

def fmt(r):
    return "%.3fx (%.3f..%.3f, %d rounds)" % r if r else "n/a"

def syscalls(cell):
    v = sc.get(cell)
    if not v:
        return ""
    return "syscalls/tx %.2f client, %.2f server" % (statistics.median(x[0] for x in v),
                                                     statistics.median(x[1] for x in v))

lean = {b: "15 lean " + b for b in ("epoll", "uring")}
if "15 neper" in by:
    print("\n15 flows: transactions/s (median over the rounds), and the median of the per-round ratios")
    for cell in [c for c in (lean["epoll"], lean["uring"], "15 lean epoll again", "15 neper") if c in by] + sorted(k for k in by if k.startswith("15 rr ")):
        print("  %-46s %9.0f  %s" % (cell[3:], statistics.median(by[cell].values()), syscalls(cell)))
    for b, cell in lean.items():
        print("  %-46s %s" % ("lean %s / neper" % b, fmt(ratio(cell, "15 neper"))))
    if "15 lean epoll again" in by:
        print("  %-46s %s" % ("lean epoll again / lean epoll (noise)", fmt(ratio("15 lean epoll again", lean["epoll"]))))
    for cell in sorted(k for k in by if k.startswith("15 rr ")):
        mode = cell[len("15 rr "):].split()[-1]
        own = lean["uring" if mode.startswith("uring:") else "epoll"]
        r = ratio(cell, own)
        print("  %-46s %s" % ("rr %s / lean %s" % (cell[len("15 rr "):], own[8:]), fmt(r)))
        print("  %-46s %s" % ("rr %s / neper" % cell[len("15 rr "):], fmt(ratio(cell, "15 neper"))))
        if cell[len("15 rr "):] in ("epoll:block", "uring:block") and r:
            print("    target >= 0.97x lean %s: %s" % (own[8:], "met" if r[0] >= 0.97 else "missed"))
if "1 floor" in by:
    print("\n1 flow: P50 round trip in us (median over the rounds), and the median of the per-round ratios to the floor")
    print("  %-46s %9.2f" % ("floor (raw recv spin)", statistics.median(by["1 floor"].values())))
    if "1 floor again" in by:
        print("  %-46s %9.2f  %s" % ("floor again (noise)", statistics.median(by["1 floor again"].values()),
                                     fmt(ratio("1 floor again", "1 floor"))))
    best = {}
    for cell in sorted(k for k in by if k.startswith("1 rr ")):
        r = ratio(cell, "1 floor")
        mode = cell[len("1 rr "):]
        print("  %-46s %9.2f  %s  %s" % ("rr " + mode, statistics.median(by[cell].values()), fmt(r), syscalls(cell)))
        b = "uring" if mode.split()[-1].startswith("uring:") else "epoll"
        if r and (b not in best or r[0] < best[b][1][0]):
            best[b] = (mode, r)
    for b, (mode, r) in sorted(best.items()):
        print("  best %s busy-poll mode %s: %.3fx the floor's P50 (target <= 1.00x: %s)" %
              (b, mode, r[0], "met" if r[0] <= 1.0 else "missed"))
EOF
