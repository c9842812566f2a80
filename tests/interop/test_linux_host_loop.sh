#!/bin/bash
# SPDX-License-Identifier: MIT
# The Linux kernel host (qemu guest, see test_linux_host.sh) writes and reads back through busypoll
# target serving a loop device: O_DIRECT, asynchronous I/O through the target's storage queues, and
# the device's own counters showing the guest's reads, writes and flushes. Root (a loop device);
# exit 77 otherwise. The guest cache is shared (BP_INTEROP_CACHE), as for every interop test.
export BP_INTEROP_NS=loop
exec bash "$(dirname "$0")/test_linux_host.sh"
