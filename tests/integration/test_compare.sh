#!/usr/bin/env bash
# busypoll compare, as a user runs it: json holds every column, the proof column is
# positive for a busy-poll mode and 0 for the baseline, the SVG is well-formed with
# one series per mode, nothing is left after a SIGINT mid-run, --rates gives a cell
# per mode and offered rate and two charts against the achieved rate, and a process
# without privileges gets loopback with a plain warning. Root only for the test-bed parts.
set -euo pipefail
. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"

bpt_require_root "compare builds a veth test bed, which needs root"
bpt_require python3 xmllint setpriv

# 1. two modes, one flow count, json and plot
"$BP" compare --flows 1 -l 1 --warmup 0.2 -q --format json --plot "$tmp/c.svg" \
	--modes "epoll:block;epoll:napi,usecs=64,budget=8" >"$tmp/c.json"
python3 - "$tmp/c.json" <<'PY' || die "compare json"
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert len(cells) == 2, cells
need = ["client_mode", "server_mode", "flows", "tps", "latency_us", "cpu_us_per_tx",
        "client_busy_poll_rx_per_tx", "server_busy_poll_rx_per_tx", "tps_vs_base_pct", "p50_vs_base_pct",
        "proof_missing", "runs"]
for c in cells:
    for k in need:
        assert k in c, (k, c)
    for p in ["p50", "p90", "p99", "p99_9", "p99_99"]:
        assert c["latency_us"][p] > 0, c
    assert c["tps"] > 0 and not c["failed"], c
base, napi = cells
assert base["client_mode"] == "epoll:block"
assert base["client_busy_poll_rx_per_tx"] == 0 and base["server_busy_poll_rx_per_tx"] == 0, base
# well above the flag's threshold (0.01) on each end; a loaded machine polls less often in time
assert napi["client_busy_poll_rx_per_tx"] > 0.1 and napi["server_busy_poll_rx_per_tx"] > 0.1, napi
assert not napi["proof_missing"], napi
assert base["tps_vs_base_pct"] is None and napi["tps_vs_base_pct"] is not None
assert len(d["napi"]) == 2 and all(n["id"] >= 256 for n in d["napi"]), d["napi"]
assert d["path"].startswith("veth test bed"), d["path"]
PY
xmllint --noout "$tmp/c.svg" || die "the SVG is not well-formed"
series=$(xmllint --xpath 'count(//*[local-name()="g"][@class="series"])' "$tmp/c.svg")
[[ $series == 2 ]] || die "SVG has $series series, expected 2 (one per mode)"
echo "ok   json columns, proof column, SVG with one series per mode"

# 1b. --runs 2: each throughput bar is labelled with its mode and shows the runs' spread
"$BP" compare --flows 1 -l 0.3 --warmup 0.1 --runs 2 -q --format json --plot "$tmp/r.svg" \
	--modes "epoll:block;epoll:spin" >"$tmp/r.json"
xmllint --noout "$tmp/r.svg" || die "the --runs SVG is not well-formed"
for mode in epoll:block epoll:spin; do
	n=$(xmllint --xpath "count(//*[local-name()=\"text\"][@class=\"bar-label\"][contains(., \"$mode\")])" "$tmp/r.svg")
	[[ $n -ge 1 ]] || die "no throughput bar labelled $mode in the plot"
done
spread=$(xmllint --xpath 'count(//*[local-name()="path"][@class="spread"])' "$tmp/r.svg")
[[ $spread -ge 2 ]] || die "the plot shows $spread spreads for 2 modes with --runs 2"
python3 - "$tmp/r.json" <<'PY' || die "compare --runs json"
import json, sys
for c in json.load(open(sys.argv[1]))["cells"]:
    assert c["runs"] == 2 and c["tps_min"] <= c["tps"] <= c["tps_max"], c
PY
echo "ok   --runs: bar labels and spread in the plot, min <= median <= max"

# 1d. spread by default: 3 runs per cell, round 1 of every mode before round 2 (never one
# mode's runs back to back), each run in json with the median, min, max and mean
"$BP" compare --flows 1 -l 0.6 --warmup 0.1 --format json --modes "epoll:block;epoll:spin" \
	>"$tmp/d.json" 2>"$tmp/d.err"
order=$(sed -n 's/.*\] \(epoll:[a-z]*\) .* run \([0-9]\)\/3 .*/\1 \2/p' "$tmp/d.err" | tr '\n' ',')
[[ $order == "epoll:block 1,epoll:spin 1,epoll:block 2,epoll:spin 2,epoll:block 3,epoll:spin 3," ]] ||
	die "the default runs are not 3 alternated across the modes: order '$order' from $(cat "$tmp/d.err")"
python3 - "$tmp/d.json" <<'PY' || die "compare default spread json"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
assert d["settings"]["runs"] == 3, ("3 runs by default", d["settings"])
for c in d["cells"]:
    t = [s["tps"] for s in c["samples"]]
    assert c["runs"] == 3 and len(t) == 3, ("each of the 3 runs in samples", c)
    assert c["tps"] == statistics.median(t), ("tps is the median of the runs", c)
    assert c["tps_min"] == min(t) and c["tps_max"] == max(t), ("the spread is min..max of the runs", c)
    assert abs(c["tps_mean"] - statistics.mean(t)) < 1e-6 * c["tps_mean"] + 1e-6, ("tps_mean the mean", c)
    p99 = [s["latency_us"]["p99"] for s in c["samples"]]
    assert c["p99_us_min"] == min(p99) and c["p99_us_max"] == max(p99), ("P99 spread of the runs", c)
PY
"$BP" compare --flows 1 -l 0.3 --warmup 0.1 --modes "epoll:block" >"$tmp/d.txt" 2>/dev/null
grep -q "over 3 runs: tx/s .* mean .*P99 .* mean" "$tmp/d.txt" || die "the table shows no spread and mean: $(cat "$tmp/d.txt")"
echo "ok   3 runs by default, alternated across modes; median, spread and mean in json and table"

# 1e. a saturated open loop: advice naming compare's own options; no suspend note without a
# suspend mode; the legend explains every column
out=$("$BP" compare --runs 1 --flows 1 -l 0.5 --warmup 0.1 --rates 5000k --modes "epoll:block" 2>/dev/null) || true
grep -q "saturated: .*lower --rates or add --flows" <<<"$out" || die "no saturated cell with compare's advice: $out"
# an achieved rate on the saturated row too (its closed loop's), and the legend says what it is
grep -qE "^epoll:block +1 +5000000 +[0-9]+  saturated: " <<<"$out" || die "the saturated row has no achieved rate: $out"
grep -q "^saturated: offered more than the mode takes" <<<"$out" || die "the legend does not explain a saturated row's tx/s: $out"
grep -q -- "raise --max-outstanding" <<<"$out" && die "compare advises --max-outstanding, which it does not take: $out"
grep -q "epoll:suspend sets" <<<"$out" && die "the suspend note printed without a suspend mode: $out"
grep -q "^CPU us/tx: " <<<"$out" || die "the legend does not explain CPU us/tx: $out"
echo "ok   saturated advice names compare's options; no suspend note without suspend; CPU us/tx in the legend"

# 1c. the default epoll:suspend engages on the bed; one that cannot (usecs=0) is flagged with the reason
"$BP" compare --flows 1 -l 0.5 --warmup 0.2 -q --format json \
	--modes "epoll:block;epoll:suspend;epoll:suspend,usecs=0" >"$tmp/s.json"
python3 - "$tmp/s.json" <<'PY' || die "epoll:suspend on the test bed"
import json, sys
d = json.load(open(sys.argv[1]))
base, susp, zero = d["cells"]
assert susp["client_busy_poll_rx_per_tx"] > 0.1 and susp["server_busy_poll_rx_per_tx"] > 0.1, susp
assert not susp["proof_missing"] and susp["proof_note"] is None, susp
assert zero["proof_missing"] and zero["proof_note"], zero
# each cell says the NAPI settings it ran at: the blocking one as found, suspend's its own on both ends
found = {n["id"]: n for n in d["napi"]}
keys = ("defer_hard_irqs", "gro_flush_timeout_ns", "irq_suspend_timeout_ns")
assert sorted(n["id"] for n in base["napi_ran_at"]) == sorted(found), (base["napi_ran_at"], found)
assert all(all(n[k] == found[n["id"]][k] for k in keys) for n in base["napi_ran_at"]), (base["napi_ran_at"], found)
assert sorted(n["end"] for n in susp["napi_ran_at"]) == ["client", "server"], susp["napi_ran_at"]
assert all(n["defer_hard_irqs"] > 0 and n["irq_suspend_timeout_ns"] > 0 for n in susp["napi_ran_at"]), susp["napi_ran_at"]
PY
echo "ok   epoll:suspend engages by default; usecs=0 is flagged with its reason; each cell's NAPI settings"

# 2. csv: a header and one row per cell, same number of fields
"$BP" compare --flows 1 -l 0.5 --warmup 0.1 -q --format csv --modes "epoll:block" >"$tmp/c.csv"
python3 - "$tmp/c.csv" <<'PY' || die "compare csv"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 2, rows
assert len(rows[0]) == len(rows[1]) and "latency_us.p99_99" in rows[0], rows[0]
PY
echo "ok   csv"

# 3. SIGINT mid-run: partial results, exit 130, no namespace left
"$BP" compare --runs 1 --flows 1 -l 2 --warmup 0.1 --modes "epoll:block;epoll:spin;epoll:napi,usecs=64,budget=8" \
	>"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
pids+=("$pid")
# mid-run: the second cell has begun (the first one measured)
bpt_wait_until 60 bpt_file_has "$tmp/int.err" '\[ 2/3\] epoll:spin' || die "compare never reached its second cell"
kill -INT $pid
rc=0
wait $pid || rc=$?
[[ $rc == 130 ]] || die "compare interrupted exited $rc, expected 130"
grep -q "interrupted: partial results" "$tmp/int.out" || die "no partial-results note after SIGINT"
# compare names its bed after its pid: look for exactly that (other beds may come and go)
left=$(ip netns list | grep -c "^bp-cmp$pid-" || true)
[[ $left == 0 ]] || die "namespaces left after SIGINT: $(ip netns list | grep "^bp-cmp$pid-")"
echo "ok   SIGINT: partial results, exit 130, test bed removed"

# 4. --rates: a cell per mode and offered rate with the open loop's columns, and the two
# charts against the achieved rate with one series per mode in each
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --format json --plot "$tmp/rates.svg" --rates 1k,2k,max \
	--modes "epoll:block;epoll:spin" >"$tmp/rates.json"
python3 - "$tmp/rates.json" <<'PY' || die "compare --rates json"
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert d["settings"]["rates"] == "1k,2k,max", d["settings"]
got = sorted((c["client_mode"], c["offered_rate"] or 0) for c in cells)
assert got == [(m, r) for m in ("epoll:block", "epoll:spin") for r in (0, 1000, 2000)], got
cell = {(c["client_mode"], c["offered_rate"] or 0): c for c in cells}
for c in cells:
    assert not c["failed"] and not c["saturated"] and c["runs"] == 1, ("--runs 1", c)
    assert c["achieved_rate"] == c["tps"] and c["tps"] > 0, c
    for side in ("client_cpu_util_pct", "server_cpu_util_pct"):
        u = c[side]
        assert u["total"] > 0 and abs(u["user"] + u["system"] - u["total"]) < 1e-6 * u["total"] + 1e-9, (side, c)
    if c["closed_loop"]:
        assert c["offered_rate"] is None and c["latency_from_send_us"] is None and c["queued_pct"] is None, c
    else:
        assert c["offered_rate"] in (1000, 2000) and c["latency_from_send_us"]["p50"] > 0, c
        assert c["queued_pct"] is not None and c["late_pct"] is not None, c
        # the open loop answered what was offered, not what the path could carry
        assert c["transactions"] < cell[(c["client_mode"], 0)]["transactions"], c
# CPU against the base: which mode saves CPU, the question a rates table answers
assert cell[("epoll:block", 2000)]["cpu_vs_base_pct"] is None, cells
assert cell[("epoll:spin", 2000)]["cpu_vs_base_pct"] is not None, ("no CPU vs base for epoll:spin", cells)
# tx/s against the base means nothing where the rate was offered: null there, a figure in the closed loop
assert cell[("epoll:spin", 2000)]["tps_vs_base_pct"] is None, ("tx/s vs base at an offered rate", cells)
assert cell[("epoll:spin", 0)]["tps_vs_base_pct"] is not None, ("no tx/s vs base in the closed loop", cells)
# a spinning side never sleeps, a blocking one at 2000/s mostly does: the CPU columns say so
assert cell[("epoll:spin", 2000)]["server_cpu_util_pct"]["total"] > \
    2 * cell[("epoll:block", 2000)]["server_cpu_util_pct"]["total"], cells
PY
xmllint --noout "$tmp/rates.svg" || die "the --rates SVG is not well-formed"
for chart in latency cpu; do
	series=$(xmllint --xpath "count(//*[local-name()='g'][@data-chart='$chart']/*[local-name()='g'][@class='series'])" \
		"$tmp/rates.svg")
	[[ $series == 2 ]] || die "the $chart chart has $series series, expected 2 (one per mode)"
	points=$(xmllint --xpath "count(//*[local-name()='g'][@data-chart='$chart']/*[local-name()='g'][@class='series'][@data-points='3'])" \
		"$tmp/rates.svg")
	[[ $points == 2 ]] || die "the $chart chart: $points series with a point per rate, expected 2"
	# each chart its own legend, a swatch per mode and the closed loop's mark
	entries=$(xmllint --xpath "count(//*[local-name()='g'][@data-chart='$chart']/*[local-name()='g'][@class='legend']/*[local-name()='text'])" \
		"$tmp/rates.svg")
	[[ $entries == 3 ]] || die "the $chart chart's legend has $entries entries, expected 3 (two modes, the closed loop)"
	axis=$(xmllint --xpath "string(//*[local-name()='g'][@data-chart='$chart']/@data-rate-axis)" "$tmp/rates.svg")
	[[ $axis == log ]] || die "the $chart chart's rate axis is '$axis', expected log"
	# the closed loop drawn apart: its own mark per line, and the lines join only 1k and 2k
	closed=$(xmllint --xpath "count(//*[local-name()='g'][@data-chart='$chart']//*[@class='closed-loop'])" "$tmp/rates.svg")
	[[ $closed == 4 ]] || die "the $chart chart has $closed closed-loop marks, expected 4 (two lines of two modes)"
	lines=$(xmllint --xpath "//*[local-name()='g'][@data-chart='$chart']//*[local-name()='polyline']/@points" \
		"$tmp/rates.svg" | grep -o 'points="[^"]*"' | awk -F, '{print NF - 1}' | sort | uniq -c | tr -s ' ')
	[[ $lines == " 4 2" ]] || die "the $chart chart's lines (count, points): '$lines', expected 4 of 2 (1k-2k; the closed loop apart)"
done
echo "ok   --rates: a cell per mode and rate, utilisation columns, two charts with one series per mode"

# 5. without privileges: loopback, said plainly
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$BP" compare --flows 1 -l 0.3 --warmup 0 --modes "epoll:block" 2>&1) || die "unprivileged compare failed: $out"
grep -q "not root" <<<"$out" || die "no 'not root' notice: $out"
grep -q "loopback" <<<"$out" || die "no loopback notice: $out"
echo "ok   unprivileged: loopback with a plain notice"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$BP" compare --modes "epoll:napi,budget=128" 2>&1) && die "budget=128 unprivileged should die"
grep -q "CAP_NET_ADMIN" <<<"$out" || die "no capability named: $out"
echo "ok   unprivileged: a privileged mode names its capability"
echo "8 passed, 0 failed"
