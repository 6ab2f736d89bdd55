/* SPDX-License-Identifier: BSD-3-Clause */
/* nbd-script: one NBD connection driven line by line from stdin, so a
 * shell test can keep a connection open across phases (a resize, a
 * foreign writer, another connection's flush) and act on it later.
 *
 * Usage: nbd-script URI [NAME]
 *
 * Commands (one per line; numbers in C notation, BYTE in hex):
 *   size                     -> "ok SIZE" (size negotiated at connect)
 *   mc | ro                  -> "ok 0|1" (nbd_can_multi_conn / is_read_only)
 *   strict 0|1               -> client-side strict checks off / default
 *   write OFF LEN BYTE [fua] -> write LEN bytes of BYTE
 *   read OFF LEN BYTE        -> read and check every byte is BYTE
 *   readerr OFF LEN ERRNAME  -> the read must fail with ERRNAME (EINVAL...)
 *   writeerr OFF LEN ERRNAME -> the write must fail with ERRNAME
 *   bs OFF LEN               -> "ok N" : BLOCK_STATUS (base:allocation)
 *                               answered with N extents
 *   bserr OFF LEN ERRNAME    -> the BLOCK_STATUS must fail with ERRNAME
 *   flush
 *   alive                    -> the connection is still up and idle
 *   quit                     -> NBD_CMD_DISC and exit 0
 * Each command answers one line on stdout: "ok[ VALUE]" or "err WHY".
 * A failed command never ends the program: the caller decides.  End of
 * input acts as quit.  Used by mc-lib.sh (client_start / client_do).
 */
#include "nbd-check.h"

#include <stdint.h>

static struct nbd_handle *h;
static uint32_t default_strict;

static char *
arg (char **save)
{
  return strtok_r (NULL, " \t\n", save);
}

static int
num (char **save, uint64_t *v, int base)
{
  char *s = arg (save), *end;

  if (!s)
    return -1;
  errno = 0;
  *v = strtoull (s, &end, base);
  return errno || *end ? -1 : 0;
}

static void
reply_nbd_err (const char *what)
{
  printf ("err %s failed: %s (errno %s)\n", what, nbd_get_error (),
          errname (nbd_get_errno ()));
}

/* An I/O that must fail with WANT: say what happened instead. */
static void
expect_err (int r, const char *want_name, const char *what,
            const unsigned char *buf, size_t len)
{
  int want = errno_of (want_name), got;

  if (r != -1) {
    if (buf && first_diff (buf, 0, len) < 0)
      printf ("err %s succeeded (read back zeros), expected %s\n", what,
              want_name);
    else
      printf ("err %s succeeded, expected %s\n", what, want_name);
    return;
  }
  got = nbd_get_errno ();
  if (got != want)
    printf ("err %s failed with %s (%s), expected %s\n", what,
            errname (got), nbd_get_error (), want_name);
  else
    printf ("ok\n");
}

static int
count_extent (void *arg, const char *metacontext, uint64_t offset,
              uint32_t *entries, size_t nr_entries, int *error)
{
  if (strcmp (metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION) == 0)
    *(size_t *) arg += nr_entries / 2;
  return 0;
}

static void
block_status (const char *cmd, char **save)
{
  uint64_t off, len;
  size_t n = 0;
  char what[96], *e;
  int r;

  if (num (save, &off, 0) < 0 || num (save, &len, 0) < 0 ||
      len > UINT32_MAX) {
    printf ("err usage: %s OFF LEN%s\n", cmd,
            strcmp (cmd, "bserr") == 0 ? " ERRNAME" : "");
    return;
  }
  snprintf (what, sizeof what, "block status of %" PRIu64 " bytes at %"
            PRIu64, len, off);
  r = nbd_block_status (h, len, off,
                        (nbd_extent_callback) { .callback = count_extent,
                                                .user_data = &n }, 0);
  if (strcmp (cmd, "bserr") == 0) {
    e = arg (save);
    expect_err (r, e ? e : "?", what, NULL, 0);
  }
  else if (r == -1)
    reply_nbd_err (what);
  else
    printf ("ok %zu\n", n);
}

static void
command (char *line)
{
  char *save = NULL, *cmd = strtok_r (line, " \t\n", &save), *e;
  uint64_t off, len, byte;
  unsigned char *buf;
  int64_t i;

  if (!cmd) {
    printf ("err empty command\n");
    return;
  }
  if (strcmp (cmd, "size") == 0)
    printf ("ok %" PRId64 "\n", nbd_get_size (h));
  else if (strcmp (cmd, "mc") == 0)
    printf ("ok %d\n", nbd_can_multi_conn (h));
  else if (strcmp (cmd, "ro") == 0)
    printf ("ok %d\n", nbd_is_read_only (h));
  else if (strcmp (cmd, "strict") == 0) {
    if (num (&save, &off, 0) < 0)
      printf ("err usage: strict 0|1\n");
    else if (nbd_set_strict_mode (h, off ? default_strict : 0) == -1)
      reply_nbd_err ("nbd_set_strict_mode");
    else
      printf ("ok\n");
  }
  else if (strcmp (cmd, "bs") == 0 || strcmp (cmd, "bserr") == 0)
    block_status (cmd, &save);
  else if (strcmp (cmd, "flush") == 0) {
    if (nbd_flush (h, 0) == -1)
      reply_nbd_err ("flush");
    else
      printf ("ok\n");
  }
  else if (strcmp (cmd, "alive") == 0) {
    if (nbd_aio_is_ready (h) == 1)
      printf ("ok\n");
    else
      printf ("err connection state: %s\n", nbd_connection_state (h));
  }
  else if (strcmp (cmd, "write") == 0 || strcmp (cmd, "read") == 0 ||
           strcmp (cmd, "readerr") == 0 || strcmp (cmd, "writeerr") == 0) {
    bool reading = cmd[0] == 'r', want_err = strstr (cmd, "err") != NULL;
    char what[96];

    if (num (&save, &off, 0) < 0 || num (&save, &len, 0) < 0 ||
        len > 64 * MiB ||
        (!(reading && want_err) && num (&save, &byte, 16) < 0)) {
      printf ("err usage: %s OFF LEN BYTE|ERRNAME\n", cmd);
      return;
    }
    snprintf (what, sizeof what, "%s of %" PRIu64 " bytes at %" PRIu64,
              reading ? "read" : "write", len, off);
    buf = xmalloc (len);
    if (reading && want_err) {
      e = arg (&save);
      memset (buf, 0x5a, len);
      expect_err (nbd_pread (h, buf, len, off, 0), e ? e : "?", what,
                  buf, len);
    }
    else if (reading) {
      if (nbd_pread (h, buf, len, off, 0) == -1)
        reply_nbd_err (what);
      else if ((i = first_diff (buf, (int) byte, len)) >= 0)
        printf ("err %s: byte at offset %" PRIu64 " is 0x%02x, expected "
                "0x%02x\n", what, off + (uint64_t) i, buf[i],
                (unsigned) byte);
      else
        printf ("ok\n");
    }
    else {
      uint32_t flags = 0;

      memset (buf, (int) byte, len);
      e = arg (&save);
      if (want_err)
        expect_err (nbd_pwrite (h, buf, len, off, 0), e ? e : "?", what,
                    NULL, 0);
      else {
        if (e && strcmp (e, "fua") == 0)
          flags = LIBNBD_CMD_FLAG_FUA;
        if (nbd_pwrite (h, buf, len, off, flags) == -1)
          reply_nbd_err (what);
        else
          printf ("ok\n");
      }
    }
    free (buf);
  }
  else
    printf ("err unknown command '%s'\n", cmd);
}

int
main (int argc, char *argv[])
{
  char line[512];

  check_args (argv, argc == 2 || argc == 3, "URI [NAME]");
  setvbuf (stdout, NULL, _IOLBF, 0);
  h = nbd_create ();
  if (!h)
    FAIL ("nbd_create: %s", nbd_get_error ());
  nbd_set_handle_name (h, argc > 2 ? argv[2] : "script");
  /* Ask for base:allocation so that "bs" can be used. */
  if (nbd_add_meta_context (h, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1 ||
      nbd_connect_uri (h, argv[1]) == -1)
    FAIL ("nbd_connect_uri %s: %s (errno %s)", argv[1], nbd_get_error (),
          errname (nbd_get_errno ()));
  default_strict = nbd_get_strict_mode (h);
  printf ("ok connected\n");

  while (fgets (line, sizeof line, stdin)) {
    if (strncmp (line, "quit", 4) == 0)
      break;
    command (line);
  }
  if (nbd_shutdown (h, 0) == -1)
    fprintf (stderr, "nbd-script: shutdown: %s\n", nbd_get_error ());
  nbd_close (h);
  return 0;
}
