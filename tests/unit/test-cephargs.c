/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the cephx id read from $CEPH_ARGS and of the check of
 * cephx ids (server/core/cephargs.c, include/rbdx/cephargs.h), and of
 * rbdx_options_complete taking the id from $CEPH_ARGS without id=
 * (server/core/options.c).  The Ceph rules the cases follow are in
 * cephargs.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/cephargs.h"
#include "rbdx/options.h"
#include "unit-check.h"

/* One case of rbdx_ceph_args_id: on @args it returns @r; with 1 @text
 * is the id found, with an error @why holds @text. */
struct args_case {
  const char *args;
  int r;
  const char *text;
};

#define FINDS(args, id) { args, 1, id }
#define NONE(args) { args, 0, "" }
#define REFUSES(args, word) { args, -EINVAL, word }

static const struct args_case cases[] = {
  /* Nothing, or other options only. */
  NONE (""),
  NONE ("     "),
  NONE ("--keyring=/etc/ceph/k --debug_ms=1 --mon_host 10.0.0.1"),

  /* Every spelling of the id and of a client's name. */
  FINDS ("--id nbd --keyring=nbd.keyring", "nbd"),
  FINDS ("--id=nbd", "nbd"),
  FINDS ("--user nbd", "nbd"),
  FINDS ("--user=nbd", "nbd"),
  FINDS ("--name client.nbd", "nbd"),
  FINDS ("--name=client.nbd", "nbd"),
  FINDS ("-n client.nbd", "nbd"),
  FINDS ("-n=client.nbd", "nbd"),
  /* Only the first '.' ends the type. */
  FINDS ("--name client.a.b", "a.b"),
  /* --id takes the id as it is: "client." then is part of it (the
   * caller's rbdx_cephx_id_check refuses it, as it refuses id=). */
  FINDS ("--id client.x", "client.x"),
  /* An empty id is found; rbdx_cephx_id_check refuses it. */
  FINDS ("--name client.", ""),
  FINDS ("--id=", ""),

  /* Split at spaces only, runs of them making no empty words; a tab is
   * part of a word ("--id\tnbd" is no option). */
  FINDS ("   --id    nbd   ", "nbd"),
  FINDS ("--keyring=k  --id  nbd", "nbd"),
  NONE ("--id\tnbd"),
  NONE ("--keyring=k\t--id=x"),

  /* The last one wins, whatever its spelling. */
  FINDS ("--id a --user b", "b"),
  FINDS ("--name client.a --id b", "b"),
  FINDS ("--id a -n client.b", "b"),
  FINDS ("--user=a --id=b --name=client.c", "c"),

  /* After "--" nothing is an option. */
  FINDS ("--id a -- --id b", "a"),
  NONE ("-- --id b"),
  NONE ("-- -i x --name osd.0 --id"),

  /* Words that only look like the options. */
  NONE ("--identity x --idx=y --users=z -nx --name_x=y --id-x q"),
  NONE ("---id x"),
  NONE ("id=x user=y"),

  /* The value of --conf, -c and --cluster as the next word is theirs. */
  NONE ("--conf --id"),
  NONE ("-c --id x"),
  FINDS ("-c /etc/ceph/x.conf --id nbd", "nbd"),
  FINDS ("--cluster ceph --id nbd", "nbd"),
  FINDS ("--id nbd --cluster", "nbd"),
  FINDS ("--conf=/x --id nbd", "nbd"),

  /* No value, or the value forgotten (the next word another option). */
  REFUSES ("--id", "'--id' is the last word"),
  REFUSES ("--keyring=k --user", "'--user'"),
  REFUSES ("--id nbd -n", "'-n'"),
  REFUSES ("--name   ", "'--name'"),
  REFUSES ("--id --keyring=nbd.keyring", "'--keyring=nbd.keyring'"),
  REFUSES ("--name -n", "followed by another option"),

  /* -i is a daemon's id: Ceph ignores it for a client, the rbd CLI
   * refuses it; rbdx says to use --id.  Only as a word of its own. */
  REFUSES ("-i nbd", "give --id ID"),
  REFUSES ("--keyring=k -i=nbd", "'-i=nbd'"),
  FINDS ("-inbd --id x", "x"),

  /* Names of other types, and no names. */
  REFUSES ("--name osd.0", "'osd.0' is not a client's"),
  REFUSES ("-n mon.a", "mon.a"),
  REFUSES ("--name=mgr.x", "not a client's"),
  REFUSES ("--name foo", "'foo' is not TYPE.ID"),
  REFUSES ("--name bogus.x", "not TYPE.ID"),
  REFUSES ("--name .x", "not TYPE.ID"),
  REFUSES ("--name clients.x", "not TYPE.ID"),
  REFUSES ("--name=", "not TYPE.ID"),
};

/* rbdx_ceph_args_id on @args: @r, and @text (see struct args_case). */
static void
check (const char *args, int r, const char *text)
{
  char id[RBDX_CEPHX_ID_MAX + 1], why[256];
  int got;

  memset (id, 'X', sizeof id);
  memset (why, 'X', sizeof why);
  got = rbdx_ceph_args_id (args, id, sizeof id, why, sizeof why);
  if (got != r)
    fail_msg ("'%s': returned %d, not %d (%s)", args ? args : "(null)",
              got, r, got < 0 ? why : id);
  assert_non_null (memchr (why, '\0', sizeof why));
  if (r >= 0) {
    assert_string_equal (id, text);
    assert_string_equal (why, "");
  }
  else {
    assert_string_equal (id, "");
    assert_contains (why, text);
  }
}

static void
test_cases (void **state)
{
  size_t i;

  check (NULL, 0, "");
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check (cases[i].args, cases[i].r, cases[i].text);
}

/* Long input: bounded by the caller's buffer, never cut short. */
static void
test_lengths (void **state)
{
  char args[RBDX_CEPHX_ID_MAX + 16], id[8], why[256], *big;
  size_t n = 1 << 20, i;

  memcpy (args, "--id ", 5);
  memset (args + 5, 'a', RBDX_CEPHX_ID_MAX);
  args[5 + RBDX_CEPHX_ID_MAX] = '\0';
  check (args, 1, args + 5);
  memcpy (args + 5 + RBDX_CEPHX_ID_MAX, "a", 2);
  check (args, -ENAMETOOLONG, "longer than 248 bytes");

  /* A buffer smaller than the id. */
  assert_int_equal (rbdx_ceph_args_id ("--id nbdx", id, 4, why, sizeof why),
                    -ENAMETOOLONG);
  assert_string_equal (id, "");
  assert_int_equal (rbdx_ceph_args_id ("--id nbd", id, 4, why, sizeof why), 1);
  assert_string_equal (id, "nbd");
  /* No buffers at all. */
  assert_int_equal (rbdx_ceph_args_id ("--id nbd", NULL, 0, NULL, 0),
                    -ENAMETOOLONG);
  assert_int_equal (rbdx_ceph_args_id ("--id", id, sizeof id, NULL, 0),
                    -EINVAL);
  assert_int_equal (rbdx_ceph_args_id ("--id", id, sizeof id, why, 1),
                    -EINVAL);
  assert_string_equal (why, "");

  /* A message shows at most 64 bytes of a long word. */
  big = malloc (n + 64);
  assert_non_null (big);
  memcpy (big, "--name ", 7);
  memset (big + 7, 'q', n);
  big[7 + n] = '\0';
  assert_int_equal (rbdx_ceph_args_id (big, id, sizeof id, why, sizeof why),
                    -EINVAL);
  assert_true (strlen (why) < 64 + 100);

  /* A megabyte of words and blanks, the id at the end. */
  for (i = 0; i + 2 < n; i += 2)
    memcpy (big + i, i % 3 ? "x " : "  ", 2);
  strcpy (big + i, "--id nbd");
  check (big, 1, "nbd");
  free (big);
}

static void
test_id_check (void **state)
{
  char why[128], id[RBDX_CEPHX_ID_MAX + 2];

  assert_int_equal (rbdx_cephx_id_check ("nbd", why, sizeof why), 0);
  assert_int_equal (rbdx_cephx_id_check ("csi-rbd-node", why, sizeof why), 0);
  assert_int_equal (rbdx_cephx_id_check ("a.b_c-d@e", why, sizeof why), 0);
  assert_int_equal (rbdx_cephx_id_check ("\xc3\xa9t\xc3\xa9", why, sizeof why),
                    0);
  assert_int_equal (rbdx_cephx_id_check ("", why, sizeof why), -EINVAL);
  assert_contains (why, "empty");
  assert_int_equal (rbdx_cephx_id_check ("client.x", why, sizeof why),
                    -EINVAL);
  assert_contains (why, "'client.' prefix");
  assert_int_equal (rbdx_cephx_id_check ("a b", why, sizeof why), -EINVAL);
  assert_int_equal (rbdx_cephx_id_check ("a\nFORGED", why, sizeof why),
                    -EINVAL);
  assert_int_equal (rbdx_cephx_id_check ("a\tb", why, sizeof why), -EINVAL);
  assert_int_equal (rbdx_cephx_id_check ("a\x7f", why, sizeof why), -EINVAL);
  assert_int_equal (rbdx_cephx_id_check ("../../x", why, sizeof why), -EINVAL);
  assert_contains (why, "'/'");
  memset (id, 'i', RBDX_CEPHX_ID_MAX);
  id[RBDX_CEPHX_ID_MAX] = '\0';
  assert_int_equal (rbdx_cephx_id_check (id, why, sizeof why), 0);
  strcat (id, "i");
  assert_int_equal (rbdx_cephx_id_check (id, why, sizeof why), -ENAMETOOLONG);
  assert_int_equal (rbdx_cephx_id_check ("", NULL, 0), -EINVAL);
}

/* rbdx_options_complete with image=rbd/img, id= @id unless NULL, and
 * $CEPH_ARGS @env (NULL: unset): its return, the message in @err. */
static int
complete (struct rbdx_options *o, const char *id, const char *env,
          char *err, size_t errlen)
{
  memset (o, 0, sizeof *o);
  if (env)
    assert_int_equal (setenv ("CEPH_ARGS", env, 1), 0);
  else
    assert_int_equal (unsetenv ("CEPH_ARGS"), 0);
  assert_int_equal (rbdx_options_set (o, "image", "rbd/img", err, errlen), 0);
  if (id)
    assert_int_equal (rbdx_options_set (o, "id", id, err, errlen), 0);
  return rbdx_options_complete (o, err, errlen);
}

static void
test_options_take_env_id (void **state)
{
  struct rbdx_options o;
  char err[512];

  assert_int_equal (complete (&o, NULL, "--id nbd --keyring=nbd.keyring",
                              err, sizeof err), 0);
  assert_string_equal (rbdx_options_id (&o), "nbd");
  assert_true (o.id_from_env);
  rbdx_options_free (&o);

  assert_int_equal (complete (&o, NULL, "-n client.csi", err, sizeof err), 0);
  assert_string_equal (rbdx_options_id (&o), "csi");
  rbdx_options_free (&o);

  /* Without an id there, Ceph's default. */
  assert_int_equal (complete (&o, NULL, "--keyring=k", err, sizeof err), 0);
  assert_string_equal (rbdx_options_id (&o), "admin");
  assert_false (o.id_from_env);
  rbdx_options_free (&o);
  assert_int_equal (complete (&o, NULL, NULL, err, sizeof err), 0);
  assert_string_equal (rbdx_options_id (&o), "admin");
  rbdx_options_free (&o);
}

/* id= wins, and $CEPH_ARGS is then not read at all. */
static void
test_options_id_wins (void **state)
{
  struct rbdx_options o;
  char err[512];

  assert_int_equal (complete (&o, "alice", "--id nbd", err, sizeof err), 0);
  assert_string_equal (rbdx_options_id (&o), "alice");
  assert_false (o.id_from_env);
  rbdx_options_free (&o);
  assert_int_equal (complete (&o, "alice", "--name osd.0 --id", err,
                              sizeof err), 0);
  assert_string_equal (rbdx_options_id (&o), "alice");
  rbdx_options_free (&o);
}

/* A $CEPH_ARGS id refused as id= would be, or a refused $CEPH_ARGS:
 * the message names $CEPH_ARGS and the word. */
static void
test_options_bad_env (void **state)
{
  static const struct {
    const char *env, *word;
  } bad[] = {
    { "--id client.nbd", "'client.' prefix" },
    { "--id=", "empty" },
    { "--name client.", "empty" },
    { "--id ../../x", "'../../x'" },
    { "--id", "'--id' is the last word" },
    { "--name osd.0", "osd.0" },
    { "-i nbd", "-i" },
  };
  struct rbdx_options o;
  char err[512];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset (err, 'X', sizeof err);
    assert_int_equal (complete (&o, NULL, bad[i].env, err, sizeof err),
                      -EINVAL);
    assert_contains (err, "$CEPH_ARGS: ");
    assert_contains (err, bad[i].word);
    assert_null (o.id);
    rbdx_options_free (&o);
  }
  /* Longer than any id: refused, not cut short. */
  {
    char env[RBDX_CEPHX_ID_MAX + 16];

    memcpy (env, "--id ", 5);
    memset (env + 5, 'z', RBDX_CEPHX_ID_MAX + 1);
    env[6 + RBDX_CEPHX_ID_MAX] = '\0';
    assert_int_equal (complete (&o, NULL, env, err, sizeof err), -EINVAL);
    assert_contains (err, "longer than 248 bytes");
    rbdx_options_free (&o);
  }
}

/* id= itself: the same check. */
static void
test_options_bad_id_param (void **state)
{
  struct rbdx_options o = { 0 };
  char err[512], id[RBDX_CEPHX_ID_MAX + 2];

  assert_int_equal (rbdx_options_set (&o, "id", "a b", err, sizeof err),
                    -EINVAL);
  assert_contains (err, "id='a b'");
  /* (an empty value is refused for every key) */
  assert_int_equal (rbdx_options_set (&o, "id", "", err, sizeof err), -EINVAL);
  assert_contains (err, "id=");
  memset (id, 'i', RBDX_CEPHX_ID_MAX + 1);
  id[RBDX_CEPHX_ID_MAX + 1] = '\0';
  assert_int_equal (rbdx_options_set (&o, "id", id, err, sizeof err), -EINVAL);
  assert_contains (err, "longer than 248 bytes");
  assert_null (o.id);
  id[RBDX_CEPHX_ID_MAX] = '\0';
  assert_int_equal (rbdx_options_set (&o, "id", id, err, sizeof err), 0);
  rbdx_options_free (&o);
}

/* rbdx_ceph_args_option: "--NAME VALUE" and "--NAME=VALUE", '-' and
 * '_' the same, the last one winning, nothing after "--". */
static void
test_option_value (void **state)
{
  static const struct { const char *args, *want; int r; } vals[] = {
    { NULL, "", 0 },
    { "", "", 0 },
    { "--log-file=/a", "/a", 1 },
    { "--log_file /b", "/b", 1 },
    { "--id x --log-file /a --log_file=/c", "/c", 1 },
    { "--log-file", "", 0 },
    { "--log-files=/a", "", 0 },
    { "--log-f=/a", "", 0 },
    { "-- --log-file=/a", "", 0 },
    { "--log-file=/a -- --log-file=/b", "/a", 1 },
    { "  --log-file   /d  ", "/d", 1 },
  };
  char v[16];

  (void) state;
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    int r = rbdx_ceph_args_option (vals[i].args, "log_file", v, sizeof v);
    if (r != vals[i].r || strcmp (v, vals[i].want) != 0)
      fail_msg ("'%s': %d '%s', expected %d '%s'", vals[i].args ? vals[i].args : "(null)",
                r, v, vals[i].r, vals[i].want);
  }
  assert_int_equal (rbdx_ceph_args_option ("--log-file=/0123456789abcdef",
                                           "log_file", v, sizeof v),
                    -ENAMETOOLONG);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cases),
    cmocka_unit_test (test_lengths),
    cmocka_unit_test (test_id_check),
    cmocka_unit_test (test_options_take_env_id),
    cmocka_unit_test (test_options_id_wins),
    cmocka_unit_test (test_options_bad_env),
    cmocka_unit_test (test_options_bad_id_param),
    cmocka_unit_test (test_option_value),
  };

  return cmocka_run_group_tests (tests, NULL, NULL);
}
