#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds the VM test bed's guest: a Debian kernel new enough for per-NAPI settings,
# irq-suspend and io_uring NAPI (trixie-backports' linux 7.3, not the 6.1 of the interop
# guest), its module closure for the bed's NICs, and a busybox initramfs with ethtool, ip
# and their shared libraries and vmbed-init.sh as /init. busypoll itself is NOT in it: the
# bed appends a per-boot cpio (vmbed.sh), so a rebuilt busypoll never rebuilds this cache.
#
#   build-guest.sh [--print]
#
# The kernel is fetched the well-kept way: apt with a private sources list and lists dir
# under the cache (the InRelease signature checked against the machine's Debian archive
# keyring, the .debs against the Packages file's hashes by apt), `apt-get download`,
# `dpkg-deb -x`. Nothing is installed on the machine.
#
# Cache: $BP_VMBED_CACHE (default /var/cache/busypoll/vmbed: one for every source tree, the
# mutation check's scratch trees and the installed program alike). A second run
# with nothing changed does nothing. On success it writes $CACHE/guest.env (BP_VM_KERNEL,
# BP_VM_INITRD, BP_VM_KVER) and with --print also prints it. Exit 77 with one line on stderr
# when the guest cannot be had here (apt cannot reach or verify the archive, tools missing);
# 1 on any other failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${BP_VMBED_CACHE:-/var/cache/busypoll/vmbed}
KPKG=${BP_VMBED_KERNEL_PKG:-linux-image-7.3.4+deb13-amd64}
SUITE=${BP_VMBED_SUITE:-trixie-backports}
MIRROR=${BP_VMBED_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The modules the guest loads; their dependencies come from each module's own depends=.
#  e1000e: interrupt throttling (ITR behind ethtool -C rx-usecs), MSI-X, one queue
#  virtio_net: several queue pairs (ethtool -L combined N), one NAPI and IRQ per queue
GUEST_MODULES="e1000e virtio_net"
# ethtool reads back what the driver keeps; ip sets addresses (busybox's ip lacks none we use,
# but iproute2's is what a person types)
GUEST_TOOLS="ethtool"

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "vmbed build-guest: $*" >&2; exit 1; }
log() { echo "vmbed build-guest: $*" >&2; }

for t in qemu-system-x86_64 busybox cpio gzip xz dpkg-deb apt-get flock ldd; do
	command -v "$t" >/dev/null || skip "$t is missing (scripts/install-deps.sh installs it)"
done
[ -r "$KEYRING" ] || skip "no Debian archive keyring at $KEYRING (apt-get install debian-archive-keyring)"
busybox=$(command -v busybox)

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one builder at a time; a second waits and then finds the cache ready
rm -rf "$cache"/extract.* "$cache"/initramfs.* # left by a builder that was killed

apt_dir=$cache/apt
APT=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Get::List-Cleanup=0
	-o Debug::NoLocking=1)

kdir=$cache/kernel/$KPKG
stamp_k="$KPKG $SUITE $GUEST_MODULES"
if [ ! -f "$kdir/stamp" ] || [ "$(cat "$kdir/stamp")" != "$stamp_k" ]; then
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main" >"$apt_dir/sources.list"
	log "apt-get update ($SUITE, private lists in $apt_dir)"
	out=$(apt-get "${APT[@]}" update 2>&1) || skip "apt-get update of $SUITE failed: $(echo "$out" | grep -E '^(E|W):' | head -1)"
	# a signature apt could not check is a warning, not an error, for apt-get update: refuse it
	if echo "$out" | grep -qE 'NO_PUBKEY|not signed|InRelease.*(invalid|BADSIG)|is not signed'; then
		skip "the $SUITE InRelease does not verify with $KEYRING: $(echo "$out" | grep -E '^(W|E):' | head -1)"
	fi
	# the image package is a shell: it depends on linux-binary-V and linux-modules-V (7.x) or is
	# the kernel itself (6.x); fetch what holds vmlinuz and the modules
	deps=$(apt-cache "${APT[@]}" depends "$KPKG" 2>/dev/null | awk '/Depends: linux-(binary|modules)-/ { print $2 }')
	pkgs=${deps:-$KPKG}
	work=$(mktemp -d "$cache/extract.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	log "downloading $pkgs"
	out=$(cd "$work" && apt-get "${APT[@]}" download $pkgs 2>&1) ||
		skip "apt-get download $pkgs failed: $(echo "$out" | grep -E '^E:' | head -1)"
	for d in "$work"/*.deb; do dpkg-deb -x "$d" "$work/root"; rm -f "$d"; done
	mroot=$(ls -d "$work"/root/usr/lib/modules/* "$work"/root/lib/modules/* 2>/dev/null | head -1 || true)
	[ -n "$mroot" ] || die "$pkgs hold no lib/modules"
	kver=$(basename "$mroot")
	vmlinuz=$mroot/vmlinuz
	[ -f "$vmlinuz" ] || vmlinuz=$work/root/boot/vmlinuz-$kver
	[ -f "$vmlinuz" ] || die "$pkgs hold no vmlinuz for $kver"

	rm -rf "$kdir.new"
	mkdir -p "$kdir.new/lib/modules/$kver"
	cp "$vmlinuz" "$kdir.new/vmlinuz"
	# closure: decompress each module, read its depends= from .modinfo, dependencies first
	declare -A seen=()
	order=()
	visit() {
		local n=${1//-/_} f rel d
		[ -n "${seen[$n]:-}" ] && return 0
		seen[$n]=1
		f=$(find "$mroot/kernel" \( -name "$n.ko*" -o -name "${n//_/-}.ko*" \) | head -1)
		[ -n "$f" ] || die "module $n is not in $pkgs"
		rel=${f#"$mroot"/}
		rel=${rel%.xz}
		rel=${rel%.zst}
		mkdir -p "$kdir.new/lib/modules/$kver/$(dirname "$rel")"
		case $f in
		*.xz) xz -dc "$f" >"$kdir.new/lib/modules/$kver/$rel" ;;
		*.zst) zstd -qdc "$f" >"$kdir.new/lib/modules/$kver/$rel" ;;
		*) cp "$f" "$kdir.new/lib/modules/$kver/$rel" ;;
		esac
		for d in $(tr '\0' '\n' <"$kdir.new/lib/modules/$kver/$rel" | sed -n 's/^depends=//p' | head -1 | tr ',' ' '); do
			visit "$d"
		done
		order+=("$rel")
	}
	for m in $GUEST_MODULES; do visit "$m"; done
	printf '%s\n' "${order[@]}" >"$kdir.new/load-order"
	echo "$kver" >"$kdir.new/kver"
	echo "$stamp_k" >"$kdir.new/stamp"
	rm -rf "$kdir"
	mv "$kdir.new" "$kdir"
	rm -rf "$work"
	trap - EXIT
	for old in "$cache"/kernel/*; do [ "$old" = "$kdir" ] || rm -rf "$old"; done
	log "kernel $kver: modules $(tr '\n' ' ' <"$kdir/load-order")"
fi
kver=$(cat "$kdir/kver")

# The initramfs: busybox, ethtool and its libraries, /init, the modules.
bbver=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || echo unknown)
tools=$(for t in $GUEST_TOOLS; do command -v "$t" || die "$t is missing on this machine"; done)
stamp=$( {
	cat "$here/vmbed-init.sh" "$0"
	echo "$(cat "$kdir/stamp") busybox $bbver"
	for t in $tools; do sha256sum "$t"; done
} | sha256sum | cut -d' ' -f1)
initrd=$cache/initrd.img
if [ ! -s "$initrd" ] || [ "$(cat "$cache/initrd.stamp" 2>/dev/null)" != "$stamp" ]; then
	st=$(mktemp -d "$cache/initramfs.XXXXXX")
	trap 'rm -rf "$st"' EXIT
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,etc,root,run,lib/modules}
	cp "$busybox" "$st/bin/busybox"
	"$busybox" --list-full | while read -r a; do
		[ "$a" = bin/busybox ] && continue
		ln -sf /bin/busybox "$st/$a"
	done
	for t in $tools; do
		cp "$t" "$st/usr/sbin/$(basename "$t")"
		# its shared libraries and the dynamic loader, at the paths ldd names
		ldd "$t" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r l; do
			mkdir -p "$st/$(dirname "$l")"
			cp -L "$l" "$st/$l"
		done
	done
	cp -a "$kdir/lib/modules/$kver" "$st/lib/modules/"
	cp "$kdir/load-order" "$st/lib/modules/$kver/load-order"
	install -m 0755 "$here/vmbed-init.sh" "$st/init"
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
BP_VM_KERNEL=$kdir/vmlinuz
BP_VM_INITRD=$initrd
BP_VM_KVER=$kver
EOF
mv "$cache/guest.env.new" "$cache/guest.env"
[ "${1:-}" = --print ] && cat "$cache/guest.env"
exit 0
