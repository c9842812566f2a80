#!/bin/bash
# SPDX-License-Identifier: MIT
# fio job files given to `busypoll perf JOBFILE`, table-driven: a file in fio's
# format ([global], one job section, ; and # comments, bare keys) is read as
# the options of its keys, the command line overriding them; a file perf cannot
# run as fio would (a second job section, an unknown key) exits 2 with one line
# naming the file's line. No target is needed for the table: an accepted file
# gets as far as connecting to a closed port (exit 1, "cannot connect"). Then
# one short run against a RAM target, with --output-format=json, checked
# against fio's own json field names.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3 timeout

NQN=nqn.2024-01.io.busypoll:perfjob
HEAD="[global]
target=127.0.0.1:1
nqn=$NQN
runtime=1
interval=0"

# row KIND TEXT BODY [ARGS...]: the file is HEAD then BODY. KIND accepted (exit 1
# at connect) or refused (exit 2, one line holding TEXT)
row() {
	local kind=$1 text=$2 body=$3 got
	shift 3
	printf '%s\n%b\n' "$HEAD" "$body" >"$tmp/job.fio"
	timeout 60 "$BP" perf "$tmp/job.fio" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	case $kind in
	accepted)
		[ "$got" -eq 1 ] && grep -q 'cannot connect' "$tmp/err" ||
			fail "job file [$body] $*: accepted must get as far as connecting (exit 1), got $got: $(cat "$tmp/err")"
		[ -z "$text" ] || grep -q -- "$text" "$tmp/err" ||
			fail "job file [$body] $*: stderr must say '$text': $(cat "$tmp/err")"
		;;
	refused)
		[ "$got" -eq 2 ] || fail "job file [$body] $*: refused must exit 2, got $got: $(cat "$tmp/err")"
		[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "job file [$body] $*: a refusal is one line, got: $(cat "$tmp/err")"
		grep -q -- "$text" "$tmp/err" || fail "job file [$body] $*: the refusal must say '$text': $(cat "$tmp/err")"
		;;
	esac
}

row accepted "" '[job1]\nrw=randread\nbs=4k\niodepth=8'
row accepted "" '; a comment\n# another\n[job1]\n  rw = randrw \nrwmixread=70\ntime_based'
row accepted "--ioengine (implied" '[job1]\nioengine=libaio\ndirect=1\ngroup_reporting'
row accepted "--stonewall (ignored" '[job1]\nstonewall'
row accepted "" '[job1]\nrw=trim' --rw=read
row refused "job.fio:8: a second job section \[job2\] after \[job1\]" '[job1]\nrw=read\n[job2]\nrw=write'
row refused "job.fio:7: unknown option '--no_such_fio_key'" '[job1]\nno_such_fio_key=1'
row refused "job.fio:7: --rw bogus" '[job1]\nrw=bogus'
row refused "job.fio:7: \[global\] after job \[job1\]" '[job1]\n[global]'
row refused "job.fio:6: include" 'include=other.fio\n[job1]'
row refused "no job section" ''
row accepted "" '[job1]\nrw=trim'
row refused "--verify with --rw trim" '[job1]\nrw=trim\nverify=crc32c'
"$BP" perf "$tmp/none.fio" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "job file $tmp/none.fio" "$tmp/err" ||
	fail "a missing job file must exit 2 naming it: $(cat "$tmp/err")"

# A run: the file's rw=write is overridden by --rw=randread, its bs stays; fio's json.
"$BP" target --listen 127.0.0.1:0 --nqn "$NQN" --log-level error --ns ram:16M >"$tmp/t.out" 2>"$tmp/t.err" &
pids+=($!)
bpt_wait_until 30 bpt_file_has "$tmp/t.err" 'listening on' ||
	die "the target never said it was listening (30 s): $(cat "$tmp/t.err")"
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$tmp/t.err")
printf '[global]\nnqn=%s\nbs=8k\nruntime=0.5\ninterval=0\n[seqwriter]\nrw=write\niodepth=2\n' "$NQN" >"$tmp/run.fio"
timeout 60 "$BP" perf "$tmp/run.fio" --target "127.0.0.1:$port" --rw=randread -q --output-format=json \
	>"$tmp/out" 2>"$tmp/err" || die "perf JOBFILE failed: $(cat "$tmp/err")"
python3 - "$tmp/out" <<'PY' || fail "perf JOBFILE --output-format=json: $(head -c 3000 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
# fio's own names (stat.c show_thread_status_json / add_ddir_status_json)
for k in ("fio version", "timestamp", "time", "jobs"):
    assert k in d, "fio's top-level %r is missing" % k
job = d["jobs"][0]
assert job["jobname"] == "seqwriter", "jobname must be the job section: %r" % job["jobname"]
for k in ("groupid", "error", "job options", "read", "write", "trim", "job_runtime", "usr_cpu", "sys_cpu", "ctx"):
    assert k in job, "fio's job field %r is missing" % k
for ddir in ("read", "write", "trim"):
    b = job[ddir]
    for k in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios", "slat_ns", "clat_ns", "lat_ns"):
        assert k in b, "fio's %s.%s is missing" % (ddir, k)
    assert b["slat_ns"] is None, "the closed loop measures no submission latency: slat_ns null, got %r" % b["slat_ns"]
r = job["read"]
assert r["total_ios"] > 0 and r["io_bytes"] == r["total_ios"] * 8192, "the command line's randread at the file's bs 8k: %r" % r
assert job["write"]["total_ios"] == 0, "the command line's --rw=randread overrides the file's rw=write"
assert job["trim"]["total_ios"] == 0 and job["trim"]["clat_ns"] is None, "no trims: zero, latency null"
c = r["clat_ns"]
for k in ("min", "max", "mean", "N", "percentile"):
    assert k in c, "fio's clat_ns.%s is missing" % k
assert c["N"] == r["total_ios"], "clat_ns.N counts the I/Os"
p = c["percentile"]
for k in ("1.000000", "50.000000", "90.000000", "99.000000", "99.900000", "99.990000"):
    assert k in p, "fio's percentile key %r is missing: %r" % (k, sorted(p))
assert c["min"] <= p["50.000000"] <= p["99.000000"] <= c["max"], "percentiles in order, ns: %r" % c
b = job["busypoll"]
assert b["settings"]["bs"] == 8192 and b["settings"]["rw"] == "randread", "busypoll's own result under 'busypoll'"
PY
bpt_end
