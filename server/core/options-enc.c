/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the encryption parameters' passphrase files, read when the
 * options are completed (rbdx_options_read_passphrases, options.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/opterr.h"
#include "rbdx/options.h"

/* Read the passphrase file of @e into e->passphrase. */
static int
read_passphrase (struct rbdx_encryption_spec *e, char *err, size_t errlen)
{
  const char *key = "encryption_passphrase_file";
  FILE *f;
  size_t n;
  int r;

  r = rbdx_opt_check_file (key, e->passphrase_file, err, errlen);
  if (r < 0)
    return r;
  e->passphrase = malloc (RBDX_PASSPHRASE_MAX + 1);
  if (!e->passphrase)
    return -ENOMEM;
  f = fopen (e->passphrase_file, "re");
  if (!f)
    return rbdx_opt_err (err, errlen, "%s='%s': %s", key, e->passphrase_file,
                 strerror (errno));
  /* No stdio buffer: it would keep a copy of the secret. */
  setvbuf (f, NULL, _IONBF, 0);
  n = fread (e->passphrase, 1, RBDX_PASSPHRASE_MAX + 1, f);
  fclose (f);
  if (n == 0 || n > RBDX_PASSPHRASE_MAX)
    return rbdx_opt_err (err, errlen, "%s='%s': %s", key, e->passphrase_file,
                 n ? "longer than 64 KiB" : "empty");
  /* Ceph 16.2.15's `rbd encryption format` drops the file's final
   * newline ("abc\n" formats with "abc", "abc\ndef\n" with "abc\ndef");
   * Ceph 18.2.7's keeps it (the whole file; Reef release notes).  Keep both forms: the
   * newline stays in the buffer, and rbdx_load_encryption tries it too,
   * so one file opens images formatted by either. */
  e->passphrase_nl = e->passphrase[n - 1] == '\n';
  if (e->passphrase_nl)
    n--;
  e->passphrase_len = n;
  return 0;
}

int
rbdx_options_read_passphrases (struct rbdx_options *o, char *err, size_t errlen)
{
  size_t i;
  int r;

  if (o->nenc != o->nenc_files)
    return rbdx_opt_err (err, errlen, "%zu encryption_format= and %zu "
                    "encryption_passphrase_file= given: they go "
                    "together, one format per passphrase file (the image's "
                    "own first, then its parent's)", o->nenc, o->nenc_files);
  for (i = 0; i < o->nenc; i++) {
    r = read_passphrase (&o->enc[i], err, errlen);
    if (r < 0)
      return r;
  }
  return 0;
}
