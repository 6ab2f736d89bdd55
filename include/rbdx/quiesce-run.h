/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: running the quiesce hook (quiesce.h decides when).
 *
 * The hook is started with posix_spawn, not fork: the server has
 * librados' threads, and glibc's posix_spawn (clone with CLONE_VM and
 * CLONE_VFORK since glibc 2.24) copies no address space and runs no code
 * of ours in the child, so nothing another thread held locked at the
 * fork can hang it.  The child gets exactly
 *   - argv HOOK DEVICE quiesce|unquiesce (rbdx_quiesce_hook_argv: no
 *     secret, no option);
 *   - standard input /dev/null, standard output and error the server's
 *     (its log), no other descriptor (posix_spawn_file_actions_
 *     addclosefrom_np, glibc 2.34);
 *   - an empty signal mask and every signal's default action (the
 *     engine ignores SIGPIPE and blocks SIGTERM);
 *   - a process group of its own, killed as a whole on timeout;
 *   - an environment of PATH (the server's, else a default), LANG,
 *     LC_*, TZ and RBDX_* (the mapper's own settings, RBDX_RUN_DIR for
 *     `rbdx list-mapped`), nothing else: the server's environment may
 *     hold Ceph settings ($CEPH_ARGS can carry --key) that are none of
 *     the hook's business.
 */
#ifndef RBDX_QUIESCE_RUN_H
#define RBDX_QUIESCE_RUN_H

#include <stdatomic.h>
#include <stdbool.h>

/** Run @p hook @p device quiesce|unquiesce (@p quiesce) and wait for it,
 * at most @p timeout_s seconds, or until *@p cancel is set (@p cancel
 * NULL: never; polled every 5 ms); then its process group is killed
 * (SIGKILL).  Errors are logged (rbdx_error) naming the hook, the device
 * and the action.
 * @return 0 (exit status 0); -EINVAL (@p device or @p hook refused by
 *         rbdx_quiesce_hook_argv); -EIO (not started, a non-zero exit
 *         status, killed by a signal); -ETIMEDOUT (killed: the timeout,
 *         or *@p cancel set).
 * Thread-safe (one call per group thread; waits only for its own
 * child's pid). */
int rbdx_quiesce_run_hook (const char *hook, const char *device,
                           bool quiesce, unsigned timeout_s,
                           const atomic_bool *cancel);

#endif /* RBDX_QUIESCE_RUN_H */
