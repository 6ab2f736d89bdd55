/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the connection budget of one server process (max_connections=).
 *
 * Every NBD connection is a whole Ceph client (its own rados_t and image
 * handle), so it costs threads and file descriptors; a server that runs
 * out of either fails the connection that asked with EMFILE or EAGAIN
 * from deep inside librados.  The budget refuses the connection first,
 * with a message naming the limit.  Costs per connection, measured with
 * tests/bench/cost on Ceph 16.2.15 with the client defaults of
 * rbdx/cluster.h: the engine 14-15 threads and 8-9 fds, nbdkit the same
 * plus its worker threads (nbdkit --threads).
 */
#ifndef RBDX_BUDGET_H
#define RBDX_BUDGET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** File descriptors one connection is budgeted at (measured 8-12, see
 *  above; rounded up for the socket and what librados opens lazily). */
#define RBDX_CONN_FDS 16
/** Threads of one connection's Ceph client and its own thread. */
#define RBDX_CONN_THREADS 16
/** Descriptors and threads kept for the process itself (listening
 *  sockets, logs, the probe client at start, the shared writers). */
#define RBDX_BUDGET_RESERVE_FDS 64
#define RBDX_BUDGET_RESERVE_TASKS 64
/** The largest max_connections= accepted. */
#define RBDX_MAX_CONNECTIONS_LIMIT 65536

/** How many connections fit in @p nofile descriptors and @p tasks threads
 *  (UINT64_MAX: unlimited) after the reserves, when each connection may
 *  bring @p clients Ceph clients (1, or 2 in pool mode, where each image
 *  a connection writes to gets a shared writer of its own: a connection
 *  per image then costs two clients) at RBDX_CONN_FDS descriptors each,
 *  and @p threads_per_conn threads plus RBDX_CONN_THREADS for each
 *  further client.  At least 1, at most RBDX_MAX_CONNECTIONS_LIMIT.
 *  Pure. */
unsigned rbdx_budget_connections (uint64_t nofile, uint64_t tasks,
                                  unsigned threads_per_conn, unsigned clients);

/** The default of max_connections= for this process: rbdx_budget_connections
 *  of the soft RLIMIT_NOFILE and of the cgroup's pids.max (systemd's
 *  TasksMax=; unlimited when there is none or it cannot be read).
 *  Thread-safe (reads only). */
unsigned rbdx_budget_default (unsigned threads_per_conn, unsigned clients);

/** Open connections against a limit.  Zero-initialise, then set max. */
struct rbdx_budget {
  atomic_uint open;   /**< connections counted in */
  unsigned max;       /**< the limit, >= 1 */
};

/** Count one more connection in.
 *  @return 0; -EMFILE when @p b already holds max connections, with a
 *  one-line message naming the limit in @p err (the connection must then
 *  be refused, and nothing counted).  Thread-safe, lock-free. */
int rbdx_budget_take (struct rbdx_budget *b, char *err, size_t errlen);

/** Count a connection out (one that rbdx_budget_take counted in).
 *  Thread-safe. */
void rbdx_budget_give (struct rbdx_budget *b);

#endif /* RBDX_BUDGET_H */
