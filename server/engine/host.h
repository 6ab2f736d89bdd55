/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/host.h: the engine's side of the core's host services
 * (host.c provides rbdx/log.h: messages to stderr, sleeps).
 */
#ifndef RBDX_SERVER_ENGINE_HOST_H
#define RBDX_SERVER_ENGINE_HOST_H

#include <stdbool.h>

/** Show debug lines too (-v); errors are always shown.  Before any
 * other thread starts. */
void rbdx_engine_verbose (bool on);

#endif
