#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# nvme-rate.sh - latency against offered load (issue 26): a block device whose reads
# the cgroup block I/O throttle caps at --limit IOPS (a loop device over a file in
# --backing, bench/blkdev.sh; tmpfs by default, so that the throttle and not the disk
# under it is the limit: this VM's disk does about 24K random reads/s, the loop device
# over tmpfs about 85K), offered 10/50/90/100/110% of that limit (--loads) with
# --rate_iops by
#   fio      locally, on the device (io_uring, direct, one job), pinned to CPU 1;
#   perf     through `busypoll target` serving the device over the veth test bed
#            (netns-pair.sh: the target in namespace b on CPU 1, perf in namespace a
#            on CPU 0), with the target's poll mode off and on (--poll-period-us).
# 4 KiB random reads, iodepth 32, one job each, --seconds measured after --ramp.
# The three are alternated within each round (the order rotates) for --rounds rounds
# in one run, so the machine's swings hit them alike; each figure is the median over
# the rounds. Printed per side and load: the achieved IOPS, P50/P99/P99.99 in us (perf:
# from each I/O's intended issue time, its open loop's lat; fio: its lat, from its own
# issue, which does not wait for a late I/O's queueing), perf's late and never-issued
# I/Os; the knee of each curve (the first load whose P99 is over 3x the P99 at the
# lowest load, per round, the median over rounds); and poll on against poll off as the
# median of per-round ratios of P99 at each load.
#
# The lock: the measuring holds `flock /tmp/bp-heavy.lock` (the set-up does not), so
# it never runs beside a build or another benchmark.
#
# usage: nvme-rate.sh [--seconds N] [--ramp N] [--rounds N] [--limit IOPS] [--loads LIST]
#                     [--poll-us N] [--size SIZE] [--backing DIR] [--mode MODE] [--keep DIR]
#   --seconds N     measured seconds per point (default 5); --ramp N before it (default 1)
#   --rounds N      rounds, each side once per round (default 5)
#   --limit IOPS    the throttle on the device's reads (default 40000)
#   --loads LIST    offered loads in percent of the limit (default 10,50,90,100,110)
#   --poll-us N     the target's poll period when on (default 50)
#   --size SIZE     the loop device's file (default 1G), written once
#   --backing DIR   where that file is (default /dev/shm)
#   --mode MODE     engine wait mode of both ends (default epoll:block)
#   --keep DIR      keep the raw outputs (perf and fio json) in DIR
#   BUILD=dir       where the busypoll program is (default ../build)
#
# fio is installed with apt-get when missing. Exit: 0 done, 1 a run failed, 2 bad usage,
# 77 this machine cannot run it.
set -euo pipefail

prog=nvme-rate
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
bp=$build/busypoll
state_dir=/tmp/bp-nvme-rate
nqn=nqn.2024-01.io.busypoll:rate

secs=5 ramp=1 rounds=5 limit=40000 loads=10,50,90,100,110 poll_us=50 size=1G backing=/dev/shm mode=epoll:block
keep=""

usage_error() { echo "$prog: $*; see $0 --help" >&2; exit 2; }
skip() { echo "$prog: cannot run here: $*" >&2; exit 77; }
die() { echo "$prog: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
	case $1 in
	-h | --help) sed -n '4,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--seconds) secs=${2:-}; shift 2 ;;
	--ramp) ramp=${2:-}; shift 2 ;;
	--rounds) rounds=${2:-}; shift 2 ;;
	--limit) limit=${2:-}; shift 2 ;;
	--loads) loads=${2:-}; shift 2 ;;
	--poll-us) poll_us=${2:-}; shift 2 ;;
	--size) size=${2:-}; shift 2 ;;
	--backing) backing=${2:-}; shift 2 ;;
	--mode) mode=${2:-}; shift 2 ;;
	--keep) keep=${2:-}; shift 2 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
for v in secs ramp rounds limit poll_us; do
	[[ ${!v} =~ ^[0-9]+$ ]] || usage_error "--${v//_/-} ${!v}: not a whole number"
done
((secs >= 1 && rounds >= 1 && limit >= 10 && poll_us >= 1)) ||
	usage_error "--seconds, --rounds, --poll-us at least 1, --limit at least 10"
[[ $loads =~ ^[0-9]+(,[0-9]+)*$ ]] || usage_error "--loads $loads: percentages like 10,50,100"
[[ $size =~ ^[0-9]+[KMG]?$ ]] || usage_error "--size $size: like 256M or 1G"
[[ -d $backing && -w $backing ]] || usage_error "--backing $backing: not a writable directory"

[[ $(id -u) -eq 0 ]] || skip "needs root (a loop device, a cgroup, network namespaces)"
[[ -x $bp ]] || skip "build first (no $bp)"
if ! command -v fio >/dev/null; then
	echo "$prog: installing fio" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q fio >/dev/null || skip "fio is missing and apt-get could not install it"
fi
for tool in python3 losetup taskset flock; do
	command -v "$tool" >/dev/null || skip "$tool not found (apt-get install python3 mount util-linux)"
done
"$bp" modes --check "$mode" >/dev/null 2>&1 || usage_error "--mode $mode: not usable here"

# shellcheck source=blkdev.sh
. "$here/blkdev.sh"
bd_device "" "$size" "$backing"
bd_throttle "$limit"
echo "$prog: device $what, $capped" >&2
echo "$prog: $(nproc) CPUs, kernel $(uname -r), mode $mode, loads $loads% of $limit, ${secs} s per point" \
	"after ${ramp} s ramp, $rounds rounds" >&2

pct_list=$(echo "$loads" | sed 's/\([0-9]*\)/\1%/g')

# fio_point ROUND LOAD: fio --rate_iops on the device itself, in the cgroup, on the target's CPU
fio_point() {
	local rate=$((limit * $2 / 100))
	run_child bash -c "$(into_cg) && exec taskset -c 1 fio --name=rate --filename=$dev --ioengine=io_uring \
		--direct=1 --rw=randread --bs=4k --iodepth=32 --numjobs=1 --time_based --runtime=$secs \
		--ramp_time=$ramp --norandommap --randrepeat=0 --rate_iops=$rate --lat_percentiles=1 \
		--percentile_list=50:99:99.99 --output-format=json --output=$out/fio-$1-$2.json" ||
		die "fio failed (round $1, load $2%): $(tail -3 "$out/fio-$1-$2.json" 2>/dev/null)"
}

# perf_round ROUND POLL: the target over the bed, perf sweeping the loads at --rate_iops
perf_round() {
	local tgt server client pidf=$out/target-$1-$2.pid
	tgt="$bp target --listen \$BP_SERVER_ADDR:4420 --nqn $nqn --ns file:$dev --mode $mode"
	tgt+=" --poll-period-us $2 --log-level warn"
	server="$tgt >/dev/null 2>$out/target-$1-$2.err & echo \$! >$pidf; wait"
	client="$bp perf --target \$BP_SERVER_ADDR:4420 --nqn $nqn --rw randread --bs 4k --iodepth 32"
	client+=" --rate_iops $limit --sweep rate_iops=$pct_list --runtime $secs --ramp-time $ramp --mode $mode -q"
	# the client stops the target once the sweep is over
	client+=" --format json >$out/perf-$1-$2.json; rc=\$?; kill -INT \$(cat $pidf); exit \$rc"
	run_child bash -c "$(into_cg) && exec \"\$0\" \"\$@\"" "$here/netns-pair.sh" "$server" "$client" \
		2>"$out/pair-$1-$2.err" ||
		die "perf round $1 with poll period $2 failed: $(tail -5 "$out/pair-$1-$2.err")"
}

# ---- the measuring, under the lock ----
exec 9>/tmp/bp-heavy.lock
echo "$prog: waiting for /tmp/bp-heavy.lock" >&2
flock 9
sides=(fio 0 "$poll_us")
for ((r = 1; r <= rounds; r++)); do
	for ((k = 0; k < 3; k++)); do
		s=${sides[$(((k + r - 1) % 3))]}
		echo "$prog: round $r/$rounds: $([[ $s == fio ]] && echo fio || echo "perf, target poll period $s us")" >&2
		if [[ $s == fio ]]; then
			for l in ${loads//,/ }; do fio_point "$r" "$l"; done
		else
			perf_round "$r" "$s"
		fi
	done
done
flock -u 9

python3 - "$out" "$rounds" "$limit" "$loads" "$poll_us" "$what" "$capped" "$secs" "$ramp" "$mode" <<'EOF'
import json, statistics, sys
out, rounds, limit, loads, poll, what, capped, secs, ramp, mode = sys.argv[1:]
rounds, limit, poll = int(rounds), int(limit), int(poll)
loads = [int(x) for x in loads.split(",")]
med = statistics.median
sides = ["fio", "poll off", f"poll {poll} us"]

# fig[side][round][load] = (iops, p50, p99, p9999, late%, behind)
fig = {s: {} for s in sides}
for r in range(1, rounds + 1):
    fig["fio"][r] = {}
    for l in loads:
        j = json.load(open(f"{out}/fio-{r}-{l}.json"))["jobs"][0]["read"]
        p = j["lat_ns"]["percentile"]
        fig["fio"][r][l] = (j["iops"], p["50.000000"] / 1e3, p["99.000000"] / 1e3, p["99.990000"] / 1e3, None, None)
    for s, pp in (("poll off", 0), (f"poll {poll} us", poll)):
        rows = json.load(open(f"{out}/perf-{r}-{pp}.json"))["sweep"]
        fig[s][r] = {}
        for l, row in zip(loads, rows):
            lat, ol = row["read"]["latency_us"], row["open_loop"]
            n = row["read"]["ios"]
            fig[s][r][l] = (row["iops"], lat["p50"], lat["p99"], lat["p99_99"], 100 * ol["late"] / n if n else 0, ol["behind"])

def knee(side, r):
    base = fig[side][r][loads[0]][2]
    for l in loads:
        if fig[side][r][l][2] > 3 * base:
            return l
    return None

print(f"busypoll perf --rate_iops against fio --rate_iops: {what}, {capped}")
print(f"4 KiB randread, iodepth 32, one job, {secs} s after {ramp} s ramp per point, mode {mode};"
      f" target over veth (CPU 1), perf on CPU 0, fio on CPU 1; median of {rounds} alternated rounds")
print("perf's latency is from each I/O's intended issue time; fio's lat is from its own issue")
print()
hdr = f"{'side':>14} {'load':>5} {'offered':>8} {'IOPS':>8} {'P50 us':>9} {'P99 us':>10} {'P99.99 us':>10} {'late %':>7} {'behind':>8}"
print(hdr)
print("-" * len(hdr))
for s in sides:
    for l in loads:
        pts = [fig[s][r][l] for r in range(1, rounds + 1)]
        m = [med([p[i] for p in pts]) for i in range(4)]
        late = "-" if pts[0][4] is None else f"{med([p[4] for p in pts]):.1f}"
        behind = "-" if pts[0][5] is None else f"{med([p[5] for p in pts]):.0f}"
        print(f"{s:>14} {l:>4}% {limit * l // 100:>8} {m[0]:>8.0f} {m[1]:>9.1f} {m[2]:>10.1f} {m[3]:>10.1f} {late:>7} {behind:>8}")
    print()
print("the knee (first load with P99 over 3x the P99 at the lowest load), per round -> median:")
for s in sides:
    ks = [knee(s, r) for r in range(1, rounds + 1)]
    known = [k for k in ks if k is not None]
    print(f"  {s:>14}: {ks} -> {str(med(known)) + '%' if len(known) == len(ks) else 'not reached in every round'}")
print()
print(f"poll {poll} us against poll off, P99 (median of per-round ratios; below 1: poll mode lower):")
for l in loads:
    ratios = [fig[sides[2]][r][l][2] / fig[sides[1]][r][l][2] for r in range(1, rounds + 1) if fig[sides[1]][r][l][2]]
    print(f"  {l:>4}%: {med(ratios):.2f}  (rounds {', '.join(f'{x:.2f}' for x in ratios)})")
EOF
