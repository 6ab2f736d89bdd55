/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-resize.c: following the export's size (see sup.h; what to do
 * is decided in resize.c). */
#include <stdio.h>
#include <sys/socket.h>

#include "resize.h"
#include "sup.h"

uint64_t
sup_read_size_file (const struct sup *s)
{
  unsigned long long v = 0;
  FILE *f = fopen (s->sizefile, "re");

  if (!f)
    return 0;
  if (fscanf (f, "%llu", &v) != 1)
    v = 0;
  fclose (f);
  return v;
}

/* NBD_CMD_RECONFIGURE with the new size; on success the device has it.
 * @return 0 or the negative errno. */
static int
set_size (struct sup *s, uint64_t size)
{
  int r = rbdx_nl_reconfigure (s->cmd, s->index, s->backend, NULL, 0, size);

  if (!r) {
    s->dev_size = size;
    s->resizes++;
    sup_save_state (s);
  }
  return r;
}

static void
log_resize (const char *what, uint64_t from, uint64_t to, int r)
{
  logmsg ("%s from %llu to %llu bytes: %s", what, (unsigned long long) from,
          (unsigned long long) to, r ? errno_text (r) : "device size set");
}

/* Spec mode: every connection advertises the largest size, so a resize
 * only needs the device's size changed. */
void
sup_follow_size_file (struct sup *s)
{
  uint64_t v = sup_read_size_file (s);

  switch (rbdx_resize_from_file (s->dev_size, v)) {
  case RBDX_RESIZE_UNKNOWN:
    if (!s->said_no_size)
      logmsg ("no size in %s: resizes are not followed", s->sizefile);
    s->said_no_size = true;
    break;
  case RBDX_RESIZE_SET:
    {
      uint64_t from = s->dev_size;
      log_resize ("the image's size changed", from, v, set_size (s, v));
    }
    break;
  default:
    break;
  }
}

void
sup_export_size (struct sup *s, uint64_t size)
{
  switch (rbdx_resize_from_export (s->dev_size, s->grow_to, size)) {
  case RBDX_RESIZE_SET:
    {
      uint64_t from = s->dev_size;
      log_resize ("the export shrank", from, size, set_size (s, size));
    }
    s->grow_to = 0;
    break;
  case RBDX_RESIZE_GROW:
    /* Retire every connection negotiated at a smaller size.  Our SHUT_WR
     * makes the server read EOF after the requests already sent, answer
     * them and close; the kernel then counts the link dead. */
    s->grow_to = size;
    s->grow_since = now ();
    logmsg ("the export grew from %llu to %llu bytes: replacing the connections",
            (unsigned long long) s->dev_size, (unsigned long long) size);
    for (size_t i = 0; i < s->ncopies; i++)
      if (rbdx_resize_must_retire (&s->copies[i], size)) {
        shutdown (s->copies[i].fd, SHUT_WR);
        s->copies[i].retiring = true;
      }
    break;
  default:
    break;
  }
}

void
sup_finish_growth (struct sup *s)
{
  uint64_t to = s->grow_to;
  int r;

  if (!rbdx_resize_growth_done (to, s->copies, s->ncopies, s->conns, s->relink.dead))
    return;
  r = set_size (s, to);
  logmsg ("all %u connections negotiated %llu bytes: %s", s->conns,
          (unsigned long long) to, r ? errno_text (r) : "device size set");
  if (!r)
    s->grow_to = 0;
}
