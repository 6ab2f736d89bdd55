/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: the core's host services (rbdx/log.h) provided by nbdkit. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/log.h"
#include "rbdx/printable.h"

/* The core's lines are escaped whole (rbdx_printable_line): a control
 * character a value brought cannot split one even where its caller did
 * not escape it; values escaped already are left as they are. */
void
rbdx_debug (const char *fmt, ...)
{
  char line[2048], shown[4 * sizeof line];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (line, sizeof line, fmt, ap);
  va_end (ap);
  nbdkit_debug ("%s", rbdx_printable_line (line, shown, sizeof shown));
}

void
rbdx_error (const char *fmt, ...)
{
  char line[2048], shown[4 * sizeof line];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (line, sizeof line, fmt, ap);
  va_end (ap);
  nbdkit_error ("%s", rbdx_printable_line (line, shown, sizeof shown));
}

/* nbdkit_nanosleep returns early (-1, errno ESHUTDOWN) when nbdkit
 * shuts down or the client disconnects. */
int
rbdx_sleep_ns (uint64_t ns)
{
  return nbdkit_nanosleep ((unsigned) (ns / 1000000000),
                           (unsigned) (ns % 1000000000));
}
