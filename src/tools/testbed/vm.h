/* SPDX-License-Identifier: MIT */
/*
 * The VM test bed's front end: `busypoll testbed ... --vm` hands the action to the
 * bed's script (vm/vmbed.sh, installed under DATADIR/busypoll/vmbed), which owns the
 * guests, their state dir and the control ports. This file only finds the script and
 * runs it; it keeps no state of its own.
 */
#ifndef BP_TOOLS_TESTBED_VM_H
#define BP_TOOLS_TESTBED_VM_H

#include <stdbool.h>

/*
 * tb_vm_exists - whether a VM bed called name has a state dir (so status, down and
 * exec go to it). False when the script cannot be found or run.
 */
bool tb_vm_exists(const char *name);

/*
 * tb_vm_run - run the script: argv is its action and arguments after the bed's name
 * ("up", "e1000e", "1", BUSYPOLL), n of them; the script's output goes to this
 * process's stdout/stderr. Returns the script's exit status (2 bad input, 1 failure,
 * 124 a guest that did not answer, else the guest command's status for exec), or
 * BP_EXIT_FAIL with one line on stderr when it cannot be run.
 */
int tb_vm_run(const char *action, const char *name, char *const *args, int n);

#endif
