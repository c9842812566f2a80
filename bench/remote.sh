#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# remote.sh - issue 13's benchmark: running the server side through the agent costs
# nothing on the data path. On the veth test bed it alternates, round after round, the
# local `busypoll compare` (both sides started by compare itself, on a bed of its own)
# and `busypoll compare --remote` from the bed's first namespace to a standing agent
# (--listen, with a key) in the second, which starts each mode's rr server there. Both
# pin the client to CPU 0 and the server to CPU 1, run the same modes, flows and
# durations, and differ only in how the server is started and read. It prints, per
# mode, the median over the rounds of each one's P50 and P99 and the median of the per-round
# ratios remote/local (1.00: no cost), and the BusyPollRxPackets per transaction of both, so a ratio is
# only read where both really busy polled.
#
# Figures are for reading (there is no pass mark: exit 0 when every run completed, 1
# otherwise). On a machine others use meanwhile the figures are theirs too: take the
# lock (flock /tmp/bp-heavy.lock bench/remote.sh) and say so with the figures.
#
# usage: remote.sh [SECONDS_PER_CELL] [ROUNDS] [FLOWS]    (default 5 s, 5 rounds, 1 flow)
#   MODES="A;B"   the modes (default epoll:block;epoll:spin;epoll:napi,usecs=64,budget=8)
#   BUILD=DIR     the build directory (default ../build)
#   KEEP=DIR      also keep each round's compare json there (localN.json, remoteN.json)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-5}
rounds=${2:-5}
flows=${3:-1}
modes=${MODES:-epoll:block;epoll:spin;epoll:napi,usecs=64,budget=8}
build=${BUILD:-$here/../build}
bp=$build/busypoll
[[ -x $bp ]] || { echo "remote.sh: build first (make build)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "remote.sh: ROUNDS $rounds: a whole number from 1" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "remote.sh: the veth test bed needs root" >&2; exit 77; }
[[ $(nproc) -ge 2 ]] || { echo "remote.sh: needs two CPUs (client and server apart)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "remote.sh: needs python3 (apt-get install python3)" >&2; exit 77; }

tmp=$(mktemp -d)
bed=remote$$
agent_pid=
child=
cleanup() {
	# a compare still running (the script was interrupted) goes first: it restores and stops its servers
	if [[ -n $child ]]; then
		kill "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	if [[ -n $agent_pid ]]; then
		kill "$agent_pid" 2>/dev/null || true
		wait "$agent_pid" 2>/dev/null || true
	fi
	"$bp" testbed down --name "$bed" -q >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$bp" testbed up --name "$bed" -q >/dev/null
srv=$(ip netns exec "bp-$bed-b" ip -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
"$bp" agent --new-key "$tmp/agent.key" >/dev/null
# the standing agent in B on a port of the kernel's choosing; its log says which
ip netns exec "bp-$bed-b" "$bp" agent --listen "$srv:0" --key-file "$tmp/agent.key" --cpus 1 \
	--state-dir "$tmp/state" 2>"$tmp/agent.log" &
agent_pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\) (pid.*/\1/p' "$tmp/agent.log")
	[[ -n $port ]] && break
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.05
done
[[ -n $port ]] || { echo "remote.sh: the agent did not start: $(tail -n 1 "$tmp/agent.log")" >&2; exit 1; }

# fg CMD...: CMD in the background and waited for, so that a signal to this script runs the
# trap at once (bash runs traps only between commands) and cleanup stops CMD
fg() {
	"$@" &
	child=$!
	local rc=0
	wait "$child" || rc=$?
	child=
	return "$rc"
}

common=(--modes "$modes" --flows "$flows" -l "$secs" --warmup 0.5 --runs 1 --client-cpus 0 --server-cpus 1
	-q --format json)
failed=0
for ((i = 0; i < rounds; i++)); do
	echo "== round $((i + 1))/$rounds: local, then through the agent" >&2
	fg "$bp" compare "${common[@]}" >"$tmp/local$i.json" 2>"$tmp/local$i.err" ||
		{ echo "remote.sh: local compare: $(tail -n 1 "$tmp/local$i.err")" >&2; failed=1; }
	fg ip netns exec "bp-$bed-a" "$bp" compare --remote "$srv:$port" --key-file "$tmp/agent.key" \
		--server-addr "$srv" "${common[@]}" >"$tmp/remote$i.json" 2>"$tmp/remote$i.err" ||
		{ echo "remote.sh: compare --remote: $(tail -n 1 "$tmp/remote$i.err")" >&2; failed=1; }
done

[[ -z ${KEEP:-} ]] || { mkdir -p "$KEEP" && cp "$tmp"/local*.json "$tmp"/remote*.json "$KEEP"/ 2>/dev/null || true; }
python3 - "$tmp" "$rounds" <<'PY'
import json, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])

def cells(kind):
    """label -> {round: (p50, p99, bprx client, bprx server, direct client, direct server, tps)}, completed cells only."""
    out = {}
    for i in range(rounds):
        try:
            d = json.load(open(f"{tmp}/{kind}{i}.json"))
        except (OSError, ValueError):
            continue
        for c in d["cells"]:
            if c["failed"] or not c["runs"]:
                continue
            lat = c["latency_us"]
            nan = float("nan")
            known = lambda v: v if v is not None else nan
            out.setdefault(c["label"], {})[i] = (
                lat["p50"], lat["p99"], c["client_busy_poll_rx_per_tx"], c["server_busy_poll_rx_per_tx"],
                known(c.get("client_direct_hit_per_tx")), known(c.get("server_direct_hit_per_tx")), c["tps"])
    return out

local, remote = cells("local"), cells("remote")
med = lambda rows, k: statistics.median(r[k] for r in rows.values())
# the median of the per-round ratios: rounds ran side by side, medians of each side would not
ratio = lambda l, r, k: statistics.median(r[i][k] / l[i][k] for i in l if i in r and l[i][k])
print(f"{'mode':<36} {'rounds':>6} {'P50 local':>10} {'P50 agent':>10} {'ratio':>6} "
      f"{'P99 local':>10} {'P99 agent':>10} {'ratio':>6} {'tps ratio':>9}  BusyPollRx/tx c/s local | agent"
      f"  direct hits/tx c/s local | agent")
for label in local:
    if label not in remote:
        print(f"{label:<36} no completed run through the agent")
        continue
    l, r = local[label], remote[label]
    both = sum(1 for i in l if i in r)
    print(f"{label:<36} {both:>6} {med(l, 0):>10.1f} {med(r, 0):>10.1f} {ratio(l, r, 0):>6.2f} "
          f"{med(l, 1):>10.1f} {med(r, 1):>10.1f} {ratio(l, r, 1):>6.2f} {ratio(l, r, 6):>9.2f}  "
          f"{med(l, 2):.2f}/{med(l, 3):.2f} | {med(r, 2):.2f}/{med(r, 3):.2f}  "
          f"{med(l, 4):.2f}/{med(l, 5):.2f} | {med(r, 4):.2f}/{med(r, 5):.2f}")
print("P50, P99: medians over the rounds of each compare's cell, in us; ratio: the median over the rounds of "
      "through the agent / local "
      "(1.00: the agent costs nothing on the data path); tps ratio the same for transactions/s; direct "
      "hits: reads before the wait that found bytes, per transaction, client/server (nan: not known).")
PY
exit "$failed"
