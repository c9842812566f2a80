#!/usr/bin/env bash
# busypoll compare's two judgements beside its figures, as root on its veth test bed:
#  - the diagnosis: with TSO on (--bed-tso), each busy-poll cell shows no busy
#    polling and names TSO, on each end, with the fix; with GRO off (--bed-no-gro),
#    GRO; on the correct bed a cell
#    whose busy polling ran has no diagnosis line;
#  - the disturbance check: a CPU hog pinned on the server's CPU during epoll:spin
#    (which never sleeps) marks the cell disturbed with the server's reason, and the
#    run ends with the one line that says the figures are not to be compared; during
#    epoll:block (which sleeps) the reason is the other task's share of that CPU.
# Marks and reasons are asserted, never a time.
set -euo pipefail
. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"

bpt_require_root "compare builds a veth test bed, which needs root"
bpt_require python3 taskset

hog=
cleanup() {
	[ -n "$hog" ] && kill -KILL "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
	return 0
}

# 1. TSO on: every busy-poll cell names TSO on both ends, in json and in the table
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --bed-tso --format json \
	--modes "epoll:block;epoll:napi,usecs=64;uring:napi,usecs=64" >"$tmp/tso.json" 2>"$tmp/tso.err" ||
	die "compare --bed-tso failed: $(cat "$tmp/tso.err")"
python3 - "$tmp/tso.json" <<'PY' || die "compare --bed-tso json: $(head -c 600 "$tmp/tso.json")"
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert len(cells) == 3, [c["label"] for c in cells]
base = cells[0]
assert base["diagnosis"] == {"client": None, "server": None} and base["proof_note"] is None, base
for c in cells[1:]:
    assert c["proof_missing"], ("TSO on: busy polling should not have run", c["label"])
    for side, dev in (("client", "bpva"), ("server", "bpvb")):
        why = c["diagnosis"][side]
        assert why and "TSO is on for " + dev in why and "ethtool -K %s tso off" % dev in why, (c["label"], side, why)
    assert "TSO is on" in c["proof_note"], c["proof_note"]
PY
echo "ok   TSO on: each busy-poll cell names TSO on both ends (json)"
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --bed-tso --modes "epoll:napi,usecs=64" >"$tmp/tso.txt" 2>&1 ||
	die "compare --bed-tso (table) failed: $(cat "$tmp/tso.txt")"
grep -q "why: client on the test bed: TSO is on for bpva" "$tmp/tso.txt" ||
	die "the table names no cause for the client: $(cat "$tmp/tso.txt")"
grep -q "why: server on the test bed: TSO is on for bpvb" "$tmp/tso.txt" ||
	die "the table names no cause for the server: $(cat "$tmp/tso.txt")"
echo "ok   TSO on: the table's note names TSO and its fix on each end"

# 1b. GRO off: veth has no NAPI, and the busy-poll cell names GRO on both ends
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --bed-no-gro --format json --modes "epoll:napi,usecs=64" \
	>"$tmp/gro.json" 2>"$tmp/gro.err" || die "compare --bed-no-gro failed: $(cat "$tmp/gro.err")"
python3 - "$tmp/gro.json" <<'PY' || die "compare --bed-no-gro json: $(head -c 600 "$tmp/gro.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
assert c["proof_missing"], c
for side, dev in (("client", "bpva"), ("server", "bpvb")):
    why = c["diagnosis"][side]
    assert why and "GRO is off for " + dev in why and "ethtool -K %s gro on" % dev in why, (side, why)
PY
echo "ok   GRO off: the busy-poll cell names GRO on both ends"

# 2. the correct bed: busy polling ran, no diagnosis line
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --format json --modes "epoll:napi,usecs=64" \
	>"$tmp/ok.json" 2>"$tmp/ok.err" || die "compare failed: $(cat "$tmp/ok.err")"
python3 - "$tmp/ok.json" <<'PY' || die "compare json on the correct bed: $(head -c 600 "$tmp/ok.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
assert not c["proof_missing"], c
assert c["diagnosis"] == {"client": None, "server": None} and c["proof_note"] is None, c
PY
echo "ok   the correct bed: busy polling ran and no diagnosis is given"

# 3. a hog on the server's CPU (CPU 1 by default, 0 on one CPU) during epoll:spin
cpu=1
[ "$(nproc)" -gt 1 ] || cpu=0
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --format json --modes "epoll:spin" \
	>"$tmp/hog.json" 2>"$tmp/hog.err" || die "compare under a hog failed: $(cat "$tmp/hog.err")"
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --modes "epoll:spin" >"$tmp/hog.txt" 2>&1 ||
	die "compare (table) under a hog failed: $(cat "$tmp/hog.txt")"
kill -KILL "$hog"
wait "$hog" 2>/dev/null || true
hog=
python3 - "$tmp/hog.json" <<'PY' || die "compare json under a hog: $(head -c 600 "$tmp/hog.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
assert c["disturbed"] is True, c
r = c["disturbed_reason"]
assert r and r.startswith("server: a spinning loop thread got "), r
assert c["samples"][0]["disturbed_reason"], c["samples"]
PY
grep -q "the machine was busy" "$tmp/hog.err" || die "json run: no closing line on stderr: $(cat "$tmp/hog.err")"
grep -Eq '^epoll:spin .* ~$' "$tmp/hog.txt" || die "the table does not mark the cell: $(cat "$tmp/hog.txt")"
grep -q "^~ epoll:spin, 1 flow: disturbed: server: " "$tmp/hog.txt" || die "the table gives no reason: $(cat "$tmp/hog.txt")"
grep -q "^~: the machine disturbed a run of the cell (.*other tasks on the pinned CPUs" "$tmp/hog.txt" ||
	die "the legend does not name other tasks on the pinned CPUs: $(grep '^~:' "$tmp/hog.txt")"
tail -1 "$tmp/hog.txt" | grep -q "the machine was busy during the run: the figures of the cells marked ~ are not to be compared" ||
	die "the run does not end with the busy line: $(tail -3 "$tmp/hog.txt")"
echo "ok   a hog on the server's CPU marks the epoll:spin cell disturbed with the server's reason"

# 4. the same hog during epoll:block, a mode that sleeps and needs little CPU: the other
#    task's share of the server's pinned CPU is the reason
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
"$BP" compare --runs 1 --flows 1 -l 1 --warmup 0.2 -q --format json --modes "epoll:block" \
	>"$tmp/hogb.json" 2>"$tmp/hogb.err" || die "compare epoll:block under a hog failed: $(cat "$tmp/hogb.err")"
kill -KILL "$hog"
wait "$hog" 2>/dev/null || true
hog=
python3 - "$tmp/hogb.json" <<'PY' || die "compare epoll:block json under a hog: $(head -c 900 "$tmp/hogb.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
assert c["disturbed"] is True, c
r = c["disturbed_reason"]
assert r and r.startswith("server: other tasks took ") and "of its loop threads' pinned CPUs (20% or more)" in r, r
PY
echo "ok   a hog on the server's CPU marks the epoll:block cell disturbed: other tasks took its CPU"
bpt_end
