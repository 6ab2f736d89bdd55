/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the connection budget of one server process (see budget.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "rbdx/budget.h"

unsigned
rbdx_budget_connections (uint64_t nofile, uint64_t tasks,
                         unsigned threads_per_conn, unsigned clients)
{
  uint64_t n = RBDX_MAX_CONNECTIONS_LIMIT, m;
  uint64_t fds = (uint64_t) RBDX_CONN_FDS * (clients ? clients : 1);
  uint64_t threads = threads_per_conn ? threads_per_conn +
    (uint64_t) RBDX_CONN_THREADS * (clients > 1 ? clients - 1 : 0) : 0;

  if (nofile != UINT64_MAX) {
    m = nofile > RBDX_BUDGET_RESERVE_FDS
        ? (nofile - RBDX_BUDGET_RESERVE_FDS) / fds : 0;
    n = m < n ? m : n;
  }
  if (tasks != UINT64_MAX && threads) {
    m = tasks > RBDX_BUDGET_RESERVE_TASKS
        ? (tasks - RBDX_BUDGET_RESERVE_TASKS) / threads : 0;
    n = m < n ? m : n;
  }
  return n < 1 ? 1 : (unsigned) n;
}

/* pids.max of this process's cgroup (v2: /proc/self/cgroup has one
 * "0::/PATH" line; the limit is /sys/fs/cgroup/PATH/pids.max, "max" when
 * none).  UINT64_MAX when unlimited or unknown. */
static uint64_t
cgroup_pids_max (void)
{
  char line[4096], path[4200];
  uint64_t v = UINT64_MAX;
  FILE *f = fopen ("/proc/self/cgroup", "re");
  char *end;

  if (!f)
    return v;
  while (fgets (line, sizeof line, f))
    if (strncmp (line, "0::", 3) == 0) {
      line[strcspn (line, "\n")] = '\0';
      snprintf (path, sizeof path, "/sys/fs/cgroup%s/pids.max", line + 3);
      break;
    }
  fclose (f);
  if (strncmp (line, "0::", 3) != 0 || !(f = fopen (path, "re")))
    return v;
  if (fgets (line, sizeof line, f)) {
    errno = 0;
    unsigned long long n = strtoull (line, &end, 10);
    if (!errno && end != line && (*end == '\n' || !*end))
      v = n;
  }
  fclose (f);
  return v;
}

unsigned
rbdx_budget_default (unsigned threads_per_conn, unsigned clients)
{
  struct rlimit rl;
  uint64_t nofile = UINT64_MAX;

  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    nofile = rl.rlim_cur;
  return rbdx_budget_connections (nofile, cgroup_pids_max (),
                                  threads_per_conn, clients);
}

int
rbdx_budget_take (struct rbdx_budget *b, char *err, size_t errlen)
{
  unsigned cur = atomic_load (&b->open);

  do {
    if (cur >= b->max) {
      snprintf (err, errlen, "max_connections=%u reached: %u connections "
                "are open, each with its own librbd context (raise "
                "max_connections=, and LimitNOFILE=/TasksMax= with it)",
                b->max, cur);
      return -EMFILE;
    }
  } while (!atomic_compare_exchange_weak (&b->open, &cur, cur + 1));
  return 0;
}

void
rbdx_budget_give (struct rbdx_budget *b)
{
  atomic_fetch_sub (&b->open, 1);
}
