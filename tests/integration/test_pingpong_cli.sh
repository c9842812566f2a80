#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll pingpong` as a user and a script see it, over loopback: bad input exits 2
# with one line naming the option; a run prints its table, json and csv; --matrix
# and --breakdown print their sections; garbage datagrams are logged once per peer
# and the next client is served; an unreachable server exits 1; Ctrl-C exits 130
# with the partial results printed; the server stops cleanly on SIGTERM.
# Timings are never checked.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
spid=
cleanup() {
	if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
		kill -CONT "$spid" 2>/dev/null
		kill -TERM "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
}
bpt_require python3

# run EXPECTED_STATUS ARGS...: stdout in $tmp/out, stderr in $tmp/err
run() {
	local want=$1 got
	shift
	"$BP" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "busypoll $* exited $got, want $want (stderr: $(head -c 300 "$tmp/err"))"
}

# one_line_error WANT: stderr is one line, "busypoll pingpong: ...WANT..."
one_line_error() {
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "error is not one line: $(cat "$tmp/err")"
	grep -q "^busypoll pingpong: .*$1" "$tmp/err" || fail "error does not say '$1': $(cat "$tmp/err")"
}

cpus=$(nproc)
pin_client=() pin_server=()
if [ "$cpus" -ge 2 ]; then
	pin_client=(--cpus 0)
	pin_server=(--cpus 1)
fi

# ---- bad input: 2, one line ----
run 2 pingpong
one_line_error "one of --server or --client HOST is required"

# --remote goes on ssh's command line: [USER@]HOST only, and after "--"
for bad in 'a;b' 'h$(id)' 'user@-oProxyCommand=x' 'bad_host' 'u s@h' '[::1' 'x..y'; do
	run 2 pingpong --client 127.0.0.1 --remote "$bad"
	one_line_error "give \[USER@\]HOST"
done
run 2 pingpong --client 127.0.0.1 --remote '-oProxyCommand=x'
one_line_error "--remote needs a HOST"
mkdir "$tmp/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/bin/args"\nexit 3\n' "$tmp" >"$tmp/bin/ssh"
chmod +x "$tmp/bin/ssh"
run 1 pingpong --client 127.0.0.1 --remote me@host-b.example --ssh "$tmp/bin/ssh" -n 1
[ "$(head -2 "$tmp/bin/args" | tr '\n' ' ')" = "-- me@host-b.example " ] ||
	fail "ssh was not given '-- me@host-b.example' first: $(tr '\n' ' ' <"$tmp/bin/args")"
run 2 pingpong --client 127.0.0.1 --size 10
one_line_error "--size 10: must be between 48"
run 2 pingpong --client 127.0.0.1 --mode epoll:bogus
one_line_error "--mode epoll:bogus"
run 2 pingpong --client 127.0.0.1 --matrix --mode epoll:block
one_line_error "--matrix compares a polling mode against blocking"
run 2 pingpong --server --tcp
one_line_error "--tcp is a client option"
run 2 pingpong --client 127.0.0.1 --server-delay-us 10
one_line_error "--server-delay-us is a server option"
run 2 pingpong --client 127.0.0.1 --runs 0
one_line_error "--runs 0"
run 2 pingpong --client 127.0.0.1 --cpus 0,1
one_line_error "--cpus 0,1: one CPU"
run 2 pingpong --client 127.0.0.1 --format yaml
one_line_error "--format yaml: must be table, json or csv"
run 2 pingpong --client 127.0.0.1 --nonsense
one_line_error "unknown option '--nonsense'"
run 2 pingpong --client no.such.host.invalid
one_line_error "--client no.such.host.invalid"
run 0 pingpong --help
grep -q -- "--server-delay-us" "$tmp/out" || fail "--help does not list --server-delay-us"
run 0 --help
grep -q "^  pingpong " "$tmp/out" || fail "busypoll --help does not list pingpong"

# ---- nobody listening: 1 ----
port=$((20000 + RANDOM % 20000))
run 1 pingpong --client 127.0.0.1 --port "$port" -n 10 --runs 1 --timeout 2
one_line_error "cannot reach server 127.0.0.1:$port"

# ---- a server ----
# server_said PORT: the server said it serves PORT, or it is gone (port taken: the next try)
server_said() {
	grep -q "port $1" "$tmp/server.err" 2>/dev/null || ! kill -0 "$spid" 2>/dev/null
}
for try in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 20000))
	"$BP" pingpong --server --bind 127.0.0.1 --port "$port" "${pin_server[@]}" 2>"$tmp/server.err" &
	spid=$!
	bpt_wait_until 30 server_said "$port" || die "the pingpong server never said it serves port $port (30 s)"
	kill -0 "$spid" 2>/dev/null && break
	wait "$spid" 2>/dev/null
	spid=
done
[ -n "$spid" ] || { echo "FAIL: no server could start: $(cat "$tmp/server.err")" >&2; exit 1; }
common=(--client 127.0.0.1 --port "$port" "${pin_client[@]}" -n 200 --warmup-count 20 --timeout 5)

# table
run 0 pingpong "${common[@]}" --runs 2
grep -q "^avg " "$tmp/out" || fail "table has no avg line: $(cat "$tmp/out")"
grep -q "^spread of the run means" "$tmp/out" || fail "table has no spread line"
grep -q "^  syscalls " "$tmp/out" || fail "table has no syscalls per round trip"
[ "$(grep -c '^[12] ' "$tmp/out")" -eq 2 ] || fail "table does not list 2 runs"

# json: a document with the settings and every run
run 0 pingpong "${common[@]}" --runs 2 --tcp --format json
python3 - "$tmp/out" <<'EOF' || fail "json: $(head -c 300 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["settings"]["protocol"] == "tcp", d["settings"]
row = d["rows"][0]
assert len(row["runs"]) == 2 and row["runs"][0]["n"] == 200, row["runs"]
# one evidence shape in every tool: a round trip is the transaction, figures per_tx
assert row["server"]["transactions"] >= 440, row["server"]
assert row["client"]["syscalls_per_tx"] > 0 and "cpu_threads" in row["server"], row["client"]
assert d["interrupted"] is False
EOF

# csv: a header, a line per run and an average line, all with the same columns
run 0 pingpong "${common[@]}" --runs 3 --format csv --breakdown
[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "csv: $(wc -l <"$tmp/out") lines, want header + 3 runs + avg"
head -1 "$tmp/out" | grep -q "^row,client_mode,server_mode,run,n," || fail "csv header: $(head -1 "$tmp/out")"
grep -q "breakdown.server_processing.mean_us" "$tmp/out" || fail "csv has no breakdown columns"
grep -q "^run,epoll:block,epoll:block,avg,600," "$tmp/out" || fail "csv has no avg line over 600 samples"

# matrix and breakdown as a table (epoll:spin: polling, needs no NAPI)
run 0 pingpong "${common[@]}" --runs 1 --matrix --mode epoll:spin --breakdown
for label in "no busy polling" "client only" "both ends"; do
	grep -q "^$label " "$tmp/out" || fail "matrix has no '$label' row"
done
grep -q "^server processing " "$tmp/out" || fail "no server processing component"
grep -q "^change of the mean against no busy polling" "$tmp/out" || fail "no change between rows"
grep -q "empty epoll_wait(0)" "$tmp/out" || fail "no cost of an empty epoll_wait(0)"

# another user of this host may not switch the server's mode (it runs as root), but may measure
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# a copy of the program the other user can run (the build tree may be closed to it)
	nb=$(mktemp -d /tmp/bp-pp-nobody-XXXXXX) && chmod 755 "$nb" && cp "$BP" "$nb/busypoll" && chmod 755 "$nb/busypoll" ||
		fail "cannot make a copy of the program for uid 65534"
	as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups "$nb/busypoll")
	"${as_nobody[@]}" pingpong "${common[@]}" --runs 1 --matrix --mode epoll:spin >"$tmp/out" 2>"$tmp/err"
	[ $? -ne 0 ] || fail "a mode switch from another user (uid 65534) was taken"
	one_line_error "switching the mode of this server is for its own user (uid 0)"
	"${as_nobody[@]}" pingpong "${common[@]}" --runs 1 >"$tmp/out" 2>"$tmp/err" ||
		fail "a plain run of another user (no switch) failed: $(cat "$tmp/err")"
	rm -rf "$nb"
	run 0 pingpong "${common[@]}" --runs 1 --matrix --mode epoll:spin
else
	echo "SKIP part: a mode switch from another user (needs root and setpriv)"
fi

# garbage from one UDP socket: logged once for that peer, every datagram counted; then served
exec 3>"/dev/udp/127.0.0.1/$port"
printf 'garbage' >&3
printf 'more garbage, same peer' >&3
printf 'BPPG' >&3
exec 3>&-
run 0 pingpong "${common[@]}" --runs 1
[ "$(grep -c 'dropping bad UDP messages from 127.0.0.1' "$tmp/server.err")" -eq 1 ] ||
	fail "bad datagrams from one peer not logged exactly once: $(cat "$tmp/server.err")"

# Ctrl-C mid-run: 130, and what was measured is printed
"$BP" pingpong --client 127.0.0.1 --port "$port" "${pin_client[@]}" -n 100000000 --runs 3 --warmup-count 10 \
	>"$tmp/out" 2>"$tmp/err" &
cpid=$!
# mid-run: its loop thread has blocked for 1000 replies, far past the 10 warm-up ones
pids+=("$cpid")
bpt_wait_until 30 bpt_vcsw_over "$cpid" 1000 || die "the client never got going (30 s): $(cat "$tmp/err")"
kill -INT "$cpid"
wait "$cpid"
rc=$?
[ "$rc" -eq 130 ] || fail "interrupted client exited $rc, want 130 ($(cat "$tmp/err"))"
grep -q "^interrupted: partial results" "$tmp/out" || fail "no partial results after Ctrl-C: $(cat "$tmp/out")"
grep -q "^1 .*(interrupted)" "$tmp/out" || fail "the interrupted run is not shown: $(cat "$tmp/out")"

# a UDP request lost (the server stopped past the resend time) counts in its run and in the row's
"$BP" pingpong --client 127.0.0.1 --port "$port" "${pin_client[@]}" -n 100000000 --runs 1 --warmup-count 10 \
	--format json >"$tmp/out" 2>"$tmp/err" &
cpid=$!
pids+=("$cpid")
bpt_wait_until 30 bpt_vcsw_over "$cpid" 1000 || die "the client never got going (30 s): $(cat "$tmp/err")"
kill -STOP "$spid"
sleep 1 # well past the 200 ms after which an unanswered UDP request is resent (lost)
kill -CONT "$spid"
bpt_wait_until 30 bpt_vcsw_over "$cpid" 3000 || die "the client never went on after the server's stop (30 s)"
kill -INT "$cpid"
wait "$cpid"
python3 - "$tmp/out" <<'EOF' || fail "lost requests in json: $(head -c 600 "$tmp/out")"
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
assert row["runs"][0]["lost"] >= 1, row["runs"][0]
assert row["lost"] == sum(r["lost"] for r in row["runs"]), (row["lost"], [r["lost"] for r in row["runs"]])
EOF

# Ctrl-C in a matrix's first row: the rows never run say so (table "not run", json null), never zeros
# interrupted_matrix FORMAT: the matrix stopped in its first (blocking) row, its output in $tmp/out
interrupted_matrix() {
	"$BP" pingpong --client 127.0.0.1 --port "$port" "${pin_client[@]}" -n 100000000 --runs 1 --warmup-count 10 \
		--matrix --mode epoll:spin --format "$1" >"$tmp/out" 2>"$tmp/err" &
	cpid=$!
	pids+=("$cpid")
	bpt_wait_until 30 bpt_vcsw_over "$cpid" 1000 || die "the matrix client never got going (30 s): $(cat "$tmp/err")"
	kill -INT "$cpid"
	wait "$cpid"
	rc=$?
	[ "$rc" -eq 130 ] || fail "interrupted matrix exited $rc, want 130 ($(cat "$tmp/err"))"
}
interrupted_matrix table
for label in "client only" "both ends"; do
	grep -q "^$label .* not run$" "$tmp/out" || fail "matrix row '$label' never run is not shown as not run: $(cat "$tmp/out")"
done
interrupted_matrix json
python3 - "$tmp/out" <<'EOF' || fail "interrupted matrix json: $(head -c 600 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True
first, rest = d["rows"][0], d["rows"][1:]
assert first["runs_done"] == 1 and first["mean_us"] is not None, first
for row in rest:
    assert row["runs_done"] == 0 and row["runs"] == [], row
    for key in ("n", "lost", "min_us", "mean_us", "p50_us", "p99_us", "max_us", "mean_lo_us", "server_napi_id"):
        assert row[key] is None, (row["row"], key, row[key])
EOF

# a server that stops answering (SIGSTOP) mid-run: --timeout 1 ends the run with one
# line and exit 1, no sooner than 1 s after the last reply (which came at most a round
# trip before the stop) and, generously, within 30 s (a busy machine is slow to say so)
"$BP" pingpong --client 127.0.0.1 --port "$port" "${pin_client[@]}" -n 100000000 --runs 1 --warmup-count 10 \
	--timeout 1 >"$tmp/out" 2>"$tmp/err" &
cpid=$!
pids+=("$cpid")
bpt_wait_until 30 bpt_vcsw_over "$cpid" 1000 || die "the client never got going (30 s): $(cat "$tmp/err")"
bpt_freeze_and_wait "$spid" "$cpid"
kill -CONT "$spid"
[ "$rc" -eq 1 ] || fail "a silent server: client exited $rc, want 1 ($(cat "$tmp/err"))"
one_line_error "no reply from 127.0.0.1:$port for 1 s (--timeout)"
bpt_within "$waited" 950 30000 || fail "--timeout 1: the client gave up $waited ms after the server stopped, want 950..30000"

# the server is still there, and stops cleanly
run 0 pingpong "${common[@]}" --runs 1
kill -TERM "$spid"
wait "$spid"
rc=$?
spid=
[ "$rc" -eq 0 ] || fail "server exited $rc on SIGTERM"
grep -q "dropped 3 bad messages" "$tmp/server.err" || fail "server summary: $(tail -2 "$tmp/server.err")"

bpt_end "all passed"
