/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: the core's host services (rbdx/log.h) provided by nbdkit. */
#include <stdarg.h>
#include <stdint.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/log.h"

void
rbdx_debug (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  nbdkit_vdebug (fmt, ap);
  va_end (ap);
}

void
rbdx_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  nbdkit_verror (fmt, ap);
  va_end (ap);
}

/* nbdkit_nanosleep returns early (-1, errno ESHUTDOWN) when nbdkit
 * shuts down or the client disconnects. */
int
rbdx_sleep_ns (uint64_t ns)
{
  return nbdkit_nanosleep ((unsigned) (ns / 1000000000),
                           (unsigned) (ns % 1000000000));
}
