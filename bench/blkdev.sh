# SPDX-License-Identifier: MIT
#
# blkdev.sh - sourced by the storage benchmarks (nvme-saturation.sh, nvme-rate.sh): the
# block device they measure against (a loop device with direct I/O over a file written
# full once, in /tmp or a directory given, or a device given), its reads capped by the cgroup block I/O
# throttle (blkio.throttle.read_iops_device on cgroup v1, io.max on cgroup v2), and the
# children it runs; everything recorded in $state_dir/PID.state as it is made and
# removed on every exit path. If the runner is SIGKILLed, a watcher started with it
# cleans up within seconds, and the next start removes whatever a dead run left (its
# PID gone). Nothing else is touched.
#
# The sourcing script sets, before sourcing: prog (its name, for messages), state_dir,
# keep (a directory to copy the raw outputs to at exit, or ""), and die/skip. It gets:
#   out                  a scratch directory for raw outputs (removed at exit)
#   run_child CMD...     CMD in its own session, recorded, waited for (its status)
#   bd_device DEV SIZE [DIR]  dev, majmin and what: DEV as given, or a loop device over
#                        a SIZE file in DIR (default /tmp; DEV "")
#   bd_throttle IOPS     cg and capped: a cgroup capping dev's reads at IOPS/s (0: none)
#   into_cg              the shell text that puts the current process into $cg
# shellcheck shell=bash

mkdir -p "$state_dir"
state=$state_dir/$$.state

# undo STATEFILE: stop its child, detach its loop device, remove its file and cgroup (each
# only if it is the one recorded)
undo() {
	local f=$1 k v loop="" file="" cg="" c=""
	while IFS='=' read -r k v; do
		case $k in loop) loop=$v ;; file) file=$v ;; cg) cg=$v ;; child) c=$v ;; esac
	done <"$f"
	[[ -z $c ]] || stop_child "$c"
	if [[ -n $loop && -n $file ]] && losetup -n -O BACK-FILE "$loop" 2>/dev/null | grep -qF "${file}"; then
		losetup -d "$loop" 2>/dev/null || true
	fi
	[[ -z $file ]] || rm -f "$file"
	if [[ -n $cg && -d $cg ]]; then
		# our processes in it are gone or going (the bed kills them); wait for them, then remove it
		for _ in $(seq 50); do [[ -s $cg/cgroup.procs ]] || break; sleep 0.1; done
		rmdir "$cg" 2>/dev/null || echo "$prog: could not remove cgroup $cg (processes still in it)" >&2
	fi
	rm -f "$f"
}
# stop_child PID: TERM its process group (netns-pair removes its namespaces and what runs in them), wait
stop_child() {
	kill -0 "$1" 2>/dev/null || return 0
	kill -TERM -- "-$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL -- "-$1" 2>/dev/null || true
}
for f in "$state_dir"/*.state; do
	[[ -e $f ]] || continue
	pid=$(basename "$f" .state)
	[[ $pid =~ ^[0-9]+$ ]] || continue
	kill -0 "$pid" 2>/dev/null && continue
	echo "$prog: removing what run $pid left (it is gone)" >&2
	undo "$f"
done
: >"$state"
record() { echo "$1=$2" >>"$state"; }

out=$(mktemp -d "/tmp/bp-$prog.XXXXXX")
watcher=""
child=""
# run_child CMD...: in its own session (process group) in the background, recorded, waited for, so
# that a signal or the watcher can stop all of it
run_child() {
	setsid "$@" &
	child=$!
	record child "$child"
	local rc=0
	wait "$child" || rc=$?
	child=""
	record child "" # gone: its PID may be anyone's now
	return "$rc"
}
# shellcheck disable=SC2317  # called by the EXIT trap
bd_cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[[ -z $watcher ]] || kill "$watcher" 2>/dev/null || true
	[[ -z $child ]] || stop_child "$child"
	undo "$state"
	if [[ -n $keep ]]; then mkdir -p "$keep" && cp -r "$out"/. "$keep"/ && echo "$prog: raw outputs in $keep" >&2; fi
	rm -rf "$out"
	rmdir "$state_dir" 2>/dev/null || true # when no other run's state is in it
	exit "$rc"
}
trap bd_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# A SIGKILLed runner runs no trap: this watcher does the same once it is gone.
(
	trap - EXIT INT TERM
	exec </dev/null >/dev/null 2>&1
	while kill -0 $$ 2>/dev/null; do sleep 1; done
	[[ ! -e $state ]] || undo "$state"
	rm -rf "$out"
) &
watcher=$!

# bd_device DEV SIZE [DIR]: the device to measure (dev, majmin, what)
bd_device() {
	local backing count
	if [[ -n $1 ]]; then
		dev=$1
		what="$dev (given)"
	else
		backing=${3:-/tmp}/bp-$prog-$$.img
		record file "$backing"
		echo "$prog: writing $2 to $backing (once, so reads reach the disk)" >&2
		count=$(numfmt --from=iec "$2")
		dd if=/dev/zero of="$backing" bs=1M count=$((count / 1048576)) oflag=direct status=none ||
			die "cannot write $backing"
		dev=$(losetup --direct-io=on --show -f "$backing") || die "losetup: cannot attach a loop device"
		record loop "$dev"
		what="$dev (loop, direct I/O, over $2 in $backing)"
	fi
	majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
}

# bd_throttle IOPS: a cgroup of our own capping dev's reads (cg, capped)
bd_throttle() {
	cg=""
	capped="not capped"
	(($1 > 0)) || return 0
	if [[ -w /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]]; then
		cg=/sys/fs/cgroup/blkio/bp-$prog-$$
		mkdir "$cg"
		record cg "$cg"
		echo "$majmin $1" >"$cg/blkio.throttle.read_iops_device"
		capped="reads capped at $1/s (cgroup v1 blkio.throttle.read_iops_device)"
	elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		cg=/sys/fs/cgroup/bp-$prog-$$
		grep -qw io /sys/fs/cgroup/cgroup.subtree_control || echo +io >/sys/fs/cgroup/cgroup.subtree_control
		mkdir "$cg"
		record cg "$cg"
		echo "$majmin riops=$1" >"$cg/io.max"
		capped="reads capped at $1/s (cgroup v2 io.max)"
	else
		skip "--throttle: no cgroup block I/O throttle here (neither v1 blkio nor v2 io)"
	fi
}
# into_cg: the shell text that puts the current process into the cgroup (nothing without one)
into_cg() { [[ -z $cg ]] && echo true || echo "echo \$\$ > $cg/cgroup.procs"; }
