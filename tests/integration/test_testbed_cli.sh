#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll testbed` as a user drives it (root): up builds two namespaces with a GRO
# veth pair and a NAPI per end, status shows both ends and their NAPIs, --queues N
# maps each tx queue to its rx queue (the kernel's xps_rxqs says so, status and the
# target's start-up line show it), a second up
# with the same name is refused and leaves the bed alone, up refuses a namespace it
# did not make, down removes exactly the bed. Without root: one line, exit 2.
# Every bed this script makes is removed on every exit path (trap), every command is
# bounded by `timeout`.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require_root "busypoll testbed needs root (it creates network namespaces)"
bpt_require ip ethtool python3 timeout setpriv

name=t$$
qname=q$$      # a second bed: 2 queues, threaded
cname=c$$      # a name whose b namespace the "user" made

# Remove whatever of ours is left, with plain `ip` so a broken busypoll cannot
# leave namespaces behind.
cleanup() {
	for n in "$name" "$qname" "$cname"; do
		for side in a b; do
			if [ -e "/run/netns/bp-$n-$side" ]; then
				ip netns del "bp-$n-$side" 2>/dev/null
			fi
		done
	done
}

# run EXPECTED_STATUS ARGS...: stdout in $tmp/out, stderr in $tmp/err, at most 60 s
run() {
	local want=$1 got
	shift
	timeout 60 "$BP" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "busypoll $* exited $got, want $want (stderr: $(head -c 300 "$tmp/err"))"
}

# json_get FILE EXPR: a python expression over the document d
json_get() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

ns_exists() {
	ip netns list | awk '{print $1}' | grep -qx "$1"
}

one_line() { # FILE WHAT
	[ "$(wc -l <"$1")" -eq 1 ] || fail "$2: stderr is not one line: $(cat "$1")"
}

# ---- up ----
run 0 testbed up --name "$name"
grep -q "^test bed '$name' is up" "$tmp/out" || fail "up did not say the bed is up: $(head -3 "$tmp/out")"
for side in a b; do
	ns_exists "bp-$name-$side" || fail "after up, no namespace bp-$name-$side"
done

# ---- status: both ends, two nonzero NAPI ids, GRO on ----
run 0 testbed status --name "$name" --format json
cp "$tmp/out" "$tmp/status.json"
python3 -m json.tool "$tmp/status.json" >/dev/null || fail "status --format json is not valid JSON"
ids=""
for i in 0 1; do
	side=$(json_get "$tmp/status.json" "d['ends'][$i]['side']")
	ns=$(json_get "$tmp/status.json" "d['ends'][$i]['netns']")
	dev=$(json_get "$tmp/status.json" "d['ends'][$i]['device']")
	n=$(json_get "$tmp/status.json" "len(d['ends'][$i]['napi'])")
	id=$(json_get "$tmp/status.json" "d['ends'][$i]['napi'][0]['id'] if d['ends'][$i]['napi'] else 0")
	[ "$ns" = "bp-$name-$side" ] || fail "end $i: namespace '$ns', want bp-$name-$side"
	[ "$n" = 1 ] || fail "end $i: $n NAPIs, want 1 (one queue)"
	[ "$id" -gt 0 ] 2>/dev/null || fail "end $i: NAPI id '$id' is not a positive number"
	ids="$ids $id"
	[ "$(json_get "$tmp/status.json" "d['ends'][$i]['gro']")" = True ] || fail "end $i: status says GRO is not on"
	# GRO seen by ethtool itself, not by our own reading of it
	timeout 20 ip netns exec "$ns" ethtool -k "$dev" | grep -q '^generic-receive-offload: on' ||
		fail "ethtool in $ns: GRO is not on for $dev"
	# the address is inside the namespace, not on the host
	addr=$(json_get "$tmp/status.json" "d['ends'][$i]['address']")
	ip -n "$ns" -4 addr show dev "$dev" | grep -q "inet $addr/30" || fail "$ns: $dev lacks $addr/30"
	ip -4 addr show | grep -q "inet $addr/" && fail "$addr is on the host, not only in $ns"
done
set -- $ids
[ "$#" -eq 2 ] && [ "$1" != "$2" ] || fail "the two ends' NAPI ids ($ids) are not two different ids"
[ "$(json_get "$tmp/status.json" "d['queues']")" = 1 ] || fail "status: queues is not 1"
json_get "$tmp/status.json" "d['commands']['server']" | grep -q "ip netns exec bp-$name-b .* rr --server" ||
	fail "status does not say how to run the server end"

# the table form shows the same ids and how to run the ends
run 0 testbed status --name "$name"
for id in $ids; do
	grep -Eq "^[ab] +$id " "$tmp/out" || fail "status table has no NAPI row for id $id"
done
grep -q "ip netns exec bp-$name-b .*rr --server" "$tmp/out" || fail "status table lacks the server command"
grep -q "ip netns exec bp-$name-a .*rr --client" "$tmp/out" || fail "status table lacks the client command"
[ -s "$tmp/err" ] && fail "status wrote to stderr: $(cat "$tmp/err")"

# ---- a second up with the same name: refused, and the bed is left as it was ----
timeout 60 "$BP" testbed up --name "$name" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" -eq 2 ] || fail "second up exited $st, want 2"
one_line "$tmp/err" "second up"
grep -qx "busypoll testbed: test bed '$name' already exists; \`busypoll testbed down --name $name\` removes it" "$tmp/err" ||
	fail "second up said: $(cat "$tmp/err")"
run 0 testbed status --name "$name" --format json
now=$(json_get "$tmp/out" "' '.join(str(e['napi'][0]['id']) for e in d['ends'])")
[ " $now" = "$ids" ] || fail "after the refused up the NAPI ids changed ($ids -> $now): it touched the bed"

# ---- up never touches a namespace it did not make ----
ip netns add "bp-$cname-b" || fail "could not make the user's namespace bp-$cname-b"
timeout 60 "$BP" testbed up --name "$cname" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" -eq 1 ] || [ "$st" -eq 2 ] || fail "up over a user's namespace exited $st, want 1 or 2"
grep -q "already exists" "$tmp/err" || fail "up over a user's namespace said: $(cat "$tmp/err")"
ns_exists "bp-$cname-b" || fail "up removed a namespace it did not make (bp-$cname-b)"
ns_exists "bp-$cname-a" && fail "up made bp-$cname-a although it refused"
ip netns del "bp-$cname-b"

# ---- more queues, threaded NAPI ----
run 0 testbed up --name "$qname" --queues 2 --threaded --format json
python3 -m json.tool "$tmp/out" >/dev/null || fail "up --format json is not valid JSON"
for i in 0 1; do
	[ "$(json_get "$tmp/out" "len(d['ends'][$i]['napi'])")" = 2 ] || fail "--queues 2: end $i has not 2 NAPIs"
	[ "$(json_get "$tmp/out" "all(n['threaded'] == 1 and n['pid'] for n in d['ends'][$i]['napi'])")" = True ] ||
		fail "--threaded: end $i has a NAPI without threaded=1 and a kthread pid"
done
[ "$(json_get "$tmp/out" "d['threaded']")" = True ] || fail "--threaded: status says threaded is off"
# symmetric queuing: tx queue N -> rx queue N, in the kernel's own bitmaps
for i in 0 1; do
	[ "$(json_get "$tmp/out" "d['ends'][$i]['xps_rxqs']")" = "[0, 1]" ] ||
		fail "--queues 2: end $i xps_rxqs $(json_get "$tmp/out" "d['ends'][$i]['xps_rxqs']"), want [0, 1]"
done
for q in 0 1; do
	want=$((1 << q))
	got=$(ip netns exec "bp-$qname-b" cat "/sys/class/net/bpvb/queues/tx-$q/xps_rxqs")
	[ "$((16#$got))" = "$want" ] || fail "bpvb tx-$q xps_rxqs is $got in sysfs, want $want"
done
run 0 testbed status --name "$qname"
grep -q "^b *tx->rx queues: tx0->rx0 tx1->rx1 (symmetric" "$tmp/out" || fail "status table lacks the mapping: $(grep 'tx->rx' "$tmp/out")"
# the target says which queues its replies leave on, and the SO_PRIORITY in force
addr=$(ip -n "bp-$qname-b" -4 -o addr show dev bpvb | awk '{print $4}' | cut -d/ -f1)
ip netns exec "bp-$qname-b" timeout -s INT 2 "$BP" target --listen "$addr:0" --ns ram:1M --priority 5 \
	>"$tmp/tout" 2>"$tmp/terr"
grep -q "queues: bpvb: tx0->rx0 tx1->rx1 (symmetric); SO_PRIORITY 5 on every queue's socket" "$tmp/terr" ||
	fail "the target's start-up lines lack the mapping and SO_PRIORITY: $(head -3 "$tmp/terr")"
run 0 testbed down --name "$qname"

# ---- bad input ----
run 2 testbed up --name "$name" --queues 0
one_line "$tmp/err" "--queues 0"
run 2 testbed up --name 'has space'
run 2 testbed sideways
run 2 testbed status --name "$name" --threaded

# ---- without root: one line saying why and what to do, exit 2, nothing made ----
for act in up status down; do
	timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$BP" testbed "$act" --name "n$$" >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ "$st" -eq 2 ] || fail "unprivileged testbed $act exited $st, want 2"
	one_line "$tmp/err" "unprivileged testbed $act"
	grep -Eq "^busypoll testbed: needs root \(.+\); run it with sudo$" "$tmp/err" ||
		fail "unprivileged testbed $act said: $(cat "$tmp/err")"
done
grep -q "it removes network namespaces" "$tmp/err" || fail "unprivileged down does not say why"
ns_exists "bp-n$$-a" && fail "unprivileged up made a namespace"

# ---- down: nothing left; a second down and a status say there is no bed ----
run 0 testbed down --name "$name"
grep -q "test bed '$name' removed" "$tmp/out" || fail "down said: $(cat "$tmp/out")"
for side in a b; do
	ns_exists "bp-$name-$side" && fail "after down, namespace bp-$name-$side is still there"
done
run 2 testbed down --name "$name"
grep -q "no test bed '$name'" "$tmp/err" || fail "second down said: $(cat "$tmp/err")"
run 2 testbed status --name "$name"
one_line "$tmp/err" "status after down"
grep -q "no test bed '$name'; \`busypoll testbed up --name $name\` builds it" "$tmp/err" ||
	fail "status after down said: $(cat "$tmp/err")"

bpt_end "ok: busypoll testbed"
