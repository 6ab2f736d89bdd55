/* SPDX-License-Identifier: BSD-3-Clause */
/* early-init.so: preloaded into nbdkit after the sanitizer runtime, in
 * sanitized test runs only (tests/sanitizers/meson.build builds it
 * without sanitizer flags, since it runs before the runtime is set up).
 *
 * Why: the runtime preloaded into an uninstrumented program initialises
 * itself lazily, on the first call it intercepts.  In nbdkit that call
 * is a malloc inside newlocale(), from libp11-kit's constructor (nbdkit
 * links GnuTLS, which links p11-kit), while glibc holds its internal
 * locale lock for writing; the runtime's start-up calls dlerror(),
 * whose gettext() takes the same lock for reading, and the lock is left
 * with a negative reader count.  Any later strerror() (rbdx's error
 * messages, librados) and p11-kit's destructor at exit then hang in
 * freelocale() for ever.  A C program linked with -lgnutls that calls
 * strerror() and exits hangs the same way with only libasan preloaded.
 *
 * This newlocale() makes one malloc first, so the runtime initialises
 * before glibc takes the lock, and then calls glibc's.  Nothing else
 * changes.
 */
#include <dlfcn.h>
#include <locale.h>
#include <stdlib.h>

locale_t
newlocale (int category_mask, const char *locale, locale_t base)
{
  static locale_t (*real) (int, const char *, locale_t);
  void *volatile p = malloc (1);   /* volatile: kept by the optimiser */

  free (p);
  if (!real)
    real = (locale_t (*) (int, const char *, locale_t))
           dlsym (RTLD_NEXT, "newlocale");
  return real (category_mask, locale, base);
}
