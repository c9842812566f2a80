#!/usr/bin/env bash
# Installs the Debian packages busypoll needs, only those missing. As root it runs
# apt-get; otherwise it names what is missing and how to install it. As root it also
# fetches the interop test's guest (Debian's kernel package and a busybox initramfs,
# tests/interop/build-guest.sh; a no-op when the cache is current), so the test with
# the real Linux host never skips for want of it; in CI ($CI set) a guest that cannot
# be had fails this script. The same for the VM bed's guest (src/tools/testbed/vm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(
  build-essential cmake pkg-config   # the build
  liburing-dev libmnl-dev            # io_uring, netlink
  libxdp-dev libbpf-dev llvm         # AF_XDP (xsk modes): sockets, our XDP program (clang -target bpf, llvm-strip)
  libsodium-dev                      # the agent's authentication (the program only)
  libcmocka-dev                      # unit tests
  iproute2 ethtool                   # the veth test bed (ip netns, GRO on)
  python3 libxml2-utils              # tests check json output and the SVG (xmllint)
  sockperf                           # benchmarks compare against it
  fio                                # bench/nvme-saturation.sh: the device's own limit
  clang libclang-rt-14-dev           # make fuzz: libFuzzer targets
  valgrind                           # tests/integration/test_valgrind.sh
  qemu-system-x86 busybox-static cpio gzip  # interop: the Linux host in a guest
  xz-utils debian-archive-keyring    # the VM bed's guest kernel (testbed up --vm)
  openssh-server openssh-client      # the two-host tests: a real sshd in a namespace
  strace                             # tests/unit/data/ethtool/capture.sh (re-capturing only)
  scdoc man-db                       # the manual pages (man/*.scd) and man -l in tests/pkg
  g++                                # tests/pkg/test_headers.sh: the headers as C++17
  dpkg-dev debhelper lintian         # tests/pkg/test_deb.sh: the Debian package
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "busypoll: missing Debian packages: ${missing[*]}; run: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "busypoll: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The interop guest (needs root for apt-get download as the cache's owner; see above).
if [ "$(id -u)" -eq 0 ]; then
  if ! out=$(bash "$here/../tests/interop/build-guest.sh" 2>&1); then
    echo "busypoll: the interop test's guest cannot be built here: $(echo "$out" | tail -1)" >&2
    [ -z "${CI:-}" ] || exit 1
  fi
  # The VM bed's guest (tests/vmbed, testbed up --vm): trixie-backports' kernel, fetched
  # with apt's signature checks into /var/cache/busypoll/vmbed, never installed.
  if ! out=$(bash "$here/../src/tools/testbed/vm/build-guest.sh" 2>&1); then
    echo "busypoll: the VM bed's guest cannot be built here: $(echo "$out" | tail -1)" >&2
    [ -z "${CI:-}" ] || exit 1
  fi
fi
