#!/bin/sh
# SPDX-License-Identifier: MIT
# /init of a VM test bed guest (busybox). Loads the NIC drivers, brings eth0 up with the
# address from the kernel command line (bpvm.addr=A.B.C.D/N, bpvm.name=a|b), says
#   VMBED-READY <name> <driver>
# on the console (ttyS0), then serves the control port (ttyS1, a pipe to the host's vmbed.sh):
# it reads one line "ID COMMAND...", runs COMMAND with sh -c (stdin /dev/null, stdout and
# stderr to a file), and answers
#   @@BEGIN ID
#   <output, with a newline added when it has none at the end>
#   @@END ID <exit status>
# A command that should outlive its exec puts itself in the background with its output
# redirected (the port is never inherited).

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
exec </dev/console >/dev/console 2>&1

addr=""
name=""
for kv in $(cat /proc/cmdline); do
	case $kv in
	bpvm.addr=*) addr=${kv#*=} ;;
	bpvm.name=*) name=${kv#*=} ;;
	esac
done
say() { echo "VMBED: [$(cut -d' ' -f1 /proc/uptime)] $*"; }

kver=$(uname -r)
while read -r m; do
	insmod "/lib/modules/$kver/$m" 2>/dev/null
done <"/lib/modules/$kver/load-order"

n=200
while [ ! -e /sys/class/net/eth0 ] && [ $n -gt 0 ]; do
	usleep 100000
	n=$((n - 1))
done
ip link set lo up
drv=none
if [ -e /sys/class/net/eth0 ]; then
	ip link set eth0 up
	[ -n "$addr" ] && ip addr add "$addr" dev eth0
	drv=$(basename "$(readlink /sys/class/net/eth0/device/driver)")
else
	say "no eth0: $(dmesg | grep -iE 'e1000e|virtio' | tail -3 | tr '\n' ' ')"
fi
hostname "vm-$name"
dmesg -n 1 # kernel messages stay off the console lines the host reads
say "up: kernel $kver, $(nproc) cpu(s), eth0 $drv $addr"
echo "VMBED-READY $name $drv"

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3<>/dev/ttyS1
while :; do
	if ! read -r id cmd <&3; then
		sleep 1
		continue
	fi
	[ -n "$id" ] || continue
	sh -c "$cmd" </dev/null >/tmp/.vmbed-out 2>&1 3>&-
	rc=$?
	{
		echo "@@BEGIN $id"
		cat /tmp/.vmbed-out
		[ -s /tmp/.vmbed-out ] && [ "$(tail -c1 /tmp/.vmbed-out | od -An -c | tr -d ' ')" != '\n' ] && echo
		echo "@@END $id $rc"
	} >&3
done
