# SPDX-License-Identifier: MIT
# Sourced by tests/pkg/test_*.sh: the environment CMake gives them, a scratch
# directory removed on every exit path, and fail/skip/finish.
#
# From tests/CMakeLists.txt: BP_SOURCE_DIR, BP_BUILD_DIR, BUSYPOLL (the program),
# BP_LIBSO (libbusypoll.so), BP_VERSION, BP_SOVERSION, BP_MAN_DIR (built pages),
# CC, BP_EXAMPLE_CFLAGS (the sanitizer flags in a sanitizer build, else empty).
set -u

fails=0
tmp=

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
	if [ -n "$tmp" ] && [ ! -d "$tmp" ]; then
		echo "FAIL: the scratch directory $tmp is gone (removed by someone else?)" >&2
		exit 1
	fi
}

# need VAR...: every variable set and non-empty, or skip naming the first missing
need() {
	for v in "$@"; do
		[ -n "${!v:-}" ] || skip "\$$v is not set (run this test through ctest)"
	done
}

# need_tool TOOL[:PACKAGE]...: each tool installed, or skip naming its package
need_tool() {
	for t in "$@"; do
		command -v "${t%%:*}" >/dev/null ||
			skip "${t%%:*} is not installed (apt-get install ${t#*:}, or scripts/install-deps.sh)"
	done
}

# cleanup_hook: tests may define pkg_cleanup, run before the scratch directory goes
pkg_exit() {
	if declare -F pkg_cleanup >/dev/null; then
		pkg_cleanup
	fi
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap pkg_exit EXIT
trap 'exit 130' INT TERM HUP
tmp=$(mktemp -d /tmp/bp-pkg.XXXXXX) || exit 1

# public_functions OUT: the functions include/busypoll/*.h declare, as gcc itself
# reads them (-aux-info), static inline ones left out: "name header:line" lines,
# sorted by name, in OUT; the names alone in OUT.names; the static inline ones
# (part of the API, not of the library) in OUT.inline. Returns 1 (with the compiler's
# message in OUT.err) when the headers do not compile.
public_functions() {
	local out=$1 h re
	for h in "$BP_SOURCE_DIR"/include/busypoll/*.h; do
		echo "#include <busypoll/$(basename "$h")>"
	done >"$out.c"
	"${CC:-cc}" -std=gnu11 -I"$BP_SOURCE_DIR/include" -aux-info "$out.aux" -fsyntax-only "$out.c" \
		2>"$out.err" || return 1
	re=$(printf '%s' "$BP_SOURCE_DIR/include/busypoll/" | sed 's/[.[\*^$/]/\\&/g')
	sed -n "s|^/\\* ${re}\\([a-z0-9_]*\\.h\\):\\([0-9]*\\):N[CF] \\*/ extern [^(]*[ *]\\([A-Za-z_][A-Za-z0-9_]*\\) (.*|\\3 \\1:\\2|p" \
		"$out.aux" | sort -u -k1,1 >"$out"
	cut -d' ' -f1 "$out" >"$out.names"
	sed -n "s|^/\\* ${re}[a-z0-9_]*\\.h:[0-9]*:NF \\*/ static [^(]*[ *]\\([A-Za-z_][A-Za-z0-9_]*\\) (.*|\\1|p" \
		"$out.aux" | sort -u >"$out.inline"
}

# finish NAME: the verdict
finish() {
	if [ "$fails" -ne 0 ]; then
		echo "$fails failure(s)" >&2
		exit 1
	fi
	echo "ok: $1"
}
