#!/bin/bash
# SPDX-License-Identifier: MIT
# The VM test bed: two qemu guests (a and b) with a real NIC driver each, cabled to each
# other through two taps on a bridge in a network namespace the bed owns (bpvm-NAME), so
# nothing leaves the machine and virtio-net can have several queue pairs. `busypoll testbed
# ... --vm` runs this script; it can also be run directly:
#
#   vmbed.sh up NAME e1000e|virtio QUEUES BUSYPOLL [table|json]   build it (BUSYPOLL: put in)
#   vmbed.sh status NAME [table|json]                 what it is and whether it runs
#   vmbed.sh exec NAME a|b CMD...                     run CMD (one line, sh -c) in a guest
#   vmbed.sh down NAME                                remove it: qemu, namespace, files
#   vmbed.sh exists NAME                              exit 0 when a bed NAME has a state dir
#
# State: $BP_VMBED_RUN (default /run/busypoll/vmbed)/NAME: the qemu pid files, the control
# pipes (ctl-a.in/out), the consoles (console-a.log), the per-boot initramfs, the settings,
# `building` (the pid of the up that builds it) and `ready`. Every command first removes the
# beds whose builder died half way or whose qemu processes are gone (said on stderr), so a
# SIGKILLed `up` leaves nothing behind past the next command.
#
# exec: the guest's init answers on ttyS1 (vmbed-init.sh); one exec at a time per guest
# (a lock), the output and the command's exit status come back; BP_VMBED_EXEC_TIMEOUT
# (seconds, default 600) bounds the wait. Exit: the command's status; 2 bad input; 1 bed
# failure; 124 the guest did not answer in time. BP_VMBED_EXTRA (':'-separated paths) puts
# more programs into the guests' /usr/bin (linked against the same libraries as busypoll).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
run=${BP_VMBED_RUN:-/run/busypoll/vmbed}
# one cache for every tree and the installed program (the mutation check's scratch trees too)
export BP_VMBED_CACHE=${BP_VMBED_CACHE:-/var/cache/busypoll/vmbed}
BOOT_TIMEOUT=${BP_VMBED_BOOT_TIMEOUT:-120} # seconds; a boot takes 8-30 s under TCG
MEM=${BP_VMBED_MEM:-512M}

die() { echo "busypoll testbed: $*" >&2; exit 1; }
usage() { echo "busypoll testbed: $*" >&2; exit 2; }
note() { echo "busypoll testbed: $*" >&2; }

# alive PID: a process that runs (a zombie, whose parent has not reaped it yet, does not)
alive() {
	local st
	[ -n "$1" ] && st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
qpid() { cat "$run/$1/qemu-$2.pid" 2>/dev/null; }

# down_bed NAME: kill both qemu, remove the namespace and the state dir. Quiet, idempotent.
down_bed() {
	local d=$run/$1 s p n
	for s in a b; do
		p=$(qpid "$1" $s)
		alive "$p" && kill -TERM "$p" 2>/dev/null
	done
	for s in a b; do
		p=$(qpid "$1" $s)
		n=50
		while alive "$p" && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
		alive "$p" && kill -KILL "$p" 2>/dev/null
	done
	ip netns del "bpvm-$1" 2>/dev/null
	rm -rf "$d"
}

# reap: beds left by a killed `up`, or whose guests are gone
reap() {
	local d name b
	for d in "$run"/*/; do
		[ -d "$d" ] || continue
		name=$(basename "$d")
		if [ -f "$d/building" ]; then
			b=$(cat "$d/building" 2>/dev/null)
			alive "$b" && continue
			note "removing VM test bed '$name': the testbed up that built it (pid $b) is gone"
			down_bed "$name"
		elif [ -f "$d/ready" ] && ! alive "$(qpid "$name" a)" && ! alive "$(qpid "$name" b)"; then
			note "removing VM test bed '$name': its qemu processes are gone"
			down_bed "$name"
		elif [ ! -f "$d/ready" ]; then
			note "removing VM test bed '$name': incomplete and nobody builds it"
			down_bed "$name"
		fi
	done
	# a namespace whose state dir is gone (state removed by hand, or a reboot of /run only)
	for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^bpvm-'); do
		[ -d "$run/${n#bpvm-}" ] || ip netns del "$n" 2>/dev/null
	done
}

# the busypoll binary and its shared libraries as a cpio.gz, appended to the base initramfs
boot_initrd() { # BUSYPOLL OUT
	local st l
	st=$(mktemp -d "$run/.stage.XXXXXX") || return 1
	mkdir -p "$st/usr/bin"
	cp "$1" "$st/usr/bin/busypoll" || { rm -rf "$st"; return 1; }
	# more programs for the guests' /usr/bin (the tests' helpers), ':'-separated
	local IFS_=$IFS x
	IFS=:
	for x in ${BP_VMBED_EXTRA:-}; do
		cp "$x" "$st/usr/bin/" || { IFS=$IFS_; rm -rf "$st"; return 1; }
	done
	IFS=$IFS_
	ldd "$1" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r l; do
		mkdir -p "$st/$(dirname "$l")"
		cp -L "$l" "$st/$l"
	done
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$2.tail" &&
		cat "$BP_VM_INITRD" "$2.tail" >"$2"
	local rc=$?
	rm -rf "$st" "$2.tail"
	return $rc
}

accel_of() { # kvm when /dev/kvm opens, else tcg
	if [ -z "${BP_VMBED_NO_KVM:-}" ] && [ -e /dev/kvm ] && exec 8<>/dev/kvm 2>/dev/null; then
		exec 8>&-
		echo kvm
	else
		echo tcg
	fi
}

cmd_up() { # NAME NIC QUEUES BUSYPOLL [table|json]
	local name=$1 nic=$2 queues=$3 bp=$4 fmt=${5:-table} d=$run/$1 ns=bpvm-$1 accel s i out
	case $nic in e1000e | virtio) ;; *) usage "--nic '$nic': e1000e or virtio" ;; esac
	[ "$nic" = e1000e ] && [ "$queues" != 1 ] && usage "--queues $queues: e1000e has one queue (use --nic virtio for several)"
	[ -x "$bp" ] || usage "the busypoll binary '$bp' is not executable"
	if [ -d "$d" ] || ip netns list 2>/dev/null | grep -q "^$ns\b"; then
		usage "VM test bed '$name' already exists; \`busypoll testbed down --name $name\` removes it"
	fi
	out=$(bash "$here/build-guest.sh" --print 2>&1)
	case $? in
	0) ;;
	77) usage "the guest cannot be had here: $(echo "$out" | tail -1 | sed 's/^SKIP: //')" ;;
	*) die "building the guest failed: $(echo "$out" | tail -1)" ;;
	esac
	. "$BP_VMBED_CACHE/guest.env"
	mkdir -p "$d" || die "cannot make $d"
	echo $$ >"$d/building"
	# from here on, a failure or a signal removes what was made
	trap 'down_bed "$name"; exit 130' INT TERM HUP
	fail() { note "$*"; down_bed "$name"; exit 1; }
	accel=$(accel_of)
	echo "$nic" >"$d/nic"
	echo "$queues" >"$d/queues"
	echo "$accel" >"$d/accel"
	boot_initrd "$bp" "$d/initrd.img" || fail "cannot put $bp into the guest's initramfs"
	ip netns add "$ns" || fail "ip netns add $ns failed"
	ip -n "$ns" link add br0 type bridge && ip -n "$ns" link set br0 up || fail "no bridge in $ns"
	local mq=""
	[ "$queues" -gt 1 ] && mq=multi_queue
	for s in a b; do
		ip netns exec "$ns" ip tuntap add dev "tap$s" mode tap $mq &&
			ip -n "$ns" link set "tap$s" master br0 && ip -n "$ns" link set "tap$s" up ||
			fail "no tap$s in $ns"
	done
	i=0
	for s in a b; do
		i=$((i + 1))
		local dev netdev
		mkfifo "$d/ctl-$s.in" "$d/ctl-$s.out" || fail "cannot make the control pipes"
		netdev="tap,id=n0,ifname=tap$s,script=no,downscript=no"
		if [ "$nic" = e1000e ]; then
			dev="e1000e,netdev=n0,mac=52:54:00:b9:00:0$i"
		else
			netdev="$netdev,queues=$queues,vhost=off"
			dev="virtio-net-pci,netdev=n0,mac=52:54:00:b9:00:0$i,mq=on,vectors=$((2 * queues + 2))"
		fi
		ip netns exec "$ns" qemu-system-x86_64 -accel "$accel" -smp 2 -m "$MEM" -nodefaults \
			-display none -no-reboot -daemonize -pidfile "$d/qemu-$s.pid" \
			-kernel "$BP_VM_KERNEL" -initrd "$d/initrd.img" \
			-append "console=ttyS0 panic=-1 quiet bpvm.name=$s bpvm.addr=10.99.0.$i/24" \
			-netdev "$netdev" -device "$dev" \
			-chardev "pipe,id=ctl,path=$d/ctl-$s" \
			-serial "file:$d/console-$s.log" -serial chardev:ctl \
			-monitor none >"$d/qemu-$s.err" 2>&1 ||
			fail "qemu for guest $s did not start: $(tail -1 "$d/qemu-$s.err")"
	done
	local deadline=$((SECONDS + BOOT_TIMEOUT))
	for s in a b; do
		while ! grep -q '^VMBED-READY' "$d/console-$s.log" 2>/dev/null; do
			alive "$(qpid "$name" $s)" || {
				# the kernel's last words (an oops and its trace) after the one line
				note "guest $s died while booting: $(grep -m1 -E 'BUG|Oops|panic|RIP:' "$d/console-$s.log" || tail -1 "$d/console-$s.log")"
				sed -n '/BUG\|Oops\|general protection\|RIP:/,$p' "$d/console-$s.log" | head -40 >&2
				fail "guest $s of '$name' crashed (its console is above)"
			}
			[ $SECONDS -lt $deadline ] || fail "guest $s did not say VMBED-READY in ${BOOT_TIMEOUT}s: $(tail -3 "$d/console-$s.log" | tr '\n' ' ')"
			sleep 0.1
		done
		grep '^VMBED-READY' "$d/console-$s.log" | grep -q " none" &&
			fail "guest $s has no eth0: $(grep '^VMBED:' "$d/console-$s.log" | tail -2 | tr '\n' ' ')"
	done
	echo "$BP_VM_KVER" >"$d/kver"
	touch "$d/ready"
	rm -f "$d/building"
	trap - INT TERM HUP
	cmd_status "$name" "$fmt"
}

need_bed() {
	[ -f "$run/$1/ready" ] || usage "no VM test bed '$1'; \`busypoll testbed up --vm --name $1\` builds it"
}

cmd_status() { # NAME [table|json]
	local name=$1 fmt=${2:-table} d=$run/$1 s acc nic q k pa pb
	need_bed "$name"
	nic=$(cat "$d/nic") q=$(cat "$d/queues") acc=$(cat "$d/accel") k=$(cat "$d/kver")
	pa=$(qpid "$name" a) pb=$(qpid "$name" b)
	local ra=false rb=false
	alive "$pa" && ra=true
	alive "$pb" && rb=true
	if [ "$fmt" = json ]; then
		printf '{"name":"%s","vm":true,"nic":"%s","queues":%s,"accel":"%s","kernel":"%s",' "$name" "$nic" "$q" "$acc" "$k"
		printf '"timings_are_hardware":%s,"netns":"bpvm-%s","prefix_len":24,"ends":[' "$([ "$acc" = kvm ] && echo null || echo false)" "$name"
		printf '{"side":"a","address":"10.99.0.1","device":"eth0","qemu_pid":%s,"running":%s},' "${pa:-null}" $ra
		printf '{"side":"b","address":"10.99.0.2","device":"eth0","qemu_pid":%s,"running":%s}]}\n' "${pb:-null}" $rb
		return 0
	fi
	echo "VM test bed '$name': two qemu guests, NIC $nic ($q queue$([ "$q" = 1 ] || echo s) each), kernel $k"
	if [ "$acc" = kvm ]; then
		echo "accelerator: KVM"
	else
		echo "accelerator: TCG (software emulation, no KVM): driver code paths and settings are real,"
		echo "             timings are the emulator's, not the hardware's"
	fi
	printf '%-5s%-14s%-8s%-10s%s\n' SIDE ADDRESS DEVICE QEMU STATE
	printf '%-5s%-14s%-8s%-10s%s\n' a 10.99.0.1/24 eth0 "$pa" "$($ra && echo running || echo gone)"
	printf '%-5s%-14s%-8s%-10s%s\n' b 10.99.0.2/24 eth0 "$pb" "$($rb && echo running || echo gone)"
	echo "run a command in a guest:  busypoll testbed exec a --name $name -- ethtool -c eth0"
	echo "remove it:                 busypoll testbed down --name $name"
}

cmd_exec() { # NAME SIDE CMD...
	local name=$1 side=$2 d=$run/$1 id line cmd rc=""
	shift 2
	[ "${1:-}" = -- ] && shift
	need_bed "$name"
	case $side in a | b) ;; *) usage "exec: side '$side': a or b" ;; esac
	[ $# -gt 0 ] || usage "exec: no command (busypoll testbed exec a -- CMD...)"
	cmd="$*"
	case $cmd in *$'\n'*) usage "exec: the command is one line" ;; esac
	alive "$(qpid "$name" "$side")" || die "guest $side of '$name' is not running (see $d/console-$side.log)"
	exec 7>"$d/ctl-$side.lock"
	flock 7
	id=x$$-$RANDOM
	exec 6<>"$d/ctl-$side.out"
	printf '%s %s\n' "$id" "$cmd" >"$d/ctl-$side.in"
	local deadline=$((SECONDS + ${BP_VMBED_EXEC_TIMEOUT:-600})) in=0
	while [ $SECONDS -lt $deadline ]; do
		IFS= read -r -t 2 line <&6 || {
			alive "$(qpid "$name" "$side")" || die "guest $side of '$name' died during exec"
			continue
		}
		if [ $in = 0 ]; then
			[ "$line" = "@@BEGIN $id" ] && in=1
			continue
		fi
		case $line in
		"@@END $id "*)
			rc=${line##* }
			break
			;;
		esac
		printf '%s\n' "$line"
	done
	exec 6<&- 7>&-
	[ -n "$rc" ] || { note "exec: guest $side did not answer '$cmd' in ${BP_VMBED_EXEC_TIMEOUT:-600}s"; exit 124; }
	exit "$rc"
}

[ $# -ge 2 ] || usage "vmbed.sh up|status|exec|down|exists NAME ..."
act=$1
name=$2
shift 2
case $name in '' | *[!A-Za-z0-9_-]*) usage "--name '$name': A-Z a-z 0-9 _ -" ;; esac
if [ "$act" = exists ]; then
	[ -d "$run/$name" ]
	exit
fi
[ "$(id -u)" = 0 ] || usage "needs root (it runs qemu in a network namespace); run it with sudo"
mkdir -p "$run" || die "cannot make $run"
exec 5>"$run/.lock"
case $act in
up)
	flock 5
	reap
	flock -u 5
	cmd_up "$name" "$@"
	;;
status)
	flock 5
	reap
	flock -u 5
	cmd_status "$name" "$@"
	;;
exec)
	cmd_exec "$name" "$@"
	;;
down)
	flock 5
	reap 2>/dev/null
	[ -d "$run/$name" ] || usage "no VM test bed '$name'; nothing to remove"
	down_bed "$name"
	echo "VM test bed '$name' removed"
	;;
*) usage "unknown action '$act' (up, status, exec, down)" ;;
esac
