/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/nbd-compat.h: the mapper's rbd-nbd personality, its command
 * line.
 *
 * The same `rbdx` program entered as `rbd-nbd` (the base name of argv[0])
 * or as `rbdx nbd-compat ARGS...` speaks the command line of Ceph's
 * rbd-nbd (Ceph src/tools/rbd_nbd/rbd-nbd.cc, parse_args):
 *
 *   rbd-nbd [CEPH OPTIONS] map|attach SPEC [OPTIONS]
 *   rbd-nbd [CEPH OPTIONS] unmap|detach DEVICE|SPEC [OPTIONS]
 *   rbd-nbd [CEPH OPTIONS] list-mapped [--format plain|json|xml] [--pretty-format]
 *
 * Options may stand anywhere, before or after the subcommand: the rbd CLI
 * (Ceph src/tools/rbd/action/Nbd.cc) runs rbd-nbd with the Ceph global
 * options first and turns each `-o KEY[=VALUE]` into `--KEY[=VALUE]` after
 * the spec.  As in Ceph's ceph_argparse, a '-' and a '_' in an option's
 * name are the same ("--read_only" is "--read-only"), and an option with
 * a value takes it as "--opt=VALUE" or "--opt VALUE".
 *
 * rbdx_nbd_parse turns such an argument vector into a struct rbdx_nbd_args:
 * the operation, the rbd-nbd options and the plugin parameters the Ceph
 * options become.  It does no I/O and keeps no state (thread-safe on
 * distinct structs).  What it refuses it refuses with rbd-nbd's own
 * message where rbd-nbd has one; rbd-nbd exits 1 on every failure
 * (main: EXIT_FAILURE), and so does the personality.  cmd-nbd.c runs the
 * result (rbdx_nbd_main).
 */
#ifndef RBDX_SERVER_NBD_COMPAT_H
#define RBDX_SERVER_NBD_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

#include "rbdx/options.h"

/** What rbd-nbd was asked to do. */
enum rbdx_nbd_cmd {
  RBDX_NBD_NONE = 0,
  RBDX_NBD_MAP,
  RBDX_NBD_UNMAP,
  RBDX_NBD_ATTACH,
  RBDX_NBD_DETACH,
  RBDX_NBD_LIST,
  RBDX_NBD_HELP,      /**< -h, --help: usage on stdout, exit 0 */
  RBDX_NBD_VERSION,   /**< -v, --version */
};

/** list-mapped --format. */
enum rbdx_nbd_format { RBDX_NBD_PLAIN = 0, RBDX_NBD_JSON, RBDX_NBD_XML };

/** Most plugin parameters the Ceph options of one command line become. */
#define RBDX_NBD_MAX_PARAMS 64

/** Longest accepted --cookie (the kernel's backend identifier), bytes. */
#define RBDX_NBD_COOKIE_MAX 200

/** A parsed rbd-nbd command line.  Pointers (spec, device, cookie, ...)
 *  point into the argv given to rbdx_nbd_parse, which must outlive the
 *  struct; params are owned (rbdx_nbd_args_free). */
struct rbdx_nbd_args {
  enum rbdx_nbd_cmd cmd;
  /** The image spec as given (map, attach; unmap and detach when not a
   *  device), or NULL. */
  const char *spec;
  /** Its canonical form pool/[namespace/]image[@snap] (the pool "rbd"
   *  when none is named, as rbd-nbd's rbd_default_pool), or "". */
  char target[1024];
  /** --device, or the /dev/nbdN argument of unmap and detach, or NULL. */
  const char *device;
  int device_index;          /**< N of /dev/nbdN, -1 when no device */
  bool read_only;            /**< --read-only */
  bool exclusive;            /**< --exclusive: exclusive=true */
  bool show_cookie;          /**< --show-cookie: map prints "DEV COOKIE" */
  bool try_netlink;          /**< --try-netlink (rbdx always uses netlink) */
  bool pretty;               /**< --pretty-format */
  bool foreground;           /**< -f, -d: stay until unmapped */
  bool no_mon_config;        /**< --no-mon-config: refused for map and
                                  attach (a librados client cannot skip
                                  the monitors' configuration) */
  bool notrim;               /**< --notrim: notrim=true */
  bool quiesce;              /**< --quiesce: quiesce=true */
  int io_timeout;            /**< --io-timeout seconds; -1: not given */
  int reattach_timeout;      /**< --reattach-timeout seconds, default 30 */
  unsigned connections;      /**< --connections (rbdx's, 1..16), 0: default */
  int nbds_max;              /**< --nbds_max, -1: not given; at most what
                                  the nbd module accepts with this
                                  max_part (nbd-compat.c, nbds_max_ok) */
  int max_part;              /**< --max_part, -1: not given */
  long long snap_id;         /**< --snap-id: snap_id=, read-only; -1: not
                                  given */
  const char *cookie;        /**< --cookie, or NULL */
  const char *quiesce_hook;  /**< --quiesce-hook: quiesce_hook= with
                                  --quiesce (ignored without, as rbd-nbd
                                  does), or NULL */
  const char *log_file;      /**< --log-file (also ceph.log_file=), or NULL */
  /** --encryption-format (luks, luks1, luks2; "luks", rbd-nbd's
   *  default, for each file when none is given) and
   *  --encryption-passphrase-file, each repeated up to
   *  RBDX_ENCRYPTION_MAX times, the n-th of one with the n-th of the
   *  other: the image's own first, then its parent's, ... (rbd-nbd.cc,
   *  parse_args).  nenc of each. */
  const char *encryption_format[RBDX_ENCRYPTION_MAX];
  const char *passphrase_file[RBDX_ENCRYPTION_MAX];
  int nenc;
  enum rbdx_nbd_format format;
  const char *format_text;   /**< --format as given, or NULL */
  /** Plugin parameters KEY=VALUE from the Ceph options, in order, each
   *  key at most once (a later option replaces an earlier one, as in
   *  Ceph): id=, conf=, keyring=, mon_host=, cluster=, ceph.NAME=. */
  char *params[RBDX_NBD_MAX_PARAMS];
  size_t nparams;
  /** A warning rbd-nbd also prints and goes on (e.g. "--timeout is
   *  deprecated"), "" if none. */
  char warning[160];
  /** On failure, the whole message for stderr ("rbd-nbd: ..."). */
  char msg[1400];
};

/** rbd-nbd's exit status on every failure (Ceph rbd-nbd.cc, main). */
#define RBDX_NBD_EXIT_FAILURE 1

/** Parse @p argc arguments of @p argv (argv[0], the program name, is
 *  skipped) into @p a (zeroed first).  Refusals (all -EINVAL, message in
 *  a->msg):
 *  - an option rbd-nbd does not know: "rbd-nbd: unknown command: X"
 *    before the subcommand, "rbd-nbd: unknown args: X" after it (also for
 *    a second positional argument, and "--");
 *  - no or an unknown subcommand, a missing spec or device, bad numbers,
 *    a bad --format (list-mapped), --encryption-format other than luks,
 *    luks1, luks2: rbd-nbd's messages;
 *  - a hostile spec: one that starts with '-', holds '=', a control
 *    character or a byte that is not UTF-8 (rbdx_spec_has_unsafe_char),
 *    is a URI, or that rbdx_target_canonical refuses:
 *    "rbd-nbd: invalid spec 'X' (why)"; a bare image name when
 *    --rbd_default_pool is no pool name alone (it starts with '-', holds
 *    '/', '@' or '=', or is a URI);
 *  - a device other than /dev/nbdN: "rbd-nbd: invalid device path: X
 *    (expected /dev/nbd{num})";
 *  - a cookie other than 1..RBDX_NBD_COOKIE_MAX of [A-Za-z0-9._:+-], or
 *    one starting "rbdx:" (rbdx's own identifiers);
 *  - a Ceph option value with a control character or a byte that is not
 *    UTF-8, --key (a secret on
 *    the command line), --name of another entity type than client;
 *  - what rbdx does not do yet: for every command (counted as the options
 *    are read, before the subcommand is known), more than
 *    RBDX_ENCRYPTION_MAX encryption formats or passphrase files; for map
 *    and attach only, --keyfile with --keyring (the key file becomes a
 *    keyring of the mapping's own, keyring.h); and --setuser, --setgroup
 *    always.
 *  Messages quote hostile text escaped by rbdx_printable (\xHH).
 *  @return 0, or -EINVAL (a->msg says why), -ENOMEM. */
int rbdx_nbd_parse (int argc, char **argv, struct rbdx_nbd_args *a);

/** Release what rbdx_nbd_parse allocated in @p a (params). */
void rbdx_nbd_args_free (struct rbdx_nbd_args *a);

/** The value of parameter @p key ("id", "ceph.keyfile", ...) in @p a, or
 *  NULL. */
const char *rbdx_nbd_param (const struct rbdx_nbd_args *a, const char *key);

/** The kernel backend identifier the personality maps with: @p cookie,
 *  then ";rbdx:connections=N" (a ';' is no cookie character), so that an
 *  attach learns the device's connection count from the kernel even
 *  when the state file is gone (a run directory lost with a container).
 *  @return 0, or -ENAMETOOLONG when it does not fit @p len. */
int rbdx_nbd_backend_make (const char *cookie, unsigned connections, char *buf,
                           size_t len);

/** The cookie in kernel backend identifier @p backend, into @p buf (also
 *  returned): the part before ";rbdx:", or "" for none (NULL) or rbdx's
 *  own identifier ("rbdx:SPEC"). */
const char *rbdx_nbd_cookie_of (const char *backend, char *buf, size_t len);

/** The connection count @p backend records (1..16), or 0 if none; an
 *  identity may follow it (rbdx_nbd_backend_add_identity). */
unsigned rbdx_nbd_backend_connections (const char *backend);

/** Room for a backend identifier the personality makes, bytes with the
 *  NUL: a cookie (RBDX_NBD_COOKIE_MAX), the count, and an identity of
 *  up to 319 bytes (state.h) with their tags. */
#define RBDX_NBD_BACKEND_MAX 640

/** Append ";rbdx:identity=IDENTITY" to the personality's backend
 *  identifier in @p buf (@p len bytes), the image identity the server
 *  stated at map time ("POOLID/[NS/]IMAGEID[@SNAPID]", rbdx/identity.h),
 *  so that an attach without the state file still refuses another image.
 *  Nothing is appended to an identifier without ";rbdx:connections=" (not
 *  the personality's), to one that has an identity, for an empty
 *  @p identity or one rbdx_spec_has_unsafe_char refuses.  Thread-safe.
 *  @return 0; -ENAMETOOLONG when it does not fit (@p buf unchanged). */
int rbdx_nbd_backend_add_identity (char *buf, size_t len, const char *identity);

/** The identity kernel backend identifier @p backend records, into @p buf
 *  (also returned): "" for none (NULL, no count, no identity). */
const char *rbdx_nbd_backend_identity (const char *backend, char *buf, size_t len);

/** Whether an attach with @p cookie (NULL: none given) may take over a
 *  device whose kernel backend identifier is @p backend (NULL or "": the
 *  kernel shows none; "rbdx:..." is rbdx's own, that is no cookie); the
 *  cookie is compared with rbdx_nbd_cookie_of (@p backend).  The rules of
 *  rbd-nbd's attach (Ceph rbd-nbd.cc, parse_args).
 *  @param msg  on refusal, rbd-nbd's message (static storage).
 *  @return true to go on. */
bool rbdx_nbd_cookie_ok (const char *backend, const char *cookie, const char **msg);

struct rbdx_state;

/** The --snap-id of mapping @p st (its snap_id= parameter), -1 if none
 *  (cmd-nbd-find.c). */
long long rbdx_nbd_snap_id (const struct rbdx_state *st);

/** The mapping among @p all (@p n) that unmap or detach of a spec @p a
 *  names, as rbd-nbd's find_mapped_dev_by_spec: its target (pool,
 *  namespace, image, snap name) and snap id are a's, and so is its
 *  device when a gives --device; NULL if none (cmd-nbd-find.c). */
struct rbdx_state *rbdx_nbd_find (const struct rbdx_nbd_args *a,
                                  struct rbdx_state *all, int n);

#endif
