#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# nvme.sh - issue 7's benchmark over the veth test bed (netns-pair.sh: the server
# in namespace b on CPU 1, the client in namespace a on CPU 0): `busypoll perf`
# 4 KiB random reads, iodepth 32, batch 8, reap 1..32, numjobs 1 and 2, against
# `busypoll target` with poll mode off (--poll-period-us 0) and on, in the
# engine's block and napi modes (the same mode on both sides); beside it
# `busypoll rr` with 64-byte requests and 4 KiB responses at the same
# concurrency (-F 32 per job). Figures for reading, never pass/fail; the two
# targets the issue sets are printed as ratios:
#   perf IOPS / rr transactions/s >= 0.8, and poll on ahead of poll off in IOPS or P99.99.
#
# usage: nvme.sh [SECONDS_PER_RUN] [POLL_PERIOD_US]     (defaults 5 and 50)
#   BUILD=dir   where the busypoll program is (default ../build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-5}
poll=${2:-50}
ramp=1
build=${BUILD:-$here/../build}
bp=$build/busypoll
[[ -x $bp ]] || { echo "nvme.sh: build first (no $bp)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "nvme.sh: needs python3 to tabulate" >&2; exit 2; }
modes=("epoll:block" "epoll:napi,usecs=64,budget=8")
nqn=nqn.2024-01.io.busypoll:bench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The target exits by itself (SIGINT) once the client's two runs are surely over.
tlife=$((2 * (secs + ramp) + 8))

echo "nvme.sh: ${secs} s per run after ${ramp} s ramp, poll period ${poll} us; server CPU 1, client CPU 0" >&2
echo "nvme.sh: $(nproc) CPUs, kernel $(uname -r); a shared machine: figures move between runs" >&2

i=0
for mode in "${modes[@]}"; do
	for period in 0 "$poll"; do
		i=$((i + 1))
		"$here/netns-pair.sh" \
			"timeout --preserve-status -s INT $tlife $bp target --listen \"\$BP_SERVER_ADDR:4420\" --nqn $nqn --ns ram:256M --mode $mode --poll-period-us $period --log-level error >/dev/null" \
			"$bp perf --target \"\$BP_SERVER_ADDR:4420\" --nqn $nqn --rw randread --bs 4k --iodepth 32 --iodepth-batch 8 --iodepth-batch-complete-min 1 --iodepth-batch-complete-max 32 --sweep numjobs=1..2 --runtime $secs --ramp-time $ramp --mode $mode -q --format json > $out/perf-$i.json" \
			2>"$out/perf-$i.err" || { echo "nvme.sh: perf run failed ($mode, poll $period):" >&2; cat "$out/perf-$i.err" >&2; exit 1; }
		echo "$mode|$period|$out/perf-$i.json" >>"$out/perf.list"
	done
	i=$((i + 1))
	"$here/netns-pair.sh" \
		"timeout --preserve-status -s INT $((2 * (secs + ramp) + 8)) $bp rr --server --bind \"\$BP_SERVER_ADDR\" --mode $mode -q" \
		"$bp rr --client \"\$BP_SERVER_ADDR\" -T 1 -F 32 -Q 64 -R 4096 -l $secs --warmup $ramp --mode $mode -q --format json > $out/rr-$i-1.json && $bp rr --client \"\$BP_SERVER_ADDR\" -T 2 -F 64 -Q 64 -R 4096 -l $secs --warmup $ramp --mode $mode -q --format json > $out/rr-$i-2.json" \
		2>"$out/rr-$i.err" || { echo "nvme.sh: rr run failed ($mode):" >&2; cat "$out/rr-$i.err" >&2; exit 1; }
	echo "$mode|$out/rr-$i-1.json|$out/rr-$i-2.json" >>"$out/rr.list"
done

python3 - "$out" "$poll" <<'EOF'
import json, sys
out, poll = sys.argv[1], sys.argv[2]
rr = {}
for line in open(f"{out}/rr.list"):
    mode, f1, f2 = line.strip().split("|")
    rr[mode] = {1: json.load(open(f1)), 2: json.load(open(f2))}
rows = {}
for line in open(f"{out}/perf.list"):
    mode, period, f = line.strip().split("|")
    for r in json.load(open(f))["sweep"]:
        rows[(mode, int(period), r["settings"]["numjobs"])] = r
print("busypoll perf: 4 KiB randread, iodepth 32, batch 8, reap 1..32; busypoll rr: -Q 64 -R 4096, -F 32 per job")
hdr = f"{'mode':<30} {'target poll':>11} {'jobs':>4} {'IOPS (K)':>9} {'avg us':>8} {'P99.99 us':>10} {'CPU us/IO':>9} {'rr tx/s (K)':>11} {'rr P99.99':>9} {'perf/rr':>7}"
print(hdr)
for mode in rr:
    for period in (0, int(poll)):
        for jobs in (1, 2):
            r = rows.get((mode, period, jobs))
            if not r:
                continue
            q = rr[mode][jobs]
            lat = r["latency_us"] or {}
            print(f"{mode:<30} {('off' if period == 0 else str(period) + ' us'):>11} {jobs:>4} {r['iops']/1e3:9.1f} "
                  f"{lat.get('mean', 0):8.1f} {lat.get('p99_99', 0):10.1f} {r['initiator']['cpu_us_per_io']:9.2f} "
                  f"{q['tps']/1e3:11.1f} {(q['latency_us'] or {}).get('p99_99', 0):9.1f} {r['iops']/q['tps'] if q['tps'] else 0:7.2f}")
print()
print("issue 7's targets:")
for mode in rr:
    for jobs in (1, 2):
        off, on = rows.get((mode, 0, jobs)), rows.get((mode, int(poll), jobs))
        if not off or not on:
            continue
        q = rr[mode][jobs]["tps"]
        best = max(off["iops"], on["iops"])
        ahead_iops = on["iops"] > off["iops"]
        ahead_tail = (on["latency_us"] or {}).get("p99_99", 1e18) < (off["latency_us"] or {}).get("p99_99", 0)
        print(f"  {mode}, {jobs} job(s): perf/rr {best / q if q else 0:.2f} (want >= 0.8: {'met' if q and best / q >= 0.8 else 'NOT met'}); "
              f"poll on vs off: IOPS {on['iops']/1e3:.1f}K vs {off['iops']/1e3:.1f}K, "
              f"P99.99 {(on['latency_us'] or {}).get('p99_99', 0):.1f} vs {(off['latency_us'] or {}).get('p99_99', 0):.1f} us "
              f"({'ahead' if ahead_iops or ahead_tail else 'NOT ahead'})")
EOF
