/* Small assertion helpers for the multi-connection test programs in
 * tests/multiconn (header-only; include it once per program).
 *
 * A failed check prints "PROG: FAIL (file:line): what" with the libnbd
 * error and errno name, and exits 1.
 */
#ifndef RBDX_MULTICONN_MC_H
#define RBDX_MULTICONN_MC_H

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

#define MC_KiB (UINT64_C (1) << 10)
#define MC_MiB (UINT64_C (1) << 20)
#define MC_GiB (UINT64_C (1) << 30)

static const char *mc_prog = "multiconn";

static inline void __attribute__ ((noreturn, format (printf, 3, 4)))
mc_fail_at (const char *file, int line, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s: FAIL (%s:%d): ", mc_prog, file, line);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

#define MC_FAIL(...) mc_fail_at (__FILE__, __LINE__, __VA_ARGS__)

/* Name of an errno value ("EINVAL"), "0" for none. */
static inline const char *
mc_errname (int e)
{
  const char *s;

  if (e == 0)
    return "0";
  s = strerrorname_np (e);
  return s ? s : "?";
}

/* Errno value of a name as the shell scripts spell it. */
static inline int
mc_errno_of (const char *name)
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
  MC_FAIL ("unknown errno name '%s'", name);
}

/* MC_OK (call): a libnbd call returning -1 on error must succeed. */
#define MC_OK(call)                                                     \
  do {                                                                  \
    if ((call) == -1)                                                   \
      MC_FAIL ("%s failed: %s (errno %s)", #call, nbd_get_error (),     \
               mc_errname (nbd_get_errno ()));                          \
  } while (0)

/* MC_EQ (expr, want): integer equality. */
#define MC_EQ(expr, want)                                               \
  do {                                                                  \
    int64_t got_ = (int64_t) (expr), want_ = (int64_t) (want);          \
    if (got_ != want_)                                                  \
      MC_FAIL ("%s is %" PRId64 ", expected %" PRId64, #expr, got_,     \
               want_);                                                  \
  } while (0)

static inline void *
mc_malloc (size_t n)
{
  void *p = malloc (n ? n : 1);

  if (!p)
    MC_FAIL ("out of memory (%zu bytes)", n);
  return p;
}

static inline double
mc_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Connect a new handle to URI (nbd+unix://...?socket=...). */
static inline struct nbd_handle *
mc_connect (const char *uri, const char *name)
{
  struct nbd_handle *h = nbd_create ();

  if (!h)
    MC_FAIL ("nbd_create: %s", nbd_get_error ());
  nbd_set_handle_name (h, name);
  if (nbd_connect_uri (h, uri) == -1)
    MC_FAIL ("%s: nbd_connect_uri %s: %s (errno %s)", name, uri,
             nbd_get_error (), mc_errname (nbd_get_errno ()));
  return h;
}

/* Index of the first byte of BUF[0..LEN) that is not BYTE, or -1. */
static inline int64_t
mc_first_diff (const void *buf, int byte, size_t len)
{
  const unsigned char *p = buf;
  size_t i;

  for (i = 0; i < len; i++)
    if (p[i] != (unsigned char) byte)
      return (int64_t) i;
  return -1;
}

/* MC_ALL (buf, byte, len, offset, what): every byte is BYTE. */
#define MC_ALL(buf, byte, len, offset, what)                            \
  do {                                                                  \
    int64_t i_ = mc_first_diff ((buf), (byte), (len));                  \
    if (i_ >= 0)                                                        \
      MC_FAIL ("%s: byte at offset %" PRIu64 " is 0x%02x, expected "    \
               "0x%02x", (what), (uint64_t) (offset) + (uint64_t) i_,   \
               ((const unsigned char *) (buf))[i_],                     \
               (unsigned char) (byte));                                 \
  } while (0)

#endif /* RBDX_MULTICONN_MC_H */
