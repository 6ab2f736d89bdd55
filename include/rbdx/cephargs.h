/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx/cephargs.h: the cephx id, from id= or from $CEPH_ARGS.
 *
 * librados takes the entity name only when the handle is created
 * (rados_create2's name, "client.ID"); rados_conf_parse_env, which reads
 * $CEPH_ARGS, only sets configuration options, and the name is none
 * (Ceph src/librados/librados_c.cc: _rados_create2 builds the
 * CephInitParameters from its name argument; _rados_conf_parse_env calls
 * md_config_t::parse_env, whose parse_argv sets options only).  Ceph's
 * own tools (the rbd CLI, rbd-nbd) read the id from $CEPH_ARGS before
 * they create their context (ceph_argparse_early_args).  So rbdx reads
 * it too, when id= is not given, as Ceph does (server/core/DESIGN.md,
 * "The cephx id in $CEPH_ARGS").  Pure: no I/O, no allocation.
 */
#ifndef RBDX_CEPHARGS_H
#define RBDX_CEPHARGS_H

#include <stddef.h>

/** The longest cephx id rbdx takes, in bytes, without "client." and the
 *  NUL: "client." + id + NUL fits the 256-byte entity name the core
 *  hands rados_create2 (server/core/cluster.c), never cut short. */
#define RBDX_CEPHX_ID_MAX 248

/** Check a cephx id (id=, or the id found in $CEPH_ARGS): 1 to
 *  RBDX_CEPHX_ID_MAX bytes, not starting with "client." (the prefix is
 *  rbdx's to add: client.client.X is another user), no control
 *  character, blank or DEL (they cannot be a word of $CEPH_ARGS, and a
 *  log line or keyring section holding one is not what it seems).
 *  @param why  on error, why, without the value (@p whylen bytes,
 *              NUL-terminated when @p whylen > 0).
 *  @return 0; -EINVAL (empty, prefixed, bad character);
 *          -ENAMETOOLONG (longer than RBDX_CEPHX_ID_MAX).
 *  Pure, thread-safe. */
int rbdx_cephx_id_check (const char *id, char *why, size_t whylen);

/** Find the cephx id in @p args, the text of $CEPH_ARGS, as Ceph's tools
 *  read it (Ceph src/common/ceph_argparse.cc):
 *   - the text is split at spaces (env_to_vec: get_str_vec (p, " "));
 *     runs of spaces make no empty words; a tab is part of a word;
 *   - the words after a word "--" are no options (split_dashdash; the
 *     early parser stops there);
 *   - "--id ID", "--id=ID", "--user ID", "--user=ID" set the id;
 *     "--name TYPE.ID", "--name=TYPE.ID", "-n TYPE.ID", "-n=TYPE.ID" the
 *     name, whose TYPE is one of auth, mon, osd, mds, mgr, client
 *     (EntityName::from_str); a later one wins over an earlier one;
 *   - "-i ID" sets the id of a daemon only, never of a client
 *     (ceph_argparse_early_args skips it for CEPH_ENTITY_TYPE_CLIENT;
 *     the rbd CLI then refuses it as "unrecognised option '-i'");
 *   - the value of "--conf"/"-c" and "--cluster" given as the next word
 *     is that option's, not an option (so "--conf --id" sets no id).
 *  Refused, where Ceph's tools would exit or connect as another entity:
 *  "--id", "--user", "--name" or "-n" as the last word with no value,
 *  a name that is not TYPE.ID, a name of another type than client, "-i"
 *  (say --id), and a value given as the next word that starts with '-'
 *  (another option, the value forgotten).
 *  The id found is not checked otherwise: the caller checks it as id=
 *  (rbdx_cephx_id_check).
 *  @param args  $CEPH_ARGS, or NULL (unset); read to its NUL, any length.
 *  @param id    receives the id without "client." (@p idlen bytes, at
 *               least RBDX_CEPHX_ID_MAX + 1 to take every id); "" when
 *               none is found or on error.
 *  @param why   on error, a message naming the word at fault (quoted,
 *               at most 64 bytes of it), without "$CEPH_ARGS: ".
 *  @return 1: an id was found (in @p id); 0: none (@p args NULL, empty,
 *          or without those options); -EINVAL: refused (@p why says
 *          why); -ENAMETOOLONG: the id does not fit @p idlen.
 *  Pure, thread-safe. */
int rbdx_ceph_args_id (const char *args, char *id, size_t idlen,
                       char *why, size_t whylen);

/** The value @p args ($CEPH_ARGS, or NULL) gives Ceph option @p name
 *  ("log_file", '-' and '_' the same), as librados' rados_conf_parse_env
 *  reads it (Ceph src/common/ceph_argparse.cc, ceph_argparse_witharg):
 *  "--NAME VALUE" or "--NAME=VALUE", words split at spaces as for
 *  rbdx_ceph_args_id, none after a word "--"; a later one wins.
 *  @param value  receives it (@p len bytes), "" when none.
 *  @return 1: found; 0: none; -ENAMETOOLONG: it does not fit @p len.
 *  Pure, thread-safe. */
int rbdx_ceph_args_option (const char *args, const char *name, char *value,
                           size_t len);

#endif
