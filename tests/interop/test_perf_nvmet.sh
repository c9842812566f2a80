#!/bin/bash
# SPDX-License-Identifier: MIT
# busypoll perf against a target that is not ours: Linux's own nvmet-tcp, in the
# interop harness's guest (build-guest.sh; guest-init.sh's nvmet role: a 64 MiB file
# in tmpfs as namespace 1, any host) booted in qemu (TCG) with its port forwarded to
# 127.0.0.1. perf must connect, run every pattern family with --verify (several jobs,
# batches), 1 MiB blocks through R2T with both digests, and say in one line that
# an unknown NQN is refused. Slow emulation: figures mean nothing, timing is never
# asserted. See README.md beside this file.
#
# Environment: BUSYPOLL (ctest sets it), BP_INTEROP_CACHE, BP_INTEROP_TIMEOUT (200 s).
# Exit: 0 passed, 1 failed, 77 skipped (the reason on one line).
set -u

here=$(cd "$(dirname "$0")" && pwd)
BP=${BUSYPOLL:-}
guest_timeout=${BP_INTEROP_TIMEOUT:-200}
nqn=nqn.2024-01.io.busypoll:perf-nvmet

skip() {
	echo "SKIP: $*"
	exit 77
}
[ -n "$BP" ] && [ -x "$BP" ] || skip "\$BUSYPOLL is not an executable busypoll program"
"$BP" perf --help >/dev/null 2>&1 || skip "this busypoll has no 'perf' command"
command -v python3 >/dev/null || skip "python3 is missing (apt-get install python3)"

tmp=$(mktemp -d /tmp/bp-perf-nvmet.XXXXXX) || exit 1
qemu_pid=""
cleanup() {
	if [ -n "$qemu_pid" ]; then
		kill "$qemu_pid" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$qemu_pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$qemu_pid" 2>/dev/null
		wait "$qemu_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

bash "$here/build-guest.sh" --print >"$tmp/guest.env" 2>"$tmp/build.log"
st=$?
[ $st -eq 77 ] && skip "$(grep '^SKIP: ' "$tmp/build.log" | tail -1 | sed 's/^SKIP: //')"
[ $st -eq 0 ] || { echo "FAIL: build-guest.sh failed ($st): $(tail -5 "$tmp/build.log")"; exit 1; }
while IFS='=' read -r k v; do
	case $k in BP_GUEST_KERNEL | BP_GUEST_INITRD) printf -v "$k" '%s' "$v" ;; esac
done <"$tmp/guest.env"

# The nvmet guest, as test_linux_host.sh starts its reference peer.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout -k 5 $((guest_timeout + 60)) qemu-system-x86_64 -accel tcg -m 512M -smp 1 -nographic -no-reboot \
	-kernel "$BP_GUEST_KERNEL" -initrd "$BP_GUEST_INITRD" \
	-append "console=ttyS0 quiet panic=-1 nokaslr mitigations=off bpi.role=nvmet bpi.nqn=$nqn bpi.size=67108864 bpi.timeout=$((guest_timeout - 10))" \
	-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-10.0.2.15:4420" -device virtio-net-pci,netdev=n0,romfile= \
	</dev/null >"$tmp/nvmet.log" 2>"$tmp/nvmet.qemu" &
qemu_pid=$!
for _ in $(seq "$guest_timeout"); do
	tr -d '\r' <"$tmp/nvmet.log" | grep -aq 'INTEROP-TARGET: ready' && break
	kill -0 "$qemu_pid" 2>/dev/null || { echo "FAIL: the nvmet guest's qemu ended: $(tail -3 "$tmp/nvmet.qemu")"; exit 1; }
	sleep 1
done
tr -d '\r' <"$tmp/nvmet.log" | grep -aq 'INTEROP-TARGET: ready' ||
	{ echo "FAIL: the nvmet guest is not ready after ${guest_timeout}s"; exit 1; }

T=(--target "127.0.0.1:$port" --nqn "$nqn" -q --runtime 1 --io-timeout 30)
# perf ARGS...: must pass and verify
run_ok() {
	timeout 120 "$BP" perf "${T[@]}" "$@" >"$tmp/out" 2>"$tmp/err" || { fail "perf $*: $(cat "$tmp/err")"; return; }
	grep -q "model 'Linux'" "$tmp/out" || fail "perf $*: not Linux's target? $(head -3 "$tmp/out")"
	grep -q 'no mismatch' "$tmp/out" || fail "perf $*: no verify line: $(cat "$tmp/out")"
	echo "ok   perf $*: $(grep -E '^  (read|write|total)' "$tmp/out" | tail -1 | sed 's/^ *//')"
}
run_ok --rw randrw --verify --size 8M --numjobs 2 --iodepth 8 --iodepth-batch 4 --iodepth-batch-complete-max 8
run_ok --rw read --verify --size 4M --iodepth 4
run_ok --rw write --verify --size 4M --iodepth 4 --iodepth-batch 0
run_ok --rw randwrite --bs 1M --verify --size 16M --iodepth 4 --digest hdr,data
run_ok --rw randread --verify --size 4M --iodepth 16 --iodepth-batch-complete-min 0 --iodepth-batch-complete-max 16

timeout 60 "$BP" perf --target "127.0.0.1:$port" --nqn nqn.x:nope -q --runtime 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "unknown NQN: exit $rc, want 1"
grep -q "does not serve subsystem NQN 'nqn.x:nope'" "$tmp/err" || fail "unknown NQN: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "unknown NQN: want one line: $(cat "$tmp/err")"

if [ "$fails" -ne 0 ]; then
	echo "---- nvmet guest, last 30 lines ----"
	tr -d '\r' <"$tmp/nvmet.log" | tail -30
	echo "$fails failure(s)"
	exit 1
fi
echo "PASS"
