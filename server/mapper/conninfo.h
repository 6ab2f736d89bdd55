/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/conninfo.h: OpenStack-style attach.
 *
 * Cinder's RBD driver describes a volume to os-brick as connection_info:
 *   {"driver_volume_type": "rbd",
 *    "data": {"name": "POOL/VOLUME", "hosts": [...], "ports": [...],
 *             "cluster_name": "ceph", "auth_enabled": true,
 *             "auth_username": "cinder", "secret_uuid": "...",
 *             "keyring": "<keyring file contents>", "volume_id": "...",
 *             "access_mode": "rw"|"ro", "discard": true,
 *             "qos_specs": {"total_iops_sec": ..., ...}}}
 * (cinder/volume/drivers/rbd.py initialize_connection, os-brick's
 * RBDConnector).  `rbdx map --connection-info` takes that JSON, whole or
 * just its "data", and maps the volume with those monitors, user, keyring
 * and mode; front-end qos_specs become the plugin's qos.* limits for the
 * volume as a whole.  JSON is parsed with json-c, strictly: one object,
 * nothing after it but whitespace.  Every field is hostile input: a
 * field of the wrong JSON type is refused naming it (null is absent).
 */
#ifndef RBDX_SERVER_CONNINFO_H
#define RBDX_SERVER_CONNINFO_H

#include <stdbool.h>
#include <stddef.h>

#define RBDX_CONNINFO_MAX_PARAMS 24
#define RBDX_CONNINFO_MAX_WARN 16

/** What a connection_info asks for. */
struct rbdx_conninfo {
  char spec[1024];      /**< "POOL/VOLUME" as data.name gives it. */
  bool read_only;       /**< access_mode "ro". */
  char *params[RBDX_CONNINFO_MAX_PARAMS];  /**< plugin KEY=VALUE, owned. */
  size_t nparams;
  char *keyring;        /**< data.keyring contents, or NULL; owned. */
  char volume_id[128];  /**< data.volume_id, or "". */
  /** What was ignored, one warning each ("data.qos_specs.KEY ...:
   *  ignored", values escaped with rbdx_printable), owned; past
   *  RBDX_CONNINFO_MAX_WARN only counted in nwarn_more. */
  char *warn[RBDX_CONNINFO_MAX_WARN];
  size_t nwarn, nwarn_more;
};

/** Parse the JSON text @p text of @p len bytes (whole connection_info
 *  or its data).
 *  @param err  a message naming the bad field on error.
 *  @return 0; -EINVAL for text that is not one JSON object (json-c's
 *          strict mode) followed by nothing but whitespace, a
 *          driver_volume_type other than rbd, a "data" that is not an
 *          object, a missing or malformed name, a field of the wrong
 *          JSON type (a string with a NUL byte too), an access_mode
 *          other than "rw" and "ro", auth_enabled true without an
 *          auth_username, a qos_specs value that is not a whole number
 *          (a JSON number or a string of digits), a cluster_name that
 *          is not rbdx_cluster_name_valid (it names files in librados),
 *          hosts[] entries that are not one host each, ports[] that are
 *          not ports or not one per host, hosts whose mon_host would be
 *          longer than 2047 bytes (refused, never cut); -ENOMEM.  A
 *          qos_specs key rbdx does not map is a warning (ci->warn), not
 *          an error.  On success free with rbdx_conninfo_free. */
int rbdx_conninfo_parse (const char *text, size_t len,
                         struct rbdx_conninfo *ci, char *err, size_t errlen);

/** Read all of @p path ("-": standard input) into a new string
 *  (NUL-terminated; its length, which counts any NUL byte inside, in
 *  @p len).
 *  @return the string (caller frees) or NULL with errno set. */
char *rbdx_conninfo_read (const char *path, size_t *len);

/** Release what @p ci owns (the keyring contents are wiped first). */
void rbdx_conninfo_free (struct rbdx_conninfo *ci);

#endif
