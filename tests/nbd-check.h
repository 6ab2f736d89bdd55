/* SPDX-License-Identifier: BSD-3-Clause */
/* Assertion helpers shared by the libnbd test programs in tests/cases
 * and tests/multiconn (header-only: include it once per program; the
 * helpers are static inline, so each program links only what it uses).
 *
 * A failed check prints "PROG: FAIL (file:line): what" (with the call,
 * the libnbd error and the errno name where there is one) and exits 1.
 * PROG is the program's file name, set by check_name or check_args.
 */
#ifndef RBDX_TESTS_NBD_CHECK_H
#define RBDX_TESTS_NBD_CHECK_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnbd.h>

#define KiB (UINT64_C (1) << 10)
#define MiB (UINT64_C (1) << 20)
#define GiB (UINT64_C (1) << 30)

static const char *check_prog = "test";

static inline void __attribute__ ((noreturn, format (printf, 3, 4)))
check_fail_at (const char *file, int line, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s: FAIL (%s:%d): ", check_prog, file, line);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

#define FAIL(...) check_fail_at (__FILE__, __LINE__, __VA_ARGS__)

/* check_name (ARGV0): name the program in messages after its file. */
static inline void
check_name (const char *argv0)
{
  const char *slash = strrchr (argv0, '/');

  check_prog = slash ? slash + 1 : argv0;
}

/* check_args (ARGV, ARGS_OK, USAGE): check_name (ARGV[0]); unless
 * ARGS_OK, print "usage: PROG USAGE" and exit 2. */
static inline void
check_args (char **argv, bool args_ok, const char *usage)
{
  check_name (argv[0]);
  if (!args_ok) {
    fprintf (stderr, "usage: %s %s\n", check_prog, usage);
    exit (2);
  }
}

/* Name of an errno value ("EINVAL"), "0" for none. */
static inline const char *
errname (int e)
{
  const char *s = e ? strerrorname_np (e) : "0";
  return s ? s : "?";
}

/* Errno value of a name as the shell scripts spell it. */
static inline int
errno_of (const char *name)
{
  static const struct { const char *n; int e; } tab[] = {
    { "EPERM", EPERM }, { "EIO", EIO }, { "ENOMEM", ENOMEM },
    { "EINVAL", EINVAL }, { "ENOSPC", ENOSPC }, { "EOVERFLOW", EOVERFLOW },
    { "ENOTSUP", ENOTSUP }, { "ESHUTDOWN", ESHUTDOWN },
  };
  size_t i;

  for (i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcmp (tab[i].n, name) == 0)
      return tab[i].e;
  FAIL ("unknown errno name '%s'", name);
}

/* OK (call): a libnbd call that returns -1 on error must succeed. */
#define OK(call)                                                        \
  do {                                                                  \
    if ((call) == -1)                                                   \
      FAIL ("%s failed: %s (errno %s)", #call, nbd_get_error (),        \
            errname (nbd_get_errno ()));                                \
  } while (0)

/* ERR (call, want): the call must fail with NBD error WANT (an errno). */
#define ERR(call, want)                                                 \
  do {                                                                  \
    if ((call) != -1)                                                   \
      FAIL ("%s succeeded, expected error %s", #call, errname (want));  \
    if (nbd_get_errno () != (want))                                     \
      FAIL ("%s failed with %s (%s), expected %s", #call,               \
            errname (nbd_get_errno ()), nbd_get_error (),               \
            errname (want));                                            \
  } while (0)

/* EQ (expr, want): integer equality. */
#define EQ(expr, want)                                                  \
  do {                                                                  \
    int64_t got_ = (int64_t) (expr), want_ = (int64_t) (want);          \
    if (got_ != want_)                                                  \
      FAIL ("%s is %" PRId64 ", expected %" PRId64, #expr, got_, want_); \
  } while (0)

/* ALIVE (h): the connection is still up and idle (no disconnect). */
#define ALIVE(h)                                                        \
  do {                                                                  \
    if (nbd_aio_is_ready (h) != 1)                                      \
      FAIL ("connection is no longer ready after the last request "     \
            "(state: %s)", nbd_connection_state (h));                   \
  } while (0)

/* Monotonic time in seconds. */
static inline double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static inline void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);

  if (!p)
    FAIL ("out of memory (%zu bytes)", n);
  return p;
}

/* Fill BUF with a pattern that differs per byte and per SEED, so a
 * misplaced or stale block is caught. */
static inline void
fill_pattern (void *buf, size_t len, uint64_t base, unsigned seed)
{
  unsigned char *p = buf;
  size_t i;

  for (i = 0; i < len; i++) {
    uint64_t x = base + i;
    p[i] = (unsigned char) ((x >> 9) * 31 + (x & 0x1ff) + seed * 97 + 1);
  }
}

/* Index of the first byte of BUF[0..LEN) that is not BYTE, or -1. */
static inline int64_t
first_diff (const void *buf, int byte, size_t len)
{
  const unsigned char *p = buf;
  size_t i;

  for (i = 0; i < len; i++)
    if (p[i] != (unsigned char) byte)
      return (int64_t) i;
  return -1;
}

/* SAME (buf, want, len, offset, what): BUF[0..LEN) equals WANT[0..LEN);
 * OFFSET names the first byte's position in the export for the
 * message. */
#define SAME(buf, want, len, offset, what)                              \
  check_same (__FILE__, __LINE__, buf, want, len, offset, what)

static inline void
check_same (const char *file, int line, const void *buf, const void *want,
            size_t len, uint64_t offset, const char *what)
{
  const unsigned char *a = buf, *b = want;
  size_t i;

  if (memcmp (a, b, len) == 0)
    return;
  for (i = 0; a[i] == b[i]; i++)
    ;
  check_fail_at (file, line, "%s: byte at offset %" PRIu64 " is 0x%02x, "
                 "expected 0x%02x", what, offset + i, a[i], b[i]);
}

/* ALL (buf, byte, len, offset, what): all of BUF[0..LEN) is BYTE. */
#define ALL(buf, byte, len, offset, what)                               \
  check_all (__FILE__, __LINE__, buf, byte, len, offset, what)

static inline void
check_all (const char *file, int line, const void *buf, int byte,
           size_t len, uint64_t offset, const char *what)
{
  int64_t i = first_diff (buf, byte, len);

  if (i >= 0)
    check_fail_at (file, line, "%s: byte at offset %" PRIu64 " is 0x%02x, "
                   "expected 0x%02x", what, offset + (uint64_t) i,
                   ((const unsigned char *) buf)[i], (unsigned char) byte);
}

/* Read SIZE bytes of a local file (a seed or expected image). */
static inline unsigned char *
load_file (const char *path, uint64_t size)
{
  unsigned char *buf = xmalloc (size);
  FILE *f = fopen (path, "rb");

  if (!f)
    FAIL ("open %s: %m", path);
  if (fread (buf, 1, size, f) != size)
    FAIL ("%s is shorter than %" PRIu64 " bytes", path, size);
  fclose (f);
  return buf;
}

static inline void
save_file (const char *path, const void *buf, uint64_t size)
{
  FILE *f = fopen (path, "wb");

  if (!f)
    FAIL ("create %s: %m", path);
  if (fwrite (buf, 1, size, f) != size || fclose (f) != 0)
    FAIL ("write %s: %m", path);
}

/* Read [OFFSET, OFFSET+LEN) of the export in chunks the server accepts
 * and compare it with SHADOW (the expected whole image). */
static inline void
verify_range (struct nbd_handle *h, const unsigned char *shadow,
              uint64_t offset, uint64_t len, const char *what)
{
  const uint64_t chunk = 4 * MiB;
  unsigned char *buf = xmalloc (chunk);
  uint64_t done, n;

  for (done = 0; done < len; done += n) {
    n = len - done < chunk ? len - done : chunk;
    OK (nbd_pread (h, buf, n, offset + done, 0));
    check_same (__FILE__, __LINE__, buf, shadow + offset + done, n,
                offset + done, what);
  }
  free (buf);
}

/* Connect to URI asking for base:allocation (and, with FULL_INFO, for
 * every NBD_INFO item: block sizes, description, canonical name). */
static inline struct nbd_handle *
connect_to (const char *uri, bool full_info)
{
  struct nbd_handle *h = nbd_create ();

  if (!h)
    FAIL ("nbd_create: %s", nbd_get_error ());
  if (full_info)
    OK (nbd_set_full_info (h, true));
  OK (nbd_add_meta_context (h, LIBNBD_CONTEXT_BASE_ALLOCATION));
  OK (nbd_connect_uri (h, uri));
  return h;
}

/* Connect a handle named NAME (for libnbd's debug messages and ours)
 * to URI, with libnbd's defaults. */
static inline struct nbd_handle *
connect_named (const char *uri, const char *name)
{
  struct nbd_handle *h = nbd_create ();

  if (!h)
    FAIL ("nbd_create: %s", nbd_get_error ());
  nbd_set_handle_name (h, name);
  if (nbd_connect_uri (h, uri) == -1)
    FAIL ("%s: nbd_connect_uri %s: %s (errno %s)", name, uri,
          nbd_get_error (), errname (nbd_get_errno ()));
  return h;
}

#endif /* RBDX_TESTS_NBD_CHECK_H */
