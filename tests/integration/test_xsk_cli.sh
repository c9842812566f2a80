#!/bin/bash
# SPDX-License-Identifier: MIT
# The xsk modes as a user meets them (root, the veth test bed): `busypoll modes` lists
# them and says why one cannot run (not root); each bad start is one line naming what
# to do: a device without native XDP (lo), a queue the device lacks, a socket bound to
# any address, a umem the locked-memory limit refuses, a device whose flows are not
# steered to the bound queue (two queues); a peer that vanishes mid-run ends the client
# with one line, its XDP program removed. A SIGKILLed xsk:napi,prefer server leaves its
# XDP program and NAPI settings behind, and the next start removes the one and puts the
# other back. Every command bounded by `timeout`; the beds removed on every exit.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require_root "xsk modes need root (XDP programs, AF_XDP sockets, network namespaces)"
bpt_require ip ss timeout setpriv prlimit python3

name=x$$
qname=y$$

cleanup() {
	for n in "$name" "$qname"; do
		for side in a b; do
			[ -e "/run/netns/bp-$n-$side" ] && ip netns del "bp-$n-$side" 2>/dev/null
		done
	done
}

# run EXPECTED_STATUS CMD...: stdout in $tmp/out, stderr in $tmp/err, at most 30 s
run() {
	local want=$1 got
	shift
	timeout 30 "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "$* exited $got, want $want (stderr: $(head -c 300 "$tmp/err"))"
}

# said WHAT: stderr is one line and holds WHAT
said() {
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr is not one line: $(cat "$tmp/err")"
	grep -qF -- "$1" "$tmp/err" || fail "stderr lacks '$1': $(cat "$tmp/err")"
}

json_get() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# prog_on SIDE: the id of the XDP program on that end's device, empty for none
prog_on() {
	ip -n "bp-$name-$1" -d link show "bpv$1" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'
}

# napi_defer: defer-hard-irqs of end b's NAPI
napi_defer() {
	timeout 30 "$BP" testbed status --name "$name" --format json >"$tmp/st.json" 2>/dev/null
	json_get "$tmp/st.json" "d['ends'][1]['napi'][0]['defer_hard_irqs']"
}

run 0 "$BP" testbed up --name "$name"
addr_a=$(ip -n "bp-$name-a" -4 -o addr show dev bpva | awk '{print $4}' | cut -d/ -f1)
addr_b=$(ip -n "bp-$name-b" -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
[ -n "$addr_a" ] && [ -n "$addr_b" ] || die "the bed has no addresses"
inb=(ip netns exec "bp-$name-b")
ina=(ip netns exec "bp-$name-a")

# ---- busypoll modes: listed, usable as root, the reason without root ----
run 0 "$BP" modes
for m in xsk:block xsk:napi xsk:spin; do
	grep -qE "^$m +.* ok " "$tmp/out" || fail "busypoll modes does not list $m as usable: $(grep "^$m" "$tmp/out")"
done
run 0 setpriv --reuid 65534 --regid 65534 --clear-groups "$BP" modes
grep -E "^xsk:spin " "$tmp/out" | grep -q "needs CAP_NET_RAW" ||
	fail "busypoll modes as nobody does not say why xsk:spin cannot run: $(grep '^xsk:spin' "$tmp/out")"
run 2 setpriv --reuid 65534 --regid 65534 --clear-groups "$BP" pingpong --server --bind 127.0.0.1 --mode xsk:spin
said "needs CAP_NET_RAW"

# ---- bad starts, one line each ----
run 2 "$BP" pingpong --server --bind 127.0.0.1 --port 0 --mode xsk:spin
said "lo has no native XDP"
run 2 "${inb[@]}" "$BP" pingpong --server --bind "$addr_b" --port 0 --mode xsk:spin,queue=3
said "bpvb has no receive queue 3"
run 2 "${inb[@]}" "$BP" pingpong --server --port 0 --mode xsk:block
said "bound to any address"
run 1 "${inb[@]}" setpriv --bounding-set=-ipc_lock prlimit --memlock=65536 "$BP" pingpong --server --bind "$addr_b" \
	--port 0 --mode xsk:spin
said "locked-memory limit"
[ -z "$(prog_on b)" ] || fail "a failed start left XDP program $(prog_on b) on bpvb"

run 0 "$BP" testbed up --name "$qname" --queues 2
qaddr=$(ip -n "bp-$qname-b" -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
run 1 ip netns exec "bp-$qname-b" "$BP" pingpong --server --bind "$qaddr" --port 0 --mode xsk:spin
said "bpvb has 2 receive queues and the flows are not steered"
run 0 "$BP" testbed down --name "$qname"

# listening: the server in b takes control sessions on port 12871
listening() { [ -n "$("${inb[@]}" ss -Hltn 'sport = :12871' 2>/dev/null)" ]; }

# prefer_server: an xsk:napi,prefer server in b (its pid in srv) that a client ran against once
prefer_server() {
	"${inb[@]}" "$BP" pingpong --server --bind "$addr_b" --port 12871 --cpus 1 --mode xsk:napi,prefer \
		>"$tmp/srv.out" 2>&1 &
	srv=$!
	pids+=("$srv")
	bpt_wait_until 30 listening || fail "the xsk:napi,prefer server never listened: $(cat "$tmp/srv.out")"
	run 0 "${ina[@]}" "$BP" pingpong --client "$addr_b" --port 12871 --cpus 0 --mode epoll:block -n 200 --runs 1 \
		--warmup-count 10
	[ "$(napi_defer)" = 2 ] || fail "xsk:napi,prefer did not set defer-hard-irqs 2 on the NAPI: $(napi_defer)"
}

# ---- xsk:napi,prefer: the NAPI's settings for the run, put back at its end ----
[ "$(napi_defer)" = 0 ] || die "end b's NAPI starts with defer-hard-irqs $(napi_defer)"
prefer_server
kill -TERM "$srv"
wait "$srv" 2>/dev/null
[ "$(napi_defer)" = 0 ] || fail "xsk:napi,prefer left defer-hard-irqs $(napi_defer) after a normal end"
[ -z "$(prog_on b)" ] || fail "a server ended by SIGTERM left XDP program $(prog_on b)"

# ---- a SIGKILLed server leaves its program and NAPI settings; the next start cleans up ----
prefer_server
killed=$(prog_on b)
[ -n "$killed" ] || fail "no XDP program on bpvb while an xsk server runs"
kill -KILL "$srv"
wait "$srv" 2>/dev/null
[ "$(prog_on b)" = "$killed" ] || fail "after SIGKILL the program is '$(prog_on b)', want the killed run's $killed"
"${inb[@]}" "$BP" pingpong --server --bind "$addr_b" --port 12871 --cpus 1 --mode xsk:spin >"$tmp/srv2.out" 2>&1 &
srv=$!
pids+=("$srv")
# the next start removed the killed run's program (a new one is there) and put the NAPI back
replaced() { local p; p=$(prog_on b); [ -n "$p" ] && [ "$p" != "$killed" ] && listening; }
bpt_wait_until 30 replaced ||
	fail "the next start did not replace the killed run's XDP program ($killed): now '$(prog_on b)'"
[ "$(napi_defer)" = 0 ] || fail "the next start did not put defer-hard-irqs back: $(napi_defer)"

# ---- a peer that vanishes mid-run: the client says so in one line and removes its program ----
"${ina[@]}" "$BP" pingpong --client "$addr_b" --port 12871 --cpus 0 --mode xsk:spin -n 100000000 --runs 1 \
	--timeout 1 >"$tmp/cli.out" 2>"$tmp/cli.err" &
cli=$!
pids+=("$cli")
attached_a() { [ -n "$(prog_on a)" ]; }
bpt_wait_until 30 attached_a || fail "the xsk client never attached its program"
sleep 0.5
kill -TERM "$srv"
wait "$srv" 2>/dev/null
[ -z "$(prog_on b)" ] || fail "a server ended by SIGTERM left XDP program $(prog_on b)"
ended() { ! kill -0 "$cli" 2>/dev/null; }
bpt_wait_until 30 ended || fail "the client did not end after its server vanished"
wait "$cli"
rc=$?
[ "$rc" -ne 0 ] || fail "the client exited 0 after its server vanished"
grep -q "busypoll pingpong: " "$tmp/cli.err" || fail "the client did not say why it stopped: $(cat "$tmp/cli.err")"
[ -z "$(prog_on a)" ] || fail "the client left XDP program $(prog_on a) on bpva"

# ---- through the agent (b as the other host): pingpong's matrix with xsk:spin on both ends ----
mkdir -p "$tmp/agent"
run 0 "${ina[@]}" "$BP" pingpong --client "$addr_b" --cpus 0 --server-cpus 1 --matrix --mode xsk:spin --runs 1 \
	-n 200 --warmup-count 10 --remote "bp-$name-b" --ssh "ip netns exec" \
	--agent-cmd "$BP agent --stdio --state-dir $tmp/agent" --format json
cp "$tmp/out" "$tmp/pp.json"
[ "$(json_get "$tmp/pp.json" "[r['server_mode'] for r in d['rows']][-1]")" = xsk:spin ] ||
	fail "the agent's server did not run xsk:spin in the both-ends row: $(head -c 300 "$tmp/pp.json")"
[ "$(json_get "$tmp/pp.json" "d['rows'][-1]['server']['xsk']['binding']")" = copy ] ||
	fail "the agent's xsk:spin server reports no copy-mode AF_XDP socket"
[ -z "$(prog_on b)" ] || fail "the agent's xsk server left XDP program $(prog_on b)"

run 0 "$BP" testbed down --name "$name"

# ---- compare --udp: the xsk cells with the proof and each side's AF_XDP statistics ----
run 2 "$BP" compare --modes "xsk:spin"
said "the xsk modes carry UDP only; add --udp"
run 0 "$BP" compare --udp --modes "epoll:block;xsk:napi,usecs=64,budget=8;xsk:spin" --flows 1 -l 0.4 --runs 1 \
	--warmup 0.1 --format json
cp "$tmp/out" "$tmp/cmp.json"
for i in 1 2; do
	m=$(json_get "$tmp/cmp.json" "d['cells'][$i]['client_mode']")
	for side in client server; do
		b=$(json_get "$tmp/cmp.json" "(d['cells'][$i]['${side}_xsk'] or {}).get('binding')")
		[ "$b" = copy ] || fail "compare $m: the $side's AF_XDP binding is '$b', want copy"
		rx=$(json_get "$tmp/cmp.json" "d['cells'][$i]['${side}_xsk']['frames_rx']")
		[ "$rx" -gt 0 ] 2>/dev/null || fail "compare $m: no frame came up the $side's ring ($rx)"
	done
done
[ "$(json_get "$tmp/cmp.json" "d['cells'][0]['client_xsk']")" = None ] ||
	fail "compare epoll:block has an AF_XDP socket"
bp=$(json_get "$tmp/cmp.json" "d['cells'][1]['server_busy_poll_rx_per_tx']")
python3 -c "import sys; sys.exit(0 if float('$bp') >= 0.5 else 1)" ||
	fail "compare xsk:napi: BusyPollRxPackets/tx on the server $bp, want the proof (>= 0.5)"
bpt_end
