/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cli.h: the mapper's command line, shared by its commands.
 *
 * rbdx.c parses the command line into a struct cli and runs one command:
 * cmd-map.c (map, attach), cmd-unmap.c (unmap), cmd-list.c (list-mapped,
 * status), with cmd-conninfo.c for --connection-info and mapped.c for
 * the mappings recorded.  A command returns the exit status (0 done) or
 * dies: die() prints "rbdx: MESSAGE" and exits 1 (failed), 2 (bad
 * usage) or RBDX_EXIT_NOT_MAPPED.  Single-threaded.
 */
#ifndef RBDX_SERVER_CLI_H
#define RBDX_SERVER_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "supervise.h"

/** The exit status of unmap and status given a device, image spec or URI
 *  that is not mapped: nothing was done, which a script (rbdx-map-all's
 *  unmap) tells from a failure without reading the message (rbdx.pod,
 *  EXIT STATUS).  The rbd-nbd personality still exits 1 (die). */
#define RBDX_EXIT_NOT_MAPPED 3

/** What the command line said. */
struct cli {
  struct rbdx_map_opts o;
  bool json, force, device_set, resize_poll_set;
  const char *engine;     /**< --engine builtin|nbdkit, or NULL */
  const char *conninfo;   /**< --connection-info FILE or "-", or NULL */
  /** Keyring contents that map or attach write to a file of the
   *  mapping's own once every check passed (cli_write_keyring), from
   *  rbd-nbd's --keyfile; NULL if none.  Owned: wiped and freed by the
   *  command. */
  char *keyring_text;
  char **args;            /**< positional arguments, args[0] the command */
  int nargs;
};

/** Print "rbdx: " and the message to stderr, exit with @p status.
 *  The message (at most 4095 bytes) goes through rbdx_printable_line
 *  (its control characters as \xHH), so values from outside may be
 *  passed raw. */
void __attribute__ ((noreturn, format (printf, 2, 3)))
die (int status, const char *fmt, ...);

/** The mapper's defaults (as when no option is given) into @p c. */
void cli_init (struct cli *c);

/** Messages from die() start "@p name: " (default "rbdx"); with
 *  @p one_status every failure exits 1 (rbd-nbd's way) instead of 1 or 2. */
void cli_set_personality (const char *name, bool one_status);

/** Add plugin parameter KEY=VALUE to @p o: @p key "KEY=" and @p value,
 *  or @p key "" and @p value "KEY=VALUE".  A relative file name (any
 *  parameter the core lists as naming a file) is made absolute against
 *  the current directory (params.h: the supervisor runs in /).  Dies on
 *  errors. */
void cli_add_param (struct rbdx_map_opts *o, const char *key, const char *value);

/** Die (exit 2, with a message naming the offending value) unless
 *  rbdx_args_check (target.h) accepts @p target and the @p nparams
 *  @p params, and the files of ceph.log_file= and ceph.admin_socket=
 *  pass the core's rbdx_ceph_path_check (rbdx/options.h; with cluster=
 *  and id= of @p params, else "ceph" and "admin"): every spec and
 *  parameter a server would get, from the command line, a
 *  connection_info or an rbdxtab line, goes through it before anything
 *  is written or started. */
void cli_check_args (const char *target, char *const *params, size_t nparams);

/** Whether @p nparams @p params fit the parameter list a state file
 *  keeps (struct rbdx_state's params, separators included); *@p total
 *  is the bytes they take. */
bool cli_params_fit (char *const *params, size_t nparams, size_t *total);

/** TARGET [KEY=VALUE...] (@p nargs of @p args) into c->o; a snapshot
 *  maps read-only.  Dies on bad usage. */
void cli_set_target (struct cli *c, char **args, int nargs);

/** The default number of connections: the online CPUs, 1 to
 *  RBDX_MAX_CONNECTIONS (common/limits.h). */
unsigned cli_default_connections (void);

/** Block (@p how SIG_BLOCK) or unblock (SIG_UNBLOCK) the signals that
 *  would end the mapper (INT, TERM, HUP, QUIT): blocked while a keyring
 *  file is written and not yet the supervisor's, unblocked by the
 *  supervisor once it owns it (rbdx_supervise_start). */
void cli_end_signals (int how);

/** --connection-info (cmd-conninfo.c). */
struct rbdx_conninfo;
/** Read and parse the connection_info in @p path ("-": stdin) into @p ci
 *  (free with rbdx_conninfo_free).  Dies on errors. */
void cli_load_conninfo (const char *path, struct rbdx_conninfo *ci);
/** map --connection-info: the map options (target, parameters, mode)
 *  from @p ci, checked (cli_check_args).  Writes nothing: the keyring it
 *  carries is cli_write_keyring's, once every check passed.  Dies on
 *  errors. */
void cli_conninfo_to_map (struct cli *c, struct rbdx_conninfo *ci);
/** The volume @p ci names as @p c's target, in canonical form, as map
 *  and unmap --connection-info both read it: an RBD image spec, never a
 *  device path or an NBD URI.  Dies (exit 2) otherwise. */
void cli_conninfo_target (struct cli *c, struct rbdx_conninfo *ci);
/** Write @p keyring (keyring file contents: a connection_info's keyring,
 *  or the one built from rbd-nbd's --keyfile) to a file of the mapping's
 *  own (keyring.h, rbdx_keyring_write), owned by the mapping from now on
 *  (c->o.keyring_file: removed when the mapping ends, never by another
 *  mapping's unmap), and give it to the server as keyring=.  cmd_map and
 *  cmd_attach call it after every check, right before
 *  rbdx_supervise_start, with SIGINT, SIGTERM, SIGHUP and SIGQUIT
 *  blocked.  Dies on errors (nothing left). */
void cli_write_keyring (struct cli *c, const char *keyring);
/** Print os-brick's device info of /dev/nbd@p index mapped from @p spec
 *  (JSON: type, path, device).  path is the /dev/rbdx devlink when it
 *  points at this device (devlinks.h), else the device itself: always a
 *  node that leads to this mapping's device. */
void cli_print_device_info (int index, const char *spec);

/** The commands; each returns the exit status. */
int cmd_map (struct cli *c);
int cmd_attach (struct cli *c);
int cmd_unmap (struct cli *c);
int cmd_list (struct cli *c);
int cmd_status (struct cli *c);

/** The rbd-nbd personality (nbd-compat.h, cmd-nbd.c): run rbd-nbd's
 *  command line @p argv (argv[0] the program name); returns the exit
 *  status (0, or 1 on any failure, as rbd-nbd). */
int rbdx_nbd_main (int argc, char **argv);
struct rbdx_nbd_args;
/** Its list-mapped (cmd-nbd-list.c); returns the exit status. */
int rbdx_nbd_list (const struct rbdx_nbd_args *a);

#endif
