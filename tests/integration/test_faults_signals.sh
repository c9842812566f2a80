#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGINT, SIGTERM and SIGHUP in the middle of a run, as a user, a supervisor or a
# closed terminal sends them: busypoll rr (client), busypoll pingpong (client) and,
# as root, busypoll compare (which builds a veth test bed in two namespaces). Each
# must print the results it has ("interrupted: partial results", the measured
# figures), exit 130, and leave nothing behind: no namespace named after that run,
# no process. A signal during the warm-up (nothing measured yet) and one during
# compare's test-bed setup too. The servers stop cleanly (exit 0) on SIGTERM and
# SIGHUP. Timings are never checked.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
signals=0

# start_server KIND: a busypoll KIND server on a free port; sets $port and $spid.
start_server() {
	local kind=$1 want
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 20000))
		"$BP" "$kind" --server --port "$port" 2>"$tmp/$kind-server.err" &
		spid=$!
		want="port $port"
		bpt_wait_until 30 said_or_gone "$tmp/$kind-server.err" "$want" "$spid"
		if kill -0 "$spid" 2>/dev/null && grep -q "$want" "$tmp/$kind-server.err"; then
			pids+=("$spid")
			return 0
		fi
		wait "$spid" 2>/dev/null
	done
	echo "FAIL: no $kind server could start: $(cat "$tmp/$kind-server.err")" >&2
	exit 1
}

# said_or_gone FILE TEXT PID: FILE holds TEXT, or PID has exited
said_or_gone() {
	grep -q "$2" "$1" 2>/dev/null || bpt_gone "$3"
}

stop_server() {
	local kind=$1 rc sig=${2:-TERM}
	kill -"$sig" "$spid"
	wait "$spid"
	rc=$?
	[ "$rc" -eq 0 ] || fail "$kind server exited $rc on SIG$sig, want 0"
}

# interrupt SIG STATE NAME CMD...: run CMD, send SIG once the shell command STATE
# holds (a state reached: a log line, a counter; never a sleep); stdout in
# $tmp/NAME.out, stderr in $tmp/NAME.err, status in $rc, pid in $cpid.
interrupt() {
	local sig=$1 state=$2 name=$3
	shift 3
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	cpid=$!
	pids+=("$cpid")
	if ! bpt_wait_until 30 eval "$state"; then
		fail "$name: never reached the state to signal it in ($state): $(head -c 300 "$tmp/$name.err")"
		kill -KILL "$cpid" 2>/dev/null
		wait "$cpid" 2>/dev/null
		rc=-1
		return
	fi
	if ! kill -0 "$cpid" 2>/dev/null; then
		wait "$cpid"
		rc=$?
		fail "$name ended (status $rc) before the $sig came: $(head -c 300 "$tmp/$name.err")"
		return
	fi
	kill -"$sig" "$cpid"
	signals=$((signals + 1))
	# bounded: a run that ignores the signal is killed by the harness trap, not waited for forever
	if ! bpt_wait_until 30 bpt_gone "$cpid"; then
		fail "$name still running 30 s after $sig"
		kill -KILL "$cpid"
	fi
	wait "$cpid"
	rc=$?
}

expect_interrupted() {
	local name=$1
	[ "$rc" -eq 130 ] || fail "$name exited $rc, want 130 ($(head -c 300 "$tmp/$name.err"))"
	grep -q "interrupted: partial results" "$tmp/$name.out" ||
		fail "$name: no 'interrupted: partial results' in its output: $(head -c 400 "$tmp/$name.out")"
	if [ -d "/proc/$cpid" ]; then
		fail "$name: process $cpid still exists"
	fi
}

# ---- busypoll rr ----
start_server rr
# SIGHUP (a closed terminal, a dropped ssh session) ends a run as SIGTERM does
for sig in INT TERM HUP; do
	name=rr-$sig
	# mid-run: measuring (a progress line comes once the warm-up is over)
	interrupt "$sig" 'bpt_file_has "$tmp/$name.err" "^busypoll rr: "' "$name" \
		"$BP" rr --client 127.0.0.1 --port "$port" -F 4 -l 30 --warmup 0.2 -I 0.1
	expect_interrupted "$name"
	tps=$(sed -n 's/^transactions\/s *\([0-9.]*\) .*/\1/p' "$tmp/$name.out")
	[ -n "$tps" ] && awk "BEGIN{exit !($tps > 0)}" ||
		fail "$name: no measured rate in the partial results: $(cat "$tmp/$name.out")"
	grep -q "transactions (all phases)" "$tmp/$name.out" || fail "$name: no client/server table"
	echo "ok   rr client SIG$sig mid-run: exit 130, partial results ($tps tx/s)"
done
# during the warm-up: nothing measured yet, still a result document saying so (the control
# connection and the flow are up: ten seconds of warm-up follow)
interrupt TERM 'bpt_established "$port" 2' rr-warmup "$BP" rr --client 127.0.0.1 --port "$port" -l 30 --warmup 10 \
	--format json
[ "$rc" -eq 130 ] || fail "rr interrupted in warm-up exited $rc, want 130"
python3 - "$tmp/rr-warmup.out" <<'EOF' || fail "rr json after SIGTERM in warm-up: $(head -c 300 "$tmp/rr-warmup.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True, d
EOF
echo "ok   rr client SIGTERM in warm-up: exit 130, a json document with \"interrupted\": true"
# while the hello waits on a server that accepted and never answers: interrupted, not "unreachable"
sport=$((20000 + RANDOM % 20000))
python3 - "$sport" <<'PY' 2>"$tmp/silent.err" &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
c, _ = s.accept()
time.sleep(60)  # killed on exit (pids)
PY
pids+=($!)
bpt_wait_until 30 bpt_listening "$sport" || fail "the silent server never listened on $sport (30 s)"
interrupt INT 'bpt_established "$sport" 1' rr-hello "$BP" rr --client 127.0.0.1 --port "$sport" -l 5
expect_interrupted rr-hello
grep -q "cannot reach" "$tmp/rr-hello.err" && fail "rr interrupted in its hello says the server is unreachable"
echo "ok   rr client SIGINT while a silent server holds its hello: exit 130, said as interrupted"
# the server served all of that and still serves
"$BP" rr --client 127.0.0.1 --port "$port" -l 0.3 --warmup 0 >"$tmp/rr-after.out" 2>&1 ||
	fail "rr server does not serve after the interrupted clients: $(cat "$tmp/rr-after.out")"
stop_server rr
echo "ok   rr server still served, then stopped with status 0 on SIGTERM"

# ---- busypoll pingpong ----
start_server pingpong
for sig in INT TERM HUP; do
	name=pp-$sig
	# mid-run: the client's loop thread has blocked for 1000 replies, far past the 10 warm-up ones
	interrupt "$sig" 'bpt_vcsw_over "$cpid" 1000' "$name" "$BP" pingpong --client 127.0.0.1 --port "$port" \
		-n 100000000 --runs 3 --warmup-count 10 --timeout 5
	expect_interrupted "$name"
	grep -q "^1 .*(interrupted)" "$tmp/$name.out" || fail "$name: the interrupted run is not shown: $(cat "$tmp/$name.out")"
	echo "ok   pingpong client SIG$sig mid-run: exit 130, the interrupted run shown"
done
stop_server pingpong HUP
echo "ok   pingpong server stopped with status 0 on SIGHUP"

# ---- busypoll compare: root, a veth test bed per run ----
if [ "$(id -u)" -ne 0 ]; then
	bpt_skip_part "compare: it builds a veth test bed, which needs root"
else
	# bp-cmp<pid>-a/-b: the run's own namespaces (others' beds may come and go)
	beds_of() { ip netns list | awk '{print $1}' | grep -c "^bp-cmp$1-" || true; }
	# mid-matrix: the second mode is running
	for sig in TERM INT HUP; do
		name=cmp-$sig
		interrupt "$sig" 'bpt_file_has "$tmp/$name.err" "\[ 2/3\] epoll:spin"' "$name" \
			"$BP" compare --runs 1 --flows 1 -l 2 --warmup 0.1 --modes "epoll:block;epoll:spin;epoll:napi,usecs=64,budget=8"
		expect_interrupted "$name"
		grep -q "epoll:block" "$tmp/$name.out" || fail "$name: no measured cell in the partial results"
		[ "$(beds_of "$cpid")" -eq 0 ] || fail "$name: namespaces left: $(ip netns list | grep "bp-cmp$cpid-")"
		echo "ok   compare SIG$sig mid-matrix: exit 130, partial results, test bed bp-cmp$cpid-* removed"
	done
	# early: the signal lands while the test bed is being built (its first namespace is
	# there), or as the first cell starts
	for when in bed cell; do
		name=cmp-early-$when
		if [ "$when" = bed ]; then
			state='[ "$(beds_of "$cpid")" -ge 1 ]'
		else
			state='bpt_file_has "$tmp/$name.err" "\[ 1/1\] epoll:block"'
		fi
		interrupt TERM "$state" "$name" "$BP" compare --runs 1 --flows 1 -l 2 --warmup 0.1 --modes "epoll:block"
		[ "$rc" -eq 130 ] || fail "$name exited $rc, want 130 ($(head -c 300 "$tmp/$name.err"))"
		[ "$(beds_of "$cpid")" -eq 0 ] || fail "$name: namespaces left: $(ip netns list | grep "bp-cmp$cpid-")"
		echo "ok   compare SIGTERM as the $when came up: exit 130, test bed removed"
	done
fi

echo "signals sent: $signals"
# a part that could not run here makes the whole test a skip, never a pass
bpt_end "all passed"
