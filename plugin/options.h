/* rbdx plugin: parsing and validating the nbdkit key=value parameters.
 *
 * Pure logic (no librados, no nbdkit calls) so it can be unit tested.
 * The checks that need Ceph itself (does the option name exist, does
 * the pool exist) live in cluster.c and ctx.c.
 */
#ifndef RBDX_OPTIONS_H
#define RBDX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "rbdx/spec.h"

/** How request completions are reaped (see reactor.h). */
enum rbdx_completion {
  RBDX_COMPLETION_AUTO = 0,   /**< io_uring when the kernel allows it, else eventfd. */
  RBDX_COMPLETION_IO_URING,   /**< io_uring only; failing to set it up is an error. */
  RBDX_COMPLETION_EVENTFD,    /**< blocking poll(2) + read(2) on the eventfd. */
};

/** One `ceph.NAME=VALUE` parameter, applied with rados_conf_set. */
struct rbdx_ceph_option {
  char *name;   /**< Ceph option name without the "ceph." prefix. */
  char *value;
};

/** Everything the user configured.  Strings are heap-owned; NULL means
 * "not given" (the Ceph default applies). */
struct rbdx_options {
  struct rbdx_spec spec;      /**< image=; spec.image == NULL until given. */
  char *conf;                 /**< conf= path to ceph.conf. */
  char *id;                   /**< id= cephx user without "client.". */
  char *keyring;              /**< keyring= path. */
  char *mon_host;             /**< mon_host= monitor address list. */
  char *cluster;              /**< cluster= cluster name. */
  struct rbdx_ceph_option *ceph;  /**< ceph.* in the order given. */
  size_t nceph;
  enum rbdx_completion completion;  /**< completion= */
  bool completion_set;
};

/** Apply one parameter.
 *
 * Keys: image, conf, id, keyring, mon_host, cluster, completion and
 * ceph.NAME (repeatable; a later value for the same NAME replaces the
 * earlier one).  Every other key, an empty value, or a repeated
 * non-repeatable key is an error.
 *
 * @param err  receives a one-line message naming the key and value on
 *             error (always NUL-terminated when errlen > 0).
 * @return 0; -EINVAL for bad input (message in @p err); -ENOMEM.
 * Not thread-safe for the same @p o (nbdkit calls .config serially). */
int rbdx_options_set (struct rbdx_options *o, const char *key,
                      const char *value, char *err, size_t errlen);

/** Final checks once every parameter is in: an image was given, and
 * conf/keyring paths name readable files.
 * @return 0 or -EINVAL with a message in @p err. */
int rbdx_options_complete (const struct rbdx_options *o,
                           char *err, size_t errlen);

/** The cephx id in effect ("admin" when none was given). */
const char *rbdx_options_id (const struct rbdx_options *o);

/** Release every string and zero @p o. */
void rbdx_options_free (struct rbdx_options *o);

#endif /* RBDX_OPTIONS_H */
