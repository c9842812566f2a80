#!/bin/bash
# SPDX-License-Identifier: MIT
# The interop harness against a known-good target: the same guest and checks as
# test_linux_host.sh, with Linux's own nvmet-tcp (in a second guest) as the peer instead of
# busypoll target. It proves the harness (kernel, initramfs, qemu networking, the guest's I/O
# checks) on its own, so that a failure of test_linux_host.sh while this passes is the
# target's. Needs no busypoll program. See README.md beside this file.
BP_INTEROP_PEER=nvmet exec bash "$(dirname "$0")/test_linux_host.sh"
