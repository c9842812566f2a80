#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds the guest that the interop test boots: Debian 12's stock kernel (linux-image-amd64,
# 6.1) and a busybox initramfs holding the nvme-tcp host modules, the NIC driver for qemu's
# user-mode network and tests/interop/guest-init.sh as /init. Everything comes from Debian
# packages; nothing of the kernel package is installed on the machine (apt-get download +
# dpkg-deb -x into the cache).
#
#   tests/interop/build-guest.sh [--print]
#
# Cache: $BP_INTEROP_CACHE (default <source tree>/build/interop-cache, which .gitignore keeps
# out of git). A second run with nothing changed does nothing. On success it writes
# $CACHE/guest.env (BP_GUEST_KERNEL, BP_GUEST_INITRD, BP_GUEST_KVER, BP_GUEST_KPKG) and with
# --print also prints it. Exit 77 with one line on stderr when the guest cannot be had here
# (not root and packages missing, or apt cannot supply them); 1 on any other failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cache=${BP_INTEROP_CACHE:-$src/build/interop-cache}

# The modules the guest loads by name; their dependencies come from modules.dep.
#  virtio_net, e1000: qemu's user-mode NIC (virtio-net-pci by default, e1000 as a fallback)
#  e1000e: the VM test bed's NIC with interrupt throttling and MSI-X (tests/vmbed)
#  nvme-tcp: the host (pulls nvme-fabrics, nvme-core, t10-pi and the crc helpers)
#  crc32c_generic: header/data digests (nvme-tcp asks the crypto API for "crc32c")
#  crct10dif_generic, crc64_rocksoft_generic: soft dependencies of crc-t10dif/crc64-rocksoft,
#  which modules.dep does not list
#  nvmet-tcp: the kernel's own target, for the reference run (BP_INTEROP_PEER=nvmet)
GUEST_MODULES="virtio_pci virtio_net e1000 e1000e nvme-tcp crc32c_generic crct10dif_generic crc64_rocksoft_generic nvmet-tcp"
# Debian's packages this script and the test need (qemu-system-x86 brings seabios and the
# virtio option ROM through its dependencies).
NEED_PKGS="qemu-system-x86 busybox-static cpio gzip"

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "build-guest: $*" >&2; exit 1; }
log() { echo "build-guest: $*" >&2; }

is_root() { [ "$(id -u)" -eq 0 ]; }
pkg_ok() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

command -v dpkg-query >/dev/null && command -v apt-get >/dev/null ||
	skip "not a Debian system (no dpkg/apt-get): the guest is built from Debian packages"

apt_updated=0
apt_update() {
	[ "$apt_updated" = 1 ] && return 0
	log "apt-get update"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 ||
		skip "apt-get update failed: Debian's archive is not reachable"
	apt_updated=1
}

# 1. Host packages.
missing=()
for p in $NEED_PKGS; do pkg_ok "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	is_root || skip "not root and Debian packages missing: ${missing[*]} (apt-get install ${missing[*]})"
	apt_update
	log "installing ${missing[*]}"
	out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" 2>&1) ||
		skip "apt-get cannot install ${missing[*]}: $(echo "$out" | grep -E '^E:' | head -1)"
fi
for t in qemu-system-x86_64 busybox cpio gzip dpkg-deb apt-get flock; do
	command -v "$t" >/dev/null || die "$t is missing after the package check"
done
busybox=$(command -v busybox)

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one builder at a time; a second waits and then finds the cache ready
rm -rf "$cache"/extract.* "$cache"/initramfs.* # left by a builder that was killed

# 2. Which kernel package: the one linux-image-amd64 depends on (Debian 12: linux-image-6.1.0-N-amd64),
# or $BP_INTEROP_KERNEL_PKG. When apt cannot tell (no lists, offline), reuse what the cache holds.
kpkg=${BP_INTEROP_KERNEL_PKG:-}
resolve_kpkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
if [ -z "$kpkg" ]; then
	kpkg=$(resolve_kpkg || true)
	if [ -z "$kpkg" ] && is_root; then
		apt_update
		kpkg=$(resolve_kpkg || true)
	fi
fi
kver_of_pkg() { echo "${1#linux-image-}"; } # linux-image-6.1.0-57-amd64 -> 6.1.0-57-amd64
if [ -n "$kpkg" ]; then
	kpkgver=$(apt-cache policy "$kpkg" 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
	[ -n "$kpkgver" ] && [ "$kpkgver" != "(none)" ] || kpkgver=unknown
fi
kdir=""
if [ -n "$kpkg" ] && [ -f "$cache/kernel/$kpkg/stamp" ] &&
	[ "$(cat "$cache/kernel/$kpkg/stamp")" = "$kpkgver $GUEST_MODULES" ]; then
	kdir=$cache/kernel/$kpkg
elif [ -z "$kpkg" ]; then
	# apt knows nothing: fall back to the newest kernel already in the cache
	kdir=$(ls -d "$cache"/kernel/linux-image-* 2>/dev/null | sort -V | tail -1 || true)
	[ -n "$kdir" ] && [ -f "$kdir/stamp" ] ||
		skip "apt knows no linux-image-amd64 (run apt-get update as root) and the cache $cache holds no kernel"
	kpkg=$(basename "$kdir")
fi

# 3. Kernel and module closure, from the .deb without installing it.
if [ -z "$kdir" ]; then
	kver=$(kver_of_pkg "$kpkg")
	kdir=$cache/kernel/$kpkg
	work=$(mktemp -d "$cache/extract.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	log "downloading $kpkg $kpkgver"
	out=$(cd "$work" && apt-get download "$kpkg" 2>&1) ||
		skip "apt-get download $kpkg failed: $(echo "$out" | grep -E '^E:' | head -1)"
	deb=$(ls "$work"/*.deb)
	log "extracting $(basename "$deb")"
	dpkg-deb -x "$deb" "$work/root"
	rm -f "$deb"
	kroot=$work/root/lib/modules/$kver
	[ -f "$work/root/boot/vmlinuz-$kver" ] && [ -d "$kroot/kernel" ] ||
		die "$kpkg has no boot/vmlinuz-$kver or lib/modules/$kver"
	# The package ships no modules.dep (its postinst runs depmod): make it here.
	"$busybox" depmod -b "$work/root" "$kver"
	[ -s "$kroot/modules.dep" ] || die "depmod made no modules.dep"

	# Closure over modules.dep, dependencies first. Names may be written with - or _.
	declare -A seen=()
	order=()
	modpath() { # name -> path relative to lib/modules/KVER
		local n=${1//-/_}
		awk -F: -v n="$n" '{ b=$1; sub(/.*\//, "", b); sub(/\.ko(\..*)?$/, "", b); gsub(/-/, "_", b);
			if (b == n) { print $1; exit } }' "$kroot/modules.dep"
	}
	visit() {
		local p=$1 d
		[ -n "${seen[$p]:-}" ] && return 0
		seen[$p]=1
		for d in $(awk -F: -v p="$p" '$1 == p { print $2; exit }' "$kroot/modules.dep"); do
			visit "$d"
		done
		order+=("$p")
	}
	for m in $GUEST_MODULES; do
		p=$(modpath "$m")
		[ -n "$p" ] || die "module $m is not in $kpkg"
		visit "$p"
	done

	rm -rf "$kdir.new"
	mkdir -p "$kdir.new/lib/modules/$kver"
	cp "$work/root/boot/vmlinuz-$kver" "$kdir.new/vmlinuz"
	cp "$work/root/boot/config-$kver" "$kdir.new/config"
	for p in "${order[@]}"; do
		mkdir -p "$kdir.new/lib/modules/$kver/$(dirname "$p")"
		cp "$kroot/$p" "$kdir.new/lib/modules/$kver/$p"
	done
	cp "$kroot/modules.builtin" "$kroot/modules.builtin.modinfo" "$kdir.new/lib/modules/$kver/" 2>/dev/null || true
	# modules.dep/alias for the subset, so busybox modprobe in the guest resolves names and
	# the kernel's own request_module("crypto-crc32c") finds crc32c_generic.
	"$busybox" depmod -b "$kdir.new" "$kver"
	printf '%s\n' "${order[@]}" >"$kdir.new/load-order"
	echo "$kver" >"$kdir.new/kver"
	echo "$kpkgver $GUEST_MODULES" >"$kdir.new/stamp"
	rm -rf "$kdir"
	mv "$kdir.new" "$kdir"
	rm -rf "$work"
	trap - EXIT
	# older kernels in the cache are of no further use
	for old in "$cache"/kernel/linux-image-*; do
		[ "$old" = "$kdir" ] || rm -rf "$old"
	done
	log "kernel $kver: $(wc -l <"$kdir/load-order") modules: $(tr '\n' ' ' <"$kdir/load-order")"
fi
kver=$(cat "$kdir/kver")

# 4. The initramfs: busybox, /init, the modules. Rebuilt when any input changes.
bbver=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || echo unknown)
stamp=$( {
	cat "$here/guest-init.sh" "$0"
	echo "$kpkg $(cat "$kdir/stamp") busybox $bbver"
} | sha256sum | cut -d' ' -f1)
initrd=$cache/initrd.img
if [ ! -s "$initrd" ] || [ "$(cat "$cache/initrd.stamp" 2>/dev/null)" != "$stamp" ]; then
	st=$(mktemp -d "$cache/initramfs.XXXXXX")
	trap 'rm -rf "$st"' EXIT
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,etc,root,lib/modules}
	cp "$busybox" "$st/bin/busybox"
	# applet links made here, so the kernel finds /sbin/modprobe from the first instant
	"$busybox" --list-full | while read -r a; do
		[ "$a" = bin/busybox ] && continue
		ln -sf /bin/busybox "$st/$a"
	done
	cp -a "$kdir/lib/modules/$kver" "$st/lib/modules/"
	cp "$kdir/load-order" "$st/lib/modules/$kver/load-order"
	install -m 0755 "$here/guest-init.sh" "$st/init"
	echo "root:x:0:0:root:/root:/bin/sh" >"$st/etc/passwd"
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip -1 >"$initrd.new"
	mv "$initrd.new" "$initrd"
	echo "$stamp" >"$cache/initrd.stamp"
	rm -rf "$st"
	trap - EXIT
	log "initramfs $(du -k "$initrd" | cut -f1) KiB"
fi

cat >"$cache/guest.env.new" <<EOF
BP_GUEST_KERNEL=$kdir/vmlinuz
BP_GUEST_INITRD=$initrd
BP_GUEST_KVER=$kver
BP_GUEST_KPKG=$kpkg
EOF
mv "$cache/guest.env.new" "$cache/guest.env"
[ "${1:-}" = --print ] && cat "$cache/guest.env"
exit 0
