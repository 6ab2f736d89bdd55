/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what the parameter parsers share (options.c, options-enc.c,
 * quiesce-hook.c): one way to word a bad parameter and one check of a
 * file a parameter names.  Pure (no librados); part of librbdx-common. */
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

/** Check that @p path, the value of parameter @p key, names a regular
 *  file this process can read (stat(2) and access(2) with R_OK; nothing
 *  is opened).  A NULL @p path (parameter not given) passes.
 *  @return 0; -EINVAL with "KEY='PATH': cannot read it: REASON" or
 *  "KEY='PATH': not a regular file" in @p err.  Thread-safe. */
int rbdx_opt_check_file (const char *key, const char *path, char *err,
                         size_t errlen);

#endif /* RBDX_OPTERR_H */
