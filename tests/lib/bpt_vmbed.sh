# SPDX-License-Identifier: MIT
# Helpers of the VM bed tests (tests/vmbed): one bed per test script, booted once for all
# its scenarios. Source it after bpt_lib.sh:
#   . "$BP_TESTLIB/bpt_vmbed.sh"
# It needs root and the guest (src/tools/testbed/vm/build-guest.sh: exit 77 when the guest
# cannot be had here, which CI counts as a failure). The bed is named vmt-PID (PID: this
# test's shell), so a bed left by a test that was SIGKILLed is found by the next test's
# start (vmt_reap_stale) and removed; the EXIT trap (cleanup) removes this test's own.

bpt_require_root "the VM bed runs qemu in a network namespace (needs root)"
bpt_require timeout qemu-system-x86_64
vm_bed=vmt-$$
vm_script=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../src/tools/testbed/vm" && pwd)

# vmt_reap_stale - remove the beds of vmt-* tests whose shell is gone (found at next start)
vmt_reap_stale() {
	local d name pid
	for d in /run/busypoll/vmbed/vmt-*; do
		[ -d "$d" ] || continue
		name=$(basename "$d")
		pid=${name#vmt-}
		if ! kill -0 "$pid" 2>/dev/null || [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = Z ]; then
			echo "note: removing $name, left by a test that was killed" >&2
			"$BP" testbed down --name "$name" >/dev/null 2>&1
		fi
	done
}

# vmt_guest - build (or find in the cache) the guest; exit 77 saying why when it cannot be had
vmt_guest() {
	local out rc
	out=$(bash "$vm_script/build-guest.sh" 2>&1)
	rc=$?
	[ $rc = 77 ] && { echo "SKIP: the VM bed's guest cannot be had here: $(echo "$out" | tail -1)"; exit 77; }
	[ $rc = 0 ] || die "building the VM bed's guest failed: $(echo "$out" | tail -3 | tr '\n' ' ')"
}

# vmt_up ARGS... - testbed up --vm --name $vm_bed ARGS; dies with its output when it fails.
# A guest kernel that crashed or hung while booting (each seen once in many boots under
# TCG with four guests on two CPUs: a panic in an interrupt, a vCPU spinning before the
# first console line) gets one more boot; what happened is printed either way.
vmt_up() {
	local t0=$SECONDS
	if ! "$BP" testbed up --vm --name "$vm_bed" "$@" >"$tmp/up.out" 2>&1; then
		grep -qE "crashed \(its console is above\)|did not say VMBED-READY" "$tmp/up.out" ||
			die "testbed up --vm $*: $(tail -45 "$tmp/up.out")"
		echo "note: a guest crashed or hung while booting; booting once more. What up said:" >&2
		cat "$tmp/up.out" >&2
		"$BP" testbed up --vm --name "$vm_bed" "$@" >"$tmp/up.out" 2>&1 ||
			die "testbed up --vm $* (second boot): $(tail -45 "$tmp/up.out")"
	fi
	echo "bed $vm_bed up ($*) in $((SECONDS - t0)) s"
}

# vx SIDE CMD - run CMD in guest SIDE; its output on stdout, its status returned
vx() {
	local side=$1
	shift
	"$BP" testbed exec "$side" --name "$vm_bed" -- "$*"
}

# vmt_qemus - the qemu processes of this bed that run (zombies not counted)
vmt_qemus() {
	local p n=0
	for p in $(pgrep -f "qemu-system-x86_64 .*/vmbed/$vm_bed/" 2>/dev/null); do
		[ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = Z ] || n=$((n + 1))
	done
	echo $n
}

# vmt_leftovers - what of this bed is still there: qemu, namespace, state dir (nothing: empty)
vmt_leftovers() {
	local left=""
	[ "$(vmt_qemus)" = 0 ] || left+=" qemu($(vmt_qemus))"
	[ -e "/run/netns/bpvm-$vm_bed" ] && left+=" netns bpvm-$vm_bed"
	[ -e "/run/busypoll/vmbed/$vm_bed" ] && left+=" /run/busypoll/vmbed/$vm_bed"
	echo "$left"
}

cleanup() {
	"$BP" testbed down --name "$vm_bed" >/dev/null 2>&1
	ip netns del "bpvm-$vm_bed" 2>/dev/null
	return 0
}

vmt_reap_stale

# ---- the standing agent in guest b, its key in both guests (/tmp/k) ----
# vmt_agent_start - busypoll agent --listen 10.99.0.2:7100 in guest b, in the background
# (its pid in /tmp/agent.pid, its log in /tmp/agent.log, emptied first)
vmt_agent_start() {
	vx b ': >/tmp/agent.log; busypoll agent --listen 10.99.0.2:7100 --key-file /tmp/k >/tmp/agent.log 2>&1 & echo $! >/tmp/agent.pid'
}
vmt_agent_listens() { vx b grep -q "'listening on'" /tmp/agent.log; }
# vmt_agent_setup - a new key in b, copied to a, the agent started and listening (or die)
vmt_agent_setup() {
	vx b 'busypoll agent --new-key /tmp/k >/dev/null' || die "agent --new-key in guest b failed"
	vx b cat /tmp/k >"$tmp/k" || die "cannot read the key from guest b"
	vx a "printf '%s\\n' $(sed "s/.*/'&'/" "$tmp/k" | tr '\n' ' ') >/tmp/k && chmod 600 /tmp/k" ||
		die "cannot put the key into guest a"
	vmt_agent_start
	bpt_wait_until 60 vmt_agent_listens || die "the agent in guest b never said it listens: $(vx b cat /tmp/agent.log)"
}
# vmt_gone NAME - the guest a process whose pid is in /tmp/NAME.pid is gone
vmt_gone() { ! vx a "kill -0 \$(cat /tmp/$1.pid) 2>/dev/null"; }
