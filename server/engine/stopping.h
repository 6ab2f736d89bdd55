/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/stopping.h: whether the engine stops (stopping.c), a
 * flag set once and read by every thread: conns.c sets it, readers and
 * the host services read it.  Its own module so that the readers do not
 * call back into the registry that starts them. */
#ifndef RBDX_SERVER_ENGINE_STOPPING_H
#define RBDX_SERVER_ENGINE_STOPPING_H

#include <stdbool.h>

/** True once the engine stops (econn_set_stopping): QoS delays end
 * early and a reader stops waiting for a client that reads nothing.
 * Any thread. */
bool econn_stopping (void);

/** The engine stops (conns.c's stop_all, under its registry lock).
 * Never undone.  Any thread. */
void econn_set_stopping (void);

#endif
