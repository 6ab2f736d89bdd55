/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx common: the temporary file beside a published file (metrics_file=,
 * size_file=), written and then renamed over it.
 *
 * Those files may live in a directory other users can write (/tmp, a
 * node_exporter textfile directory).  A temporary name there is created
 * exclusively (O_CREAT|O_EXCL|O_NOFOLLOW): a file or a symbolic link
 * someone put at the name first is never opened, followed or truncated,
 * so a server running as root cannot be made to overwrite another file.
 * A taken name is skipped for another one (PATH.SUFFIX.N, N random);
 * after a few taken names the write is refused with EEXIST.
 */
#ifndef RBDX_TMPFILE_H
#define RBDX_TMPFILE_H

#include <stdio.h>
#include <sys/types.h>

/** Create a new file "@p path.@p suffix" (or "@p path.@p suffix.N" when
 * that name is taken), mode @p mode (less the umask), opened for
 * writing, close-on-exec.  Its name goes to @p tmp (@p len bytes), for
 * the caller's rename or unlink.
 * @return the stream; NULL with errno set (EEXIST: every name tried was
 *         taken; ENAMETOOLONG: @p tmp too small), and nothing created. */
FILE *rbdx_tmpfile_create (const char *path, const char *suffix, mode_t mode,
                           char *tmp, size_t len);

/** Whether a published file may be put at @p path: it does not exist,
 * or is a regular file (never a symbolic link, device, FIFO, socket or
 * directory: a rename would replace the node itself, and a server run
 * as root with size_file=/dev/null would leave the host without
 * /dev/null).  A @p path ending in '/' never is.
 * @return 0; -EISDIR for a directory or a trailing '/'; -EEXIST for
 *         anything else that is not a regular file; -errno of lstat
 *         other than ENOENT.  Thread-safe. */
int rbdx_tmpfile_target_check (const char *path);

/** rename(2) @p tmp over @p path, unless rbdx_tmpfile_target_check
 * refuses @p path (something other than a regular file appeared there
 * since the start).  @return 0, or -1 with errno set (EEXIST, EISDIR, or
 * rename's); @p tmp is left for the caller to unlink. */
int rbdx_tmpfile_replace (const char *tmp, const char *path);

#endif /* RBDX_TMPFILE_H */
