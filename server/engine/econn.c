/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/econn.c: the small helpers of econn.h that both the
 * reader thread (reader.c) and librbd's callback (reply.c) use: the
 * wake-up, a request's end of life, the non-blocking send of a reply,
 * and the engine's stopping flag.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "econn.h"

static atomic_bool stopping;

bool
econn_stopping (void)
{
  return atomic_load (&stopping);
}

void
econn_set_stopping (void)
{
  atomic_store (&stopping, true);
}

void
econn_wake (struct econn *ec)
{
  uint64_t one = 1;
  ssize_t r = write (ec->efd, &one, sizeof one);
  (void) r;                   /* a full counter wakes the reader anyway */
}

void
ereq_free (struct ereq *rq)
{
  free (rq->buf);
  free (rq);
}

bool
econn_send_some (struct econn *ec, struct ereq *rq)
{
  while (rq->out_off < rq->out_len) {
    ssize_t n = send (ec->fd, rq->out + rq->out_off, rq->out_len - rq->out_off,
                      MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return false;
      ec->dead = true;
      return true;
    }
    rq->out_off += (size_t) n;
  }
  return true;
}

void
econn_retire (struct econn *ec, struct ereq *rq)
{
  ec->inflight--;
  ec->inflight_bytes -= rq->mem;
}
