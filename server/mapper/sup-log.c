/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-log.c: the supervisor's clock, sleep, timestamped log,
 * the ERR report and errno texts (see sup.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/clock.h"
#include "rbdx/printable.h"

#include "sup.h"

double
now (void)
{
  return (double) rbdx_clock_ns () / 1e9;
}

void
sleep_s (double s)
{
  struct timespec ts = { (time_t) s, (long) ((s - (double) (time_t) s) * 1e9) };
  nanosleep (&ts, NULL);
}

void
logmsg (const char *fmt, ...)
{
  char when[32], msg[4096], shown[4 * sizeof msg];
  time_t t = time (NULL);
  struct tm tm;
  va_list ap;

  strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", localtime_r (&t, &tm));
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  /* Whole through rbdx_printable_line, as die() does: values from
   * outside (targets, paths, the engine's answers) cannot split a line. */
  fprintf (stderr, "%s rbdx[%ld]: %s\n", when, (long) getpid (),
           rbdx_printable_line (msg, shown, sizeof shown));
  fflush (stderr);
}

void
sup_report_err (int fd, const char *fmt, ...)
{
  char msg[4096], shown[SUP_REPORT_MAX];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  /* One line: the parent reads up to the first newline, and a value
   * holding one would cut the message there. */
  dprintf (fd, "ERR %s\n", rbdx_printable_line (msg, shown, sizeof shown));
}

const char *
errno_text (int e)
{
  switch (e) {
  case -EBUSY: return "the device is already connected";
  case -EPERM: case -EACCES: return "not permitted (needs root: CAP_SYS_ADMIN)";
  case -ENOENT: return "the kernel has no nbd driver (modprobe nbd)";
  default: return strerror (-e);
  }
}

