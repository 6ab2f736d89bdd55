/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: error mapping and rate-limited error logs (see errors.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rbdx/log.h"

#include "rbdx/errors.h"

int
rbdx_nbd_error (int neg)
{
  switch (-neg) {
  case EPERM: case EIO: case ENOMEM: case EINVAL: case ENOSPC:
  case EOVERFLOW: case ENOTSUP:
    return -neg;
  case EROFS: case EACCES:
    return EPERM;       /* read-only handle / lock held exclusively elsewhere */
  case EDQUOT: case EFBIG:
    return ENOSPC;
  case ERANGE:
    return EINVAL;
  default:
    /* ESHUTDOWN (= EBLOCKLISTED: this client was fenced), ETIMEDOUT,
     * ENOENT (image or snapshot gone), ESTALE (snapshot removed) ... */
    return EIO;
  }
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static time_t window_start;
static unsigned window_count;
static unsigned long suppressed;

static const char *
describe (int neg)
{
  switch (-neg) {
  case ESHUTDOWN:
    return "this Ceph client was blocklisted (fenced)";
  case ESTALE:
    return "the snapshot was removed";
  default:
    return strerror (-neg);
  }
}

void
rbdx_log_request_error (const char *image, const char *op, uint64_t offset,
                        uint32_t count, int neg)
{
  struct timespec now;
  unsigned long dropped = 0;
  char tail[80] = "";
  bool emit;

  clock_gettime (CLOCK_MONOTONIC, &now);
  pthread_mutex_lock (&log_lock);
  if (now.tv_sec - window_start >= RBDX_LOG_WINDOW_S) {
    window_start = now.tv_sec;
    window_count = 0;
  }
  emit = window_count < RBDX_LOG_BURST;
  if (emit) {
    window_count++;
    dropped = suppressed;
    suppressed = 0;
  }
  else
    suppressed++;
  pthread_mutex_unlock (&log_lock);

  if (!emit)
    return;
  if (dropped)
    snprintf (tail, sizeof tail, "; %lu more errors were not logged",
              dropped);
  rbdx_error ("rbdx: %s: %s of %" PRIu32 " bytes at offset %" PRIu64
                " failed: %s (errno %d)%s", image, op, count, offset,
                describe (neg), -neg, tail);
}
