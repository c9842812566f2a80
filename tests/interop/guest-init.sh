#!/bin/sh
# SPDX-License-Identifier: MIT
# /init of the interop guest (busybox): the Linux kernel's own NVMe/TCP host against the target
# on the machine that runs qemu. It brings up the NIC of qemu's user-mode network, loads
# nvme-tcp, connects by writing an option string to /dev/nvme-fabrics (no nvme-cli), writes,
# reads back and compares 4 KiB and 64 KiB blocks at several offsets with O_DIRECT and through
# the page cache, flushes and disconnects; then once more with header and data digests, first
# checking that the data of the plain session is still there. It ends with one line
#   INTEROP-RESULT: ok            or        INTEROP-RESULT: fail <step>: <what>
# and powers off. Settings come from the kernel command line (bpi.*=..., see the host script).
# Lines starting "INTEROP:" tell the host what is happening; kernel messages go to the
# console too (the nvme lines of dmesg are repeated at the end on failure).

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
exec </dev/console >/dev/console 2>&1

# defaults, then bpi.* from the command line
port=4420
addr=10.0.2.2
nqn=nqn.2024-01.io.busypoll:interop
hostnqn=nqn.2024-01.io.busypoll:interop-guest
phases=plain,digest # comma list of connect variants: plain, digest
mode=full           # full: do I/O; connect-only: stop after the connect attempts (stub listener)
size=0              # expected namespace size in bytes (0: do not check)
timeout=200         # the guest gives up after this many seconds
role=host           # host: the test; nvmet: serve a namespace with the kernel's own target
for kv in $(cat /proc/cmdline); do
	case $kv in
	bpi.port=*) port=${kv#*=} ;;
	bpi.addr=*) addr=${kv#*=} ;;
	bpi.nqn=*) nqn=${kv#*=} ;;
	bpi.hostnqn=*) hostnqn=${kv#*=} ;;
	bpi.phases=*) phases=${kv#*=} ;;
	bpi.mode=*) mode=${kv#*=} ;;
	bpi.size=*) size=${kv#*=} ;;
	bpi.timeout=*) timeout=${kv#*=} ;;
	bpi.role=*) role=${kv#*=} ;;
	esac
done

t0=$(cut -d' ' -f1 /proc/uptime)
say() { echo "INTEROP: [$(cut -d' ' -f1 /proc/uptime)] $*"; }

finish() {
	if [ "$1" != ok ]; then
		echo "INTEROP: ---- kernel log (nvme, net) ----"
		dmesg | grep -E 'nvme|crc32c|eth0|virtio|Call Trace|BUG|WARNING|Oops' | tail -60
		echo "INTEROP: ---- end of kernel log ----"
	fi
	dmesg -n 1 # no kernel message may split the result line on the console
	echo "INTEROP-RESULT: $*"
	sync
	poweroff -f
	sleep 30
	exit 1
}
fail() { finish fail "$*"; }

# a watchdog: whatever hangs, the guest still says so and powers off
(
	sleep "$timeout"
	echo "INTEROP: guest watchdog: ${timeout}s passed"
	echo "INTEROP: ---- kernel log ----"
	dmesg | tail -60
	dmesg -n 1
	echo "INTEROP-RESULT: fail timeout: the guest did not finish in ${timeout}s"
	poweroff -f
) &

say "guest up: kernel $(uname -r), $(nproc) cpu(s), booted in ${t0}s"
dmesg -n 7 # kernel info messages (nvme connect/disconnect) on the console from now on

# wait_for CONDITION-COMMAND SECONDS: poll every 0.1 s
wait_for() {
	local n=$(($2 * 10))
	while [ $n -gt 0 ]; do
		eval "$1" && return 0
		usleep 100000
		n=$((n - 1))
	done
	return 1
}

# ---- network ----
modprobe virtio_pci 2>/dev/null
modprobe virtio_net 2>/dev/null
modprobe e1000 2>/dev/null
wait_for '[ -e /sys/class/net/eth0 ]' 20 || fail "net: no eth0 (virtio_net/e1000 loaded: $(lsmod | grep -cE '^(virtio_net|e1000) '))"
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
say "eth0 up: $(ip -4 -o addr show eth0 | awk '{print $4}') driver $(basename "$(readlink /sys/class/net/eth0/device/driver)")"

# ---- the reference peer: Linux's own target (nvmet-tcp), a file in tmpfs as namespace 1 ----
if [ "$role" = nvmet ]; then
	modprobe crc32c_generic || fail "modules: crc32c_generic"
	modprobe nvmet-tcp || fail "modules: nvmet-tcp does not load: $(dmesg | tail -3)"
	mount -t configfs configfs /sys/kernel/config || fail "nvmet: no configfs"
	truncate -s "$size" /tmp/ns.img || fail "nvmet: cannot make a $size byte file"
	c=/sys/kernel/config/nvmet
	mkdir "$c/subsystems/$nqn" &&
		echo 1 >"$c/subsystems/$nqn/attr_allow_any_host" &&
		mkdir "$c/subsystems/$nqn/namespaces/1" &&
		echo /tmp/ns.img >"$c/subsystems/$nqn/namespaces/1/device_path" &&
		echo 1 >"$c/subsystems/$nqn/namespaces/1/buffered_io" &&
		echo 1 >"$c/subsystems/$nqn/namespaces/1/enable" &&
		mkdir "$c/ports/1" &&
		echo tcp >"$c/ports/1/addr_trtype" &&
		echo ipv4 >"$c/ports/1/addr_adrfam" &&
		echo 10.0.2.15 >"$c/ports/1/addr_traddr" &&
		echo 4420 >"$c/ports/1/addr_trsvcid" &&
		ln -s "$c/subsystems/$nqn" "$c/ports/1/subsystems/$nqn" ||
		fail "nvmet: configfs setup failed"
	say "nvmet: $nqn, namespace 1 = $size byte file, listening on 10.0.2.15:4420"
	echo "INTEROP-TARGET: ready"
	while :; do sleep 3600; done
fi

# ---- nvme-tcp ----
modprobe crc32c_generic || fail "modules: crc32c_generic"
modprobe crct10dif_generic 2>/dev/null
modprobe crc64_rocksoft_generic 2>/dev/null
modprobe nvme-tcp || fail "modules: nvme-tcp does not load: $(dmesg | tail -3)"
wait_for '[ -c /dev/nvme-fabrics ]' 10 || fail "modules: no /dev/nvme-fabrics"
say "nvme-tcp loaded: $(lsmod | awk '/^nvme/ {printf "%s ", $1}')"

ctrl=""
# connect OPTS: sets $ctrl (nvmeN) or returns 1
connect() {
	local opts="transport=tcp,traddr=$addr,trsvcid=$port,nqn=$nqn,hostnqn=$hostnqn$1" reply
	say "connect: $opts"
	exec 3<>/dev/nvme-fabrics || return 1
	if ! echo "$opts" >&3 2>/tmp/connect.err; then
		exec 3>&-
		say "connect refused: $(sed 's/^sh: //' /tmp/connect.err)"
		return 1
	fi
	read -r reply <&3
	exec 3>&-
	say "connected: $reply"
	ctrl=nvme$(echo "$reply" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	[ "$ctrl" != nvme ]
}

disconnect() {
	say "disconnect $ctrl"
	echo 1 >/sys/class/nvme/$ctrl/delete_controller || return 1
	wait_for "[ ! -e /sys/class/nvme/$ctrl ]" 20
}

# the block device of the first namespace of $ctrl (with native multipath: nvmeXnY head)
dev=""
find_dev() {
	local b
	for b in /sys/class/nvme/$ctrl/nvme*n1 /sys/class/nvme/$ctrl/device/nvme*n1; do
		[ -e "$b" ] || continue
		b=$(basename "$b")
		case $b in *c*n*) b=$(echo "$b" | sed 's/c[0-9]*n/n/') ;; esac
		[ -b "/dev/$b" ] && dev=/dev/$b && return 0
	done
	for b in /dev/nvme*n1; do
		[ -b "$b" ] && dev=$b && return 0
	done
	return 1
}

# ---- data ----
mkpat() { dd if=/dev/urandom of="$1" bs="$2" count=1 2>/dev/null; }
# put FILE BS OFFSET [direct|buffered]
put() {
	local flag=oflag=direct
	[ "$4" = buffered ] && flag=conv=fsync
	dd if="$1" of="$dev" bs="$2" seek=$(($3 / $2)) count=1 conv=notrunc $flag 2>/tmp/dd.err ||
		fail "$phase: write $2 bytes at $3 ($4): $(tail -1 /tmp/dd.err)"
}
# check FILE BS OFFSET [direct|buffered]
check() {
	local flag=iflag=direct
	[ "$4" = buffered ] && flag=""
	dd if="$dev" of=/tmp/back bs="$2" skip=$(($3 / $2)) count=1 $flag 2>/tmp/dd.err ||
		fail "$phase: read $2 bytes at $3 ($4): $(tail -1 /tmp/dd.err)"
	cmp -s "$1" /tmp/back ||
		fail "$phase: data read back at $3 ($2 bytes, $4) differs from what was written: first difference $(cmp "$1" /tmp/back 2>&1 | head -1)"
}
drop_caches() {
	blockdev --flushbufs "$dev" 2>/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

KiB=1024
MiB=1048576
errs_before=0
nvme_errors() { dmesg | grep -cE 'nvme.*(error recovery|timeout|I/O error|failed|Reconnecting|reset)'; }

run_phase() { # plain|digest
	phase=$1
	local extra=""
	[ "$phase" = digest ] && extra=",hdr_digest,data_digest"
	errs_before=$(nvme_errors)
	connect "$extra" || fail "$phase: connect failed (write to /dev/nvme-fabrics: $(sed 's/^sh: //' /tmp/connect.err)); kernel: $(dmesg | grep -i nvme | tail -3 | tr '\n' ' ')"
	[ "$mode" = connect-only ] && return 0
	wait_for find_dev 30 || fail "$phase: $ctrl has no namespace block device after 30s"
	local q sectors bytes sb
	# I/O queues: the blk-mq hardware queues of the controller's path (nvmeXcYnZ with native
	# multipath, else the disk itself)
	q=$(ls -d /sys/class/nvme/$ctrl/nvme*c*n1/mq/* 2>/dev/null | wc -l)
	sb=/sys/block/${dev#/dev/}
	[ "$q" = 0 ] && q=$(ls -d "$sb"/mq/* 2>/dev/null | wc -l)
	sectors=$(cat "$sb/size")
	bytes=$((sectors * 512))
	say "$phase: $dev: $bytes bytes, lbs $(cat "$sb/queue/logical_block_size"), $q blk-mq queue(s), model '$(cat /sys/class/nvme/$ctrl/model 2>/dev/null | sed 's/ *$//')', subsysnqn $(cat /sys/class/nvme/$ctrl/subsysnqn 2>/dev/null)"
	[ "$size" = 0 ] || [ "$bytes" = "$size" ] || fail "$phase: namespace is $bytes bytes, the target was given $size"
	[ "$bytes" -ge $((8 * MiB)) ] || fail "$phase: namespace of $bytes bytes is too small for the test (want >= 8 MiB)"

	if [ "$phase" = digest ] && [ -f /tmp/p4k-plain ]; then
		# what the plain session wrote must still be there on a new controller
		check /tmp/p4k-plain 4096 0 direct
		check /tmp/p64k-plain 65536 $((bytes - 68 * KiB)) direct
		say "$phase: data of the plain session is still there"
	fi

	mkpat /tmp/p4k-$phase 4096
	mkpat /tmp/p64k-$phase 65536
	mkpat /tmp/q4k 4096
	mkpat /tmp/q64k 65536
	mkpat /tmp/p1m 1048576
	local off
	# 4 KiB: first block, an odd block, the middle, the last block
	o4="0 $((7 * 4096)) $((bytes / 2 + 4096)) $((bytes - 4096))"
	# 64 KiB: the start of the 2nd MiB, one not 64K-aligned, the one ending at the last 4 KiB
	o64="$MiB $((3 * MiB + 12 * KiB)) $((bytes - 68 * KiB))"
	if [ "$phase" = digest ]; then # do not overwrite what the plain check above read
		o4="$((4096 * 3)) $((bytes / 2 + 8192)) $((bytes - 8192))"
		o64="$((2 * MiB)) $((5 * MiB + 4 * KiB)) $((bytes - 136 * KiB))"
	fi
	for off in $o4; do put /tmp/p4k-$phase 4096 "$off" direct; done
	for off in $o64; do put /tmp/p64k-$phase 65536 "$off" direct; done
	for off in $o4; do check /tmp/p4k-$phase 4096 "$off" direct; done
	for off in $o64; do check /tmp/p64k-$phase 65536 "$off" direct; done
	# and one 1 MiB block: several R2Ts or H2CData PDUs, or a split by MDTS
	off=$((16 * MiB))
	[ "$phase" = digest ] && off=$((20 * MiB))
	put /tmp/p1m $MiB $off direct
	check /tmp/p1m $MiB $off direct
	say "$phase: O_DIRECT 4 KiB x$(echo $o4 | wc -w), 64 KiB x$(echo $o64 | wc -w) and 1 MiB x1 written, read back, equal"

	# through the page cache: write, fsync (a flush if the controller has a volatile write
	# cache), drop the cache, read from the device again
	put /tmp/q4k 4096 $((6 * MiB)) buffered
	put /tmp/q64k 65536 $((7 * MiB)) buffered
	drop_caches
	check /tmp/q4k 4096 $((6 * MiB)) buffered
	check /tmp/q64k 65536 $((7 * MiB)) buffered
	check /tmp/q64k 65536 $((7 * MiB)) direct
	say "$phase: buffered 4 KiB and 64 KiB written, synced, caches dropped, read back, equal"

	sync
	blockdev --flushbufs "$dev" || fail "$phase: blockdev --flushbufs $dev failed"
	say "$phase: flushed (write cache: $(cat "$sb/queue/write_cache" 2>/dev/null))"
	local errs
	errs=$(nvme_errors)
	[ "$errs" = "$errs_before" ] ||
		fail "$phase: the kernel host logged errors/recovery: $(dmesg | grep -E 'nvme.*(error recovery|timeout|I/O error|failed|Reconnecting|reset)' | tail -3 | tr '\n' ' ')"
	disconnect || fail "$phase: disconnect of $ctrl did not finish"
	dev=""
	say "$phase: disconnected"
}

if [ "$mode" = connect-only ]; then
	# against a listener that only records the ICReq: each attempt must reach it and fail
	for phase in $(echo "$phases" | tr ',' ' '); do
		extra=""
		[ "$phase" = digest ] && extra=",hdr_digest,data_digest"
		if connect "$extra"; then
			fail "$phase: connect succeeded against a listener that cannot answer"
		fi
		say "$phase: connect attempt failed as expected"
	done
	finish ok
fi

for phase in $(echo "$phases" | tr ',' ' '); do
	run_phase "$phase"
done
finish ok
