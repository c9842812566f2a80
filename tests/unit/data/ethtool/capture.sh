#!/usr/bin/env bash
# Re-capture the ethtool netlink byte captures in this folder (as root): what
# Debian's ethtool (netlink mode) sends and what the kernel answers, read with
# strace's hex dumps of the netlink socket (-e write=FD -e read=FD; this kernel has
# no nlmon). tests/unit/test_ethtool_nl.c checks our encoder against the requests
# and our decoder against the replies.
#
#   capture.sh [DEV]   DEV: a device that reports coalescing (default: the first
#                      one `ethtool -c` answers for, e.g. virtio_net's eth0)
#
# Nothing is changed on DEV: its one coalescing SET writes back the values it has
# (the kernel calls no driver when nothing changes), and the other asks for a
# parameter the driver does not support, which the kernel refuses before acting.
# The veth captures run on a veth pair in a namespace this script makes and removes.
#
# File format (*.nl): '#' comment lines, then one line per datagram, in order:
#   send HEX   a request as ethtool wrote it
#   recv HEX   one datagram the kernel returned (may hold several messages)
set -euo pipefail
cd "$(dirname "$0")"
[ "$(id -u)" -eq 0 ] || { echo "capture.sh: needs root (a namespace, netlink sets)" >&2; exit 1; }
for p in ethtool strace ip; do
	command -v "$p" >/dev/null || { echo "capture.sh: $p is missing (apt-get install $p)" >&2; exit 1; }
done

ns=bp-ethcap$$
tmp=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM HUP

# capture NAME NETNS|- COMMENT ARGS...: ethtool ARGS under strace, into NAME.nl
capture() {
	local name=$1 where=$2 comment=$3; shift 3
	local run=()
	[ "$where" = - ] || run=(ip netns exec "$where")
	"${run[@]}" strace -o "$tmp/trace" -xx -s 0 -e trace=socket,sendto,recvmsg \
		-e write=all -e read=all ethtool "$@" >/dev/null 2>&1 || true
	{
		echo "# ethtool $*: $comment"
		echo "# captured by capture.sh on Linux $(uname -r), $(ethtool --version)"
		awk '
			/^socket\(AF_NETLINK/ { nl = 1 }
			/^sendto\(/ { flush(); dir = "send"; next }
			/^recvmsg\(/ { flush(); dir = "recv"; next }
			/^[a-z_0-9]+\(/ { flush(); dir = ""; next }
			/^ \| [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / && dir != "" && nl {
				n = split(substr($0, 11, 48), b, " ")
				for (i = 1; i <= n; i++) hex = hex b[i]
			}
			function flush() { if (dir != "" && hex != "") print dir, hex; hex = "" }
			END { flush() }
		' "$tmp/trace"
	} >"$name.nl"
	echo "capture.sh: $name.nl ($(grep -c '^send' "$name.nl") requests)"
}

ip netns add "$ns"
ip -n "$ns" link add va numtxqueues 4 numrxqueues 4 type veth peer vb numtxqueues 4 numrxqueues 4
capture coalesce-get-veth "$ns" "veth has no interrupt coalescing" -c va
capture coalesce-set-veth "$ns" "veth has no interrupt coalescing: all six parameters" \
	-C va rx-usecs 10 rx-frames 20 adaptive-rx on tx-usecs 30 tx-frames 40 adaptive-tx off
capture channels-get-veth "$ns" "veth made with 4 rx and 4 tx queues" -l va
capture channels-set-veth "$ns" "veth: 2 rx and 2 tx queues of 4" -L va rx 2 tx 2
capture channels-set-veth-combined "$ns" "veth has no combined channels" -L va combined 2

dev=${1:-}
if [ -z "$dev" ]; then
	for d in /sys/class/net/*; do
		d=${d##*/}
		if ethtool -c "$d" >/dev/null 2>&1; then dev=$d; break; fi
	done
fi
if [ -z "$dev" ]; then
	echo "capture.sh: no device here reports coalescing; kept the stored captures of one" >&2
	exit 0
fi
drv=$(ethtool -i "$dev" | awk '/^driver:/ { print $2 }')
cur=$(ethtool -c "$dev")
rx_usecs=$(awk '/^rx-usecs:/ { print $2 }' <<<"$cur")
rx_frames=$(awk '/^rx-frames:/ { print $2 }' <<<"$cur")
capture coalesce-get-dev - "$dev, driver $drv" -c "$dev"
capture coalesce-set-dev - "$dev, driver $drv: the values it has (no change)" \
	-C "$dev" rx-usecs "$rx_usecs" rx-frames "$rx_frames"
if grep -q 'Adaptive RX: .*TX: n/a' <<<"$cur"; then
	capture coalesce-set-dev-unsupported - "$dev, driver $drv: adaptive-tx is not supported" \
		-C "$dev" adaptive-tx on
fi
capture channels-get-dev - "$dev, driver $drv" -l "$dev"
