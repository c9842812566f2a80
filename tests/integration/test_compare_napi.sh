#!/bin/bash
# SPDX-License-Identifier: MIT
# busypoll compare and the per-NAPI settings of epoll:suspend, as root: while the
# suspend cell runs, the test bed's NAPIs carry that mode's values (set when each
# end first sees its NAPI id, read back over netdev netlink with `busypoll napi
# list`); when the next cell starts, every NAPI is back to what compare found at
# the start (0 on a fresh bed), on both ends. States are waited for (compare's
# progress lines, the values), never slept for.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require_root "compare builds a veth test bed, which needs root"
bpt_require python3

cpid=
cleanup() {
	[ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
}

# values no default has, so a match is the mode's doing
suspend="epoll:suspend,defer=9,gro-flush=40000,suspend=4000000"
"$BP" compare --runs 1 --flows 1 -l 3 --warmup 0.2 --modes "$suspend;epoll:block" --format json \
	>"$tmp/out.json" 2>"$tmp/err" &
cpid=$!

# napi_is SIDE DEFER GRO SUSPEND: every NAPI of compare's bed end SIDE (a or b) has these values
napi_is() {
	"$BP" napi list --netns "bp-cmp$cpid-$1" --format json 2>/dev/null | python3 -c '
import json, sys
want = [int(v) for v in sys.argv[1:4]]
d = json.load(sys.stdin)
ok = d["napi"] and all([n["defer_hard_irqs"], n["gro_flush_timeout_ns"], n["irq_suspend_timeout_ns"]] == want
                       for n in d["napi"])
sys.exit(0 if ok else 1)' "$2" "$3" "$4"
}

bpt_wait_until 60 bpt_file_has "$tmp/err" '\[ 1/2\] epoll:suspend' || fail "compare never started its suspend cell"
for side in b a; do
	bpt_wait_until 10 napi_is "$side" 9 40000 4000000 ||
		fail "end $side: the NAPI never got the suspend mode's values during its cell: $("$BP" napi list --netns "bp-cmp$cpid-$side" 2>&1)"
done
echo "ok   during the suspend cell both ends' NAPIs have defer 9, gro-flush 40000, suspend 4000000"
bpt_wait_until 60 bpt_file_has "$tmp/err" '\[ 2/2\] epoll:block' || fail "compare never started its second cell"
for side in a b; do
	napi_is "$side" 0 0 0 || fail "end $side: NAPI settings not restored for the next cell: $("$BP" napi list --netns "bp-cmp$cpid-$side" 2>&1)"
done
echo "ok   the next cell starts with every NAPI as compare found it (0, 0, 0)"
wait "$cpid"
rc=$?
cpid=
[ "$rc" -eq 0 ] || fail "compare exited $rc: $(cat "$tmp/err")"
python3 - "$tmp/out.json" <<'PY' || fail "compare json: $(head -c 400 "$tmp/out.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["napi"]) == 2, d["napi"]
for n in d["napi"]:
    assert n["defer_hard_irqs"] == 0 and n["gro_flush_timeout_ns"] == 0 and n["irq_suspend_timeout_ns"] == 0, n
PY
bpt_end
