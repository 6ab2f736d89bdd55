/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the three services the core library (include/rbdx/core.h)
 * needs from the program it runs in.
 *
 * The core (contexts, writers, QoS, metrics, ...) is linked into two
 * hosts: the nbdkit plugin, where these go to nbdkit_vdebug,
 * nbdkit_verror and nbdkit_nanosleep (plugin/host.c), and the mapper's
 * built-in engine, where they go to stderr and nanosleep(2)
 * (server/engine/host.c).  Each host defines all three; the core never
 * calls nbdkit directly.
 */
#ifndef RBDX_LOG_H
#define RBDX_LOG_H

#include <stdint.h>

/** A debug line (nbdkit: shown with -v).  Thread-safe. */
void rbdx_debug (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/** An error line, always shown.  Thread-safe. */
void rbdx_error (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/** Sleep @p ns nanoseconds unless the host is shutting down or the
 * client went away.
 * @return 0 after the full sleep; -1 with errno set (ESHUTDOWN) when
 *         cut short.  Thread-safe. */
int rbdx_sleep_ns (uint64_t ns);

#endif /* RBDX_LOG_H */
