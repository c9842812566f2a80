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
exit $rc
