#!/bin/bash
# SPDX-License-Identifier: MIT
# What the agent changes on virtio-net with two queue pairs (issue 23), through an agent
# session from guest a (vm_agent_ctl) to the standing agent in guest b, each restored
# after a normal end, after the client is SIGKILLed, and after the agent is SIGKILLed
# (the change stays until the agent is started again, which restores it):
# - the path report (busypoll agent --path) names virtio_net, 2 queue pairs each on its own
#   NAPI, and the IRQs with their affinity as the guest's /proc shows them;
# - channels: combined 2 -> 1, read back in guest b with ethtool -l;
# - per-NAPI settings (defer-hard-irqs, gro-flush-timeout, irq-suspend-timeout, threaded)
#   changed twice in the session: during it the second values show, after it the values
#   before the session (not the middle ones), read back with busypoll napi get in guest b.
set -u
. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
. "$BP_TESTLIB/bpt_vmbed.sh"
bpt_require python3
[ -n "${BP_VMBED_EXTRA:-}" ] && [ -x "${BP_VMBED_EXTRA%%:*}" ] ||
	die "BP_VMBED_EXTRA does not name vm_agent_ctl (ctest sets it)"
vmt_guest
vmt_up --nic virtio --queues 2
vmt_agent_setup

# ---- the path report against the guest's own /proc: 2 queue pairs, a NAPI each, the IRQs ----
vx b busypoll agent --path eth0 --format json >"$tmp/path.json" || fail "agent --path eth0 in guest b failed"
vx b "grep virtio0 /proc/interrupts; for i in \$(grep virtio0 /proc/interrupts | cut -d: -f1); do echo \"aff \$i \$(cat /proc/irq/\$i/smp_affinity_list)\"; done" >"$tmp/irq.txt"
python3 - "$tmp/path.json" "$tmp/irq.txt" <<'PY' || fail "path report (above)"
import json, re, sys
p = json.load(open(sys.argv[1]))
bad = []
if p["driver"] != "virtio_net" or p["rx_queues"] != 2 or p["tx_queues"] != 2:
    bad.append("driver %r, queues %r/%r, want virtio_net 2/2" % (p["driver"], p["rx_queues"], p["tx_queues"]))
rxn = {q["id"]: q["napi_id"] for q in p["queues"] if q["type"] == "rx"}
if len(set(rxn.values())) != 2 or set(rxn.values()) != {n["id"] for n in p["napi"]}:
    bad.append("rx queues on NAPIs %r, the device's NAPIs %r: want one each" % (rxn, [n["id"] for n in p["napi"]]))
proc, aff = {}, {}
for l in open(sys.argv[2]).read().splitlines():
    m = re.match(r"\s*(\d+):.*\s(virtio0-\S+)\s*$", l)
    if m:
        proc[int(m.group(1))] = m.group(2)
    m = re.match(r"aff (\d+) (\S+)", l)
    if m:
        aff[int(m.group(1))] = m.group(2)
rep = {i["irq"]: i for i in p["irqs"]}
if set(rep) != set(proc) or sum(1 for n in proc.values() if "input" in n) != 2:
    bad.append("path IRQs %r, /proc/interrupts %r" % (sorted(rep), proc))
for n, name in proc.items():
    if n in rep and (rep[n]["name"] != name or rep[n]["affinity"] != aff.get(n)):
        bad.append("IRQ %d: path %r/%r, guest %r/%r" % (n, rep[n]["name"], rep[n]["affinity"], name, aff.get(n)))
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

combined() { vx b ethtool -l eth0 | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2; exit }'; }
before=$(combined)
[ "$before" = 2 ] || die "guest b has combined $before channels, want 2 (--queues 2)"
chan_is() { [ "$(combined)" = "$1" ]; }
CTL="vm_agent_ctl 10.99.0.2:7100 /tmp/k"

# session HOW NAME REQ...: start a session in guest a that holds (HOW: hold, or until a file)
session() {
	local how=$1 name=$2
	shift 2
	[ "$how" = until ] && how=until=/tmp/$name.stop
	vx a "$CTL $how $* >/tmp/$name.out 2>&1 & echo \$! >/tmp/$name.pid"
}
holding() { vx a grep -q HOLDING "/tmp/$1.out"; }

# ends WAY NAME CHECK-SET CHECK-BACK WHAT: end the session NAME the way WAY, then wait for
# CHECK-BACK (the agent restarted in between for agent-killed)
ends() {
	local way=$1 name=$2 is_set=$3 is_back=$4 what=$5
	bpt_wait_until 120 holding "$name" || { fail "$what, $way: the session never held: $(vx a cat "/tmp/$name.out")"; return; }
	bpt_wait_until 60 "$is_set" || { fail "$what, $way: the change never showed in guest b"; return; }
	case $way in
	normal) vx a touch "/tmp/$name.stop" ;;
	client-killed) vx a "kill -KILL \$(cat /tmp/$name.pid)" ;;
	agent-killed)
		vx b 'kill -KILL $(cat /tmp/agent.pid)'
		# a holding client does not notice; it is not what restores anything
		vx a "kill -KILL \$(cat /tmp/$name.pid)"
		"$is_set" || fail "$what, $way: changed back before the agent restarted: what restored it?"
		vmt_agent_start
		bpt_wait_until 60 vmt_agent_listens || die "the restarted agent never said it listens: $(vx b cat /tmp/agent.log)"
		;;
	esac
	bpt_wait_until 60 vmt_gone "$name" || fail "$what, $way: the session did not end"
	# not back: the next way would start from the changed value, so the test ends here
	bpt_wait_until 60 "$is_back" || die "$what, $way: 60 s after, not back: $(vx b cat /tmp/agent.log | grep -i restor | tail -3)"
}

# ---- channels ----
chan_set() { chan_is 1; }
chan_back() { chan_is "$before"; }
session until c1 channels=eth0=combined=1
ends normal c1 chan_set chan_back channels
session hold c2 channels=eth0=combined=1
ends client-killed c2 chan_set chan_back channels
session hold c3 channels=eth0=combined=1
ends agent-killed c3 chan_set chan_back channels

# ---- per-NAPI settings, each changed twice in one session ----
napi_id=$(vx b busypoll napi list --format json | python3 -c 'import json, sys; print(min(n["id"] for n in json.load(sys.stdin)["napi"]))') ||
	die "no NAPI id from busypoll napi list in guest b"
napi_now() { vx b busypoll napi get "$napi_id" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d.get("napi", [d])[0] if isinstance(d.get("napi"), list) else d
print("%s,%s,%s,%s" % (d["defer_hard_irqs"], d["gro_flush_timeout_ns"], d["irq_suspend_timeout_ns"], d["threaded"]))'; }
napi_before=$(napi_now)
[ -n "$napi_before" ] || die "busypoll napi get $napi_id in guest b says nothing"
echo "NAPI $napi_id before: $napi_before"
first="defer-hard-irqs=2,gro-flush-timeout=20000,irq-suspend-timeout=100000,threaded=1"
second="defer-hard-irqs=7,gro-flush-timeout=50000,irq-suspend-timeout=300000,threaded=0"
napi_set() { [ "$(napi_now)" = "7,50000,300000,0" ]; }
napi_back() { [ "$(napi_now)" = "$napi_before" ]; }
for way in normal client-killed agent-killed; do
	how=hold
	[ $way = normal ] && how=until
	session $how "n-$way" "napi=$napi_id=$first" "napi=$napi_id=$second"
	ends $way "n-$way" napi_set napi_back "NAPI $napi_id"
done
bpt_end
