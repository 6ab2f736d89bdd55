/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/stopping.c: the engine's stop flag (stopping.h). */
#include <stdatomic.h>

#include "stopping.h"

static atomic_bool stopping;

bool
econn_stopping (void)
{
  return atomic_load (&stopping);
}

void
econn_set_stopping (void)
{
  atomic_store (&stopping, true);
}
