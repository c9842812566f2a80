#!/bin/bash
# SPDX-License-Identifier: MIT
# Interop with the real Linux NVMe/TCP host: busypoll target on the host's loopback, Debian
# 12's stock kernel (6.1) booted in qemu (software emulation, TCG) with a busybox initramfs
# whose /init (guest-init.sh) connects with nvme-tcp through qemu's user-mode network
# (10.0.2.2 in the guest is 127.0.0.1 here), writes, reads back and compares 4 KiB and 64 KiB
# blocks, flushes and disconnects, plain and then with header and data digests. The guest
# prints "INTEROP-RESULT: ok" on its serial console; anything else, or nothing within the
# time limit, fails the test with the guest's log tail. The target must also show that it
# served I/O queues. See README.md beside this file.
#
# Environment:
#   BUSYPOLL               the busypoll program (ctest sets it)
#   BP_INTEROP_CACHE       guest cache (default build/interop-cache in the source tree)
#   BP_INTEROP_TIMEOUT     seconds the guest may take, boot to power-off (default 200)
#   BP_INTEROP_SMP         guest CPUs = nvme-tcp I/O queues (default 2)
#   BP_INTEROP_PHASES      plain,digest (default) or one of them
#   BP_INTEROP_TARGET_ARGS more options for busypoll target (e.g. "--mode epoll:napi")
#   BP_INTEROP_NS          ram (default), file or loop: busypoll target's namespace, 64 MiB in
#                          memory, in a file of the temporary directory, or a loop device (direct
#                          I/O) over such a file (root): O_DIRECT and asynchronous I/O to a block
#                          device, whose own counters must show the guest's reads, writes, flushes
#   BP_INTEROP_PEER        what the guest connects to:
#                            busypoll (default) busypoll target
#                            nvmet    a second guest running Linux's own target (nvmet-tcp),
#                                     reached through qemu's hostfwd on 127.0.0.1: a reference
#                                     run that proves the guest side against a known-good target
#                            stub     a listener that records the host's ICReq and closes:
#                                     boot, NIC, nvme-tcp and the connect string only
#   BP_INTEROP_KEEP=DIR    keep the console log, the target's output and the listener log there
# Exit: 0 passed, 1 failed, 77 skipped (the reason on one line).
set -u

here=$(cd "$(dirname "$0")" && pwd)
BP=${BUSYPOLL:-}
peer=${BP_INTEROP_PEER:-busypoll}
case $peer in busypoll | nvmet | stub) ;; *) echo "FAIL: BP_INTEROP_PEER=$peer (busypoll, nvmet or stub)"; exit 1 ;; esac
guest_timeout=${BP_INTEROP_TIMEOUT:-200}
smp=${BP_INTEROP_SMP:-2}
phases=${BP_INTEROP_PHASES:-plain,digest}
nqn=nqn.2024-01.io.busypoll:interop
hostnqn=nqn.2024-01.io.busypoll:interop-guest
ns_size=64M
ns_bytes=$((64 * 1024 * 1024))
t_start=$(date +%s)

skip() {
	echo "SKIP: $*"
	exit 77
}

if [ "$peer" = busypoll ]; then
	[ -n "$BP" ] && [ -x "$BP" ] || skip "\$BUSYPOLL is not an executable busypoll program"
	"$BP" target --help 2>&1 | grep -q -- '--listen' ||
		skip "this busypoll has no 'target' command (busypoll target --help does not list --listen)"
fi
command -v python3 >/dev/null || skip "python3 is missing (apt-get install python3)"
command -v ss >/dev/null || skip "ss is missing (apt-get install iproute2)"

tmp=$(mktemp -d /tmp/bp-interop.XXXXXX) || exit 1
qemu_pid=""
peer_pid=""
nvmet_pid=""
reapers=""
loopdev=""
cleanup() {
	local p
	for p in $reapers; do
		kill "$p" 2>/dev/null
	done
	for p in $qemu_pid $peer_pid $nvmet_pid; do
		kill "$p" 2>/dev/null
	done
	for p in $qemu_pid $peer_pid $nvmet_pid; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null
	if [ -n "${BP_INTEROP_KEEP:-}" ]; then
		mkdir -p "$BP_INTEROP_KEEP" && cp -f "$tmp"/*.log "$BP_INTEROP_KEEP"/ 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	if [ -s "$tmp/console.log" ]; then
		echo "---- guest console, last 80 lines ($tmp/console.log) ----"
		tr -d '\r' <"$tmp/console.log" | tail -80
		echo "---- end of guest console ----"
	fi
	if [ -s "$tmp/target.log" ]; then
		echo "---- $peer peer output, last 40 lines ----"
		tr -d '\r' <"$tmp/target.log" | tail -40
		echo "---- end of peer output ----"
	fi
	exit 1
}

# 1. The guest (cached after the first run).
t0=$(date +%s)
bash "$here/build-guest.sh" --print >"$tmp/guest.env" 2>"$tmp/build.log"
st=$?
if [ $st -eq 77 ]; then
	skip "$(grep '^SKIP: ' "$tmp/build.log" | tail -1 | sed 's/^SKIP: //')"
elif [ $st -ne 0 ]; then
	fail "build-guest.sh failed ($st): $(tail -5 "$tmp/build.log")"
fi
while IFS='=' read -r k v; do
	case $k in BP_GUEST_KERNEL | BP_GUEST_INITRD | BP_GUEST_KVER) printf -v "$k" '%s' "$v" ;; esac
done <"$tmp/guest.env"
[ -f "${BP_GUEST_KERNEL:-}" ] && [ -f "${BP_GUEST_INITRD:-}" ] || fail "build-guest.sh gave no kernel/initrd"
t_build=$(($(date +%s) - t0))

# reap PID: if this script dies without its cleanup (SIGKILL from a runner), PID still ends
# and the temporary directory goes
reap() {
	(
		trap - EXIT INT TERM HUP
		while kill -0 $$ 2>/dev/null; do sleep 2; done
		kill "$1" 2>/dev/null && sleep 3 && kill -9 "$1"
		rm -rf "$tmp"
	) </dev/null >/dev/null 2>&1 &
	reapers+=" $!"
}

# reap_loop DEV: the same for our loop device, once the target that holds it is gone
reap_loop() {
	(
		trap - EXIT INT TERM HUP
		while kill -0 $$ 2>/dev/null; do sleep 2; done
		sleep 5
		losetup -d "$1"
	) </dev/null >/dev/null 2>&1 &
	reapers+=" $!"
}

# loop_stat DEV: "reads writes flushes" completed, from the device's own counters
loop_stat() { awk '{ print $1, $5, $16 }' "/sys/block/${1#/dev/}/stat"; }

# console lines: the guest's own lines may follow escape codes of the firmware on one line
console() { tr -d '\r' <"$1" | grep -ao "$2.*"; }

# start_guest LOGFILE APPEND NETDEV_OPTIONS SMP: prints the pid; qemu ends by itself at the
# latest a minute after the guest's time limit
start_guest() {
	timeout -k 5 $((guest_timeout + 60)) qemu-system-x86_64 -accel tcg -m 512M -smp "$4" -nographic -no-reboot \
		-kernel "$BP_GUEST_KERNEL" -initrd "$BP_GUEST_INITRD" \
		-append "console=ttyS0 quiet panic=-1 nokaslr mitigations=off $2" \
		-netdev "user,id=n0$3" -device virtio-net-pci,netdev=n0,romfile= \
		</dev/null >"$1" 2>"$1.qemu" &
	echo $!
}

# 2. The peer on 127.0.0.1: busypoll target, nvmet in a second guest, or the ICReq recorder.
listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
common="bpi.nqn=$nqn bpi.size=$ns_bytes bpi.timeout=$((guest_timeout - 10))"
mode=full
t0=$(date +%s)
case $peer in
stub)
	python3 "$here/icreq_listener.py" "$tmp/port" "$tmp/icreq.log" $((guest_timeout + 60)) \
		>"$tmp/target.log" 2>&1 &
	peer_pid=$!
	reap "$peer_pid"
	for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	port=$(cat "$tmp/port" 2>/dev/null)
	[ -n "$port" ] || fail "the ICReq listener did not start"
	mode=connect-only
	;;
nvmet)
	port=$(free_port)
	nvmet_pid=$(start_guest "$tmp/target.log" "bpi.role=nvmet $common" ",hostfwd=tcp:127.0.0.1:$port-10.0.2.15:4420" 1)
	reap "$nvmet_pid"
	for _ in $(seq "$guest_timeout"); do
		console "$tmp/target.log" 'INTEROP-TARGET: ready' >/dev/null && break
		console "$tmp/target.log" 'INTEROP-RESULT: ' >/dev/null && fail "the nvmet guest failed"
		kill -0 "$nvmet_pid" 2>/dev/null || fail "the nvmet guest's qemu ended: $(tail -3 "$tmp/target.log.qemu")"
		sleep 1
	done
	console "$tmp/target.log" 'INTEROP-TARGET: ready' >/dev/null || fail "the nvmet guest is not ready after ${guest_timeout}s"
	;;
busypoll)
	port=$(free_port)
	case ${BP_INTEROP_NS:-ram} in
	ram) ns=ram:$ns_size ;;
	file) ns=file:$tmp/ns.img,size=$ns_size ;;
	loop)
		[ "$(id -u)" -eq 0 ] || skip "BP_INTEROP_NS=loop needs root (a loop device)"
		command -v losetup >/dev/null || skip "losetup is missing (apt-get install mount)"
		truncate -s "$ns_size" "$tmp/loop.img" || fail "cannot make $tmp/loop.img"
		loopdev=$(losetup --direct-io=on --show -f "$tmp/loop.img") || fail "losetup: cannot attach a loop device"
		reap_loop "$loopdev"
		loop_before=$(loop_stat "$loopdev")
		ns=file:$loopdev
		;;
	*) fail "BP_INTEROP_NS=${BP_INTEROP_NS} (ram, file or loop)" ;;
	esac
	# shellcheck disable=SC2086 # BP_INTEROP_TARGET_ARGS is a list of options
	"$BP" target --listen "127.0.0.1:$port" --nqn "$nqn" --ns "$ns" \
		${BP_INTEROP_TARGET_ARGS:-} </dev/null >"$tmp/target.log" 2>&1 &
	peer_pid=$!
	reap "$peer_pid"
	;;
esac
for _ in $(seq 100); do
	listening "$port" && break
	[ -z "$peer_pid" ] || kill -0 "$peer_pid" 2>/dev/null || fail "the $peer peer exited before it listened on 127.0.0.1:$port"
	sleep 0.1
done
listening "$port" || fail "nothing listens on 127.0.0.1:$port after 10 s"
t_peer=$(($(date +%s) - t0))

# 3. The guest. Its /init reads the bpi.* settings from the command line.
t0=$(date +%s)
qemu_pid=$(start_guest "$tmp/console.log" \
	"bpi.role=host bpi.port=$port bpi.hostnqn=$hostnqn bpi.phases=$phases bpi.mode=$mode $common" "" "$smp")
reap "$qemu_pid"

result=""
while :; do
	result=$(console "$tmp/console.log" 'INTEROP-RESULT: ' | tail -1)
	[ -n "$result" ] && break
	kill -0 "$qemu_pid" 2>/dev/null || break
	[ $(($(date +%s) - t0)) -ge "$guest_timeout" ] && break
	sleep 1
done
# the guest powers off after its result line; give it a moment, then it is killed in cleanup
for _ in $(seq 50); do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.1; done
t_guest=$(($(date +%s) - t0))

console "$tmp/console.log" 'INTEROP: ' | sed 's/^/  /'
if [ -z "$result" ]; then
	if ! kill -0 "$qemu_pid" 2>/dev/null && [ -s "$tmp/console.log.qemu" ]; then
		fail "qemu ended without a result after ${t_guest}s: $(tail -3 "$tmp/console.log.qemu")"
	fi
	fail "no INTEROP-RESULT line from the guest within ${t_guest}s (limit ${guest_timeout}s)"
fi
[ "$result" = "INTEROP-RESULT: ok" ] || fail "the guest reports: ${result#INTEROP-RESULT: }"

# 4. What the peer saw.
case $peer in
stub)
	i=0
	for ph in $(echo "$phases" | tr ',' ' '); do
		i=$((i + 1))
		want=0x00
		[ "$ph" = digest ] && want=0x03
		line=$(sed -n "${i}p" "$tmp/icreq.log" 2>/dev/null)
		case $line in
		"icreq len=128 type=0x00 flags=0x00 hlen=128 pdo=0 plen=128 pfv=0 hpda=0 digest=$want maxr2t=0 rsvd_zero=1 "*) ;;
		*) fail "connect $i ($ph): the listener recorded '${line:-nothing}', want an ICReq with digest=$want" ;;
		esac
		echo "  listener: $ph: $line"
	done
	;;
nvmet)
	n=$(console "$tmp/target.log" 'nvmet: creating nvm controller' | wc -l)
	[ "$n" -ge 1 ] || fail "the nvmet guest logged no controller"
	echo "  nvmet: $n controller(s) created"
	;;
busypoll)
	# Counters: on SIGUSR1, then at exit. The target must have served I/O queues (qid >= 1),
	# not only the admin queue: its log names the queues it connected, and its per-queue
	# counters table (the last one printed) must show reads and writes on I/O queues and no
	# errors.
	kill -USR1 "$peer_pid" 2>/dev/null
	# its table printed (a state, not a sleep), then the one at exit
	for _ in $(seq 100); do grep -q '^total' "$tmp/target.log" && break; sleep 0.1; done
	grep -q '^total' "$tmp/target.log" || fail "busypoll target printed no counters on SIGUSR1 within 10 s"
	kill -TERM "$peer_pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$peer_pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$peer_pid" 2>/dev/null && fail "busypoll target did not exit within 5 s of SIGTERM"
	wait "$peer_pid"
	tst=$?
	peer_pid=""
	[ $tst -eq 0 ] || [ $tst -eq 143 ] || fail "busypoll target exited with status $tst"
	nq=$(grep -Ec 'connected: .*qid [1-9]' "$tmp/target.log")
	[ "$nq" -ge 1 ] || fail "busypoll target's log shows no I/O queue connected (no 'connected: ... qid N>=1' line)"
	# header: queue cntlid qid thr peer state commands reads writes ... errors ...
	read -r ioq rd wr err < <(awk '
		$1 == "queue" && / qid / && / reads / && / writes / && / errors / {
			delete col; for (i = 1; i <= NF; i++) col[$i] = i
			have = 1; ioq = 0; rd = 0; wr = 0; err = 0; next
		}
		have && $1 ~ /^[0-9]+$/ {
			if ($col["qid"] + 0 >= 1) { ioq++; rd += $col["reads"]; wr += $col["writes"] }
			err += $col["errors"]
		}
		END { if (have) print ioq, rd, wr, err; else print "none" }' "$tmp/target.log")
	[ "$ioq" != none ] || fail "busypoll target printed no per-queue counters (a table with qid, reads, writes, errors) on SIGUSR1/exit"
	[ "$ioq" -ge 1 ] && [ "$rd" -gt 0 ] && [ "$wr" -gt 0 ] ||
		fail "busypoll target's counters show no I/O on I/O queues ($ioq I/O queues, $rd reads, $wr writes)"
	[ "$err" -eq 0 ] || fail "busypoll target counted $err errors"
	echo "  target: $nq I/O queue connections; counters: $ioq I/O queues, $rd reads, $wr writes, 0 errors"
	if [ -n "$loopdev" ]; then
		grep -q "nsid 1: block device $loopdev, .*O_DIRECT" "$tmp/target.log" ||
			fail "busypoll target did not serve $loopdev as a block device with O_DIRECT: $(grep 'nsid 1' "$tmp/target.log")"
		read -r r0 w0 f0 <<<"$loop_before"
		read -r r1 w1 f1 < <(loop_stat "$loopdev")
		[ $((r1 - r0)) -gt 0 ] && [ $((w1 - w0)) -gt 0 ] && [ $((f1 - f0)) -gt 0 ] ||
			fail "$loopdev's own counters show $((r1 - r0)) reads, $((w1 - w0)) writes, $((f1 - f0)) flushes from the guest (want some of each)"
		echo "  $loopdev: $((r1 - r0)) reads, $((w1 - w0)) writes, $((f1 - f0)) flushes completed by the device"
	fi
	;;
esac

echo "interop: $BP_GUEST_KVER guest, $smp cpu(s), peer $peer, phases $phases, $mode: ok;" \
	"guest build ${t_build}s, peer start ${t_peer}s, guest run ${t_guest}s, total $(($(date +%s) - t_start))s"
exit 0
