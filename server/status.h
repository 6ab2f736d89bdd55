/* SPDX-License-Identifier: BSD-3-Clause */
/* server/status.h: `rbdx status`: what a mapping is doing.
 *
 * From the device's state (state.h: connections, identity, and the
 * supervisor's counts of re-attached connections, resizes and server
 * restarts) and from its server's metrics file (the plugin's
 * metrics_file=, Prometheus text: nbdkit-rbdx-plugin(1), METRICS), of
 * which the per-image totals by op are shown.  Not thread-safe (stdout).
 */
#ifndef RBDX_SERVER_STATUS_H
#define RBDX_SERVER_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "state.h"

/** Print @p s as a JSON string (quotes, escapes) to @p f. */
void rbdx_json_string (FILE *f, const char *s);

/** Print the status of mapping @p st: one JSON object (no newline) with
 *  @p json, else a few "key: value" lines. */
void rbdx_status_print (const struct rbdx_state *st, bool json);

#endif
