/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/budget.h: the node's connection budget, and how many NBD
 * connections a new mapping gets from what it has left.
 *
 * Every connection is a librbd context with its own Ceph client (about
 * 14 threads, 9 fds and 2 MiB, nbdkit-rbdx-plugin(1), COST), so a node
 * with many volumes cannot give each one a connection per CPU.  The node
 * budget is a number of connections for all devices the mapper maps
 * together: $RBDX_NODE_CONNECTIONS, else "connections=N" in
 * /etc/rbdx/budget, else RBDX_NODE_CONNECTIONS_DEFAULT.  What is used
 * is the sum of the connections of the mappings the mapper knows
 * (state.h), counted under the map lock.  Pure functions, no I/O.
 */
#ifndef RBDX_SERVER_BUDGET_H
#define RBDX_SERVER_BUDGET_H

#include <stddef.h>

/** The budget file (connections=N). */
#ifndef RBDX_BUDGET_FILE
#define RBDX_BUDGET_FILE "/etc/rbdx/budget"
#endif

/** The node budget without $RBDX_NODE_CONNECTIONS or /etc/rbdx/budget:
 *  16 devices of 16 connections (about 3,600 threads and 2,300 fds). */
#define RBDX_NODE_CONNECTIONS_DEFAULT 256
/** The largest node budget accepted. */
#define RBDX_NODE_CONNECTIONS_MAX 1000000

/** Parse a node budget: @p text is the value of $RBDX_NODE_CONNECTIONS
 *  (@p is_file false: a whole number alone) or the contents of the budget
 *  file (@p is_file true: lines "connections=N"; '#' starts a comment
 *  that runs to the end of its line, blank lines are ignored, spaces
 *  around '=' allowed; the last connections= wins).
 *  @return 0 with *@p out set; -EINVAL with a message in @p err naming
 *  the bad line or value (N must be 1 to RBDX_NODE_CONNECTIONS_MAX);
 *  -ENOENT when a file sets no connections= (*@p out untouched). */
int rbdx_budget_parse (const char *text, int is_file, unsigned *out,
                       char *err, size_t errlen);

/** How many connections a new mapping gets.
 *  @param requested  --connections N, or 0 when not given.
 *  @param fallback   the count without a budget (online CPUs, at most
 *                    RBDX_MAX_CONNECTIONS), >= 1.
 *  @param total      the node budget; @param used  connections of the
 *                    mappings there already (may exceed @p total when the
 *                    budget was lowered).
 *  @return the count, >= 1: @p requested when it fits what is left, else
 *  min(@p fallback, left); -ENOSPC when nothing is left or @p requested
 *  does not fit, with a message in @p err naming the budget, what is used
 *  and where the budget comes from. */
int rbdx_budget_choose (unsigned requested, unsigned fallback, unsigned total,
                        unsigned used, char *err, size_t errlen);

#endif
