#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# busypoll rr --rate as a user runs it, over loopback: the table and json say what was
# offered and achieved and the latency from the send; a server that stops answering
# (its --test-hold hook) ends the run with exit 1, one line on stderr that says the
# server cannot keep up and what to change, and the partial result on stdout marked
# failed. Counts and exit statuses, never timings.
set -euo pipefail
. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
srv=
cleanup() {
	[[ -n $srv ]] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
}
command -v python3 >/dev/null || { echo "SKIP: python3 reads the json"; exit 77; }

# serve ARGS...: an rr server on a free loopback port (in $port), once it listens
serve() {
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$BP" rr --server --bind 127.0.0.1 --port "$port" -q "$@" 2>"$tmp/srv.err" &
	srv=$!
	bpt_wait_until 30 serving || die "the server never listened on $port (30 s)"
	! bpt_gone "$srv" || die "the server exited: $(cat "$tmp/srv.err")"
}
serving() { bpt_listening "$port" || bpt_gone "$srv"; }
stop() {
	kill "$srv"
	wait "$srv" 2>/dev/null || true
	srv=
}

# 1. an open loop the server keeps up with: json and table
serve
"$BP" rr --client 127.0.0.1 --port "$port" -F 2 --rate 2k --arrivals fixed -l 1 --warmup 0.2 \
	--format json >"$tmp/ok.json"
python3 - "$tmp/ok.json" <<'PY' || die "rr --rate json"
import json, sys
d = json.load(open(sys.argv[1]))
s, o = d["settings"], d["open_loop"]
assert s["rate"] == 2000 and s["arrivals"] == "fixed", s
assert o["offered_rate"] == 2000 and o["achieved_rate"] == d["tps"], o
assert abs(d["transactions"] - 2000) <= 100, d["transactions"]  # 1 s at 2000/s, fixed gaps (edges: 5%)
assert o["latency_from_send_us"]["p50"] > 0 and o["send_lag_us"] is not None, o
assert o["max_outstanding"] == 1000 and 1 <= o["outstanding_peak"] <= 1000, o
for side in ("client", "server"):
    u = d[side]["cpu_util_pct"]
    assert u["total"] > 0 and abs(u["user"] + u["system"] - u["total"]) < 1e-9 + 1e-6 * u["total"], (side, u)
    assert "%" in d[side]["cpu_threads_util"], d[side]
assert d["failed"] is None, d["failed"]
PY
"$BP" rr --client 127.0.0.1 --port "$port" --rate 1k -l 0.3 --warmup 0 >"$tmp/ok.txt"
grep -q "^open loop       offered 1000.0/s (poisson), achieved " "$tmp/ok.txt" || die "no open-loop line: $(cat "$tmp/ok.txt")"
grep -q "^from send us    min " "$tmp/ok.txt" || die "no latency from the send"
grep -q "CPU % of one CPU" "$tmp/ok.txt" || die "no utilisation row"
stop
echo "ok   --rate: offered and achieved rate, both latencies, utilisation"

# 2. a server that stops answering: exit 1, one line on stderr, the partial result kept
serve --test-hold 20:5000
rc=0
"$BP" rr --client 127.0.0.1 --port "$port" --rate 2000 --arrivals fixed --max-outstanding 40 -l 3 --warmup 0 \
	>"$tmp/sat.txt" 2>"$tmp/sat.err" || rc=$?
stop
[[ $rc == 1 ]] || die "a server that cannot keep up: exit $rc, expected 1"
[[ $(wc -l <"$tmp/sat.err") == 1 ]] || die "stderr is not one line: $(cat "$tmp/sat.err")"
grep -q "cannot keep up" "$tmp/sat.err" || die "stderr does not say the server cannot keep up: $(cat "$tmp/sat.err")"
grep -q -- "--max-outstanding 40" "$tmp/sat.err" || die "stderr does not name the limit"
grep -q "lower --rate" "$tmp/sat.err" || die "stderr does not say what to do"
grep -q "^failed: .*cannot keep up.*; partial results" "$tmp/sat.txt" || die "stdout lacks the failed mark"
grep -q "^open loop " "$tmp/sat.txt" || die "stdout lacks the partial figures"
echo "ok   a server that cannot keep up: exit 1, one line, partial results"
echo "2 passed, 0 failed"
