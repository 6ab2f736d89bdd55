/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what the parameter parsers share (options.c, options-enc.c,
 * quiesce-hook.c, and cct.c for ceph_context=): one way to word a bad
 * parameter, one way to take a parameter that may be given once, and
 * one check of a file a parameter names.  Pure (no librados); part of
 * librbdx-common. */
#ifndef RBDX_OPTERR_H
#define RBDX_OPTERR_H

#include <stddef.h>

/** Format a message about a bad parameter into @p err (at most
 *  @p errlen bytes, always NUL-terminated; nothing written when
 *  @p errlen is 0).
 *  @return -EINVAL, always, so a parser can `return rbdx_opt_err (...)`.
 *  Thread-safe (writes only @p err). */
int rbdx_opt_err (char *err, size_t errlen, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/** Store a copy of @p value in *@p slot (owned by the caller, freed
 *  with free) unless parameter @p key was already given (*@p slot not
 *  NULL).
 *  @return 0; -EINVAL with "KEY= given twice ('OLD' and 'NEW')" in
 *  @p err (*@p slot unchanged); -ENOMEM.  Not thread-safe for one
 *  @p slot. */
int rbdx_opt_set_once (char **slot, const char *key, const char *value,
                       char *err, size_t errlen);

/** Check that @p path, the value of parameter @p key, names a regular
 *  file this process can read (stat(2) and access(2) with R_OK; nothing
 *  is opened).  A NULL @p path (parameter not given) passes.
 *  @return 0; -EINVAL with "KEY='PATH': cannot read it: REASON" or
 *  "KEY='PATH': not a regular file" in @p err.  Thread-safe. */
int rbdx_opt_check_file (const char *key, const char *path, char *err,
                         size_t errlen);

#endif /* RBDX_OPTERR_H */
