/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/host.c: the core's host services (rbdx/log.h) for the
 * built-in engine: messages to stderr (the supervisor sends the
 * engine's stderr to server.log), each with the time and pid; debug
 * lines only with -v. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/log.h"
#include "rbdx/printable.h"

#include "host.h"
#include "stopping.h"

static bool verbose;

void
rbdx_engine_verbose (bool on)
{
  verbose = on;
}

static void
vlog (const char *level, const char *fmt, va_list ap)
{
  char when[32], line[2048], shown[4 * sizeof line];
  time_t t = time (NULL);
  struct tm tm;

  strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", localtime_r (&t, &tm));
  vsnprintf (line, sizeof line, fmt, ap);
  /* One write per line, so lines of several threads do not mix; a
   * control character a value brought is escaped even where its caller
   * did not (those that did are unchanged: rbdx/printable.h). */
  dprintf (2, "%s rbdx-engine[%ld]: %s%s\n", when, (long) getpid (), level,
           rbdx_printable_line (line, shown, sizeof shown));
}

void
rbdx_debug (const char *fmt, ...)
{
  va_list ap;

  if (!verbose)
    return;
  va_start (ap, fmt);
  vlog ("debug: ", fmt, ap);
  va_end (ap);
}

void
rbdx_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vlog ("error: ", fmt, ap);
  va_end (ap);
}

/* The engine schedules QoS delays itself (rbdx_qos_reserve) and never
 * sleeps a reader; the core's rbdx_qos_wait is not used here.  A plain
 * sleep in slices of 100 ms, cut short when the engine stops. */
int
rbdx_sleep_ns (uint64_t ns)
{
  while (ns > 0) {
    uint64_t step = ns < 100000000 ? ns : 100000000;
    struct timespec ts = { 0, (long) step };

    if (econn_stopping ()) {
      errno = ESHUTDOWN;
      return -1;
    }
    nanosleep (&ts, NULL);
    ns -= step;
  }
  return 0;
}
