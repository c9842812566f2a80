#!/usr/bin/env bash
# busypoll tune, as a user runs it, on the veth test bed with a small budget: bad input
# refused with exit 2 before any work; a goal no candidate meets says so in one line
# with the closest candidate (exit 3); a loose goal gets a busy-poll recommendation
# whose confirmation proves it, beside epoll:block and the tuned recipe; the json lists
# every candidate with its samples and interval; the plot marks the answer and the Pareto
# front; net.core.busy_read and busy_poll are
# back to their values after a normal end and, through the journal, after SIGKILL.
set -euo pipefail
. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"

bpt_require_root "tune builds a veth test bed and sets sysctls, which needs root"
bpt_require python3

sysctls() { echo "$(cat /proc/sys/net/core/busy_read) $(cat /proc/sys/net/core/busy_poll)"; }
killed=
cleanup() {
	[[ -n $killed ]] && { ip netns del "bp-cmp$killed-a" 2>/dev/null || true; ip netns del "bp-cmp$killed-b" 2>/dev/null || true; }
	"$BP" agent --restore >/dev/null 2>&1 || true
}
before=$(sysctls)

# 1. bad input: exit 2 and one line, before any test bed is built
refused() {
	local want=$1 rc=0 out
	shift
	out=$("$BP" tune "$@" 2>&1 >/dev/null) || rc=$?
	[[ $rc == 2 ]] || die "tune $* exited $rc, expected 2: $out"
	grep -q -- "$want" <<<"$out" || die "tune $*: '$out' does not say '$want'"
	[[ $(wc -l <<<"$out") == 1 ]] || die "tune $*: more than one line: $out"
}
refused "--goal is missing" --rate 1000
refused "--goal p99=fast: give p99=TIME" --goal p99=fast
refused "--goal p99=0us: the P99 is a time above 0" --goal p99=0us
refused "--goal max-tps needs --cpu-budget" --goal max-tps
refused "--cpu-budget goes with --goal max-tps" --goal p99=50us --cpu-budget 1
refused "--budget 5 s is too short for" --goal p99=50us --budget 5s
refused "no candidate is left to search" --goal p99=50us --fix usecs=12345
refused "--fix usecs: give one KEY=VALUE" --goal p99=50us --fix usecs
refused "--plot $tmp/p.png: the plot is SVG, give a name ending in .svg" --goal p99=50us --plot "$tmp/p.png"
refused "--plot /nonexistent-dir/p.svg: cannot write there" --goal p99=50us --plot /nonexistent-dir/p.svg
echo "ok   bad input: exit 2, one line, before any work"

# 2. a goal no candidate meets: one line with the closest and what it misses by, exit 3
rc=0
"$BP" tune -q --goal p99=0.001us --rate 1000 --budget 8s --modes "epoll:napi,usecs=64,budget=8" \
	--format json >"$tmp/imp.json" 2>"$tmp/imp.err" || rc=$?
[[ $rc == 3 ]] || die "an impossible goal exited $rc, expected 3: $(cat "$tmp/imp.err")"
grep -q "no candidate meets p99 <= 0.001 us: the closest, epoll:napi,usecs=64,budget=8, has P99 .* us over" \
	"$tmp/imp.err" || die "no one line naming the closest candidate: $(cat "$tmp/imp.err")"
python3 - "$tmp/imp.json" <<'PY' || die "impossible goal json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["met"] is False and d["recommendation"] is None, d
assert d["closest"] == "epoll:napi,usecs=64,budget=8" and "over" in d["verdict"], d
PY
[[ $(sysctls) == "$before" ]] || die "busy_read/busy_poll $(sysctls) after an impossible goal, were $before"
echo "ok   impossible goal: one line with the closest candidate, exit 3"

# 3. a loose goal: a busy-poll recommendation, proven in the confirmation, beside both baselines;
#    every candidate in json with its samples and its interval; the sysctls back after the end
"$BP" tune --goal p99=5s --rate 1000 --budget 14s --format json --plot "$tmp/tune.svg" \
	--modes "epoll:napi,usecs=64,budget=8;epoll:napi,usecs=200,budget=8" >"$tmp/ok.json" 2>"$tmp/ok.err" ||
	die "a loose goal exited $?: $(cat "$tmp/ok.err")"
grep -q "s left" "$tmp/ok.err" || die "no progress line with the time left: $(cat "$tmp/ok.err")"
python3 - "$tmp/ok.json" <<'PY' || die "tune json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["met"] and d["confirmed"], d
c = {x["label"]: x for x in d["candidates"]}
rec = [x for x in d["candidates"] if x["recommended"]]
assert len(rec) == 1 and rec[0]["label"] == d["recommendation"], d
r = rec[0]
assert r["mode"].startswith("epoll:napi"), r
conf = r["confirmation"]
assert conf["proven"] and conf["busy_poll_rx_per_tx"] >= 0.01, ("the recommendation proves itself", conf)
assert conf["p99_us"] <= d["goal_p99_us"], conf
for base in ["epoll:block", "epoll:block + busy_read=busy_poll=50 (tuned)"]:
    b = c[base]
    assert b["confirmation"] is not None and b["confirmation"]["latencies"] > 0, ("baseline confirmed", b)
    assert len([s for s in b["samples"] if s["phase"] == "confirmation"]) == d["confirmation_rounds"], b
assert c["epoll:block + busy_read=busy_poll=50 (tuned)"]["confirmation"]["busy_poll_rx_per_tx"] > 0, \
    "the tuned recipe busy-polled (its sysctls were set)"
for x in d["candidates"]:
    if not x["in_search"]:
        continue
    s = x["search"]
    assert x["samples"] and all(k in x["samples"][0] for k in ["rung", "seconds", "transactions", "p99_us", "cpu", "tps"]), x
    assert s["latencies"] > 0 and s["p99_lo_us"] <= s["p99_us"], x
    assert s["p99_hi_us"] is None or s["p99_us"] <= s["p99_hi_us"], x
# a phase's P99 is the median of its runs' own (each with its interval), not their latencies pooled
import statistics
for x in d["candidates"]:
    for phase, key in [("search", "search"), ("confirmation", "confirmation")]:
        runs = [s for s in x["samples"] if s["phase"] == phase]
        if not runs or x[key] is None:
            continue
        assert x[key]["runs"] == len(runs), ("every run of the phase kept", x["label"], phase)
        for s in runs:
            assert s["p99_lo_us"] <= s["p99_us"] and (s["p99_hi_us"] is None or s["p99_us"] <= s["p99_hi_us"]), s
        want = statistics.median(s["p99_us"] for s in runs)
        assert abs(x[key]["p99_us"] - want) <= 1e-6 * want, ("the runs' median P99", x["label"], phase, x[key], runs)
PY
# the plot: well-formed SVG, a point per measured candidate at its json figures, the
# answer ringed, the Pareto front drawn, the goal line
python3 - "$tmp/ok.json" "$tmp/tune.svg" <<'PY' || die "tune --plot"
import json, sys
import xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
svg = ET.parse(sys.argv[2]).getroot()  # raises on SVG that is not well-formed
ns = "{http://www.w3.org/2000/svg}"
groups = [g for g in svg.iter(ns + "g") if g.get("data-label")]
drawn = {g.get("data-label"): g for g in groups}
for x in d["candidates"]:
    fig = x["confirmation"] or x["search"]
    if not fig or not fig["latencies"]:
        continue
    g = drawn.get(x["label"])
    assert g is not None, ("every measured candidate is drawn", x["label"], list(drawn))
    assert abs(float(g.get("data-cpu")) - fig["cpu"]) < 1e-3, ("drawn at its CPU", x["label"], g.get("data-cpu"), fig)
    assert abs(float(g.get("data-p99-us")) - fig["p99_us"]) < 1e-2, ("drawn at its P99", x["label"], fig)
rec = [g for g in groups if g.get("class").split()[0] == "recommendation"]
assert len(rec) == 1 and rec[0].get("data-label") == d["recommendation"], ("the answer marked once", [g.get("class") for g in groups])
assert any(c.tag == ns + "circle" and c.get("r") == "10" for c in rec[0]), "the answer is ringed"
assert any(g.get("class").split()[0] == "baseline" and g.get("data-label") == "epoll:block" for g in groups), "epoll:block marked as the baseline"
front = [p for p in svg.iter(ns + "polyline") if p.get("class") == "pareto-front"]
assert len(front) == 1 and front[0].get("points").strip(), "the Pareto front is drawn"
assert any("pareto" in g.get("class").split() for g in groups), "some point is on the front"
assert any(l.get("class") == "goal" for l in svg.iter(ns + "line")), "the goal line is drawn"
PY
[[ $(sysctls) == "$before" ]] || die "busy_read/busy_poll $(sysctls) after the run, were $before"
echo "ok   recommendation proven beside both baselines; every candidate with samples and interval; sysctls back"

# 4. csv: a header and one row per candidate, the same number of fields
"$BP" tune -q --goal p99=5s --rate 1000 --budget 8s --format csv --modes "epoll:napi,usecs=64,budget=8" \
	>"$tmp/ok.csv" 2>"$tmp/csv.err" || die "tune csv exited $?: $(cat "$tmp/csv.err") $(cat "$tmp/ok.csv")"
python3 - "$tmp/ok.csv" <<'PY' || die "tune csv"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 4 and all(len(r) == len(rows[0]) for r in rows), rows
assert "confirmation.p99_lo_us" in rows[0], rows[0]
PY
echo "ok   csv"

# 5. Ctrl-C while the recipe's sysctls are set: exit 130, the sysctls back
"$BP" tune -q --goal p99=5s --rate 1000 --budget 60s --fix busy_read=50 >/dev/null 2>"$tmp/int.err" &
pid=$!
pids+=("$pid")
recipe_on() { [[ $(sysctls) == "50 50" ]]; }
bpt_wait_until 60 recipe_on || die "tune never set the recipe's sysctls (now $(sysctls))"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc == 130 ]] || die "tune interrupted exited $rc, expected 130: $(cat "$tmp/int.err")"
[[ $(sysctls) == "$before" ]] || die "busy_read/busy_poll $(sysctls) after Ctrl-C, were $before"
echo "ok   Ctrl-C: exit 130, busy_read and busy_poll back"

# 6. SIGKILL while the recipe's sysctls are set: the journal puts them back (agent --restore)
"$BP" tune -q --goal p99=5s --rate 1000 --budget 60s --fix busy_read=50 >/dev/null 2>&1 &
pid=$!
pids+=("$pid")
killed=$pid
bpt_wait_until 60 recipe_on || die "tune never set the recipe's sysctls (now $(sysctls))"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
grep -lq "pid=$pid " /run/busypoll/session-*.journal 2>/dev/null || die "no journal left by the killed tune"
"$BP" agent --restore >"$tmp/restore.out" 2>&1 || die "agent --restore exited $?: $(cat "$tmp/restore.out")"
[[ $(sysctls) == "$before" ]] || die "busy_read/busy_poll $(sysctls) after SIGKILL and --restore, were $before"
echo "ok   SIGKILL: the journal restores busy_read and busy_poll"

bpt_end
