/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the cephx id, from id= or from $CEPH_ARGS (see
 * cephargs.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rbdx/cephargs.h"

/* At most this much of a word is shown in a message. */
#define SHOWN 64

int
rbdx_cephx_id_check (const char *id, char *why, size_t whylen)
{
  const unsigned char *p;
  size_t n = strlen (id);

  if (whylen)
    why[0] = '\0';
  if (n == 0) {
    snprintf (why, whylen, "an empty cephx id");
    return -EINVAL;
  }
  if (n > RBDX_CEPHX_ID_MAX) {
    snprintf (why, whylen, "a cephx id longer than %d bytes",
              RBDX_CEPHX_ID_MAX);
    return -ENAMETOOLONG;
  }
  if (strncmp (id, "client.", 7) == 0) {
    snprintf (why, whylen, "give the cephx id without the 'client.' prefix");
    return -EINVAL;
  }
  for (p = (const unsigned char *) id; *p; p++) {
    /* Ceph expands $name (client.ID) in file paths: the default
     * keyring, log file and admin socket. */
    if (*p <= ' ' || *p == 0x7f || *p == '/') {
      snprintf (why, whylen, "a cephx id has no blank, control character "
                "or '/'");
      return -EINVAL;
    }
  }
  return 0;
}

/* A word of $CEPH_ARGS: @n bytes at @p, not NUL-terminated. */
struct word {
  const char *p;
  size_t n;
};

/* The next word at or after *pos in @s (Ceph splits at spaces only and
 * makes no empty words): false at the end. */
static bool
next_word (const char *s, size_t *pos, struct word *w)
{
  size_t i = *pos;

  while (s[i] == ' ')
    i++;
  if (s[i] == '\0') {
    *pos = i;
    return false;
  }
  w->p = s + i;
  while (s[i] != '\0' && s[i] != ' ')
    i++;
  w->n = (size_t) (s + i - w->p);
  *pos = i;
  return true;
}

/* Is @w option @opt: 0 alone (its value is the next word), 1 as
 * OPT=VALUE (the value in *v), -1 not it. */
static int
option (const struct word *w, const char *opt, struct word *v)
{
  size_t n = strlen (opt);

  if (w->n < n || memcmp (w->p, opt, n) != 0)
    return -1;
  if (w->n == n)
    return 0;
  if (w->p[n] != '=')
    return -1;
  v->p = w->p + n + 1;
  v->n = w->n - n - 1;
  return 1;
}

static int
refuse (char *why, size_t whylen, const char *what, const struct word *w,
        const char *rest)
{
  snprintf (why, whylen, "%s'%.*s'%s", what,
            (int) (w->n < SHOWN ? w->n : SHOWN), w->p, rest);
  return -EINVAL;
}

/* Ceph's entity types (EntityName::get_valid_types_as_str). */
static const char *const types[] = {
  "auth", "mon", "osd", "mds", "mgr", "client", NULL
};

/* The id of the name TYPE.ID in @v into *id, refused unless TYPE is
 * client. */
static int
name_id (const struct word *v, struct word *id, char *why, size_t whylen)
{
  const char *dot = memchr (v->p, '.', v->n);
  size_t tn, i;

  if (dot) {
    tn = (size_t) (dot - v->p);
    for (i = 0; types[i]; i++)
      if (strlen (types[i]) == tn && memcmp (v->p, types[i], tn) == 0)
        break;
    if (types[i] && strcmp (types[i], "client") == 0) {
      id->p = dot + 1;
      id->n = v->n - tn - 1;
      return 0;
    }
    if (types[i])
      return refuse (why, whylen, "the name ", v, " is not a client's: rbdx "
                     "connects as client.ID (give --id ID or --name "
                     "client.ID)");
  }
  return refuse (why, whylen, "the name ", v, " is not TYPE.ID (TYPE one "
                 "of auth, mon, osd, mds, mgr, client)");
}

int
rbdx_ceph_args_id (const char *args, char *id, size_t idlen,
                   char *why, size_t whylen)
{
  static const char *const skip_value[] = { "--conf", "-c", "--cluster", NULL };
  static const char *const id_opts[] = { "--id", "--user", NULL };
  static const char *const name_opts[] = { "--name", "-n", NULL };
  struct word w, v, found = { NULL, 0 };
  size_t pos = 0, i;
  bool name;
  int k, r;

  if (idlen)
    id[0] = '\0';
  if (whylen)
    why[0] = '\0';
  if (!args)
    return 0;
  while (next_word (args, &pos, &w)) {
    if (w.n == 2 && memcmp (w.p, "--", 2) == 0)
      break;  /* what follows is no option */
    if (option (&w, "-i", &v) >= 0)
      return refuse (why, whylen, "", &w, " sets the id of a Ceph daemon, "
                     "not of a client (give --id ID)");
    for (i = 0; skip_value[i]; i++)
      if (option (&w, skip_value[i], &v) == 0)
        break;
    if (skip_value[i]) {
      if (!next_word (args, &pos, &v))
        break;
      continue;
    }
    k = -1;
    name = false;
    for (i = 0; k < 0 && id_opts[i]; i++)
      k = option (&w, id_opts[i], &v);
    for (i = 0; k < 0 && name_opts[i]; i++) {
      k = option (&w, name_opts[i], &v);
      name = k >= 0;
    }
    if (k < 0)
      continue;  /* another option: librados reads it */
    if (k == 0) {
      if (!next_word (args, &pos, &v))
        return refuse (why, whylen, "", &w, " is the last word: it needs "
                       "a value");
      if (v.p[0] == '-') {
        snprintf (why, whylen, "'%.*s' is followed by another option, "
                  "'%.*s', not by a value", (int) w.n, w.p,
                  (int) (v.n < SHOWN ? v.n : SHOWN), v.p);
        return -EINVAL;
      }
    }
    if (name) {
      r = name_id (&v, &found, why, whylen);
      if (r < 0)
        return r;
    }
    else
      found = v;
  }
  if (!found.p)
    return 0;
  if (found.n >= idlen) {
    snprintf (why, whylen, "the id '%.*s...' is longer than %zu bytes",
              (int) (found.n < SHOWN ? found.n : SHOWN), found.p,
              idlen ? idlen - 1 : 0);
    return -ENAMETOOLONG;
  }
  memcpy (id, found.p, found.n);
  id[found.n] = '\0';
  return 1;
}

/* Whether word @p w starts with "--" and then @p name, '-' and '_' the
 * same (ceph_argparse compares them so); @p n: the bytes of @p w matched. */
static bool
long_option (const struct word *w, const char *name, size_t *n)
{
  size_t i = 2, k = 0;

  if (w->n < 2 || w->p[0] != '-' || w->p[1] != '-')
    return false;
  for (; name[k] && i < w->n; i++, k++) {
    char a = w->p[i] == '-' ? '_' : w->p[i];
    char b = name[k] == '-' ? '_' : name[k];
    if (a != b)
      return false;
  }
  if (name[k])
    return false;
  *n = i;
  return true;
}

int
rbdx_ceph_args_option (const char *args, const char *name, char *value,
                       size_t len)
{
  struct word w, v, found = { NULL, 0 };
  size_t pos = 0, n;

  if (len)
    value[0] = '\0';
  if (!args)
    return 0;
  while (next_word (args, &pos, &w)) {
    if (w.n == 2 && memcmp (w.p, "--", 2) == 0)
      break;  /* what follows is no option */
    if (!long_option (&w, name, &n))
      continue;
    if (n < w.n && w.p[n] == '=') {
      found.p = w.p + n + 1;
      found.n = w.n - n - 1;
    }
    else if (n == w.n && next_word (args, &pos, &v))
      found = v;
  }
  if (!found.p)
    return 0;
  if (found.n >= len)
    return -ENAMETOOLONG;
  memcpy (value, found.p, found.n);
  value[found.n] = '\0';
  return 1;
}
