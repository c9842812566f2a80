# SPDX-License-Identifier: MIT
# The preamble the integration shell tests share, as the kernel's selftests source
# net_helper.sh. A script sets its shell options, then sources it:
#   . "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
# (ctest sets BP_TESTLIB to this folder.) Sourcing it
#   - brings the wait helpers (bpt_wait.sh);
#   - sets BP to the program ($BUSYPOLL), or exits 77 (skipped) when it is not one;
#   - makes the scratch directory $tmp;
#   - on every exit (a signal too: INT, TERM and HUP exit 130) SIGKILLs each process
#     in the array pids that still runs, then calls the script's own function
#     `cleanup` if it defines one (namespaces, test beds), then removes $tmp;
#   - counts failures in fails: fail says what went wrong and goes on, die stops.
# bpt_end is the usual last line.

# shellcheck source=bpt_wait.sh
. "$(dirname "${BASH_SOURCE[0]}")/bpt_wait.sh"

BP=${BUSYPOLL:-}
if [ -z "$BP" ] || [ ! -x "$BP" ]; then
	echo "SKIP: \$BUSYPOLL is not an executable busypoll program" >&2
	exit 77
fi

# bpt_require_root WHY... - exit 77 (skipped) saying "SKIP: WHY" unless run as root.
bpt_require_root() {
	[ "$(id -u)" = 0 ] && return 0
	echo "SKIP: $*" >&2
	exit 77
}

# fail WHAT... - one "FAIL: WHAT" line on stderr; counted in fails, the test goes on.
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# die WHAT... - one "FAIL: WHAT" line on stderr and exit 1: nothing after it can run.
die() {
	echo "FAIL: $*" >&2
	exit 1
}

# bpt_end [WHAT] - the verdict: "N failure(s)" and exit 1 when a check failed; exit 77
# when a part could not run here (bpt_skip_part); else print WHAT (PASS) and exit 0.
bpt_end() {
	if [ "$fails" -gt 0 ]; then
		echo "$fails failure(s)" >&2
		exit 1
	fi
	[ -z "${BPT_SKIPPED:-}" ] || exit 77
	echo "${1:-PASS}"
	exit 0
}

# bpt_exit - the EXIT trap: the processes in pids, the script's cleanup, then $tmp.
# Never fails (set -e scripts too), and leaves the script's exit status as it was.
pids=()
bpt_exit() {
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if declare -F cleanup >/dev/null; then
		cleanup || true
	fi
	rm -rf "$tmp"
}

tmp=$(mktemp -d) || exit 1
trap bpt_exit EXIT
trap 'exit 130' INT TERM HUP
