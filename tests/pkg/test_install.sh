#!/bin/bash
# SPDX-License-Identifier: MIT
# What a user gets from `cmake --install`: installs the build into a staging prefix,
# then, from outside the tree, with pkg-config alone:
# - the files: program, libbusypoll.so.N (SONAME links), libbusypoll.a, exactly the
#   public headers (no nvme/), busypoll.pc, every manual page, the examples;
# - the one version everywhere: pkg-config --modversion, busypoll --version,
#   debian/changelog;
# - every installed example built against the shared object and against the static
#   archive (--static), each binary's dynamic section checked, and run on loopback:
#   the echo server in epoll and io_uring modes serves clients whose every answer is
#   checked, and its byte counter equals what they sent; the NAPI placement server
#   spreads loopback (NAPI id 0) round robin; bad input gives exit 2, a dead server 1;
# - as root, the placement server inside a veth test bed with 2 queues: connections
#   arrive on real NAPI ids and each id is served by exactly one loop;
# - man -l renders every page without a warning, and man -M finds them by name.
. "$(dirname "$0")/lib.sh"
need BP_SOURCE_DIR BP_BUILD_DIR BP_VERSION BUSYPOLL
need_tool cmake pkg-config "${CC:-cc}:gcc" readelf:binutils man:man-db timeout:coreutils

prefix=$tmp/prefix
pids=()
bed=

pkg_cleanup() {
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	if [ -n "$bed" ]; then
		for side in a b; do
			[ -e "/run/netns/bp-$bed-$side" ] && ip netns del "bp-$bed-$side" 2>/dev/null
		done
	fi
}

if ! cmake --install "$BP_BUILD_DIR" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
	fail "cmake --install failed: $(tail -c 600 "$tmp/install.log")"
	finish install
fi

# ---- the files ----
pc=$(find "$prefix" -name busypoll.pc -path '*/pkgconfig/*')
[ -n "$pc" ] || { fail "no busypoll.pc installed under $prefix"; finish install; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir busypoll)
incdir=$(pkg-config --variable=includedir busypoll)
sover=${BP_SOVERSION:-0}
case $libdir in "$prefix"/*) ;; *) fail "busypoll.pc's libdir $libdir is not under the prefix $prefix" ;; esac

[ -x "$prefix/bin/busypoll" ] || fail "bin/busypoll is not installed"
[ -f "$libdir/libbusypoll.a" ] || fail "libbusypoll.a is not installed in $libdir"
[ "$(readlink "$libdir/libbusypoll.so")" = "libbusypoll.so.$sover" ] ||
	fail "libbusypoll.so does not link to libbusypoll.so.$sover"
[ "$(readlink "$libdir/libbusypoll.so.$sover")" = "libbusypoll.so.$sover.${BP_VERSION#*.}" ] ||
	fail "libbusypoll.so.$sover does not link to libbusypoll.so.$sover.${BP_VERSION#*.}"
want_h=$(cd "$BP_SOURCE_DIR/include/busypoll" && ls -- *.h)
got_h=$(cd "$incdir/busypoll" 2>/dev/null && ls)
[ "$got_h" = "$want_h" ] || fail "installed headers '$(echo $got_h)' differ from include/busypoll/*.h '$(echo $want_h)'"
for page in "$BP_SOURCE_DIR"/man/*.scd; do
	page=$(basename "$page" .scd)
	[ -f "$prefix/share/man/man${page##*.}/$page" ] || fail "manual page $page is not installed"
done
examples=$prefix/share/doc/busypoll/examples
for ex in echo_server rr_client napi_server; do
	[ -f "$examples/$ex.c" ] || fail "examples/$ex.c is not installed in $examples"
done

# ---- one version ----
[ "$(pkg-config --modversion busypoll)" = "$BP_VERSION" ] ||
	fail "pkg-config --modversion says $(pkg-config --modversion busypoll), want $BP_VERSION"
[ "$("$prefix/bin/busypoll" --version)" = "busypoll $BP_VERSION" ] ||
	fail "busypoll --version says '$("$prefix/bin/busypoll" --version)', want 'busypoll $BP_VERSION'"
deb_version=$(sed -n '1s/^busypoll (\([^)]*\)).*/\1/p' "$BP_SOURCE_DIR/debian/changelog" 2>/dev/null)
[ "$deb_version" = "$BP_VERSION" ] ||
	fail "debian/changelog's version is '$deb_version', CMakeLists.txt's project() says $BP_VERSION"
grep -q '^Requires.private: liburing, libmnl, libxdp, libbpf$' "$pc" || fail "busypoll.pc lacks 'Requires.private: liburing, libmnl, libxdp, libbpf'"

# ---- the examples, from a copy outside the tree, with pkg-config alone ----
mkdir -p "$tmp/ex" && cp "$examples"/*.c "$tmp/ex/" || fail "cannot copy the installed examples"
cd "$tmp/ex" || exit 1
cflags="-O2 -g -Wall -Wextra -Wno-unused-parameter -Werror ${BP_EXAMPLE_CFLAGS:-}"
static_libs=$(pkg-config --static --libs busypoll | sed 's/-lbusypoll/-l:libbusypoll.a/')
for ex in echo_server rr_client napi_server; do
	# shellcheck disable=SC2086
	$CC $cflags "$ex.c" $(pkg-config --cflags --libs busypoll) -o "$ex.shared" 2>"$tmp/err" ||
		fail "$ex does not build with pkg-config --cflags --libs busypoll: $(head -c 600 "$tmp/err")"
	# shellcheck disable=SC2086
	$CC $cflags "$ex.c" $(pkg-config --cflags busypoll) $static_libs -o "$ex.static" 2>"$tmp/err" ||
		fail "$ex does not build against libbusypoll.a with pkg-config --static: $(head -c 600 "$tmp/err")"
	readelf -d "$ex.shared" 2>/dev/null | grep -q "NEEDED.*\[libbusypoll.so.$sover\]" ||
		fail "$ex.shared does not need libbusypoll.so.$sover"
	needed=$(readelf -d "$ex.static" 2>/dev/null | grep NEEDED)
	case $needed in *libbusypoll*) fail "$ex.static still needs the shared object: $needed" ;; esac
	for dep in liburing.so libmnl.so; do
		case $needed in *"$dep"*) ;; *) fail "$ex.static does not need $dep: Requires.private unused?" ;; esac
	done
done
# Without --static the archive's own needs are missing: the link must fail.
# shellcheck disable=SC2086
if $CC $cflags rr_client.c $(pkg-config --cflags busypoll) \
	$(pkg-config --libs busypoll | sed 's/-lbusypoll/-l:libbusypoll.a/') -o nostatic 2>/dev/null; then
	fail "linking libbusypoll.a without pkg-config --static worked: is the test linking what it thinks?"
fi
export LD_LIBRARY_PATH=$libdir
ldd ./echo_server.shared | grep -q "libbusypoll.so.$sover => $libdir/" ||
	fail "echo_server.shared does not load libbusypoll from the prefix: $(ldd ./echo_server.shared | grep busypoll)"

# start OUT CMD...: run a server in the background (killed on exit); sets $port from
# its "port N" line and $spid, or fails
start() {
	local out=$1 i
	shift
	"$@" >"$out" 2>&1 &
	spid=$!
	pids+=("$spid")
	port=
	for i in $(seq 100); do
		port=$(sed -n 's/^[a-z_]*: port \([0-9]*\).*/\1/p' "$out")
		[ -n "$port" ] && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	fail "$* printed no port: $(head -c 400 "$out")"
	return 1
}

# stop PID: SIGTERM, then its exit status must be 0
stop() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
	local st=$?
	[ "$st" -eq 0 ] || fail "server $1 exited $st after SIGTERM, want 0"
}

# client LINK ADDR MODE COUNT SIZE [NETNS]: one rr_client run (inside NETNS when
# given), its answers checked by itself
client() {
	local in=()
	[ -n "${6:-}" ] && in=(ip netns exec "$6")
	timeout 30 "${in[@]}" "./rr_client.$1" "$2" "$3" "$4" "$5" >"$tmp/client" 2>&1
	local st=$?
	[ "$st" -eq 0 ] || fail "rr_client.$1 $2 $3 $4 $5 exited $st: $(head -c 300 "$tmp/client")"
	grep -q "^rr_client: $4 transactions of $5 bytes, latency us: p50 " "$tmp/client" ||
		fail "rr_client.$1 $3 printed '$(head -c 300 "$tmp/client")'"
}

modes=(epoll:block)
"$BUSYPOLL" modes --check uring:block >/dev/null 2>&1 && modes+=(uring:block)
for link in shared static; do
	for mode in "${modes[@]}"; do
		start "$tmp/echo" "./echo_server.$link" "$mode" || continue
		client "$link" "127.0.0.1:$port" epoll:block 300 100
		client "$link" "127.0.0.1:$port" epoll:spin 20 65536
		client "$link" "127.0.0.1:$port" uring:block 100 1
		stop "$spid"
		want=$((300 * 100 + 20 * 65536 + 100 * 1))
		grep -q "^echo_server: $want bytes echoed, " "$tmp/echo" ||
			fail "echo_server.$link $mode: want '$want bytes echoed', got: $(tail -n 2 "$tmp/echo")"
	done

	# loopback has NAPI id 0: round robin over the loops
	start "$tmp/napi" "./napi_server.$link" epoll:block 2 || continue
	for i in 1 2 3 4; do
		client "$link" "127.0.0.1:$port" epoll:block 50 10
	done
	stop "$spid"
	placed=$(grep -o 'NAPI id [0-9]* -> loop [0-9]*' "$tmp/napi" | tr '\n' ';')
	[ "$placed" = "NAPI id 0 -> loop 0;NAPI id 0 -> loop 1;NAPI id 0 -> loop 0;NAPI id 0 -> loop 1;" ] ||
		fail "napi_server.$link on loopback placed '$placed', want round robin over loops 0 and 1"
	for l in 0 1; do
		grep -q "^napi_server: loop $l: 1000 bytes, NAPI ids: none$" "$tmp/napi" ||
			fail "napi_server.$link: loop $l should report 1000 bytes and no NAPI id: $(grep "loop $l:" "$tmp/napi")"
	done
done

# bad input: exit 2 and one line; a server that is not there: exit 1
./echo_server.shared foo:block >"$tmp/out" 2>&1
st=$?
[ "$st" -eq 2 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] && grep -q "unknown backend 'foo'" "$tmp/out" ||
	fail "echo_server foo:block: exit $st, '$(cat "$tmp/out")'; want 2 and the parser's one line"
./rr_client.shared 127.0.0.1:1 >"$tmp/out" 2>&1
st=$?
[ "$st" -eq 1 ] && grep -q "connect: Connection refused after 0 transactions" "$tmp/out" ||
	fail "rr_client against a closed port: exit $st, '$(cat "$tmp/out")'; want 1 and 'Connection refused'"

# ---- as root: real NAPI ids on a veth test bed ----
# Connections from namespace a reach b on one of b's two receive queues (NAPIs);
# the server's placements and each loop's own NAPI list must agree: every id is
# real (one of b's), and all connections of one id went to one loop.
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v python3 >/dev/null; then
	bed=pk$$
	if timeout 60 "$BUSYPOLL" testbed up --name "$bed" --queues 2 >"$tmp/bed" 2>&1; then
		timeout 30 "$BUSYPOLL" testbed status --name "$bed" --format json >"$tmp/bed.json"
		addr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ends"][1]["address"])' \
			"$tmp/bed.json")
		if start "$tmp/veth" ip netns exec "bp-$bed-b" ./napi_server.shared epoll:napi 2 "$addr:0"; then
			for i in 1 2 3 4 5 6 7 8; do
				client shared "$addr:$port" epoll:block 20 10 "bp-$bed-a"
			done
			stop "$spid"
			python3 - "$tmp/veth" "$tmp/bed.json" >"$tmp/verdict" <<'PY' || fail "napi_server in the test bed: $(cat "$tmp/verdict")"
import json, re, sys
out = open(sys.argv[1]).read()
b_ids = {n["id"] for n in json.load(open(sys.argv[2]))["ends"][1]["napi"]}
placed = [(int(i), int(l)) for i, l in re.findall(r"NAPI id (\d+) -> loop (\d+)", out)]
served = {int(l): {int(x) for x in ids.split()} for l, ids in
          re.findall(r"loop (\d+): \d+ bytes, NAPI ids: ([\d ]+)$", out, re.M)}
errs = []
if len(placed) != 8:
    errs.append(f"{len(placed)} placements, want 8")
owner = {}
for i, l in placed:
    if i not in b_ids:
        errs.append(f"NAPI id {i} is not one of namespace b's {sorted(b_ids)}")
    if owner.setdefault(i, l) != l:
        errs.append(f"NAPI id {i} went to loops {owner[i]} and {l}")
for l in (0, 1):
    want = {i for i, o in owner.items() if o == l}
    if served.get(l, set()) != want:
        errs.append(f"loop {l} reports NAPI ids {sorted(served.get(l, set()))}, placements say {sorted(want)}")
if len(owner) == 2 and len(set(owner.values())) != 2:
    errs.append("two NAPI ids on one loop while the other had none")
print("; ".join(errs) if errs else f"ok: {sorted(owner.items())}")
sys.exit(1 if errs else 0)
PY
		fi
		timeout 60 "$BUSYPOLL" testbed down --name "$bed" >/dev/null 2>&1 ||
			fail "busypoll testbed down --name $bed failed"
	else
		fail "busypoll testbed up --name $bed --queues 2 failed: $(head -c 300 "$tmp/bed")"
	fi
fi

# ---- manual pages ----
for src in "$BP_SOURCE_DIR"/man/*.scd; do
	page=$(basename "$src" .scd)
	file=$prefix/share/man/man${page##*.}/$page
	[ -f "$file" ] || continue
	MANWIDTH=80 man -l --warnings "$file" >"$tmp/man.txt" 2>"$tmp/man.err"
	[ -s "$tmp/man.err" ] && fail "man -l $page warns: $(head -c 300 "$tmp/man.err")"
	grep -q '^NAME' "$tmp/man.txt" || fail "man -l $page renders no NAME section"
	[ "$(man -M "$prefix/share/man" -w "${page%.*}" 2>/dev/null)" = "$file" ] ||
		fail "man -M $prefix/share/man ${page%.*} does not find $file"
done

finish "install, pkg-config, examples (shared and static) and manual pages"
