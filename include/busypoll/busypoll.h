/* SPDX-License-Identifier: MIT */
/* libbusypoll: the whole public API. */
#ifndef BUSYPOLL_H
#define BUSYPOLL_H
#include <busypoll/mode.h>
#include <busypoll/loop.h>
#include <busypoll/aio.h>
#include <busypoll/net.h>
#include <busypoll/kstats.h>
#include <busypoll/napi.h>
#include <busypoll/nic.h>
#include <busypoll/hist.h>
#endif
