#!/bin/bash
# SPDX-License-Identifier: MIT
# Checks before work: bad input to `busypoll target` and `busypoll perf` exits
# 2 with one line saying what, before anything is started or left behind: a
# port out of range said as such (not "not an address"), ram namespaces larger
# than this machine's memory refused unless --ram-beyond-memory says they are
# meant, a size= beyond its file system's free space refused unless
# --file-beyond-space says it is meant, and a file the target creates with size=
# but cannot size is removed again (size=100T leaves no 0-byte file); perf refuses a job that writes to a
# write-protected namespace from Identify Namespace, before any I/O (a trim too); as root, a
# mounted block device (a loop device with ext4 on it) is refused naming where.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3 timeout

# the mounted loop device of the last part (a killed run's too: found by its file's name)
MNT_IMG=bpt-target-checks-mnt.img
unmount_ours() {
	local dev
	for dev in $(losetup -nO NAME,BACK-FILE 2>/dev/null | awk -v f="$MNT_IMG" 'index($2, f) { print $1 }'); do
		umount "$dev" 2>/dev/null
		losetup -d "$dev" 2>/dev/null
	done
	return 0
}
cleanup() { [ "$(id -u)" != 0 ] || unmount_ours; }
cleanup

# refused TEXT CMD...: exit 2, one line on stderr holding TEXT
refused() {
	local text=$1 got
	shift
	timeout 60 "$BP" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq 2 ] || fail "busypoll $*: bad input must exit 2, got $got: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "busypoll $*: a refusal is one line, got: $(cat "$tmp/err")"
	grep -q -- "$text" "$tmp/err" || fail "busypoll $*: the refusal must say '$text': $(cat "$tmp/err")"
}

refused "port 99999 is out of range 1..65535" target --listen 127.0.0.1:99999 --ns ram:1M
refused "port 70000 is out of range 1..65535" target --listen '[::1]:70000' --ns ram:1M
refused "port 99999 is out of range 1..65535" perf --target 127.0.0.1:99999 --nqn nqn.x:y

# twice this machine's memory, in whole GiB
mem_kib=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
big=$(((mem_kib * 2) / 1048576 + 1))G
refused "more than this machine's .* MiB of memory.*--ram-beyond-memory" target --listen 127.0.0.1:0 --ns ram:$big
# two namespaces that each fit, but not together
half=$(((mem_kib * 3 / 4) / 1024))M
refused "--ram-beyond-memory" target --listen 127.0.0.1:0 --ns ram:$half --ns ram:$half
# meant: the target starts (pages are taken on first write only)
"$BP" target --listen 127.0.0.1:0 --ns ram:$big --ram-beyond-memory --log-level info >"$tmp/t.out" 2>"$tmp/t.err" &
pids+=($!)
bpt_wait_until 30 bpt_file_has "$tmp/t.err" 'listening on' ||
	fail "--ns ram:$big --ram-beyond-memory: the target never listened (30 s): $(cat "$tmp/t.err")"

# a size= beyond its file system's free space (statvfs) is refused before the file is made
free_b=$(df --output=avail -B1 "$tmp" | tail -1)
over=$(((free_b / 1048576) * 2 + 1024))M
refused "--ns file:$tmp/over.img,size=.*: needs .* MiB more, and its file system has .* MiB free.*--file-beyond-space" \
	target --listen 127.0.0.1:0 --ns "file:$tmp/over.img,size=$over"
[ ! -e "$tmp/over.img" ] || fail "a refused size= must not leave its file behind"
# meant: the target starts (the file is sparse: blocks are taken on first write)
"$BP" target --listen 127.0.0.1:0 --ns "file:$tmp/over.img,size=$over" --file-beyond-space --log-level info \
	>"$tmp/o.out" 2>"$tmp/o.err" &
pids+=($!)
bpt_wait_until 30 bpt_file_has "$tmp/o.err" 'listening on' ||
	fail "size=$over --file-beyond-space: the target never listened (30 s): $(cat "$tmp/o.err")"

# a file the target created and could not size is removed again
refused "cannot grow it to .* bytes" target --listen 127.0.0.1:0 --ns "file:$tmp/huge.img,size=100T" \
	--file-beyond-space
[ ! -e "$tmp/huge.img" ] || fail "size=100T that could not be had left $tmp/huge.img behind ($(stat -c %s "$tmp/huge.img") bytes)"
# one that existed is left alone
: >"$tmp/kept.img"
timeout 60 "$BP" target --listen 127.0.0.1:0 --ns "file:$tmp/kept.img,size=100T" --file-beyond-space >/dev/null 2>&1
[ -e "$tmp/kept.img" ] || fail "a file that existed before the target must never be removed"

# perf: a write job against a write-protected namespace is refused from Identify, before any I/O
NQN=nqn.2024-01.io.busypoll:checks
dd if=/dev/zero of="$tmp/ro.img" bs=1M count=1 status=none
"$BP" target --listen 127.0.0.1:0 --nqn "$NQN" --ns "file:$tmp/ro.img,ro,buffered" --log-level info \
	>"$tmp/ro.out" 2>"$tmp/ro.err" &
pids+=($!)
bpt_wait_until 30 bpt_file_has "$tmp/ro.err" 'listening on' ||
	die "the read-only target never said it was listening (30 s): $(cat "$tmp/ro.err")"
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$tmp/ro.err")
P=(perf --target "127.0.0.1:$port" --nqn "$NQN" --runtime 0.3 --interval 0 -q)
refused "--rw write: namespace 1 of $NQN is write protected" "${P[@]}" --rw=write
refused "--rw randrw: namespace 1 .* write protected" "${P[@]}" --rw=randrw
refused "--rw randread --verify: namespace 1 .* write protected.*without --verify" "${P[@]}" --rw=randread --verify
refused "--rw trim: namespace 1 .* write protected" "${P[@]}" --rw=trim
refused "--rw randtrim: namespace 1 .* write protected" "${P[@]}" --rw=randtrim
timeout 60 "$BP" "${P[@]}" --rw=randread >"$tmp/out" 2>"$tmp/err" ||
	fail "reads of a write-protected namespace must run: $(cat "$tmp/err")"

# a block device in use by a mounted file system: refused naming the mount point
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 losetup >/dev/null; then
	truncate -s 16M "$tmp/$MNT_IMG"
	dev=$(losetup -f --show "$tmp/$MNT_IMG") || die "losetup of $tmp/$MNT_IMG failed"
	mkfs.ext4 -q "$dev" || die "mkfs.ext4 $dev failed"
	mkdir "$tmp/mnt"
	mount "$dev" "$tmp/mnt" || die "mount $dev failed"
	refused "--ns file:$dev: the device is mounted at $tmp/mnt" target --listen 127.0.0.1:0 --ns "file:$dev"
	refused "--ns file:$dev: the device is mounted at $tmp/mnt" target --listen 127.0.0.1:0 --ns "file:$dev,ro"
	unmount_ours
else
	bpt_skip_part "a mounted device: needs root, losetup and mkfs.ext4"
fi
bpt_end
