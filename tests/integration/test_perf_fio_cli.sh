#!/bin/bash
# SPDX-License-Identifier: MIT
# fio's command line pasted into `busypoll perf`, table-driven: options with
# fio's meaning are accepted, fio options that do not apply are accepted and
# said ONCE on stderr (implied or ignored, with why), anything else exits 2
# naming the option. No target is needed for the table: an accepted command
# line gets as far as connecting to a closed port (exit 1, "cannot connect").
# Then one short run of --rw=rw (fio's sequential mixed pattern) against a
# RAM target proves it does I/O both ways, one of --rw=randtrim that its
# trims land in fio's trim block, and one of --rate_iops (the open loop) that
# fio's lat_ns, clat_ns and slat_ns mean what fio says (lat = slat + clat), and
# --sweep rate_iops runs one point per offered load (values and percentages).
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3 timeout

NQN=nqn.2024-01.io.busypoll:perffio
BASE=(--target 127.0.0.1:1 --nqn "$NQN" --runtime 1 --interval 0)

# row KIND TEXT ARGS...: KIND accepted (exit 1 at connect, no note), noted
# (exit 1 at connect, TEXT in the one note line) or refused (exit 2, TEXT named)
row() {
	local kind=$1 text=$2 got notes
	shift 2
	timeout 60 "$BP" perf "${BASE[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	notes=$(grep -c 'do not apply here' "$tmp/err")
	case $kind in
	accepted | noted)
		[ "$got" -eq 1 ] && grep -q 'cannot connect' "$tmp/err" ||
			fail "perf $*: a fio option accepted here must get as far as connecting (exit 1), got $got: $(cat "$tmp/err")"
		if [ "$kind" = noted ]; then
			[ "$notes" -eq 1 ] || fail "perf $*: the options that do not apply must be said exactly once, got $notes lines"
			grep 'do not apply here' "$tmp/err" | grep -q -- "$text" ||
				fail "perf $*: the note must name '$text' with why: $(cat "$tmp/err")"
		else
			[ "$notes" -eq 0 ] || fail "perf $*: an option that applies must not be noted as ignored: $(cat "$tmp/err")"
		fi
		;;
	refused)
		[ "$got" -eq 2 ] || fail "perf $*: refused input must exit 2, got $got: $(cat "$tmp/err")"
		[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "perf $*: a refusal is one line, got: $(cat "$tmp/err")"
		grep -q -- "$text" "$tmp/err" || fail "perf $*: the refusal must name '$text': $(cat "$tmp/err")"
		;;
	esac
}

# accepted with fio's meaning
row accepted "" --rw=rw --rwmixread=70
row accepted "" --readwrite=readwrite --rwmixwrite=30
row accepted "" --rw=randrw --rwmixread=90 --bs=4k --iodepth=8 --numjobs=1
row accepted "" --output-format=json
row accepted "" --output-format=normal
row accepted "" --ramp_time=0 --iodepth_batch_complete_min=0 --blocksize=8k
# accepted, said once to be implied or ignored (and once even when repeated)
row noted "--ioengine (implied" --ioengine=libaio
row noted "--direct (implied" --direct=1
row noted "--group_reporting (implied" --group_reporting
row noted "--norandommap (implied" --norandommap
row noted "--thread (implied" --thread
row noted "--time_based (implied" --time_based
row noted "--name (ignored" --name=job1 --name=job2
[ "$(grep -o -- '--name (' "$tmp/err" | wc -l)" -eq 1 ] ||
	fail "--name given twice must be said once, not per time given: $(cat "$tmp/err")"
row noted "--filename (ignored" --filename=/dev/nvme0n1
row noted "--randrepeat (ignored" --randrepeat=0
row accepted "" --cpus_allowed=0 --numjobs=2
row accepted "" --cpus_allowed=0 --cpus_allowed_policy=split
row noted "--ioengine (implied.*--name (ignored.*--group_reporting" --ioengine=io_uring --name=x \
	--group_reporting --direct=1 --name=y
row accepted "" --rate_iops=1000 --rw=randread
row accepted "" --rate_iops=1000,500 --rw=randrw --rate_process=poisson
row accepted "" --rate_iops=,300 --rw=randwrite
row accepted "" --rate_iops=800, --rw=read --rate_process=linear
row accepted "" --rate_iops=1,1,250 --rw=randtrim
row accepted "" --rate_iops=1000 --sweep=rate_iops=10%,50%,100% --sweep=numjobs=1..2
row noted "--rwmix (no effect with --rate_iops" --rw=randrw --rwmixread=70 --rate_iops=100,100
row accepted "" --rw=trim --bs=64k
row accepted "" --readwrite=randtrim
# refused, naming the option
row refused "--verify with --rw trim" --rw=trim --verify
row refused "--rwmixread applies to --rw randrw and rw only (this is --rw randtrim)" --rw=randtrim --rwmixread=50
row refused "--rate_iops ,500: no rate for the read that --rw randread issues" --rw=randread --rate_iops=,500
row refused "--rate_iops 500,: --rw randrw issues read and write: give a rate for each" --rw=randrw --rate_iops=500,
row refused "--rate_iops 1,2,3,4: at most three rates" --rate_iops=1,2,3,4
row refused "--rate_process poisson needs --rate_iops" --rate_process=poisson
row refused "a percentage of --rate_iops, which is not given" --sweep=rate_iops=50%
row refused "--cpus and --cpus_allowed are exclusive" --cpus=0 --cpus_allowed=0
row refused "--rw bogus" --rw=bogus
row refused "--direct 0" --direct=0
row refused "--output-format terse" --output-format=terse
row refused "--rwmixread applies to --rw randrw and rw only" --rw=randread --rwmixread=50
row refused "unknown option '--bogus_fio_opt'" --bogus_fio_opt=1

# --rw=rw against a real target: reads and writes both happen
"$BP" target --listen 127.0.0.1:0 --nqn "$NQN" --log-level error --ns ram:16M >"$tmp/t.out" 2>"$tmp/t.err" &
pids+=($!)
bpt_wait_until 30 bpt_file_has "$tmp/t.err" 'listening on' ||
	die "the target never said it was listening (30 s): $(cat "$tmp/t.err")"
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$tmp/t.err")
timeout 60 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --rw=rw --rwmixread=50 --iodepth=4 \
	--runtime 0.5 --interval 0 --output-format=json >"$tmp/out" 2>"$tmp/err" ||
	die "perf --rw=rw failed: $(cat "$tmp/err")"
python3 - "$tmp/out" <<'PY' || fail "perf --rw=rw json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
s = json.dumps(d)
assert '"rw"' in s, "the json must name the pattern rw"
def find(o, k):
    if isinstance(o, dict):
        for kk, v in o.items():
            if kk == k:
                yield v
            yield from find(v, k)
    elif isinstance(o, list):
        for v in o:
            yield from find(v, k)
assert "rw" in list(find(d, "rw")), "the pattern must be reported as fio's rw"
assert 50 in list(find(d, "rwmixread")), "rw must report its rwmixread"
reads = [v.get("ios", 0) for v in find(d, "read") if isinstance(v, dict)]
writes = [v.get("ios", 0) for v in find(d, "write") if isinstance(v, dict)]
assert reads and max(reads) > 0, "rwmixread 50 must read: %r" % reads
assert writes and max(writes) > 0, "rwmixread 50 must write too: %r" % writes
PY

# --rw=randtrim: Dataset Management, in fio's trim block (read and write blocks empty)
timeout 60 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --rw=randtrim --iodepth=4 \
	--runtime 0.5 --interval 0 --output-format=json >"$tmp/out" 2>"$tmp/err" ||
	die "perf --rw=randtrim failed: $(cat "$tmp/err")"
python3 - "$tmp/out" <<'PY' || fail "perf --rw=randtrim json: $(cat "$tmp/out")"
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
assert job["job options"]["rw"] == "randtrim", job["job options"]
t, r, w = job["trim"], job["read"], job["write"]
assert t["total_ios"] > 0 and t["iops"] > 0, "fio's trim block must count the trims: %r" % t
assert t["io_bytes"] == t["total_ios"] * 4096, "a trim is bs bytes, as fio counts it: %r" % t
assert t["clat_ns"]["N"] == t["total_ios"] and t["lat_ns"]["N"] == t["total_ios"], t
assert r["total_ios"] == 0 and w["total_ios"] == 0, "a trim run reads and writes nothing"
assert job["busypoll"]["trim"]["ios"] == t["total_ios"], "busypoll's own trim block agrees"
PY

# --rate_iops: fio's lat_ns from each I/O's intended issue time, clat_ns from its issue, slat_ns between
timeout 60 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --rw=randread --iodepth=4 --rate_iops=2000 \
	--runtime 0.5 --interval 0 --output-format=json >"$tmp/out" 2>"$tmp/err" ||
	die "perf --rate_iops=2000 failed: $(cat "$tmp/err")"
python3 - "$tmp/out" <<'PY' || fail "perf --rate_iops json: $(head -c 3000 "$tmp/out")"
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
assert job["job options"]["rate_iops"] == "2000", job["job options"]
assert job["job options"]["rate_process"] == "linear", job["job options"]
r = job["read"]
n = r["total_ios"]
assert n > 0, r
for k in ("slat_ns", "clat_ns", "lat_ns"):
    assert r[k] is not None and r[k]["N"] == n, "%s must have one sample per I/O: %r" % (k, r[k])
# each I/O's lat is its slat + clat: the means add up (to rounding)
assert abs(r["lat_ns"]["mean"] - r["clat_ns"]["mean"] - r["slat_ns"]["mean"]) <= 1, (r["lat_ns"], r["clat_ns"], r["slat_ns"])
assert r["lat_ns"]["max"] >= r["clat_ns"]["max"] and r["lat_ns"]["min"] >= r["clat_ns"]["min"], "lat includes clat"
ol = job["busypoll"]["open_loop"]
assert ol["rate_iops_per_job"]["read"] == 2000 and ol["offered_iops"] == 2000, ol
assert ol["achieved_iops"] > 0 and 0 <= ol["late"] <= n and 0 <= ol["queued"] <= n and ol["behind"] >= 0, ol
b = job["busypoll"]["read"]
assert b["latency_from_issue_us"] is not None and b["issue_lag_us"] is not None and b["late"] is not None, b
PY

# --sweep rate_iops: one run per offered load, values and percentages of --rate_iops, per job count
timeout 120 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --rw=randread --iodepth=4 --rate_iops=2000 \
	--sweep rate_iops=500,50% --sweep numjobs=1..2 --runtime 0.3 --interval 0 --format json >"$tmp/out" 2>"$tmp/err" ||
	die "perf --sweep rate_iops failed: $(cat "$tmp/err")"
python3 - "$tmp/out" <<'PY' || fail "perf --sweep rate_iops json: $(head -c 3000 "$tmp/out")"
import json, sys
rows = json.load(open(sys.argv[1]))["sweep"]
got = [(r["settings"]["numjobs"], r["open_loop"]["rate_iops_per_job"]["read"], r["open_loop"]["offered_iops"]) for r in rows]
assert got == [(1, 500, 500), (1, 1000, 1000), (2, 500, 1000), (2, 1000, 2000)], got
PY
timeout 120 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --rw=randread --iodepth=4 \
	--sweep rate_iops=400,800 --runtime 0.3 --interval 0 >"$tmp/out" 2>"$tmp/err" ||
	die "perf --sweep rate_iops (table) failed: $(cat "$tmp/err")"
grep -q 'threads  offered (K)   IOPS (K)   P50 (us)   P99 (us)  P99.99 (us)' "$tmp/out" ||
	fail "the rate sweep's table must show the offered load and the latencies: $(cat "$tmp/out")"
[ "$(awk '$1 == 1 && ($2 == "0.4" || $2 == "0.8") { n++ } END { print n + 0 }' "$tmp/out")" -eq 2 ] ||
	fail "want one row per offered load (0.4K and 0.8K): $(cat "$tmp/out")"
bpt_end
