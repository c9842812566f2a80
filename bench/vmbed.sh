#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# vmbed.sh - issue 23's measurement: how long the VM bed takes to come up (both guests
# booted to their control loop) and to go down, per NIC model, over ROUNDS rounds, and
# whether it ran under KVM or TCG. The guest cache is built first (not timed). Figures are
# for reading (no pass mark: exit 0 when every up and down worked, 1 otherwise); on a
# shared machine take the lock: flock /tmp/bp-heavy.lock bench/vmbed.sh
#
# usage: vmbed.sh [ROUNDS]     (default 3)
#   BUILD=DIR   the build directory (default ../build)
#   COMPARE=1   also compare's table between the guests per NIC model (the agent standing in
#               b; e1000e with --coalesce-matrix), SECS=S per cell (default 3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-3}
build=${BUILD:-$here/../build}
bp=$build/busypoll
[ -x "$bp" ] || { echo "vmbed.sh: no $bp (make build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "vmbed.sh: needs root (the VM bed runs qemu in a namespace)" >&2; exit 1; }
bash "$here/../src/tools/testbed/vm/build-guest.sh" >/dev/null
name=vmbench$$
trap '"$bp" testbed down --name "$name" >/dev/null 2>&1 || true' EXIT
ms() { date +%s%3N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
rc=0
for nic in "e1000e 1" "virtio 2"; do
	set -- $nic
	ups=() downs=()
	for r in $(seq 1 "$rounds"); do
		t0=$(ms)
		"$bp" testbed up --vm --nic "$1" --queues "$2" --name "$name" >/dev/null || { rc=1; continue; }
		t1=$(ms)
		accel=$("$bp" testbed status --name "$name" --format json | sed 's/.*"accel":"\([a-z]*\)".*/\1/')
		"$bp" testbed down --name "$name" >/dev/null || rc=1
		t2=$(ms)
		ups+=($((t1 - t0)))
		downs+=($((t2 - t1)))
	done
	printf '%-8s queues %s  %s  up: median %s ms (%s)  down: median %s ms (%s)\n' "$1" "$2" "${accel:-?}" \
		"$(printf '%s\n' "${ups[@]}" | median)" "${ups[*]}" "$(printf '%s\n' "${downs[@]}" | median)" "${downs[*]}"
done

# compare's table between the guests, per NIC model (the agent standing in b): COMPARE=1
if [ "${COMPARE:-0}" = 1 ]; then
	for nic in "e1000e 1" "virtio 2"; do
		set -- $nic
		"$bp" testbed up --vm --nic "$1" --queues "$2" --name "$name" >/dev/null || { rc=1; continue; }
		x() { "$bp" testbed exec "$1" --name "$name" -- "${@:2}"; }
		x b 'busypoll agent --new-key /tmp/k >/dev/null; busypoll agent --listen 10.99.0.2:7100 --key-file /tmp/k >/tmp/agent.log 2>&1 &'
		key=$(x b cat /tmp/k | sed "s/.*/'&'/" | tr '\n' ' ')
		x a "printf '%s\\n' $key >/tmp/k; chmod 600 /tmp/k"
		for i in $(seq 1 100); do x b grep -q "'listening on'" /tmp/agent.log && break; sleep 0.2; done
		echo "== compare between the guests, NIC $1 ($2 queue(s)), $accel =="
		extra=""
		[ "$1" = e1000e ] && extra=--coalesce-matrix
		x a "busypoll compare --remote 10.99.0.2:7100 --key-file /tmp/k --server-addr 10.99.0.2 --flows 1 -l ${SECS:-3} --client-cpus 0 --server-cpus 1 $extra 2>/dev/null" || rc=1
		"$bp" testbed down --name "$name" >/dev/null || rc=1
	done
fi
exit $rc
