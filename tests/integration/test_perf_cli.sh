#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll perf` as a user runs it, against `busypoll target` child processes on
# loopback ports the kernel picks: bad input exits 2 with one line; a target that
# is not there, a disallowed host, an unknown NQN, a target killed mid-run
# (SIGKILL) and one that stops answering (SIGSTOP, --io-timeout) each exit 1 with
# one line and never hang; Ctrl-C prints partial results and exits 130;
# --spawn-target with --sweep and two --target-config blocks prints the reference
# table with the target's CPU; json and csv parse; the proof per I/O flags a
# busy-polling host and target on loopback (no NAPI), not a target poll mode that
# polled (as root, in a network namespace of its own). No figure's timing is asserted;
# the one timeout (--io-timeout 2) is held to both bounds: not before 2 s after the
# target stopped, and (generously: a busy machine is slow) within 30 s.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3 ss timeout

NQN=nqn.2024-01.io.busypoll:perfcli
HOST_A=nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-4000-8000-0000000000aa

# start_target NAME ARGS...: a target on a free port; sets $port and $tpid
start_target() {
	local name=$1
	shift
	"$BP" target --listen 127.0.0.1:0 --nqn "$NQN" --log-level error "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	tpid=$!
	pids+=("$tpid")
	bpt_wait_until 30 bpt_file_has "$tmp/$name.err" 'listening on' ||
		die "target $name never said it was listening (30 s): $(cat "$tmp/$name.err")"
	port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$tmp/$name.err")
	[ -n "$port" ] || die "target $name did not start: $(cat "$tmp/$name.err")"
}

# connected PORT: wait (up to 30 s) until perf holds its admin and an I/O queue connection to PORT
connected() {
	bpt_wait_until 30 bpt_established "$1" 2 || die "perf never connected to port $1 (30 s)"
}

# io_running PORT: wait (up to 30 s) until perf's queues to PORT have received 1 MiB: I/O runs
io_running() {
	bpt_wait_until 30 bpt_rx_over "$1" 1048576 || die "no I/O reached perf from port $1 within 30 s"
}

# expect RC TEXT ARGS...: `busypoll perf ARGS` exits RC with one line on stderr holding TEXT
expect() {
	local want=$1 text=$2 got
	shift 2
	timeout 60 "$BP" perf "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "perf $* exited $got, want $want: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "perf $*: want one line, got: $(cat "$tmp/err")"
	grep -q -- "$text" "$tmp/err" || fail "perf $*: '$text' not in: $(cat "$tmp/err")"
	grep -q '^busypoll perf: ' "$tmp/err" || fail "perf $*: message lacks the prefix"
}

# ---- bad input: exit 2, one line ----
expect 2 "--target ADDR:PORT is required" --nqn "$NQN"
expect 2 "--rw bogus: must be" --target 127.0.0.1:1 --nqn "$NQN" --rw bogus
expect 2 "--iodepth 0" --target 127.0.0.1:1 --nqn "$NQN" --iodepth 0
expect 2 "unknown option '--bogus'" --target 127.0.0.1:1 --nqn "$NQN" --bogus
expect 2 "needs --spawn-target" --target 127.0.0.1:1 --nqn "$NQN" --target-config "--poll-period-us 0"
timeout 10 "$BP" perf --help >"$tmp/out" 2>&1 || fail "--help exited non-zero"
grep -q -- '--iodepth-batch-complete-min' "$tmp/out" || fail "--help lacks --iodepth-batch-complete-min"
"$BP" --help | grep -q '^  perf ' || fail "perf is not in busypoll --help"

# ---- a target that is not there ----
start_target gone --ns ram:1M
kill -KILL "$tpid"
wait "$tpid" 2>/dev/null
expect 1 "connection refused" --target "127.0.0.1:$port" --nqn "$NQN" --runtime 1 -q

# ---- refusals, and what fits the namespace ----
start_target main --ns ram:16M --allow-host "$HOST_A"
main_port=$port
T=(--target "127.0.0.1:$main_port" --nqn "$NQN" -q --runtime 0.5)
expect 1 "is not allowed into" "${T[@]}" --hostnqn nqn.2014-08.org.nvmexpress:uuid:dddddddd-0000-4000-8000-0000000000dd
expect 1 "does not serve subsystem NQN 'nqn.x:nope'" --target "127.0.0.1:$main_port" --nqn nqn.x:nope --hostnqn "$HOST_A" -q
expect 2 "past the end of namespace 1" "${T[@]}" --hostnqn "$HOST_A" --size 1G
expect 2 "no such namespace" "${T[@]}" --hostnqn "$HOST_A" --nsid 4

# ---- a run, and its formats ----
timeout 60 "$BP" perf "${T[@]}" --hostnqn "$HOST_A" --rw randrw --rwmixread 70 --iodepth 16 --iodepth_batch=4 \
	--iodepth_batch_complete_max=16 --verify --size 4M >"$tmp/out" 2>"$tmp/err" || fail "a verified run failed: $(cat "$tmp/err")"
grep -q 'read   IOPS' "$tmp/out" && grep -q 'write  IOPS' "$tmp/out" || fail "table lacks read/write lines: $(cat "$tmp/out")"
grep -q 'P99.99' "$tmp/out" || fail "table lacks P99.99"
grep -q 'blocks checked, no mismatch' "$tmp/out" || fail "table lacks the verify line"
grep -q 'initiator CPU' "$tmp/out" || fail "table lacks the initiator CPU"
timeout 60 "$BP" perf "${T[@]}" --hostnqn "$HOST_A" --rw randread --iodepth 8 --format json >"$tmp/out" ||
	fail "json run failed"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["read"]["ios"] > 0 and d["latency_us"]["p99_99"] > 0' \
	"$tmp/out" || fail "json does not parse or lacks figures: $(head -c 400 "$tmp/out")"
timeout 60 "$BP" perf "${T[@]}" --hostnqn "$HOST_A" --rw randread --format csv >"$tmp/out" || fail "csv run failed"
python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); assert len(r)==2 and len(r[0])==len(r[1]), r' \
	"$tmp/out" || fail "csv header and row differ"
# progress lines on stderr, once a second
timeout 60 "$BP" perf --target "127.0.0.1:$main_port" --nqn "$NQN" --hostnqn "$HOST_A" --runtime 3.5 >/dev/null 2>"$tmp/err" ||
	fail "progress run failed"
[ "$(grep -c '^busypoll perf: run' "$tmp/err")" -ge 2 ] || fail "want progress lines: $(cat "$tmp/err")"

# ---- Ctrl-C: partial results, exit 130 ----
timeout 60 "$BP" perf --target "127.0.0.1:$main_port" --nqn "$NQN" -q --hostnqn "$HOST_A" --runtime 60 --rw randread --iodepth 4 >"$tmp/out" 2>"$tmp/err" &
ppid=$!
connected "$main_port"
io_running "$main_port"
kill -INT "$ppid"
wait "$ppid"
rc=$?
[ "$rc" -eq 130 ] || fail "Ctrl-C: exit $rc, want 130: $(cat "$tmp/err")"
grep -q 'interrupted: partial results' "$tmp/out" || fail "Ctrl-C printed no partial result: $(cat "$tmp/out")"
grep -q 'read   IOPS' "$tmp/out" || fail "Ctrl-C: the partial result lacks figures"

# ---- a target killed mid-run: a clear error, exit 1, no hang ----
start_target victim --ns ram:16M
timeout 60 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --runtime 30 --rw randrw --iodepth 8 \
	>"$tmp/out" 2>"$tmp/err" &
ppid=$!
connected "$port"
io_running "$port"
kill -KILL "$tpid"
wait "$ppid"
rc=$?
[ "$rc" -eq 1 ] || fail "target killed: exit $rc, want 1: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "target killed: want one line: $(cat "$tmp/err")"
grep -q "target 127.0.0.1:$port" "$tmp/err" || fail "target killed: the message does not name the target: $(cat "$tmp/err")"

# ---- a target that stops answering: the command timeout says so ----
start_target frozen --ns ram:16M
timeout 60 "$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" -q --runtime 30 --rw randread --iodepth 8 \
	--io-timeout 2 >"$tmp/out" 2>"$tmp/err" &
ppid=$!
connected "$port"
io_running "$port"
bpt_freeze_and_wait "$tpid" "$ppid"
kill -KILL "$tpid"
[ "$rc" -eq 1 ] || fail "target stopped: exit $rc, want 1: $(cat "$tmp/err")"
grep -q "no answer in 2000 ms" "$tmp/err" || fail "target stopped: no timeout message: $(cat "$tmp/err")"
# The oldest command was sent at most a round trip before the stop (I/O was flowing):
# the timeout cannot have fired before 2 s less that. The upper bound only proves that it
# fires at all: a busy machine may be seconds late.
bpt_within "$waited" 1900 30000 || fail "--io-timeout 2: perf gave up $waited ms after the target stopped, want 1900..30000"

# ---- the reference table: our target spawned per configuration ----
free_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 14499)
timeout 120 "$BP" perf --target "127.0.0.1:$free_port" --nqn "$NQN" -q --spawn-target "--ns ram:16M" \
	--target-config "--poll-period-us 0" --target-config "--poll-period-us 50" --sweep numjobs=1..2 \
	--rw randrw --rwmixread 100 --iodepth 8 --iodepth-batch 4 --runtime 0.5 >"$tmp/out" 2>"$tmp/err" ||
	fail "sweep failed: $(cat "$tmp/err")"
[ "$(grep -c 'threads   IOPS (K)   avg lat (us)   P99.99 (us)' "$tmp/out")" -eq 2 ] || fail "want two blocks: $(cat "$tmp/out")"
grep -q 'config: --poll-period-us 50' "$tmp/out" || fail "the second block does not name its config"
awk '$1 ~ /^[12]$/ && NF >= 6 && $6 != "-" { n++ } END { exit n == 4 ? 0 : 1 }' "$tmp/out" ||
	fail "want four rows with the target's CPU: $(cat "$tmp/out")"
# the spawned targets are gone: perf reaps them before it exits
pgrep -f -- "--listen 127.0.0.1:$free_port( |$)" >/dev/null && fail "a spawned target is still running"
# ---- the proof per I/O: a polling mode that did not poll is flagged ('!'), one that polled is not ----
# In a network namespace of its own (lo only: no NAPI to busy poll), so that the
# namespace's BusyPollRxPackets is this run's alone. Poll mode polls on loopback too.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	proof_run() {
		timeout 120 unshare --net sh -c 'ip link set lo up && exec "$@"' sh "$BP" perf \
			--target "127.0.0.1:$free_port" --nqn "$NQN" -q --spawn-target "--ns ram:16M --poll-period-us 50 \
			--mode epoll:napi" --mode epoll:napi --rw randread --iodepth 8 --runtime 0.5 "$@"
	}
	proof_run >"$tmp/out" 2>"$tmp/err" || fail "the proof run failed: $(cat "$tmp/err")"
	grep -q '^! host .*epoll:napi.* busy-polls, but under 0.01 BusyPollRxPackets per I/O' "$tmp/out" ||
		fail "a busy-polling host on loopback must be flagged: $(cat "$tmp/out")"
	grep -q '^! target .*epoll:napi.* busy-polls, but under 0.01 BusyPollRxPackets' "$tmp/out" ||
		fail "a busy-polling target on loopback must be flagged: $(cat "$tmp/out")"
	grep -q '^! target .*poll mode (--poll-period-us' "$tmp/out" &&
		fail "the target's poll mode polled, yet it is flagged: $(cat "$tmp/out")"
	grep -q 'initiator CPU .* BusyPollRxPackets/IO$' "$tmp/out" ||
		fail "the table must show the host's BusyPollRxPackets per I/O: $(cat "$tmp/out")"
	grep 'target (ours)' "$tmp/out" | grep -q 'polls/IO (poll mode 50 us)' ||
		fail "the table must show the target's polls per I/O and its poll period: $(cat "$tmp/out")"
	proof_run --format json >"$tmp/out" 2>"$tmp/err" || fail "the proof run (json) failed: $(cat "$tmp/err")"
	python3 - "$tmp/out" <<'PY' || fail "the proof in json: $(head -c 4000 "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
p, t = r["proof"], r["target_counters"]
assert p["min_per_io"] == 0.01, p
assert p["host_unproven"] is True and p["target_busy_poll_unproven"] is True, p
assert p["target_poll_unproven"] is False, p
assert t["poll_period_us"] == 50 and t["polls"] > 0 and t["polls_per_io"] >= 0.01, t
assert t["mode"].startswith("epoll:napi"), t
assert r["initiator"]["busy_poll_rx_per_io"] < 0.01, r["initiator"]
PY
	# poll mode off and blocking modes: nothing to prove, nothing flagged, null in json
	timeout 120 "$BP" perf --target "127.0.0.1:$free_port" --nqn "$NQN" -q --spawn-target "--ns ram:16M" \
		--rw randread --iodepth 8 --runtime 0.3 --format json >"$tmp/out" 2>"$tmp/err" ||
		fail "a blocking run failed: $(cat "$tmp/err")"
	python3 - "$tmp/out" <<'PY' || fail "blocking modes in json: $(head -c 4000 "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["proof"]
assert p["host_unproven"] is None and p["target_busy_poll_unproven"] is None and p["target_poll_unproven"] is None, p
assert r["target_counters"]["poll_period_us"] == 0, r["target_counters"]
PY
else
	bpt_skip_part "the proof per I/O: needs root and unshare (a network namespace of its own)"
fi

# a spawn with bad arguments: the target's own message, exit 2
expect 2 "the spawned target exited (status 2)" --target "127.0.0.1:$free_port" --nqn "$NQN" -q \
	--spawn-target "--ns ram:1Q"

bpt_end
