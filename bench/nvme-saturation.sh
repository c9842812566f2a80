#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# nvme-saturation.sh - the NVMe/TCP saturation experiment (issue 15): one block
# device exported by `busypoll target`, `busypoll perf --sweep numjobs=A..B` at
# 4 KiB random reads, iodepth 32, batch 8, reap 1..32, with the target's poll mode
# off and on (and SO_PRIORITY), until the device saturates; beside it the device's
# own limit measured locally with fio (io_uring, direct, the same block size,
# depth and batching, pinned to the target's CPU): the physical limit the target
# can reach. Prints the reference table (threads, IOPS, average, P99.99) for each
# side, CPU per I/O of each side, the target's counters, and the issue's ratios.
#
# The device: a loop device (direct I/O) over a file in /tmp written full once
# (so reads reach the disk under it), or the device given with --device. Its
# reads can be capped with the cgroup block I/O throttle (--throttle IOPS:
# blkio.throttle.read_iops_device on cgroup v1, io.max on cgroup v2), which gives
# it a saturation point on any machine; the target and fio run in that cgroup.
# The network: the veth test bed (netns-pair.sh: the target in namespace b on CPU
# 1, perf in namespace a on CPU 0).
#
# usage: nvme-saturation.sh [--seconds N] [--ramp N] [--jobs A..B] [--throttle IOPS]
#                           [--device DEV | --size SIZE] [--poll-us N] [--priority N]
#                           [--mode MODE] [--io-depth N] [--keep DIR]
#   --seconds N      measured seconds per run (default 10); --ramp N before it (default 2)
#   --jobs A..B      perf numjobs sweep and fio's (default 1..8)
#   --throttle IOPS  cap the device's reads (default 0: not capped)
#   --device DEV     a block device to use as it is (read only: nothing is written to it)
#   --size SIZE      the loop device's file (default 1G), written once per run
#   --poll-us N      the target's poll period when on (default 50)
#   --priority N     SO_PRIORITY on the target's sockets (default 6)
#   --mode MODE      engine wait mode of both ends (default epoll:block)
#   --io-depth N     the target's storage depth per namespace per thread (default 256)
#   --keep DIR       keep the raw outputs (perf json, fio json, target counters) in DIR
#   BUILD=dir        where the busypoll program is (default ../build)
#
# Everything it makes is recorded in /tmp/bp-nvme-sat/PID.state as it is made and
# removed on every exit path (bench/blkdev.sh): the loop device, its file, the cgroup.
# If the runner is SIGKILLed, a watcher started with it cleans up within seconds, and
# the next start removes whatever a dead run left (its PID gone). Nothing else is touched.
# Exit: 0 done, 1 a run failed, 2 bad usage, 77 this machine cannot run it.
set -euo pipefail

prog=nvme-saturation
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
bp=$build/busypoll
state_dir=/tmp/bp-nvme-sat
nqn=nqn.2024-01.io.busypoll:saturation

secs=10 ramp=2 jobs_lo=1 jobs_hi=8 throttle=0 device="" size=1G poll_us=50 priority=6 mode=epoll:block
io_depth=256 keep=""

usage_error() { echo "$prog: $*; see $0 --help" >&2; exit 2; }
skip() { echo "$prog: cannot run here: $*" >&2; exit 77; }
die() { echo "$prog: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
	case $1 in
	-h | --help) sed -n '4,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--seconds) secs=${2:-}; shift 2 ;;
	--ramp) ramp=${2:-}; shift 2 ;;
	--jobs)
		[[ ${2:-} =~ ^([0-9]+)\.\.([0-9]+)$ ]] || usage_error "--jobs ${2:-}: want A..B (like 1..8)"
		jobs_lo=${BASH_REMATCH[1]} jobs_hi=${BASH_REMATCH[2]}
		shift 2 ;;
	--throttle) throttle=${2:-}; shift 2 ;;
	--device) device=${2:-}; shift 2 ;;
	--size) size=${2:-}; shift 2 ;;
	--poll-us) poll_us=${2:-}; shift 2 ;;
	--priority | --so-priority) priority=${2:-}; shift 2 ;;
	--mode) mode=${2:-}; shift 2 ;;
	--io-depth) io_depth=${2:-}; shift 2 ;;
	--keep) keep=${2:-}; shift 2 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
for v in secs ramp throttle poll_us priority io_depth; do
	[[ ${!v} =~ ^[0-9]+$ ]] || usage_error "--${v//_/-} ${!v}: not a whole number"
done
((secs >= 1)) || usage_error "--seconds $secs: at least 1"
((jobs_lo >= 1 && jobs_lo <= jobs_hi && jobs_hi <= 64)) || usage_error "--jobs $jobs_lo..$jobs_hi: 1 <= A <= B <= 64"
((poll_us >= 1)) || usage_error "--poll-us $poll_us: at least 1 (poll mode off is always measured)"
((priority <= 6)) || usage_error "--priority $priority: 0..6"
[[ $size =~ ^[0-9]+[KMG]?$ ]] || usage_error "--size $size: like 256M or 1G"
[[ -z $device || -b $device ]] || usage_error "--device $device: not a block device"

[[ $(id -u) -eq 0 ]] || skip "needs root (a loop device, a cgroup, network namespaces)"
[[ -x $bp ]] || skip "build first (no $bp)"
for tool in fio python3 losetup taskset; do
	command -v "$tool" >/dev/null || skip "$tool not found (apt-get install fio python3 mount util-linux)"
done
"$bp" modes --check "$mode" >/dev/null 2>&1 || usage_error "--mode $mode: not usable here ($("$bp" modes --check "$mode" 2>&1 | tail -1))"

# ---- the device, its throttle, what a run makes and its removal (bench/blkdev.sh) ----
# shellcheck source=blkdev.sh
. "$here/blkdev.sh"
bd_device "$device" "$size"
bd_throttle "$throttle"

echo "$prog: device $what, $capped" >&2
echo "$prog: $(nproc) CPUs, kernel $(uname -r), mode $mode, ${secs} s per point after ${ramp} s ramp," \
	"jobs $jobs_lo..$jobs_hi; a shared machine moves the figures between runs" >&2

# ---- fio: the device's own limit, on the target's CPU ----
for ((j = jobs_lo; j <= jobs_hi; j++)); do
	run_child bash -c "$(into_cg) && exec taskset -c 1 bash -c 'fio --name=sat --filename=$dev --ioengine=io_uring \
		--direct=1 --rw=randread --bs=4k --iodepth=32 --iodepth_batch_submit=8 \
		--iodepth_batch_complete_min=1 --iodepth_batch_complete_max=32 --numjobs=$j --group_reporting \
		--time_based --runtime=$((secs + ramp)) --norandommap --randrepeat=0 --percentile_list=99.99 \
		--output-format=json --output=$out/fio-$j.json && times > $out/fio-$j.times'" ||
		die "fio failed ($j jobs): $(tail -3 "$out/fio-$j.json" 2>/dev/null)"
done

# ---- the target, poll mode off and on, perf sweeping numjobs ----
for p in 0 "$poll_us"; do
	tgt="$bp target --listen \$BP_SERVER_ADDR:4420 --nqn $nqn --ns file:$dev --mode $mode --poll-period-us $p"
	tgt+=" --priority $priority --io-depth $io_depth --log-level warn"
	# The target's CPU: the shell that waited for it reads its children's times when it is gone.
	server="{ $tgt >$out/target-$p.txt 2>$out/target-$p.err & tp=\$!; echo \$tp >$out/target-$p.pid;"
	server+=" trap 'kill -TERM \$tp 2>/dev/null' TERM INT; wait \$tp; wait \$tp; times >$out/target-$p.times; }"
	# The client stops the target once the sweep is over (its counters go to its stdout as it exits).
	client="$bp perf --target \$BP_SERVER_ADDR:4420 --nqn $nqn --rw randread --bs 4k --iodepth 32"
	client+=" --iodepth-batch 8 --iodepth-batch-complete-min 1 --iodepth-batch-complete-max 32"
	client+=" --sweep numjobs=$jobs_lo..$jobs_hi --runtime $secs --ramp-time $ramp --mode $mode -q --format json"
	client+=" >$out/perf-$p.json; rc=\$?; kill -INT \$(cat $out/target-$p.pid); exit \$rc"
	# Into the cgroup before the bed: `ip netns exec` hides /sys/fs/cgroup, and children inherit it.
	run_child bash -c "$(into_cg) && exec \"\$0\" \"\$@\"" "$here/netns-pair.sh" "$server" "$client" \
		2>"$out/pair-$p.err" ||
		die "the run with poll period $p failed: $(tail -5 "$out/pair-$p.err"; tail -3 "$out/target-$p.err" 2>/dev/null)"
done

python3 - "$out" "$poll_us" "$throttle" "$what" "$capped" "$priority" "$jobs_lo" "$jobs_hi" <<'EOF'
import json, sys
out, poll, throttle, what, capped, prio, lo, hi = sys.argv[1:]
poll, throttle, lo, hi = int(poll), int(throttle), int(lo), int(hi)

def times_cpu_s(path):
    # bash `times`: the shell's user/sys, then its children's ("0m1.234s 0m0.567s")
    def s(t):
        m, rest = t.rstrip("s").split("m")
        return int(m) * 60 + float(rest)
    lines = open(path).read().split("\n")
    u, k = lines[1].split()
    return s(u) + s(k)

fio = {}
for j in range(lo, hi + 1):
    r = json.load(open(f"{out}/fio-{j}.json"))["jobs"][0]["read"]
    ios = r["total_ios"]
    fio[j] = {"iops": r["iops"], "avg": r["lat_ns"]["mean"] / 1e3,
              "p9999": r["clat_ns"]["percentile"].get("99.990000", 0) / 1e3,
              "cpu": times_cpu_s(f"{out}/fio-{j}.times") * 1e6 / ios if ios else 0}

perf, tcounters = {}, {}
for p in (0, poll):
    rows = json.load(open(f"{out}/perf-{p}.json"))["sweep"]
    perf[p] = {r["settings"]["numjobs"]: r for r in rows}
    # the target's counters at exit: the storage lines and the queue table's total
    st, tot, hdr = [], None, None
    for line in open(f"{out}/target-{p}.txt"):
        f = line.split()
        if not f:
            continue
        if f[0] == "storage" and f[1] != "thr":
            st.append(f)
        elif f[0] == "queue":
            hdr = f
        elif f[0] == "total" and hdr:
            tot = dict(zip(hdr[6:], (int(x) for x in f[1:])))
    ios = tot["reads"] + tot["writes"] if tot else 0
    tcounters[p] = {"storage": st, "total": tot, "cpu": times_cpu_s(f"{out}/target-{p}.times") * 1e6 / ios if ios else 0}

name = {0: "poll off", poll: f"poll {poll} us"}
print(f"busypoll target over {what}, {capped}")
print(f"busypoll perf: 4 KiB randread, iodepth 32, batch 8, reap 1..32, over veth; target SO_PRIORITY {prio}")
print(f"fio (io_uring, direct, the same depth and batching) on the target's CPU: the device's own limit")
print()
h = f"{'threads':>7} |"
for p in (0, poll):
    h += f" {name[p] + ': IOPS (K)':>20} {'avg us':>8} {'P99.99 us':>10} |"
h += f" {'fio: IOPS (K)':>14} {'avg us':>8} {'P99.99 us':>10}"
print(h)
print("-" * len(h))
for j in range(lo, hi + 1):
    line = f"{j:>7} |"
    for p in (0, poll):
        r = perf[p].get(j)
        lat = (r or {}).get("latency_us") or {}
        line += f" {(r['iops'] / 1e3 if r else 0):20.1f} {lat.get('mean', 0):8.1f} {lat.get('p99_99', 0):10.1f} |"
    f = fio[j]
    line += f" {f['iops'] / 1e3:14.1f} {f['avg']:8.1f} {f['p9999']:10.1f}"
    print(line)
print()
print("CPU us per I/O (initiator: perf's measured interval; target and fio: the whole process, ramp included):")
for j in range(lo, hi + 1):
    cells = []
    for p in (0, poll):
        r = perf[p].get(j)
        cells.append(f"{name[p]}: perf {r['initiator']['cpu_us_per_io']:.2f}" if r else f"{name[p]}: -")
    print(f"  {j} thread(s): " + ", ".join(cells) + f"; fio {fio[j]['cpu']:.2f}")
for p in (0, poll):
    c = tcounters[p]
    tot = c["total"] or {}
    print(f"  target, {name[p]}: {c['cpu']:.2f} us per I/O over its life")
print()
print("the target's counters at exit:")
for p in (0, poll):
    c = tcounters[p]
    tot = c["total"] or {}
    ios = tot.get("reads", 0) + tot.get("writes", 0)
    print(f"  {name[p]}: {tot.get('commands', 0)} commands, {tot.get('errors', 0)} errors, "
          f"{tot.get('poll_passes', 0) / ios if ios else 0:.3f} work passes per I/O, {tot.get('idle_exits', 0)} idle exits")
    for s in c["storage"]:
        # storage thr nsid depth inflight max_inflight waiting submitted waited completed errors
        print(f"    storage queue (thread {s[1]}, nsid {s[2]}): depth {s[3]}, at most {s[5]} in flight, "
              f"{s[8]} of {s[7]} waited for a slot, {s[10]} errors")
print()

def plateau(rows):
    best = max((r["iops"] for r in rows.values()), default=0)
    for j in sorted(rows):
        if rows[j]["iops"] >= 0.95 * best:
            return j, rows[j]
    return None, None

print("the issue's figures:")
if throttle:
    r = perf[0].get(1) or perf[poll].get(1)
    if r and lo == 1:
        b = max(perf[0].get(1, {"iops": 0})["iops"], perf[poll].get(1, {"iops": 0})["iops"])
        print(f"  one perf job at QD32 against the {throttle} reads/s cap: {b:.0f} IOPS = {b / throttle:.2f}x of the limit "
              f"(want >= 0.9: {'met' if b >= 0.9 * throttle else 'NOT met'}); fio locally: {fio[1]['iops']:.0f}")
else:
    for j in range(lo, hi + 1):
        f = fio[j]["iops"]
        cells = [f"{name[p]} {perf[p][j]['iops'] / f if f and j in perf[p] else 0:.2f}x" for p in (0, poll)]
        print(f"  {j} thread(s): target IOPS / fio's local IOPS: " + ", ".join(cells))
po, ro = plateau(perf[0])
pp, rp = plateau(perf[poll])
if ro and rp:
    # On a device-limited plateau the average is depth / IOPS: within 2% is the same average.
    ao, ap = ro["latency_us"]["mean"], rp["latency_us"]["mean"]
    ok = pp <= po and ap <= ao * 1.02
    print(f"  the plateau (95% of the best): poll off at {po} thread(s) ({ro['iops'] / 1e3:.1f}K, avg "
          f"{ao:.1f} us), {name[poll]} at {pp} ({rp['iops'] / 1e3:.1f}K, avg {ap:.1f} us, {100 * (ap / ao - 1):+.1f}%): "
          f"poll mode {'reaches it with no more threads at no higher average (within 2%)' if ok else 'does NOT reach it with no more threads at no higher average (2% allowed)'}")
EOF
