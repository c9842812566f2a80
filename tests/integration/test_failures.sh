#!/bin/bash
# SPDX-License-Identifier: MIT
# A run that fails part way keeps what it measured (issue 12): the peer stopped
# (SIGSTOP) or killed (SIGKILL) mid-run in rr, pingpong and perf (a target of its
# own, and one it spawned), and compare's test bed cut mid-run (its link set down).
# Each must exit 1, print the finished part on stdout with the failure in it (json
# "failed": the reason; compare: the failed cells with theirs), and never hang. Then
# compare SIGKILLed mid-run leaves its bed, and the next compare removes it and says
# so (stderr and json "stale_beds_removed"). Peers listen on ports the test picks
# from its own pid; timing is never asserted, only bounded.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3 timeout

port=$(bpt_free_port) || die "no free port for the servers"
NQN=nqn.2024-01.io.busypoll:failures

# wait_for FILE TEXT [SECONDS]: until FILE holds TEXT (default 30 s)
wait_for() {
	bpt_wait_until "${3:-30}" grep -q -- "$2" "$1" 2>/dev/null && return 0
	fail "'$2' never appeared in $1 (${3:-30} s): $(tail -3 "$1" 2>/dev/null)"
	return 1
}

# fresh FILE...: remove what an earlier case wrote, so that a wait on a file sees only
# the new process's lines (the background process truncates it only once it runs).
fresh() { rm -f "$@"; }

# first_run_done PID: a pingpong client's first run has ended and been told to the server,
# and the next one runs (each run has a thread of its own, after the main one: the first
# of them is gone and another has started). A thread gone is not enough: the run counts
# once the server answered its stop, and a kill before that measured nothing. Waits at
# most 30 s for each step.
first_run_done() {
	local first
	bpt_wait_until 30 pp_has_run_thread "$1" || return 1
	first=$(ls "/proc/$1/task" | sort -n | sed -n 2p)
	bpt_wait_until 30 bpt_gone_path "/proc/$1/task/$first" || return 1
	bpt_wait_until 30 pp_has_run_thread "$1"
}
pp_has_run_thread() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge 2 ]; }
bpt_gone_path() { [ ! -e "$1" ]; }

# finish PID NAME: wait for a client (at most 60 s), its exit status in $rc
finish() {
	if ! bpt_wait_until 60 bpt_gone "$1"; then
		fail "$2 still running after 60 s"
		kill -KILL "$1"
	fi
	wait "$1"
	rc=$?
}

# json_check FILE PYTHON: the expression holds for d = the json document in FILE
json_check() {
	python3 - "$1" "$2" <<'EOF' || fail "$1: $2 does not hold: $(head -c 600 "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
}

two_progress_lines() { [ "$(grep -c "tx/s" "$1" 2>/dev/null)" -ge 2 ]; }

# ---- rr: the server stops answering (SIGSTOP), then a server killed (SIGKILL) ----
rr_case() {
	local sig=$1 want=$2 fmt=$3
	port=$((port + 1))
	"$BP" rr --server --port "$port" -q 2>"$tmp/rr-srv.err" &
	spid=$!
	pids+=("$spid")
	bpt_wait_until 30 bpt_listening "$port" || die "the rr server never listened on $port (30 s)"
	fresh "$tmp/rr.out" "$tmp/rr.err"
	"$BP" rr --client 127.0.0.1 --port "$port" -l 4 --warmup 0.2 -I 0.2 --format "$fmt" \
		>"$tmp/rr.out" 2>"$tmp/rr.err" &
	cpid=$!
	pids+=("$cpid")
	# two progress lines: the first may come at the end of the warm-up, before anything is measured
	bpt_wait_until 30 two_progress_lines "$tmp/rr.err" ||
		fail "rr (server $sig): fewer than two progress lines in 30 s: $(tail -3 "$tmp/rr.err")"
	kill -"$sig" "$spid"
	finish "$cpid" "rr client (server $sig)"
	[ "$rc" = 1 ] || fail "rr, server $sig: exit $rc, want 1: $(tail -2 "$tmp/rr.err")"
	grep -q -- "$want" "$tmp/rr.err" || fail "rr, server $sig: '$want' not on stderr: $(tail -2 "$tmp/rr.err")"
	kill -CONT "$spid" 2>/dev/null
	kill -KILL "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}
rr_case STOP "stopped answering" json
json_check "$tmp/rr.out" 'd["failed"] and "stopped answering" in d["failed"] and d["transactions"] > 0 and not d["interrupted"]'
rr_case KILL "server" json
json_check "$tmp/rr.out" 'd["failed"] and d["transactions"] > 0 and d["latency_us"]["p50"] > 0'
rr_case KILL "server" table
grep -q "^failed: " "$tmp/rr.out" || fail "rr table after a kill has no 'failed:' line: $(cat "$tmp/rr.out")"
grep -q "^transactions/s" "$tmp/rr.out" || fail "rr table after a kill lost its figures: $(cat "$tmp/rr.out")"

# ---- pingpong: the server killed after some runs, then one that stops answering ----
pp_case() {
	local sig=$1 fmt=$2
	port=$((port + 1))
	"$BP" pingpong --server --port "$port" -q 2>"$tmp/pp-srv.err" &
	spid=$!
	pids+=("$spid")
	bpt_wait_until 30 bpt_udp_bound "$port" || die "the pingpong server never bound UDP port $port (30 s)"
	fresh "$tmp/pp.out" "$tmp/pp.err"
	"$BP" pingpong --client 127.0.0.1 --port "$port" --runs 40 -n 20000 --warmup-count 100 --timeout 1 \
		--format "$fmt" >"$tmp/pp.out" 2>"$tmp/pp.err" &
	cpid=$!
	pids+=("$cpid")
	# the first run finishes (and the second starts) before the signal
	first_run_done "$cpid" || die "pingpong (server $sig): the client's first run never ended (30 s)"
	kill -"$sig" "$spid"
	finish "$cpid" "pingpong client (server $sig)"
	[ "$rc" = 1 ] || fail "pingpong, server $sig: exit $rc, want 1: $(tail -2 "$tmp/pp.err")"
	[ "$(wc -l <"$tmp/pp.err")" = 1 ] || fail "pingpong, server $sig: stderr is not one line: $(cat "$tmp/pp.err")"
	kill -CONT "$spid" 2>/dev/null
	kill -KILL "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}
pp_case KILL json
grep -q "went away during run" "$tmp/pp.err" || fail "pingpong, server killed, said: $(cat "$tmp/pp.err")"
json_check "$tmp/pp.out" 'd["failed"] and "went away" in d["failed"] and 1 <= len(d["rows"][0]["runs"]) < 40'
pp_case STOP table
# stopped during a run: no reply in --timeout; between two runs: its control channel does not answer
grep -qE "no reply .* for 1 s|control connection .*: no answer in time" "$tmp/pp.err" ||
	fail "pingpong, server stopped, said: $(cat "$tmp/pp.err")"
grep -q "^failed: .*partial results" "$tmp/pp.out" || fail "pingpong table has no 'failed:' line: $(cat "$tmp/pp.out")"
grep -q "^avg " "$tmp/pp.out" || fail "pingpong table lost the finished runs: $(cat "$tmp/pp.out")"
pp_case KILL csv
python3 - "$tmp/pp.out" <<'EOF' || fail "pingpong csv after a kill: $(head -3 "$tmp/pp.out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 2, rows                      # at least a run and the average
assert all(r["failed"] for r in rows), rows      # every line says what it is from
EOF

# ---- perf: its target stops answering, is killed; a spawned target stops ----
perf_case() {
	local sig=$1 want=$2
	port=$((port + 1))
	"$BP" target --ns ram:16M --listen "127.0.0.1:$port" --nqn "$NQN" --log-level error -q \
		>/dev/null 2>"$tmp/t.err" &
	tpid=$!
	pids+=("$tpid")
	bpt_wait_until 30 bpt_listening "$port" || die "the target never listened on $port (30 s)"
	fresh "$tmp/perf.out" "$tmp/perf.err"
	"$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" --runtime 6 --io-timeout 1 --interval 0.2 \
		--format json >"$tmp/perf.out" 2>"$tmp/perf.err" &
	cpid=$!
	pids+=("$cpid")
	wait_for "$tmp/perf.err" "IOPS"
	kill -"$sig" "$tpid"
	finish "$cpid" "perf (target $sig)"
	[ "$rc" = 1 ] || fail "perf, target $sig: exit $rc, want 1: $(tail -2 "$tmp/perf.err")"
	grep -q -- "$want" "$tmp/perf.err" || fail "perf, target $sig: '$want' not on stderr: $(tail -2 "$tmp/perf.err")"
	json_check "$tmp/perf.out" 'd["failed"] and d["ios"] > 0 and not d["interrupted"]'
	kill -CONT "$tpid" 2>/dev/null
	kill -KILL "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
}
perf_case STOP "io-timeout"
perf_case KILL "target 127.0.0.1"

port=$((port + 1))
fresh "$tmp/perf.out" "$tmp/perf.err"
"$BP" perf --target "127.0.0.1:$port" --nqn "$NQN" --spawn-target "--ns ram:16M" --runtime 6 --io-timeout 1 \
	--interval 0.2 --format json >"$tmp/perf.out" 2>"$tmp/perf.err" &
cpid=$!
pids+=("$cpid")
wait_for "$tmp/perf.err" "IOPS"
child=$(pgrep -P "$cpid" | head -1)
if [ -z "$child" ]; then
	fail "perf --spawn-target: no child target found"
else
	pids+=("$child")
	kill -STOP "$child"
	finish "$cpid" "perf (spawned target stopped)"
	[ "$rc" = 1 ] || fail "perf, spawned target stopped: exit $rc, want 1: $(tail -2 "$tmp/perf.err")"
	json_check "$tmp/perf.out" 'd["failed"] and d["ios"] > 0'
	kill -CONT "$child" 2>/dev/null
	bpt_wait_until 30 bpt_gone "$child" || fail "perf left its spawned target $child running (30 s)"
fi

# ---- compare (root: a veth test bed it builds and removes) ----
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
	echo "compare cases skipped: they need root"
else
	# the link cut after the first cell: the first cell stays, the rest fail with a reason
	"$BP" compare --runs 1 --flows 1 -l 1.5 --warmup 0.2 --modes "epoll:block;epoll:spin;epoll:napi" --format json \
		>"$tmp/cmp.out" 2>"$tmp/cmp.err" &
	cpid=$!
	pids+=("$cpid")
	wait_for "$tmp/cmp.err" "\[ 2/3\]" 60
	ip -n "bp-cmp$cpid-b" link set bpvb down || fail "could not set compare's bpvb down"
	finish "$cpid" "compare (link down)"
	[ "$rc" = 1 ] || fail "compare, link down: exit $rc, want 1: $(tail -2 "$tmp/cmp.err")"
	json_check "$tmp/cmp.out" 'not d["cells"][0]["failed"] and d["cells"][0]["tps"] > 0 and d["cells"][-1]["failed"] and d["cells"][-1]["error"]'
	grep -q "is \`busypoll rr --server\` running" "$tmp/cmp.out" &&
		fail "compare's cell error tells the user to start a server it runs itself"
	[ -e "/run/netns/bp-cmp$cpid-a" ] && fail "compare (link down) left its test bed"

	# SIGKILL mid-run leaves the bed; the next compare removes it and says so
	"$BP" compare --runs 1 --flows 1 -l 5 --warmup 0 --modes "epoll:block" >/dev/null 2>"$tmp/kill.err" &
	kpid=$!
	pids+=("$kpid")
	# mid-run: its bed is up and its cell has begun
	wait_for "$tmp/kill.err" "\[ 1/1\]" 60
	kill -KILL "$kpid"
	wait "$kpid" 2>/dev/null
	if [ ! -e "/run/netns/bp-cmp$kpid-a" ]; then
		fail "compare SIGKILLed left no bed to find (bp-cmp$kpid-a)"
	else
		timeout 60 "$BP" compare --flows 1 -l 0.3 --warmup 0 --modes "epoll:block" --format json \
			>"$tmp/cmp2.out" 2>"$tmp/cmp2.err"
		rc=$?
		[ "$rc" = 0 ] || fail "compare after a killed one: exit $rc: $(tail -2 "$tmp/cmp2.err")"
		grep -q "removed test bed 'cmp$kpid'" "$tmp/cmp2.err" ||
			fail "the next compare did not say it removed bp-cmp$kpid: $(cat "$tmp/cmp2.err")"
		json_check "$tmp/cmp2.out" "any('cmp$kpid' in s['what'] for s in d['stale_beds_removed'])"
		[ -e "/run/netns/bp-cmp$kpid-a" ] && fail "the stale bed bp-cmp$kpid-a is still there"
		ip netns del "bp-cmp$kpid-a" 2>/dev/null
		ip netns del "bp-cmp$kpid-b" 2>/dev/null
	fi
fi

bpt_end
