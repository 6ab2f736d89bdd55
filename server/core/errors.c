/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: error mapping and rate-limited error logs (see errors.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rbdx/log.h"

#include "rbdx/clock.h"
#include "rbdx/errors.h"

int
rbdx_nbd_error (enum rbdx_op op, int neg)
{
  if (op == RBDX_OP_READ || op == RBDX_OP_BLOCK_STATUS)
    switch (-neg) {
    case EINVAL: case ENOMEM: case EOVERFLOW:
      return -neg;
    default:
      return EIO;
    }
  switch (-neg) {
  case EIO: case ENOMEM: case EINVAL: case ENOSPC: case EOVERFLOW:
  case ENOTSUP:
    return -neg;
  case EROFS: case EACCES:
    return EPERM;       /* read-only handle / lock held exclusively elsewhere */
  case EDQUOT: case EFBIG:
    return ENOSPC;
  case ERANGE:
    return EINVAL;
  default:
    /* EPERM (an OSD refused the op: the cephx caps, or the pool was
     * deleted; not the client's fault, C72), ESHUTDOWN (= EBLOCKLISTED:
     * this client was fenced), ETIMEDOUT,
     * ENOENT (image or snapshot gone), ESTALE (the snapshot, or an
     * image served read-only, was removed) ... */
    return EIO;
  }
}

static const char *
describe (int neg)
{
  switch (-neg) {
  case ESHUTDOWN:
    return "this Ceph client was blocklisted (fenced)";
  case ESTALE:
    return "the image or snapshot is gone or changed under this handle "
           "(removed, in the trash, the source of a migration, or a "
           "clone's parent link changed)";
  default:
    return strerror (-neg);
  }
}

bool
rbdx_log_limit_take (struct rbdx_log_limit *l, char *tail, size_t taillen)
{
  time_t now = (time_t) (rbdx_clock_ns () / 1000000000);
  unsigned long dropped = 0;
  bool emit;

  pthread_mutex_lock (&l->lock);
  if (now - l->window_start >= RBDX_LOG_WINDOW_S) {
    l->window_start = now;
    l->count = 0;
  }
  emit = l->count < RBDX_LOG_BURST;
  if (emit) {
    l->count++;
    dropped = l->suppressed;
    l->suppressed = 0;
  }
  else
    l->suppressed++;
  pthread_mutex_unlock (&l->lock);

  if (taillen)
    tail[0] = '\0';
  if (emit && dropped && taillen)
    snprintf (tail, taillen, "; %lu more errors were not logged", dropped);
  return emit;
}

void
rbdx_error_limited (struct rbdx_log_limit *l, const char *fmt, ...)
{
  char msg[1024], tail[80];
  va_list ap;

  if (!rbdx_log_limit_take (l, tail, sizeof tail))
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  rbdx_error ("%s%s", msg, tail);
}

void
rbdx_log_request_error (const char *image, const char *op, uint64_t offset,
                        uint32_t count, int neg)
{
  static struct rbdx_log_limit limit = RBDX_LOG_LIMIT_INIT;

  rbdx_error_limited (&limit, "rbdx: %s: %s of %" PRIu32 " bytes at offset "
                      "%" PRIu64 " failed: %s (errno %d)", image, op, count,
                      offset, describe (neg), -neg);
}
