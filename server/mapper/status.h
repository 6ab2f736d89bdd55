/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/status.h: `rbdx status`: what a mapping is doing.
 *
 * From the device's state (state.h: connections, identity, and the
 * supervisor's counts of re-attached connections, resizes and server
 * restarts) and from its server's metrics file (the plugin's
 * metrics_file=, Prometheus text: nbdkit-rbdx-plugin(1), METRICS), of
 * which the per-image totals by op are shown.  Not thread-safe (stdout).
 */
#ifndef RBDX_SERVER_STATUS_H
#define RBDX_SERVER_STATUS_H

#include "json.h"
#include "state.h"

/** The status of mapping @p st as a new JSON object (json.h; the caller
 *  owns it). */
json_object *rbdx_status_json (const struct rbdx_state *st);

/** Print the status of mapping @p st to stdout as a few lines of text. */
void rbdx_status_print (const struct rbdx_state *st);

#endif
