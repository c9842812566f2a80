#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian source package (debian/): `dpkg-buildpackage -us -uc -b` in a scratch
# copy of the tree (the worktree stays clean) makes busypoll, libbusypoll0 and
# libbusypoll-dev, with dpkg-gensymbols at its strictest (any symbol the symbols
# file does not describe fails the build); each package holds what it should (no
# NVMe/TCP headers); the three install with dpkg --root into a scratch root, where
# the program reports the version, an example builds with pkg-config alone against
# the installed files and runs, and the manual page renders; lintian reports no
# error (its warnings are printed). As root: dpkg --root installs as root.
. "$(dirname "$0")/lib.sh"
need BP_SOURCE_DIR BP_VERSION
[ "$(id -u)" = 0 ] || skip "dpkg --root installs files owned by root: run as root"
need_tool dpkg-buildpackage:dpkg-dev dh:debhelper lintian scdoc cmake pkg-config \
	"${CC:-cc}:gcc" man:man-db timeout:coreutils
command -v dpkg-checkbuilddeps >/dev/null && ! dpkg-checkbuilddeps "$BP_SOURCE_DIR/debian/control" 2>"$tmp/deps" &&
	skip "build dependencies missing: $(cat "$tmp/deps") (scripts/install-deps.sh)"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
v=$BP_VERSION
pids=()
pkg_cleanup() {
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
}

# ---- a scratch copy: what git tracks plus untracked files it does not ignore ----
src=$tmp/busypoll-$v
mkdir -p "$src"
if git -C "$BP_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$BP_SOURCE_DIR" ls-files -z -co --exclude-standard |
		(cd "$BP_SOURCE_DIR" && tar --null -T - -cf -) | tar -C "$src" -xf - ||
		fail "copying the tree (git ls-files) failed"
else
	tar -C "$BP_SOURCE_DIR" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$src" -xf - ||
		fail "copying the tree failed"
fi
[ -x "$src/debian/rules" ] || { fail "the copy has no executable debian/rules"; finish deb; }

# ---- build ----
(cd "$src" && DPKG_GENSYMBOLS_CHECK_LEVEL=4 DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	timeout 900 dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1
st=$?
if [ "$st" -ne 0 ]; then
	grep -B2 -A20 'dpkg-gensymbols: error\|^dpkg-gensymbols: warning: some new symbols' "$tmp/build.log" >&2
	fail "dpkg-buildpackage -us -uc -b exited $st; the end of its log:"
	tail -n 40 "$tmp/build.log" >&2
	finish deb
fi
for p in busypoll libbusypoll0 libbusypoll-dev; do
	[ -f "$tmp/${p}_${v}_$arch.deb" ] || fail "no ${p}_${v}_$arch.deb was built"
done
[ "$fails" -eq 0 ] || finish deb

# contents PACKAGE: its file list (paths without ./), one a line
contents() { dpkg-deb -c "$tmp/${1}_${v}_$arch.deb" | awk '{print $6}' | sed 's|^\./|/|'; }
# has PACKAGE PATH...: each path in the package
has() {
	local p=$1 f
	shift
	for f in "$@"; do
		contents "$p" | grep -qx "$f" || fail "$p lacks $f"
	done
}
has busypoll /usr/bin/busypoll
has libbusypoll0 "/usr/lib/$multiarch/libbusypoll.so.${BP_SOVERSION:-0}"
has libbusypoll-dev "/usr/lib/$multiarch/libbusypoll.so" "/usr/lib/$multiarch/libbusypoll.a" \
	"/usr/lib/$multiarch/pkgconfig/busypoll.pc" /usr/share/man/man3/libbusypoll.3.gz \
	/usr/share/doc/libbusypoll-dev/examples/echo_server.c
for h in "$BP_SOURCE_DIR"/include/busypoll/*.h; do
	has libbusypoll-dev "/usr/include/busypoll/$(basename "$h")"
done
for page in "$BP_SOURCE_DIR"/man/*.1.scd; do
	has busypoll "/usr/share/man/man1/$(basename "$page" .scd).gz"
done
contents libbusypoll-dev | grep -q nvme && fail "libbusypoll-dev ships NVMe/TCP files: $(contents libbusypoll-dev | grep nvme)"
dpkg-deb -f "$tmp/libbusypoll-dev_${v}_$arch.deb" Depends | grep -q "libbusypoll0 (= $v)" ||
	fail "libbusypoll-dev does not depend on libbusypoll0 (= $v)"
dpkg-deb -I "$tmp/libbusypoll0_${v}_$arch.deb" symbols 2>/dev/null | grep -q "^ bp_loop_create@LIBBUSYPOLL_" ||
	fail "libbusypoll0 carries no symbols file naming bp_loop_create"

# ---- install into a scratch root ----
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers" "$root/var/log"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
debs=("$tmp/busypoll_${v}_$arch.deb" "$tmp/libbusypoll0_${v}_$arch.deb" "$tmp/libbusypoll-dev_${v}_$arch.deb")
# --force-depends: libc6, liburing2 ... are installed on this system, not in the scratch root
if ! dpkg --root="$root" --force-depends -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1; then
	fail "dpkg --root -i failed: $(tail -c 800 "$tmp/dpkg.log")"
	finish deb
fi
for p in busypoll libbusypoll0 libbusypoll-dev; do
	dpkg --root="$root" -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' ||
		fail "$p is not 'install ok installed' in the scratch root"
done

lib=$root/usr/lib/$multiarch
[ "$(LD_LIBRARY_PATH=$lib "$root/usr/bin/busypoll" --version)" = "busypoll $v" ] ||
	fail "the installed busypoll --version says '$("$root/usr/bin/busypoll" --version 2>&1)'"

# pkg-config against the installed files: the sysroot prefixes our -I and -L
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig
[ "$(pkg-config --modversion busypoll)" = "$v" ] || fail "pkg-config in the scratch root: $(pkg-config --modversion busypoll 2>&1)"
ex=$root/usr/share/doc/libbusypoll-dev/examples
for e in echo_server rr_client; do
	# shellcheck disable=SC2046
	"${CC:-cc}" -O2 ${BP_EXAMPLE_CFLAGS:-} "$ex/$e.c" $(pkg-config --cflags --libs busypoll) -o "$tmp/$e" \
		2>"$tmp/err" || fail "$e does not build against the installed libbusypoll-dev: $(head -c 600 "$tmp/err")"
done
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
if [ -x "$tmp/echo_server" ] && [ -x "$tmp/rr_client" ]; then
	export LD_LIBRARY_PATH=$lib
	ldd "$tmp/echo_server" | grep -q "libbusypoll.so.0 => $lib/" ||
		fail "echo_server does not load libbusypoll from the scratch root: $(ldd "$tmp/echo_server" | grep busypoll)"
	"$tmp/echo_server" epoll:block >"$tmp/echo" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		port=$(sed -n 's/^echo_server: port \([0-9]*\).*/\1/p' "$tmp/echo")
		[ -n "$port" ] && break
		sleep 0.05
	done
	timeout 30 "$tmp/rr_client" "127.0.0.1:${port:-1}" epoll:block 100 64 >"$tmp/client" 2>&1 ||
		fail "the packaged library's rr_client failed: $(cat "$tmp/client")"
	grep -q '^rr_client: 100 transactions of 64 bytes' "$tmp/client" || fail "rr_client said: $(cat "$tmp/client")"
	kill -TERM "${pids[0]}"
	wait "${pids[0]}" || fail "the packaged library's echo_server exited $? after SIGTERM, want 0"
	grep -q '^echo_server: 6400 bytes echoed' "$tmp/echo" || fail "echo_server said: $(cat "$tmp/echo")"
	unset LD_LIBRARY_PATH
fi
MANWIDTH=80 man -l --warnings "$root/usr/share/man/man3/libbusypoll.3.gz" >"$tmp/man" 2>"$tmp/man.err"
[ -s "$tmp/man.err" ] && fail "man -l libbusypoll.3.gz from the package warns: $(head -c 300 "$tmp/man.err")"
grep -q '^VERSIONS AND STABILITY' "$tmp/man" || fail "the packaged libbusypoll(3) has no VERSIONS AND STABILITY section"

# ---- lintian: no errors ----
timeout 600 lintian --fail-on error "$tmp/busypoll_${v}_$arch.changes" >"$tmp/lintian" 2>&1
st=$?
grep -v 'running with root privileges' "$tmp/lintian" >&2
[ "$st" -eq 0 ] || fail "lintian exited $st: $(grep '^E:' "$tmp/lintian" | head -n 10)"

finish "the Debian packages build, install into a scratch root and pass lintian"
