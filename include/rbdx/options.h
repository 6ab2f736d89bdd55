/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: parsing and validating the nbdkit key=value parameters.
 *
 * Pure logic (no librados, no nbdkit calls) so it can be unit tested.
 * The checks that need Ceph itself (does the option name exist, does
 * the pool exist) live in cluster.c and ctx.c.
 */
#ifndef RBDX_OPTIONS_H
#define RBDX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbdx/identity.h"
#include "rbdx/quiesce-hook.h"
#include "rbdx/spec.h"

/** completion=: how a request's completion reaches its waiter
 * (server/core/DESIGN.md, "Completions").  CALLBACK takes it in librbd's
 * completion callback; the other modes use librbd's eventfd
 * notification and differ only in how a worker sleeps on it (see
 * reactor.h). */
enum rbdx_completion {
  RBDX_COMPLETION_AUTO = 0,   /**< io_uring when the kernel allows it, else poll(2). */
  RBDX_COMPLETION_IO_URING,   /**< io_uring only; failing to set it up is an error. */
  RBDX_COMPLETION_POLL,       /**< blocking poll(2) + read(2) on the eventfd;
                                   "eventfd" is accepted as an old name. */
  RBDX_COMPLETION_CALLBACK,   /**< "callback": librbd's completion callback
                                   answers (rbdx_ctx_aio) or wakes the
                                   waiting thread (rbdx_ctx_read ...); no
                                   eventfd or reactor.  Always the
                                   mapper's engine; the plugin's on
                                   request. */
};

/** ceph_context=: whether the Ceph clients of one server's options are
 * made on one Ceph context (CephContext: configuration, log, service
 * thread, messenger workers, librbd's thread pool) or each on its own
 * (see cct.h and server/core/DESIGN.md, "One Ceph context"). */
enum rbdx_ceph_context {
  RBDX_CEPH_CONTEXT_AUTO = 0,    /**< shared where the running Ceph has the
                                      fix of its configuration observer
                                      deadlock (rbdx_cct_fixed), else
                                      per connection. */
  RBDX_CEPH_CONTEXT_SHARED,      /**< shared; refused where the fault is. */
  RBDX_CEPH_CONTEXT_CONNECTION,  /**< every client its own context. */
};

/** Where writes go when several connections share one image
 * (see writer.h). */
enum rbdx_writers {
  RBDX_WRITERS_AUTO = 0,         /**< shared with exclusive-lock, else per-connection. */
  RBDX_WRITERS_SHARED,           /**< one lock-owning handle per export. */
  RBDX_WRITERS_PER_CONNECTION,   /**< every connection writes through its own handle. */
};

/** One `ceph.NAME=VALUE` parameter, applied with rados_conf_set. */
struct rbdx_ceph_option {
  char *name;   /**< Ceph option name without the "ceph." prefix, '-'
                     as '_' (what Ceph's own parsers make of it). */
  char *given;  /**< the name as given, for messages. */
  char *value;
};

/** Everything the user configured.  Strings are heap-owned; NULL means
 * "not given" (the Ceph default applies). */
/** advertise_size=: the export size told in the NBD handshake. */
enum rbdx_advertise {
  RBDX_ADVERTISE_IMAGE = 0,   /**< the image's size (the NBD default). */
  RBDX_ADVERTISE_MAX,         /**< RBDX_ADVERTISE_MAX_BYTES, for clients that
                                   take the size from elsewhere (the rbdx mapper
                                   gives the kernel the real one), so that a
                                   connection stays usable when the image grows;
                                   requests past the image's current end still
                                   fail as usual. */
};

/** The size advertised with advertise_size=max: the largest multiple of
 * 4096 that nbdkit's int64_t sizes hold. */
#define RBDX_ADVERTISE_MAX_BYTES (INT64_MAX & ~(int64_t) 4095)

/** encryption_format=: the LUKS format librbd loads on every context
 * (rbd_encryption_load; `rbd encryption format` makes such images). */
enum rbdx_encryption {
  RBDX_ENCRYPTION_NONE = 0,
  RBDX_ENCRYPTION_LUKS1,     /**< 512-byte crypto sectors. */
  RBDX_ENCRYPTION_LUKS2,     /**< 4096-byte crypto sectors (librbd's LUKS2). */
  RBDX_ENCRYPTION_LUKS,      /**< either: the header says which
                                  (rbdx_load_encryption). */
};

/** How many encryption_format= (and as many encryption_passphrase_file=)
 * one export takes: the image's own, then one per encrypted ancestor
 * with a passphrase of its own (rbd_encryption_load2 applies the last to
 * every further ancestor). */
#define RBDX_ENCRYPTION_MAX 4

/** The most bytes a passphrase file may hold (64 KiB); its buffer
 * (rbdx_encryption_spec.passphrase) is this plus one byte. */
#define RBDX_PASSPHRASE_MAX 65536

/** One encryption_format= with its encryption_passphrase_file=: the
 * n-th of each, in the order given (the image's own first, then its
 * parent's, ...: the order of rbd's --encryption-format options). */
struct rbdx_encryption_spec {
  enum rbdx_encryption format;
  char *passphrase_file;      /**< the path. */
  char *passphrase;           /**< its contents, read by rbdx_options_complete;
                                   never logged; wiped by rbdx_options_free. */
  size_t passphrase_len;      /**< bytes, without the file's final newline. */
  bool passphrase_nl;         /**< the file ended with a newline: it is still
                                   at passphrase[passphrase_len]
                                   (rbdx_load_encryption tries both). */
};

/** The QoS limits librbd knows (rbd_qos_<NAME>_limit, _burst,
 * _burst_seconds), in the order of rbdx_qos_names. */
enum rbdx_qos_kind {
  RBDX_QOS_IOPS, RBDX_QOS_READ_IOPS, RBDX_QOS_WRITE_IOPS,
  RBDX_QOS_BPS, RBDX_QOS_READ_BPS, RBDX_QOS_WRITE_BPS,
  RBDX_QOS_N
};

/** "iops", "read_iops", ... "write_bps": librbd's names without the
 * rbd_qos_ prefix and _limit suffix. */
extern const char *const rbdx_qos_names[RBDX_QOS_N];

/** One qos.NAME_limit= / _burst= / _burst_seconds= override. */
struct rbdx_qos_setting {
  uint64_t limit;           /**< per second (I/Os or bytes); 0: none. */
  uint64_t burst;           /**< per second, 0: none. */
  uint64_t burst_seconds;   /**< seconds. */
  bool limit_set, burst_set, burst_seconds_set;
};

struct rbdx_options {
  struct rbdx_spec spec;      /**< image=; spec.image == NULL until given. */
  char *image_text;           /**< image= as given (re-read against pool=). */
  char *pool;                 /**< pool= : serve every image of this pool. */
  char *pool_ns;              /**< namespace of pool=POOL/NAMESPACE, or NULL. */
  enum rbdx_writers writers;  /**< writers= */
  bool writers_set;
  bool exclusive;             /**< exclusive= : hold the lock, refuse hand-over. */
  bool exclusive_set;
  bool notrim;                /**< notrim= : no TRIM, zeroes written thick. */
  bool notrim_set;
  uint64_t snap_id;           /**< snap_id= : serve the image's snapshot of
                                   this id (rbd_snap_set_by_id), which
                                   follows the snapshot through renames. */
  bool snap_id_set;
  char *conf;                 /**< conf= path to ceph.conf. */
  char *id;                   /**< id= cephx user without "client.";
                                   without id=, rbdx_options_complete
                                   sets it from $CEPH_ARGS, if there. */
  bool id_from_env;           /**< id is $CEPH_ARGS' (no id= given). */
  char *keyring;              /**< keyring= path. */
  char *mon_host;             /**< mon_host= monitor address list. */
  char *cluster;              /**< cluster= cluster name. */
  struct rbdx_ceph_option *ceph;  /**< ceph.* in the order given. */
  size_t nceph;
  enum rbdx_completion completion;  /**< completion= */
  bool completion_set;
  char *size_file;            /**< size_file= : where to publish the image size. */
  enum rbdx_advertise advertise_size;  /**< advertise_size= */
  bool advertise_size_set;
  struct rbdx_qos_setting qos[RBDX_QOS_N];  /**< qos.* overrides. */
  struct rbdx_encryption_spec enc[RBDX_ENCRYPTION_MAX];
                              /**< encryption_format= and
                                   encryption_passphrase_file=, repeatable,
                                   the image's own first. */
  size_t nenc;                /**< specs in enc (after
                                   rbdx_options_complete: formats given). */
  size_t nenc_files;          /**< encryption_passphrase_file= given. */
  char *metrics_file;         /**< metrics_file= : Prometheus text file. */
  unsigned metrics_interval;  /**< metrics_interval= seconds, 0: default 5. */
  struct rbdx_ident identity; /**< identity= : image= is exactly this image
                                   (rbdx_ident_parse's form). */
  bool identity_set;
  unsigned connections_per_client;  /**< connections_per_client= (1 to
                                        RBDX_CONNECTIONS_PER_CLIENT_MAX),
                                        0 or 1: every context its own
                                        Ceph client. */
  enum rbdx_ceph_context ceph_context;  /**< ceph_context= */
  bool ceph_context_set;
  unsigned max_connections;   /**< max_connections= (1 to
                                   RBDX_MAX_CONNECTIONS_LIMIT), 0: the
                                   default, rbdx_budget_default. */
  struct rbdx_quiesce_options quiesce;  /**< quiesce=, quiesce_hook=,
                                            quiesce_timeout=,
                                            quiesce_device=,
                                            quiesce_device_file=
                                            (quiesce-hook.h). */
};

/** The largest connections_per_client= accepted. */
#define RBDX_CONNECTIONS_PER_CLIENT_MAX 1024

/** The image identity an export of @p o is pinned to (identity=), or
 * NULL: what rbdx_conn_open and rbdx_conn_probe take. */
static inline const struct rbdx_ident *
rbdx_options_pin (const struct rbdx_options *o)
{
  return o->identity_set ? &o->identity : NULL;
}

/** Whether @p o serves a snapshot: image=...@SNAP or snap_id=. */
static inline bool
rbdx_options_snapshot (const struct rbdx_options *o)
{
  return o->spec.snap || o->snap_id_set;
}

/** Apply one parameter.
 *
 * Keys: image, pool, conf, id, keyring, mon_host, cluster, completion
 * (auto|io_uring|poll, "eventfd" meaning poll), writers
 * (auto|shared|per-connection), ceph_context (auto|shared|connection),
 * size_file, advertise_size (image|max),
 * exclusive and notrim (true/false, yes/no, on/off, 1/0), snap_id (a
 * snapshot id in decimal, below Ceph's reserved ids), qos.NAME_limit,
 * qos.NAME_burst, qos.NAME_burst_seconds (NAME in rbdx_qos_names; whole
 * numbers), encryption_format (luks|luks1|luks2) and
 * encryption_passphrase_file (each repeatable up to RBDX_ENCRYPTION_MAX
 * times: the image's own first, then its parent's, ...),
 * identity (POOLID/[NAMESPACE/]IMAGEID[@SNAPID], rbdx_ident_parse)
 * quiesce, quiesce_hook, quiesce_timeout, quiesce_device and
 * quiesce_device_file
 * (rbdx_quiesce_option_set), and ceph.NAME (rbdx_options_set_ceph:
 * once per Ceph option).  Every other key, an empty value, or a
 * repeated non-repeatable key is an error; so are an image= that
 * rbdx_spec_parse refuses (a "." or ".." name among them), a pool= whose
 * pool or namespace is "." or "..", and a cluster= or ceph.cluster= that
 * is not rbdx_cluster_name_valid (the message names the value).
 *
 * @param err  receives a one-line message naming the key and value on
 *             error, "out of memory" for -ENOMEM (always NUL-terminated
 *             when errlen > 0, truncated to fit).
 * @return 0; -EINVAL for bad input (message in @p err); -ENOMEM.
 * Not thread-safe for the same @p o (nbdkit calls .config serially). */
int rbdx_options_set (struct rbdx_options *o, const char *key,
                      const char *value, char *err, size_t errlen);

/** Final checks once every parameter is in: an image or a pool was
 * given (an image without a pool component is looked up in pool=; an
 * image in another pool than pool= is an error), conf/keyring paths
 * name readable regular files, exclusive=true is not combined with
 * writers=per-connection, size_file= not with pool= and its directory
 * writable, advertise_size=max only with size_file=, encryption_format=
 * and encryption_passphrase_file= as many times each (the passphrase
 * files are read here: at most 64 KiB each; a final newline is kept
 * aside, see struct rbdx_encryption_spec), identity= only with image= and without
 * pool= (a snapshot identity exactly for a snapshot spec or snap_id=, and
 * then that snapshot), snap_id= only with an image= naming no snapshot
 * and without pool=, and an image
 * without a pool component still fits RBDX_SPEC_MAX with pool= added.
 * Without id=, the cephx id of $CEPH_ARGS (rbdx_ceph_args_id,
 * cephargs.h) becomes the id (id_from_env set), checked as id= is; a
 * $CEPH_ARGS that rbdx_ceph_args_id refuses, or whose id fails that
 * check, is -EINVAL with a message starting "$CEPH_ARGS: ".  Last, the
 * ceph.NAME parameters (rbdx_options_check_ceph).
 * @return 0, -EINVAL with a message in @p err, or -ENOMEM ("out of
 *         memory" in @p err). */
int rbdx_options_complete (struct rbdx_options *o, char *err, size_t errlen);

/** Set one qos.NAME_limit=, qos.NAME_burst= or qos.NAME_burst_seconds=
 * parameter (@p key with its "qos." prefix; NAME in rbdx_qos_names) from
 * @p value, a whole number with Ceph's K, M, G suffixes (burst seconds
 * above 0).  Called by rbdx_options_set only.
 * @return 0; -EINVAL with a message naming @p key in @p err (unknown
 *         NAME or part, bad value, given twice).
 * Not thread-safe for the same @p o. */
int rbdx_options_set_qos (struct rbdx_options *o, const char *key,
                          const char *value, char *err, size_t errlen);

/** The encryption step of rbdx_options_complete (options-enc.c): as many
 * encryption_format= as encryption_passphrase_file= (the n-th format goes
 * with the n-th file, the image's own first), then every passphrase file
 * read into its spec: a regular readable file of 1 byte to 64 KiB, read
 * unbuffered (no stdio copy of the secret), a final newline kept aside
 * in passphrase_nl.  Called by rbdx_options_complete only.
 * @return 0; -EINVAL with a message naming the key, the file and the
 *         reason (never the passphrase) in @p err; -ENOMEM.
 * Not thread-safe for the same @p o. */
int rbdx_options_read_passphrases (struct rbdx_options *o, char *err,
                                   size_t errlen);

/** Whether Ceph option names @p a and @p b are the same option: Ceph
 * takes '-' and ' ' in a name for '_' (ceph.log-file is log_file).
 * Pure, thread-safe. */
bool rbdx_ceph_name_eq (const char *a, const char *b);

/** Write Ceph option name @p name (NUL-terminated, changed in place) as
 * Ceph reads it: '-' and ' ' become '_'.  Pure. */
void rbdx_ceph_name_normalize (char *name);

/** Why the Ceph option @p name (without "ceph.", any separators) may
 * not be given on a command line, or NULL when it may: "key" (a raw
 * secret: ps and /proc/PID/cmdline show it to every user) and "keyfile"
 * (keyring=FILE is the way).  The plugin, the engine (rbdx_options_set_ceph)
 * and the mapper (rbdx_args_check) refuse them with this reason, never
 * showing the value.  @return a static string or NULL.  Pure. */
const char *rbdx_ceph_option_refused (const char *name);

/** Set one ceph.NAME=VALUE (@p name without "ceph.").  Called by
 * rbdx_options_set only.
 * @return 0; -EINVAL with a message in @p err for an empty name, a name
 *         with a space or a dot, a name rbdx_ceph_option_refused refuses
 *         (the message never holds @p value), ceph.cluster= that is not
 *         rbdx_cluster_name_valid, and a Ceph option already given
 *         (rbdx_ceph_name_eq: the message names both parameters);
 *         -ENOMEM.  Not thread-safe for the same @p o. */
int rbdx_options_set_ceph (struct rbdx_options *o, const char *name,
                           const char *value, char *err, size_t errlen);

/** The metavariables of a Ceph path rbdx can expand before Ceph does:
 * $cluster and $id (and $name, "client.ID"); NULL: not known.  $type is
 * always "client". */
struct rbdx_ceph_meta {
  const char *cluster;
  const char *id;
};

/** The file check of a log file (Ceph's log_file, rbd-nbd's
 * --log-file): @p path must be a regular file outside /proc and /sys,
 * /dev/null, or not exist in an existing directory outside /proc and
 * /sys (a FIFO would block librados' open for ever; a device, a
 * directory or /proc/sysrq-trigger is no log).  Follows symbolic links,
 * as the open does.
 * @return 0; -EINVAL with the reason alone (no path; the caller names
 *         it) in @p why.  Thread-safe. */
int rbdx_log_path_check (const char *path, char *why, size_t whylen);

/** Check the path of Ceph option @p name (without "ceph.", any
 * separators) set to @p value before librados uses it: log_file as
 * rbdx_log_path_check; admin_socket must not exist (librados removes
 * whatever is there to bind its socket: as root any file) or be a
 * socket (not a link to one), in an existing directory outside /proc and
 * /sys.  The metavariables of @p meta are expanded first, $type as
 * "client"; others ($pid, $cctid, $host, and those @p meta leaves NULL)
 * may stand in the last component only, whose directory alone is then
 * checked; any other $variable (a Ceph option, as $run_dir) is refused.
 * Other options pass.  @p meta may be NULL.
 * @return 0; -EINVAL with "ceph.NAME='VALUE': REASON" in @p err.
 *         Thread-safe. */
int rbdx_ceph_path_check (const char *name, const char *value,
                          const struct rbdx_ceph_meta *meta,
                          char *err, size_t errlen);

/** The step of rbdx_options_complete for the ceph.NAME parameters (once
 * the id is known): none may set a Ceph option a first-class parameter
 * sets too (keyring=, mon_host=, cluster=), and the paths pass
 * rbdx_ceph_path_check with the cluster name and id in effect.
 * @return 0; -EINVAL with a message naming both parameters, or the
 *         parameter and its path, in @p err.  Thread-safe for a
 *         constant @p o. */
int rbdx_options_check_ceph (const struct rbdx_options *o, char *err,
                             size_t errlen);

/** Parse a size the way Ceph parses its size options (TYPE_SIZE): a
 * whole number with an optional binary suffix K, M, G, T, P or E (powers
 * of 1024; an "i" and a "B" after it are allowed), e.g. "1M" = 1048576.
 * Not for rbd_qos_*: see rbdx_parse_ceph_uint.  @return 0 with *v set,
 * or -EINVAL (also on overflow).  Thread-safe. */
int rbdx_parse_size (const char *text, uint64_t *v);

/** Parse an unsigned integer option the way Ceph does (TYPE_UINT, which
 * every rbd_qos_* option is; strict_si_cast in Ceph's
 * src/common/strtol.cc): an optional '+', decimal digits, an optional
 * SI suffix K, M, G, T, P or E (powers of 1000: "1M" = 1000000, as
 * `rados_conf_set ("rbd_qos_bps_limit", "1M")` reads back; "1Mi", "5B"
 * and a leading blank are refused there too), at most LLONG_MAX.
 * @return 0 with *v set, or -EINVAL.  Thread-safe. */
int rbdx_parse_ceph_uint (const char *text, uint64_t *v);

/** Whether parameter @p key=@p value names a file by a relative path
 * that the host must make absolute against the directory it was started
 * in (conf=, keyring=, size_file=, encryption_passphrase_file=,
 * metrics_file=, quiesce_hook= and the Ceph path options): nbdkit changes to / when it
 * forks into the background, and the mapper starts its server in /.  A
 * value holding a $variable is Ceph's to expand and is left alone.
 * Pure. */
bool rbdx_options_wants_absolute (const char *key, const char *value);

/** Whether @p name is a Ceph cluster name rbdx accepts: one or more of
 * [A-Za-z0-9_-] and nothing else (NULL or "" is not).  The cluster name
 * becomes a path component in librados ($cluster in /etc/ceph/$cluster.conf
 * and the default keyring paths), so a '/', a '.' or ".." would reach
 * another file; rbdx_options_set refuses cluster= and ceph.cluster= that
 * fail this, and the mapper refuses cluster= (rbdx_args_check) and
 * connection_info's cluster_name.  Pure, thread-safe. */
bool rbdx_cluster_name_valid (const char *name);

/** Parse a boolean the way nbdkit does: 1/true/yes/on, 0/false/no/off
 * (any case).  @return 1, 0, or -EINVAL. */
int rbdx_parse_bool (const char *value);

/** The cephx id in effect: id=, else (once rbdx_options_complete ran)
 * the id of $CEPH_ARGS, else "admin". */
const char *rbdx_options_id (const struct rbdx_options *o);

/** Release every string and zero @p o. */
void rbdx_options_free (struct rbdx_options *o);

#endif /* RBDX_OPTIONS_H */
