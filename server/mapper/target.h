/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/target.h: what the mapper is told to map, by name.
 *
 * A target is an image spec (pool/[namespace/]image[@snap],
 * include/rbdx/spec.h) served by the mapper's own rbdx server, or an NBD
 * URI of someone else's server; a device is /dev/nbdN.  Pure functions:
 * no I/O, thread-safe.
 */
#ifndef RBDX_SERVER_TARGET_H
#define RBDX_SERVER_TARGET_H

#include <stdbool.h>
#include <stddef.h>

/** Whether @p text is a URI (contains "://") rather than an image spec. */
bool rbdx_target_is_uri (const char *text);

/** The canonical form of image spec @p text (rbdx_spec_format), or URI
 *  @p text unchanged, into @p buf of @p len bytes.  Only nbd:// and
 *  nbd+unix:// URIs are accepted: the kernel's NBD driver takes a plain
 *  socket (no TLS, no ssh tunnel).
 *  @param why  on failure, a static message saying why.
 *  @return 0, or -1 (bad spec, unsupported URI, or a canonical form that
 *          does not fit: a name cut short would be another image's). */
int rbdx_target_canonical (const char *text, char *buf, size_t len, const char **why);

/** Whether what `rbdx map` passes on to a server is data only: the one
 *  validation of the CLI (spec and every KEY=VALUE, wherever it came
 *  from: arguments, -o, --id/--conf/--keyring), of --connection-info
 *  (data.name and the parameters made from the other fields) and of
 *  rbdxtab lines (rbdx-map-all runs `rbdx map -- SPEC OPTIONS...`).
 *
 *  @p target (an image spec or NBD URI) is refused when it has a control
 *  character or a byte that is not UTF-8 (rbdx_spec_has_unsafe_char: a
 *  newline would split the state file's lines, U+009B is CSI to a
 *  terminal, export names are UTF-8), and an
 *  image spec also when it or any of its components starts with '-' or
 *  it contains '=' (a server would take it for an option or a KEY=VALUE
 *  parameter; servers get it as image=SPEC after "--" anyway, see
 *  server-args.h).  Each of the @p nparams @p params must be KEY=VALUE
 *  with KEY a plain name ([A-Za-z][A-Za-z0-9_.]*), not image= or pool=
 *  (the spec is the one image), not a raw key (key=, ceph.key=,
 *  ceph.keyfile=: a command line is readable by every user; keyring=FILE
 *  is the way), and VALUE must not start with '-' or hold what
 *  rbdx_spec_has_unsafe_char refuses; cluster= and ceph.cluster= must be rbdx_cluster_name_valid
 *  ([A-Za-z0-9_-]+: librados makes it a path component).  @p params may be
 *  NULL when @p nparams is 0.
 *  @param why  on failure, a message naming the offending value (control
 *              characters and bytes that are not UTF-8 shown as \xHH; a raw key's value is never
 *              shown) into @p whylen bytes.
 *  @return 0, or -1 (refused).  Pure, thread-safe. */
int rbdx_args_check (const char *target, char *const *params, size_t nparams,
                     char *why, size_t whylen);

/** The device number of "/dev/nbdN" (N decimal, without a sign, blank or
 *  leading zero, at most 2^20), or -1 when @p text is anything else:
 *  then it is an image spec or URI ("nbd0" is the image rbd/nbd0).
 *  Pure, thread-safe. */
int rbdx_device_index (const char *text);

#endif
