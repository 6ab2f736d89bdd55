/* SPDX-License-Identifier: BSD-3-Clause */
/* opt-info-go: case C07 (first half) in tests/README.md.
 *
 * A client sends NBD_OPT_INFO for export X, then NBD_OPT_GO for export
 * Y (NBD doc/proto.md "Option types": INFO and GO are independent
 * requests; GO's reply describes the export GO names).  rbdx serves
 * one image whose canonical export name is SPEC; "" means the same
 * image and any other name is refused.
 *
 * Usage: opt-info-go URI SPEC SIZE READ_ONLY
 *   URI names the server (its export name is ignored); SIZE (from
 *   `rbd info`) and READ_ONLY describe SPEC.  The export flags a plain
 *   connection to SPEC gets are the reference for "Y's flags".  Then,
 *   each on a fresh connection in libnbd's option mode:
 *   1. INFO "rbd/other" fails (unknown export) and leaves no size
 *      behind; GO SPEC then reports SPEC's size and flags and serves.
 *   2. INFO "" succeeds with SPEC's size; GO SPEC reports the same.
 *   3. INFO "" succeeds; GO "rbd/other" must fail (the server must not
 *      reuse what INFO opened), the connection is still negotiating,
 *      and GO SPEC then works.
 */
#include "nbd-check.h"

static const char *uri, *spec;
static int64_t size;
static int read_only;

/* The export flags as libnbd reports them. */
struct flags { int v[10]; };

static struct flags
get_flags (struct nbd_handle *h)
{
  struct flags f = { {
    nbd_is_read_only (h), nbd_can_multi_conn (h), nbd_can_flush (h),
    nbd_can_fua (h), nbd_can_trim (h), nbd_can_zero (h),
    nbd_can_fast_zero (h), nbd_can_cache (h), nbd_is_rotational (h),
    nbd_can_df (h),
  } };
  return f;
}

static const char *flag_names[10] = {
  "read-only", "multi-conn", "flush", "fua", "trim", "zero", "fast-zero",
  "cache", "rotational", "df",
};

static struct flags want;

static struct nbd_handle *
opt_connect (void)
{
  struct nbd_handle *h = nbd_create ();

  if (!h)
    FAIL ("nbd_create: %s", nbd_get_error ());
  OK (nbd_set_opt_mode (h, true));
  OK (nbd_set_full_info (h, true));
  OK (nbd_connect_uri (h, uri));
  EQ (nbd_aio_is_negotiating (h), 1);
  return h;
}

/* GO SPEC: the reply is SPEC's, and the export serves a read. */
static void
go_spec (struct nbd_handle *h)
{
  char buf[4096], *canon;

  OK (nbd_set_export_name (h, spec));
  OK (nbd_opt_go (h));
  EQ (nbd_aio_is_ready (h), 1);
  EQ (nbd_get_size (h), size);
  {
    struct flags got = get_flags (h);
    int i;

    for (i = 0; i < 10; i++)
      if (got.v[i] != want.v[i])
        FAIL ("after INFO then GO, %s is %d; a plain connection gets %d",
              flag_names[i], got.v[i], want.v[i]);
  }
  canon = nbd_get_canonical_export_name (h);
  if (!canon)
    FAIL ("no canonical export name: %s", nbd_get_error ());
  if (strcmp (canon, spec) != 0)
    FAIL ("canonical export name is \"%s\", expected \"%s\"", canon, spec);
  free (canon);
  OK (nbd_pread (h, buf, sizeof buf, 0, 0));
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
}

int
main (int argc, char *argv[])
{
  struct nbd_handle *h;

  check_args (argv, argc == 5, "URI SPEC SIZE READ_ONLY");
  uri = argv[1];
  spec = argv[2];
  size = strtoll (argv[3], NULL, 10);
  read_only = atoi (argv[4]);

  /* The reference: a plain GO for SPEC, no INFO before it. */
  h = opt_connect ();
  OK (nbd_set_export_name (h, spec));
  OK (nbd_opt_go (h));
  EQ (nbd_get_size (h), size);
  EQ (nbd_is_read_only (h), read_only);
  want = get_flags (h);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);

  /* 1. INFO for a name that is not served, then GO for the image. */
  h = opt_connect ();
  OK (nbd_set_export_name (h, "rbd/other"));
  ERR (nbd_opt_info (h), ENOENT);
  EQ (nbd_aio_is_negotiating (h), 1);
  if (nbd_get_size (h) != -1)
    FAIL ("a failed NBD_OPT_INFO left a size behind: %" PRId64,
          nbd_get_size (h));
  go_spec (h);

  /* 2. INFO for "" (the same image under its default name), then GO. */
  h = opt_connect ();
  OK (nbd_set_export_name (h, ""));
  OK (nbd_opt_info (h));
  EQ (nbd_aio_is_negotiating (h), 1);
  EQ (nbd_get_size (h), size);
  EQ (nbd_is_read_only (h), read_only);
  go_spec (h);

  /* 3. INFO succeeds, then GO for a name that is not served fails:
   * GO answers for its own name, not for what INFO looked at. */
  h = opt_connect ();
  OK (nbd_set_export_name (h, ""));
  OK (nbd_opt_info (h));
  OK (nbd_set_export_name (h, "rbd/other"));
  ERR (nbd_opt_go (h), ENOENT);
  EQ (nbd_aio_is_negotiating (h), 1);
  go_spec (h);
  return 0;
}
