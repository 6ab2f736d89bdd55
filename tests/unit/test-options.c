/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: nbdkit parameter parsing (include/rbdx/options.h).
 *
 * Proves that rbdx_options_set stores every key (image, conf, id,
 * keyring, mon_host, cluster, completion, ceph.NAME in order, a
 * repeated one refused: more in test-options-ceph.c), that every bad parameter is rejected with -EINVAL and
 * a message naming the key and value (checked on its key parts only,
 * not whole sentences), that a rejected parameter leaves the options
 * unchanged, and that rbdx_options_complete and rbdx_options_id apply
 * the final checks and defaults.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rbdx/options.h"
#include "unit-check.h"
#include "unit-options.h"


/* ---- accepted parameters ---- */

static void
test_defaults (void **state)
{
  struct rbdx_options *o = *state;

  assert_null (o->spec.image);
  assert_null (o->conf);
  assert_null (o->id);
  assert_null (o->keyring);
  assert_null (o->mon_host);
  assert_null (o->cluster);
  assert_int_equal (o->nceph, 0);
  assert_int_equal (o->completion, RBDX_COMPLETION_AUTO);
  assert_false (o->completion_set);
  assert_string_equal (rbdx_options_id (o), "admin");
}

static void
test_image (void **state)
{
  struct rbdx_options *o = *state;

  set_ok (o, "image", "pool/ns/img@snap");
  assert_string_equal (o->spec.pool, "pool");
  assert_string_equal (o->spec.ns, "ns");
  assert_string_equal (o->spec.image, "img");
  assert_string_equal (o->spec.snap, "snap");
}

static void
test_image_default_pool (void **state)
{
  struct rbdx_options *o = *state;

  set_ok (o, "image", "img");
  assert_string_equal (o->spec.pool, RBDX_DEFAULT_POOL);
  assert_null (o->spec.ns);
  assert_string_equal (o->spec.image, "img");
  assert_null (o->spec.snap);
}

static void
test_string_keys (void **state)
{
  struct rbdx_options *o = *state;

  set_ok (o, "conf", "/etc/ceph/ceph.conf");
  set_ok (o, "id", "foo");
  set_ok (o, "keyring", "/etc/ceph/ceph.client.foo.keyring");
  set_ok (o, "mon_host", "[v2:10.0.0.1:3300],10.0.0.2:6789");
  set_ok (o, "cluster", "backup");
  assert_string_equal (o->conf, "/etc/ceph/ceph.conf");
  assert_string_equal (o->id, "foo");
  assert_string_equal (rbdx_options_id (o), "foo");
  assert_string_equal (o->keyring, "/etc/ceph/ceph.client.foo.keyring");
  assert_string_equal (o->mon_host, "[v2:10.0.0.1:3300],10.0.0.2:6789");
  assert_string_equal (o->cluster, "backup");
  /* Nothing else moved. */
  assert_null (o->spec.image);
  assert_int_equal (o->nceph, 0);
  assert_false (o->completion_set);
}

static void
test_completion (void **state)
{
  static const struct {
    const char *value;
    enum rbdx_completion mode;
  } cases[] = {
    { "callback", RBDX_COMPLETION_CALLBACK },
    { "auto", RBDX_COMPLETION_AUTO },
    { "io_uring", RBDX_COMPLETION_IO_URING },
    { "poll", RBDX_COMPLETION_POLL },
    { "eventfd", RBDX_COMPLETION_POLL },   /* the old name of poll */
  };
  struct rbdx_options o;
  size_t i;

  (void) state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memset (&o, 0, sizeof o);
    /* Start from a different mode so "auto" is really stored. */
    o.completion = RBDX_COMPLETION_IO_URING;
    set_ok (&o, "completion", cases[i].value);
    assert_int_equal (o.completion, cases[i].mode);
    assert_true (o.completion_set);
    rbdx_options_free (&o);
  }
}

/* size_file= wants an absolute path, once; advertise_size= two keywords. */
static void
test_size_file_advertise (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  assert_int_equal (o->advertise_size, RBDX_ADVERTISE_IMAGE);
  assert_null (o->size_file);
  set_bad (o, "size_file", "run/size", err);
  assert_non_null (strstr (err, "absolute"));
  set_ok (o, "size_file", "/run/rbdx/sup-1/size");
  assert_string_equal (o->size_file, "/run/rbdx/sup-1/size");
  set_bad (o, "size_file", "/other", err);
  assert_non_null (strstr (err, "twice"));
  set_bad (o, "advertise_size", "huge", err);
  assert_non_null (strstr (err, "image or max"));
  set_ok (o, "advertise_size", "max");
  assert_int_equal (o->advertise_size, RBDX_ADVERTISE_MAX);
  set_bad (o, "advertise_size", "image", err);
  /* The largest multiple of 4096 an int64_t holds. */
  assert_true (RBDX_ADVERTISE_MAX_BYTES % 4096 == 0);
  assert_true (RBDX_ADVERTISE_MAX_BYTES > INT64_MAX - 4096);
}

/* metrics_interval= says how often metrics_file= is written: alone it is
 * refused, as quiesce_* without quiesce=true is, not ignored. */
static void
test_metrics_interval_needs_file (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "image", "rbd/img");
  set_ok (o, "metrics_interval", "5");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "metrics_interval= needs metrics_file=");
  set_ok (o, "metrics_file", "/tmp/rbdx-unit-metrics.prom");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
}

/* encryption_format= and encryption_passphrase_file=: repeatable up to
 * RBDX_ENCRYPTION_MAX times, the n-th with the n-th (the image's own
 * first); luks (detect) is a format; the files are read at completion,
 * a final newline kept aside. */
static void
test_encryption (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN], dir[] = "/tmp/rbdx-test-enc.XXXXXX", child[64], parent[64];
  FILE *f;
  int i;

  assert_non_null (mkdtemp (dir));
  snprintf (child, sizeof child, "%s/child", dir);
  snprintf (parent, sizeof parent, "%s/parent", dir);
  f = fopen (child, "w");
  assert_non_null (f);
  fputs ("child secret\n", f);
  fclose (f);
  f = fopen (parent, "w");
  assert_non_null (f);
  fputs ("parent", f);
  fclose (f);

  set_ok (o, "image", "rbd/img");
  set_bad (o, "encryption_format", "luks3", err);
  assert_contains (err, "luks");
  set_ok (o, "encryption_format", "luks");
  set_ok (o, "encryption_format", "luks1");
  set_ok (o, "encryption_passphrase_file", child);
  assert_int_equal (o->nenc, 2);
  assert_int_equal (o->enc[0].format, RBDX_ENCRYPTION_LUKS);
  assert_int_equal (o->enc[1].format, RBDX_ENCRYPTION_LUKS1);
  /* Two formats, one file: refused, naming both counts. */
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "2 encryption_format= and 1 encryption_passphrase_file= given");
  set_ok (o, "encryption_passphrase_file", parent);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  assert_int_equal (o->enc[0].passphrase_len, strlen ("child secret"));
  assert_true (o->enc[0].passphrase_nl);
  assert_memory_equal (o->enc[0].passphrase, "child secret\n", 13);
  assert_int_equal (o->enc[1].passphrase_len, strlen ("parent"));
  assert_false (o->enc[1].passphrase_nl);
  for (i = 2; i < RBDX_ENCRYPTION_MAX; i++) {
    set_ok (o, "encryption_format", "luks2");
    set_ok (o, "encryption_passphrase_file", parent);
  }
  set_bad (o, "encryption_format", "luks2", err);
  assert_contains (err, "more than 4 times");
  set_bad (o, "encryption_passphrase_file", parent, err);
  assert_contains (err, "encryption_passphrase_file= given more than 4");
  unlink (child);
  unlink (parent);
  rmdir (dir);
}

/* max_connections= and connections_per_client=: counts within their
 * ranges, given once. */
static void
test_connection_limits (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  assert_int_equal (o->max_connections, 0);
  assert_int_equal (o->connections_per_client, 0);
  set_bad (o, "max_connections", "0", err);
  assert_non_null (strstr (err, "max_connections='0'"));
  set_bad (o, "max_connections", "many", err);
  set_bad (o, "max_connections", "65537", err);
  set_ok (o, "max_connections", "128");
  assert_int_equal (o->max_connections, 128);
  set_bad (o, "max_connections", "64", err);
  assert_non_null (strstr (err, "twice"));
  set_bad (o, "connections_per_client", "0", err);
  assert_non_null (strstr (err, "connections_per_client='0'"));
  set_bad (o, "connections_per_client", "1025", err);
  set_ok (o, "connections_per_client", "4");
  assert_int_equal (o->connections_per_client, 4);
  set_bad (o, "connections_per_client", "4", err);
  assert_non_null (strstr (err, "twice"));
}

/* ceph_context=: auto (the default), shared or connection, given once. */
static void
test_ceph_context (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  assert_int_equal (o->ceph_context, RBDX_CEPH_CONTEXT_AUTO);
  set_bad (o, "ceph_context", "process", err);
  assert_non_null (strstr (err, "ceph_context='process': expected auto, "
                           "shared or connection"));
  set_ok (o, "ceph_context", "connection");
  assert_int_equal (o->ceph_context, RBDX_CEPH_CONTEXT_CONNECTION);
  set_bad (o, "ceph_context", "shared", err);
  assert_non_null (strstr (err, "twice"));
}

static void
test_ceph_options (void **state)
{
  struct rbdx_options *o = *state;

  set_ok (o, "ceph.rados_osd_op_timeout", "30");
  set_ok (o, "ceph.rbd_cache", "false");
  set_ok (o, "ceph.log_to_stderr", "true");
  /* A repeated name is refused (test-options-ceph.c), the first kept. */
  assert_int_equal (rbdx_options_set (o, "ceph.rbd_cache", "true", NULL, 0),
                    -EINVAL);

  assert_int_equal (o->nceph, 3);
  assert_string_equal (o->ceph[0].name, "rados_osd_op_timeout");
  assert_string_equal (o->ceph[0].value, "30");
  assert_string_equal (o->ceph[1].name, "rbd_cache");
  assert_string_equal (o->ceph[1].value, "false");
  assert_string_equal (o->ceph[2].name, "log_to_stderr");
  assert_string_equal (o->ceph[2].value, "true");

  /* Values may hold anything, including spaces and '='. */
  set_ok (o, "ceph.debug_rbd", "20/20 x=y");
  assert_int_equal (o->nceph, 4);
  assert_string_equal (o->ceph[3].name, "debug_rbd");
  assert_string_equal (o->ceph[3].value, "20/20 x=y");
}

static void
test_all_together (void **state)
{
  struct rbdx_options *o = *state;

  set_ok (o, "ceph.rbd_cache", "false");
  set_ok (o, "image", "pool/img");
  set_ok (o, "completion", "poll");
  set_ok (o, "cluster", "ceph");
  set_ok (o, "mon_host", "10.0.0.1");
  set_ok (o, "id", "admin");
  assert_string_equal (o->spec.image, "img");
  assert_int_equal (o->completion, RBDX_COMPLETION_POLL);
  assert_int_equal (o->nceph, 1);
  assert_string_equal (rbdx_options_id (o), "admin");
}

/* ---- rejected parameters ---- */

static void
test_unknown_key (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_bad (o, "bogus", "1", err);
  assert_contains (err, "bogus");
  set_bad (o, "rbd_cache", "true", err);   /* a Ceph option without ceph. */
  assert_contains (err, "rbd_cache");
  assert_contains (err, "ceph.");
  set_bad (o, "Image", "img", err);        /* keys are case-sensitive */
  assert_contains (err, "Image");
  set_bad (o, "ceph", "x", err);           /* no dot: not the prefix */
  assert_contains (err, "ceph");
  assert_null (o->spec.image);
  assert_int_equal (o->nceph, 0);
}

static void
test_empty_value (void **state)
{
  static const char *const keys[] = {
    "image", "conf", "id", "keyring", "mon_host", "cluster", "completion",
    "ceph.rbd_cache",
  };
  struct rbdx_options *o = *state;
  char err[ERRLEN];
  size_t i;

  for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    set_bad (o, keys[i], "", err);
    assert_contains (err, keys[i]);
    set_bad (o, keys[i], NULL, err);
    assert_contains (err, keys[i]);
  }
  assert_null (o->spec.image);
  assert_null (o->conf);
  assert_null (o->id);
  assert_null (o->keyring);
  assert_null (o->mon_host);
  assert_null (o->cluster);
  assert_false (o->completion_set);
  assert_int_equal (o->nceph, 0);
}

static void
test_repeated_keys (void **state)
{
  static const struct {
    const char *key, *first, *second;
  } cases[] = {
    { "image", "pool/ns/one@s1", "pool/two" },
    { "conf", "/a.conf", "/b.conf" },
    { "id", "alice", "bob" },
    { "keyring", "/a.keyring", "/b.keyring" },
    { "mon_host", "10.0.0.1", "10.0.0.2" },
    { "cluster", "alpha", "beta" },
  };
  struct rbdx_options o;
  char err[ERRLEN];
  size_t i;

  (void) state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memset (&o, 0, sizeof o);
    set_ok (&o, cases[i].key, cases[i].first);
    set_bad (&o, cases[i].key, cases[i].second, err);
    assert_contains (err, cases[i].key);
    assert_contains (err, "twice");
    assert_contains (err, cases[i].first);
    assert_contains (err, cases[i].second);
    /* The same value again is still a repeat. */
    set_bad (&o, cases[i].key, cases[i].first, err);
    assert_contains (err, cases[i].key);
    rbdx_options_free (&o);
  }

  /* The first value is kept. */
  memset (&o, 0, sizeof o);
  set_ok (&o, "image", "pool/one");
  set_bad (&o, "image", "pool/two", err);
  assert_string_equal (o.spec.image, "one");
  set_ok (&o, "conf", "/a.conf");
  set_bad (&o, "conf", "/b.conf", err);
  assert_string_equal (o.conf, "/a.conf");
  rbdx_options_free (&o);

  /* completion too, even with the same value. */
  memset (&o, 0, sizeof o);
  set_ok (&o, "completion", "poll");
  set_bad (&o, "completion", "io_uring", err);
  assert_contains (err, "completion");
  set_bad (&o, "completion", "poll", err);
  assert_contains (err, "completion");
  /* The old name is the same parameter, not a second one. */
  set_bad (&o, "completion", "eventfd", err);
  assert_contains (err, "given twice");
  assert_int_equal (o.completion, RBDX_COMPLETION_POLL);
  rbdx_options_free (&o);
}

static void
test_id_with_client_prefix (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_bad (o, "id", "client.foo", err);
  assert_contains (err, "client.foo");
  assert_contains (err, "id=foo");
  assert_null (o->id);
  assert_string_equal (rbdx_options_id (o), "admin");
  /* After the hint, the right form works. */
  set_ok (o, "id", "foo");
  assert_string_equal (rbdx_options_id (o), "foo");
}

static void
test_bad_completion (void **state)
{
  static const char *const values[] = {
    "uring", "AUTO", "io-uring", "eventfd ", "POLL", "poll(2)", "epoll",
    "CALLBACK", "callbacks",
  };
  struct rbdx_options *o = *state;
  char err[ERRLEN];
  size_t i;

  for (i = 0; i < sizeof values / sizeof values[0]; i++) {
    set_bad (o, "completion", values[i], err);
    assert_contains (err, "completion");
    assert_contains (err, values[i]);
    assert_false (o->completion_set);
    assert_int_equal (o->completion, RBDX_COMPLETION_AUTO);
  }
  /* The message offers the keywords, not the old alias. */
  set_bad (o, "completion", "bogus", err);
  assert_contains (err, "expected callback, auto, io_uring or poll");
  assert_null (strstr (err, "eventfd"));
  /* A rejected value does not count as given. */
  set_ok (o, "completion", "io_uring");
}

static void
test_bad_ceph_name (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_bad (o, "ceph.", "1", err);
  assert_contains (err, "ceph.");
  set_bad (o, "ceph.rbd.cache", "1", err);
  assert_contains (err, "rbd.cache");
  set_bad (o, "ceph.rbd cache", "1", err);
  assert_contains (err, "rbd cache");
  set_bad (o, "ceph..", "1", err);
  assert_int_equal (o->nceph, 0);
  assert_null (o->ceph);
}

/* The cluster name is a path component in librados (/etc/ceph/$cluster.conf):
 * only [A-Za-z0-9_-]+, for cluster= and ceph.cluster= alike. */
static void
test_bad_cluster (void **state)
{
  static const char *const bad[] = {
    "../../tmp/x", "..", ".", "a/b", "/etc/x", "a.b", "a b", "c\xc3\xa9", "x\n",
  };
  struct rbdx_options *o = *state;
  char err[ERRLEN];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set_bad (o, "cluster", bad[i], err);
    assert_contains (err, "cluster=");
    assert_contains (err, bad[i]);
    assert_null (o->cluster);
    set_bad (o, "ceph.cluster", bad[i], err);
    assert_contains (err, "ceph.cluster=");
    assert_contains (err, bad[i]);
    assert_int_equal (o->nceph, 0);
  }
  assert_false (rbdx_cluster_name_valid (""));
  assert_false (rbdx_cluster_name_valid (NULL));
  assert_true (rbdx_cluster_name_valid ("Backup_2-x"));
  set_ok (o, "ceph.cluster", "site-b");
  set_ok (o, "cluster", "Backup_2-x");
  assert_string_equal (o->cluster, "Backup_2-x");
}

static void
test_malformed_image (void **state)
{
  static const char *const specs[] = {
    "/img", "pool//img", "pool/", "a/b/c/d", "img@", "@snap", "img@a@b",
    "pool@x/img", "im\tg", "..", "../img", "p/./img", "p/ns/..", "p/i@..",
  };
  struct rbdx_options *o = *state;
  struct rbdx_spec s = { 0 };
  char err[ERRLEN];
  const char *why;
  size_t i;

  for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    why = NULL;
    assert_int_equal (rbdx_spec_parse (specs[i], NULL, &s, &why), -EINVAL);
    assert_non_null (why);
    set_bad (o, "image", specs[i], err);
    assert_contains (err, "image");
    assert_contains (err, specs[i]);
    assert_contains (err, why);
    assert_null (o->spec.image);
  }
  /* A rejected spec does not count as given. */
  set_ok (o, "image", "pool/img");
}

static void
test_error_buffer (void **state)
{
  struct rbdx_options *o = *state;
  char err[8];

  /* A short buffer is truncated but NUL-terminated. */
  memset (err, 'X', sizeof err);
  assert_int_equal (rbdx_options_set (o, "bogus-key-with-long-name", "1",
                                      err, sizeof err), -EINVAL);
  assert_int_equal (strlen (err), sizeof err - 1);
  /* No buffer at all is allowed with errlen 0. */
  assert_int_equal (rbdx_options_set (o, "bogus", "1", NULL, 0), -EINVAL);
  assert_int_equal (rbdx_options_set (o, "image", "img", NULL, 0), 0);
  assert_int_equal (rbdx_options_set (o, "image", "img", NULL, 0), -EINVAL);
}

/* ---- rbdx_options_complete ---- */

/* A readable temporary file; its path is written to path. */
static void
make_temp_file (char path[64])
{
  int fd;

  strcpy (path, "/tmp/rbdx-test-options-XXXXXX");
  fd = mkstemp (path);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "[global]\n", 9), 9);
  close (fd);
}

/* A path that names no file: a temporary file, removed. */
static void
make_missing_path (char path[64])
{
  make_temp_file (path);
  assert_int_equal (unlink (path), 0);
}

static void
test_complete_no_image (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  memset (err, 'X', sizeof err);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "image");

  /* Other parameters do not make up for the image. */
  set_ok (o, "conf", "/etc/hosts");
  set_ok (o, "id", "foo");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "image");
  assert_int_equal (rbdx_options_complete (o, NULL, 0), -EINVAL);
}

static void
test_complete_image_only (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "image", "img");
  memset (err, 'X', sizeof err);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  assert_string_equal (err, "");
}

static void
test_complete_missing_files (void **state)
{
  static const char *const keys[] = { "conf", "keyring" };
  struct rbdx_options o;
  char missing[64], err[ERRLEN];
  size_t i;

  (void) state;
  make_missing_path (missing);
  for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    memset (&o, 0, sizeof o);
    set_ok (&o, "image", "img");
    set_ok (&o, keys[i], missing);
    assert_int_equal (rbdx_options_complete (&o, err, sizeof err), -EINVAL);
    assert_contains (err, keys[i]);
    assert_contains (err, missing);
    rbdx_options_free (&o);
  }
}

static void
test_complete_readable_files (void **state)
{
  struct rbdx_options *o = *state;
  char conf[64], keyring[64], missing[64], err[ERRLEN];

  make_temp_file (conf);
  make_temp_file (keyring);
  set_ok (o, "image", "pool/img");
  set_ok (o, "conf", conf);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  set_ok (o, "keyring", keyring);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  assert_string_equal (err, "");

  /* A good conf does not hide a missing keyring. */
  free (o->keyring);
  make_missing_path (missing);
  o->keyring = strdup (missing);
  assert_non_null (o->keyring);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "keyring");
  assert_contains (err, missing);

  unlink (conf);
  unlink (keyring);
}

/* ---- rbdx_options_free ---- */

static void
test_options_free (void **state)
{
  struct rbdx_options o = { 0 };

  (void) state;
  rbdx_options_free (&o);          /* safe on a zeroed struct */
  set_ok (&o, "image", "pool/ns/img@snap");
  set_ok (&o, "conf", "/c");
  set_ok (&o, "ceph.a", "1");
  set_ok (&o, "ceph.b", "2");
  set_ok (&o, "completion", "poll");
  rbdx_options_free (&o);
  assert_null (o.spec.image);
  assert_null (o.conf);
  assert_null (o.ceph);
  assert_int_equal (o.nceph, 0);
  assert_false (o.completion_set);
  /* The same struct takes parameters again after a free. */
  set_ok (&o, "image", "img");
  set_ok (&o, "conf", "/c");
  rbdx_options_free (&o);
}

/* ---- pool mode, write policy, exclusive ---- */

static void
test_pool_and_writers (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "pool", "p1/ns1");
  assert_string_equal (o->pool, "p1");
  assert_string_equal (o->pool_ns, "ns1");
  set_ok (o, "writers", "per-connection");
  assert_int_equal (o->writers, RBDX_WRITERS_PER_CONNECTION);
  set_ok (o, "exclusive", "off");
  assert_false (o->exclusive);
  /* A bare image name is looked up in pool=, namespace included. */
  set_ok (o, "image", "img@s");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  assert_string_equal (o->spec.pool, "p1");
  assert_string_equal (o->spec.ns, "ns1");
  assert_string_equal (o->spec.image, "img");
  assert_string_equal (o->spec.snap, "s");
}

static void
test_pool_only (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "pool", "p1");
  assert_null (o->pool_ns);
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  assert_null (o->spec.image);
}

static void
test_bad_pool (void **state)
{
  static const char *const bad[] = { "a@b", "/ns", "p/", "p/n/x", "p/n@s",
                                     ".", "..", "./ns", "p/..", "p/." };
  struct rbdx_options *o = *state;
  char err[ERRLEN];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set_bad (o, "pool", bad[i], err);
    assert_contains (err, bad[i]);
    assert_null (o->pool);
  }
  set_ok (o, "pool", "p");
  set_bad (o, "pool", "q", err);
  assert_contains (err, "twice");
}

static void
test_image_outside_pool (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "pool", "p1");
  set_ok (o, "image", "p2/img");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "p2/img");
  assert_contains (err, "p1");
}

/* An image without a pool is re-read against pool= in
 * rbdx_options_complete; when "POOL/IMAGE" is then too long for an image
 * spec, the error has a message (it had none: -EINVAL and an empty
 * err). */
static void
test_image_too_long_with_pool (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN], pool[RBDX_SPEC_MAX];

  memset (pool, 'p', sizeof pool - 1);
  pool[sizeof pool - 1] = '\0';
  set_ok (o, "pool", pool);
  set_ok (o, "image", "img");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "image='img'");
  assert_contains (err, "too long");
}

static void
test_bad_writers_and_exclusive (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_bad (o, "writers", "some", err);
  assert_contains (err, "some");
  set_bad (o, "exclusive", "maybe", err);
  assert_contains (err, "maybe");
  set_ok (o, "writers", "shared");
  set_bad (o, "writers", "shared", err);
  assert_contains (err, "twice");
  set_ok (o, "exclusive", "TRUE");
  assert_true (o->exclusive);
  set_bad (o, "exclusive", "true", err);
  assert_contains (err, "twice");
}

static void
test_exclusive_needs_one_writer (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "image", "img");
  set_ok (o, "writers", "per-connection");
  set_ok (o, "exclusive", "yes");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "per-connection");
}

static void
test_parse_bool (void **state)
{
  static const char *const yes[] = { "1", "true", "Yes", "ON" };
  static const char *const no[] = { "0", "false", "NO", "off" };
  size_t i;

  (void) state;
  for (i = 0; i < 4; i++) {
    assert_int_equal (rbdx_parse_bool (yes[i]), 1);
    assert_int_equal (rbdx_parse_bool (no[i]), 0);
  }
  assert_int_equal (rbdx_parse_bool (""), -EINVAL);
  assert_int_equal (rbdx_parse_bool ("2"), -EINVAL);
  assert_int_equal (rbdx_parse_bool ("truthy"), -EINVAL);
}

/* Sizes as Ceph writes its size options (1M is 1048576); rbd_qos_*
 * values and the qos.* parameters as Ceph reads its unsigned options
 * (rbd_qos_bps_limit 1M is 1000000, "+50" is 50, as rados_conf_set
 * reads them back on Ceph 16.2.15; "1Mi", "5B", " 7" refused there). */
static void
test_parse_size (void **state)
{
  struct rbdx_options o = { 0 };
  char err[256];
  uint64_t v;

  (void) state;
  assert_int_equal (rbdx_parse_size ("0", &v), 0);
  assert_int_equal (v, 0);
  assert_int_equal (rbdx_parse_size ("200", &v), 0);
  assert_int_equal (v, 200);
  assert_int_equal (rbdx_parse_size ("1M", &v), 0);
  assert_int_equal (v, 1048576);
  assert_int_equal (rbdx_parse_size ("4KiB", &v), 0);
  assert_int_equal (v, 4096);
  assert_int_equal (rbdx_parse_size ("2G", &v), 0);
  assert_int_equal (v, 2147483648ULL);
  assert_int_equal (rbdx_parse_size ("15E", &v), 0);
  assert_int_equal (rbdx_parse_size ("16E", &v), -EINVAL);
  assert_int_equal (rbdx_parse_size ("18446744073709551616", &v), -EINVAL);
  assert_int_equal (rbdx_parse_size ("-1", &v), -EINVAL);
  assert_int_equal (rbdx_parse_size ("1X", &v), -EINVAL);
  assert_int_equal (rbdx_parse_size ("", &v), -EINVAL);
  assert_int_equal (rbdx_parse_size ("M", &v), -EINVAL);
  assert_int_equal (rbdx_parse_ceph_uint ("1M", &v), 0);
  assert_int_equal (v, 1000000);
  assert_int_equal (rbdx_parse_ceph_uint ("+50", &v), 0);
  assert_int_equal (v, 50);
  assert_int_equal (rbdx_parse_ceph_uint ("2K", &v), 0);
  assert_int_equal (v, 2000);
  assert_int_equal (rbdx_parse_ceph_uint ("9E", &v), 0);
  assert_true (v == 9000000000000000000ULL);
  assert_int_equal (rbdx_parse_ceph_uint ("10E", &v), -EINVAL);
  assert_int_equal (rbdx_parse_ceph_uint ("9223372036854775807", &v), 0);
  assert_int_equal (rbdx_parse_ceph_uint ("9223372036854775808", &v), -EINVAL);
  static const char *const bad[] = { "1Mi", "5B", " 7", "-1", "", "+", "M",
                                     "1KK", "1k", "++1", "1 ", NULL };
  for (int i = 0; bad[i]; i++)
    if (rbdx_parse_ceph_uint (bad[i], &v) != -EINVAL)
      fail_msg ("'%s' was read as %llu", bad[i], (unsigned long long) v);
  assert_int_equal (rbdx_options_set (&o, "qos.bps_limit", "10M", err,
                                      sizeof err), 0);
  assert_int_equal (o.qos[RBDX_QOS_BPS].limit, 10000000);
  assert_int_equal (rbdx_options_set (&o, "qos.iops_burst_seconds", "0", err,
                                      sizeof err), -EINVAL);
  assert_int_equal (rbdx_options_set (&o, "qos.iops_limit", "-5", err,
                                      sizeof err), -EINVAL);
  assert_int_equal (rbdx_options_set (&o, "qos.nope_limit", "5", err,
                                      sizeof err), -EINVAL);
  assert_non_null (strstr (err, "NAME one of"));
  rbdx_options_free (&o);
}

#define T(f) cmocka_unit_test_setup_teardown (f, options_setup, options_teardown)

int
main (void)
{
  const struct CMUnitTest tests[] = {
    T (test_defaults),
    T (test_image),
    T (test_image_default_pool),
    T (test_string_keys),
    T (test_completion),
    T (test_size_file_advertise),
    T (test_metrics_interval_needs_file),
    T (test_encryption),
    T (test_connection_limits),
    T (test_ceph_context),
    T (test_ceph_options),
    T (test_all_together),
    T (test_unknown_key),
    T (test_empty_value),
    T (test_repeated_keys),
    T (test_id_with_client_prefix),
    T (test_bad_completion),
    T (test_bad_ceph_name),
    T (test_bad_cluster),
    T (test_malformed_image),
    T (test_error_buffer),
    T (test_complete_no_image),
    T (test_complete_image_only),
    T (test_complete_missing_files),
    T (test_complete_readable_files),
    T (test_options_free),
    T (test_pool_and_writers),
    T (test_pool_only),
    T (test_bad_pool),
    T (test_image_outside_pool),
    T (test_image_too_long_with_pool),
    T (test_bad_writers_and_exclusive),
    T (test_exclusive_needs_one_writer),
    T (test_parse_bool),
    T (test_parse_size),
  };

  /* The id of a $CEPH_ARGS of the caller's would become the id in
   * rbdx_options_complete (test-cephargs.c tests that). */
  unsetenv ("CEPH_ARGS");
  return cmocka_run_group_tests (tests, NULL, NULL);
}
