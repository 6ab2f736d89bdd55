/* SPDX-License-Identifier: BSD-3-Clause */
/* c22-bystander: the bystander of case C22 in tests/README.md: a
 * connection that keeps writing while other clients tear their
 * connections down, and must never see an error.
 *
 * Usage: c22-bystander URI STOPFILE NBLOCKS
 *   Writes stamped 4 KiB blocks in [0, NBLOCKS * 4 KiB) of the export,
 *   block after block and round again, 16 writes in flight, every other
 *   write with NBD_CMD_FLAG_FUA, until STOPFILE exists (at most 300 s).
 *   A block is written again only after its previous write was answered,
 *   so the last acknowledged write of a block is the one it must hold.
 *   Prints "ready" once 64 writes were acknowledged.  At STOPFILE: waits
 *   for the writes in flight, flushes, disconnects, then reads every
 *   block back on a new connection and checks it holds the stamp of its
 *   last acknowledged write (zeros if none).  Any failed request, short
 *   answer or wrong block exits 1 with the reason; the last line says
 *   how many writes were acknowledged and how many blocks were checked.
 */
#include "nbd-check.h"

#include <unistd.h>

#define BLK (4 * KiB)
#define QD 16
#define STAMP_MAGIC UINT64_C (0x43323253544d5031) /* "C22STMP1" */

struct slot {
  int64_t cookie;       /* 0: free */
  uint64_t block, seq;
  unsigned char buf[BLK];
};

/* splitmix64: a cheap, well-spread sequence for the stamp's body. */
static uint64_t
mix (uint64_t x)
{
  x += UINT64_C (0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C (0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C (0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* The content of BLOCK after write number SEQ (SEQ >= 1). */
static void
stamp (unsigned char *buf, uint64_t block, uint64_t seq)
{
  uint64_t w[BLK / 8];
  size_t i;

  w[0] = STAMP_MAGIC;
  w[1] = seq;
  w[2] = block;
  for (i = 3; i < BLK / 8; i++)
    w[i] = mix ((seq << 24) ^ (block << 10) ^ i);
  memcpy (buf, w, BLK);
}

/* Collect answered writes; FAIL on an error.  Returns how many slots
 * it freed. */
static int
reap (struct nbd_handle *h, struct slot *slots, bool *pending,
      uint64_t *acked, uint64_t *nacked, uint64_t *nfua)
{
  int i, r, freed = 0;

  for (i = 0; i < QD; i++) {
    if (!slots[i].cookie)
      continue;
    r = nbd_aio_command_completed (h, slots[i].cookie);
    if (r == 0)
      continue;
    if (r == -1)
      FAIL ("write #%" PRIu64 " of block %" PRIu64 " failed: %s (errno %s)",
            slots[i].seq, slots[i].block, nbd_get_error (),
            errname (nbd_get_errno ()));
    acked[slots[i].block] = slots[i].seq;
    pending[slots[i].block] = false;
    (*nacked)++;
    if (slots[i].seq & 1)
      (*nfua)++;
    slots[i].cookie = 0;
    freed++;
  }
  return freed;
}

static void
wait_some (struct nbd_handle *h)
{
  if (nbd_poll (h, 1000) == -1)
    FAIL ("nbd_poll: %s (errno %s)", nbd_get_error (),
          errname (nbd_get_errno ()));
  ALIVE (h);
}

int
main (int argc, char **argv)
{
  static struct slot slots[QD];
  struct nbd_handle *h;
  const char *uri, *stopfile;
  uint64_t nblocks, seq = 0, nacked = 0, nfua = 0, b;
  uint64_t *acked;
  bool *pending, said_ready = false;
  unsigned char *want, *got;
  double end;
  int i;

  check_args (argv, argc == 4, "URI STOPFILE NBLOCKS");
  uri = argv[1];
  stopfile = argv[2];
  nblocks = strtoull (argv[3], NULL, 10);
  if (nblocks < QD)
    FAIL ("NBLOCKS must be at least %d", QD);
  acked = calloc (nblocks, sizeof *acked);
  pending = calloc (nblocks, sizeof *pending);
  want = xmalloc (BLK);
  got = xmalloc (BLK);
  if (!acked || !pending)
    FAIL ("out of memory");

  h = connect_named (uri, "bystander");
  if ((uint64_t) nbd_get_size (h) < nblocks * BLK)
    FAIL ("the export is smaller than %" PRIu64 " blocks", nblocks);
  if (nbd_can_fua (h) != 1)
    FAIL ("the server does not offer FUA");

  end = now_s () + 300;
  while (access (stopfile, F_OK) != 0) {
    if (now_s () > end)
      FAIL ("no stop file after 300 s");
    for (i = 0; i < QD; i++) {
      if (slots[i].cookie)
        continue;
      b = seq % nblocks;
      while (pending[b]) {      /* its last write is still in flight */
        wait_some (h);
        reap (h, slots, pending, acked, &nacked, &nfua);
      }
      seq++;
      slots[i].block = b;
      slots[i].seq = seq;
      stamp (slots[i].buf, b, seq);
      slots[i].cookie = nbd_aio_pwrite (h, slots[i].buf, BLK, b * BLK,
                                        NBD_NULL_COMPLETION,
                                        seq & 1 ? LIBNBD_CMD_FLAG_FUA : 0);
      if (slots[i].cookie == -1)
        FAIL ("aio write #%" PRIu64 ": %s", seq, nbd_get_error ());
      pending[b] = true;
    }
    wait_some (h);
    reap (h, slots, pending, acked, &nacked, &nfua);
    if (!said_ready && nacked >= 64) {
      printf ("ready\n");
      fflush (stdout);
      said_ready = true;
    }
  }
  for (;;) {
    bool busy = false;
    for (i = 0; i < QD; i++)
      busy |= slots[i].cookie != 0;
    if (!busy)
      break;
    wait_some (h);
    reap (h, slots, pending, acked, &nacked, &nfua);
  }
  OK (nbd_flush (h, 0));
  OK (nbd_shutdown (h, 0));
  nbd_close (h);

  /* Every acknowledged write reads back, on a new connection. */
  h = connect_named (uri, "bystander-check");
  for (b = 0; b < nblocks; b++) {
    if (acked[b])
      stamp (want, b, acked[b]);
    else
      memset (want, 0, BLK);
    OK (nbd_pread (h, got, BLK, b * BLK, 0));
    if (memcmp (got, want, BLK) != 0) {
      uint64_t gw[3];
      memcpy (gw, got, sizeof gw);
      FAIL ("block %" PRIu64 " does not hold its last acknowledged write "
            "#%" PRIu64 " (it holds magic %#" PRIx64 " write #%" PRIu64
            " block %" PRIu64 ")", b, acked[b], gw[0], gw[1], gw[2]);
    }
  }
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  printf ("%s: %" PRIu64 " writes acknowledged (%" PRIu64 " with FUA), "
          "all %" PRIu64 " blocks read back as last acknowledged\n",
          check_prog, nacked, nfua, nblocks);
  free (acked);
  free (pending);
  free (want);
  free (got);
  return 0;
}
