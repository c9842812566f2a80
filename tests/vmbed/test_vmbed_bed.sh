#!/bin/bash
# SPDX-License-Identifier: MIT
# The VM bed itself (issue 23): `testbed up --vm` boots two guests with e1000e NICs,
# `status` says vm, the NIC, KVM or TCG (and that TCG timings are not the hardware's) and
# the addresses, `exec` runs a command in either guest and brings back its output and exit
# status, the guests reach each other, and every way the bed ends leaves no qemu, namespace
# or state dir: `down`, SIGKILL of up's caller (the script follows it), SIGKILL of the
# caller and the script together (the next testbed command removes it), Ctrl-C.
set -u
. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
. "$BP_TESTLIB/bpt_vmbed.sh"
vmt_guest

if [ -e /dev/kvm ] && { exec 8<>/dev/kvm; } 2>/dev/null; then
	exec 8>&-
	accel=kvm
else
	accel=tcg
fi

# ---- up, status, exec ----
vmt_up --nic e1000e
"$BP" testbed status --name "$vm_bed" --format json >"$tmp/st.json" || fail "status --format json failed"
python3 - "$tmp/st.json" "$accel" <<'PY' || fail "status json: $(cat "$tmp/st.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["vm"] is True and d["nic"] == "e1000e" and d["queues"] == 1, d
assert d["accel"] == sys.argv[2], (d["accel"], sys.argv[2])
assert [e["address"] for e in d["ends"]] == ["10.99.0.1", "10.99.0.2"], d["ends"]
assert all(e["running"] is True for e in d["ends"]), d["ends"]
PY
"$BP" testbed status --name "$vm_bed" >"$tmp/st.txt" || fail "status failed"
if [ $accel = tcg ]; then
	grep -q "TCG" "$tmp/st.txt" && grep -q "not the hardware's" "$tmp/st.txt" ||
		fail "status does not say TCG and that its timings are not the hardware's: $(cat "$tmp/st.txt")"
fi
for s in a b; do
	drv=$(vx $s ethtool -i eth0 | sed -n 's/^driver: //p')
	[ "$drv" = e1000e ] || fail "guest $s: ethtool -i eth0 says driver '$drv', want e1000e"
	[ -x "$(vx $s command -v busypoll)" ] 2>/dev/null || vx $s busypoll --version >/dev/null ||
		fail "guest $s has no working busypoll"
done
out=$(vx a 'echo one; echo two >&2; exit 3')
rc=$?
[ $rc = 3 ] || fail "exec: a command's exit status 3 came back as $rc"
[ "$out" = "$(printf 'one\ntwo')" ] || fail "exec: output '$out', want one and two on two lines"
vx a ping -c 1 -W 10 10.99.0.2 >/dev/null || fail "guest a cannot ping guest b (10.99.0.2)"
"$BP" testbed up --vm --name "$vm_bed" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] || fail "up of a VM bed that exists: exit $rc, want 2 ($(cat "$tmp/err"))"
"$BP" testbed exec c --name "$vm_bed" -- true 2>/dev/null
[ $? = 2 ] || fail "exec c: want exit 2 (a or b)"

# ---- down ----
"$BP" testbed down --name "$vm_bed" >/dev/null || fail "down failed"
left=$(vmt_leftovers)
[ -z "$left" ] || fail "after down, left:$left"
"$BP" testbed down --name "$vm_bed" >/dev/null 2>&1
[ $? = 2 ] || fail "down of a VM bed that is gone: want exit 2"
"$BP" testbed exec a --name "$vm_bed" -- true 2>/dev/null
[ $? = 2 ] || fail "exec in a VM bed that is gone: want exit 2"

# ---- up's caller SIGKILLed, Ctrl-C, caller and script SIGKILLed: each while guests boot ----
qemu_runs() { [ "$(vmt_qemus)" -ge 1 ]; }
no_leftovers() { [ -z "$(vmt_leftovers)" ]; }
for how in kill-caller ctrl-c kill-all; do
	# its own process group (as a terminal's foreground job), SIGINT not ignored (a
	# background job of this shell would inherit it ignored)
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.setsid(); os.execv(sys.argv[1], sys.argv[1:])' \
		"$BP" testbed up --vm --name "$vm_bed" >"$tmp/up-$how.out" 2>&1 &
	caller=$!
	pids+=("$caller")
	bpt_wait_until 120 qemu_runs || fail "$how: no qemu of the bed ever ran ($(cat "$tmp/up-$how.out"))"
	case $how in
	kill-caller) kill -KILL "$caller" ;;
	ctrl-c) kill -INT -- "-$caller" ;;
	kill-all) kill -KILL -- "-$caller" ;;
	esac
	wait "$caller" 2>/dev/null
	if [ $how = kill-all ]; then
		# nothing runs to clean up: the next testbed command finds the bed and removes it
		[ -n "$(vmt_leftovers)" ] || fail "$how: the test did not leave a half-built bed to find"
		"$BP" testbed status --name "$vm_bed" >/dev/null 2>"$tmp/err"
		grep -q "removing VM test bed '$vm_bed'" "$tmp/err" ||
			fail "$how: the next testbed command did not say it removed the bed: $(cat "$tmp/err")"
	fi
	bpt_wait_until 60 no_leftovers || fail "$how: 60 s after, left:$(vmt_leftovers)"
done
bpt_end
