/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/supervise.h: the process that keeps one mapped device served.
 *
 * `rbdx map` forks one supervisor per device.  It starts the rbdx server
 * (nbdkit with the rbdx plugin, on a private Unix socket) when given an
 * image spec, negotiates the connections with libnbd, connects the kernel
 * device over netlink, reports to `rbdx map` through a pipe, and then
 * stays to:
 *  - restart the server when it dies (spec mode), and hand the kernel
 *    fresh sockets for its dead connections (NBD_CMD_LINK_DEAD, then
 *    NBD_CMD_RECONFIGURE with exactly as many sockets as links died);
 *  - follow the image's size: its own server (image spec) runs with
 *    size_file= and advertise_size=max, so a resize only changes the
 *    device's size; for an NBD URI it asks the server every resize_poll
 *    seconds, and for growth first replaces every connection by one
 *    negotiated at the new size (see server/mapper/README.md for the hazard);
 *  - on SIGTERM (`rbdx unmap`): disconnect the device, stop the server,
 *    remove its state, exit 0.  It also exits when someone else
 *    disconnects the device.
 *  - on SIGUSR1 (`rbdx attach`): retry now what is pending (a dead
 *    server's restart, dead connections), without waiting for back-off.
 * The server is killed (SIGKILL) if the supervisor dies; `rbdx attach`
 * then brings both back while the kernel holds the I/O.
 * Messages go to RUN_DIR/sup-PID/supervisor.log, the server's to
 * server.log beside it, or both to o->log_file when one is given.
 */
#ifndef RBDX_SERVER_SUPERVISE_H
#define RBDX_SERVER_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>

#include "nbd-compat.h"
#include "rbdx/identity.h"

/** Everything `rbdx map` and `rbdx attach` were told. */
struct rbdx_map_opts {
  char target[1024];          /**< canonical image spec, or the NBD URI */
  bool is_uri;                /**< target is an NBD URI (server not ours) */
  unsigned connections;       /**< 1..RBDX_MAX_CONNECTIONS */
  bool connections_set;       /**< given on the command line */
  bool read_only;
  int device;                 /**< device number, -1: any free one */
  unsigned io_timeout;        /**< seconds, 0: kernel default (no failure) */
  unsigned reattach_timeout;  /**< seconds (NBD_ATTR_DEAD_CONN_TIMEOUT) */
  unsigned resize_poll;       /**< seconds, 0: do not follow resizes */
  const char *engine;         /**< the built-in engine's program
                                   (rbdx-engine), or NULL for nbdkit */
  const char *nbdkit;         /**< nbdkit program */
  const char *plugin;         /**< plugin name or path */
  char **params;              /**< plugin parameters KEY=VALUE (--id, --conf,
                                   --keyring and --exclusive land here) */
  size_t nparams;
  bool attach;                /**< attach to a connected device, no CONNECT */
  char identity[RBDX_IDENT_TEXT_MAX];         /**< attach: the image identity recorded at map
                                   time, "" if none (see state.h) */
  char cookie[RBDX_NBD_BACKEND_MAX]; /**< the kernel's backend identifier:
                                   rbd-nbd's --cookie with the connection
                                   count (nbd-compat.h; a map appends the
                                   identity, within RBDX_NBD_BACKEND_MAX),
                                   or "" for "rbdx:TARGET" */
  long orphan;                /**< attach: a dead supervisor's server still
                                   running, killed (SIGKILL) before the new
                                   connections are handed over; 0 if none */
  char keyring_file[512];     /**< a keyring file this mapping owns (written
                                   by `rbdx map` from a connection_info or
                                   rbd-nbd's --keyfile, keyring.h, in
                                   RUN_DIR/keyrings/), removed when the
                                   mapping ends, on every path: unmap, a
                                   failed or duplicate map, the device
                                   disconnected; kept by a failed attach;
                                   "" if none */
  char log_file[512];         /**< an absolute file the supervisor's and the
                                   server's messages are appended to
                                   instead of RUN_DIR/sup-PID/ (rbd-nbd's
                                   --log-file); created 0600 if missing,
                                   never removed; "" if none */
};

/** The run directory's lock held by `rbdx map`/`attach` (-1 if none);
 *  the supervisor closes its copy first thing. */
extern int rbdx_lock_fd;

/** Fork the supervisor for @p o and wait for its report.  From the fork
 *  on the supervisor owns o->keyring_file.  SIGINT, SIGTERM, SIGHUP and
 *  SIGQUIT, which a caller blocks while it writes that file, are
 *  unblocked in the caller once the supervisor is forked (they stay
 *  blocked in the supervisor, which takes the first three on a
 *  signalfd).
 *  @param index_out  the device number on success.
 *  @param server_out the server's pid (0 for a URI).
 *  @param sup_out    the supervisor's pid.
 *  @param conns_out  connections made (1 when the server lacks multi-conn
 *                    and --connections was not given).
 *  @param msg        on failure, why (static storage).
 *  @return 0; 1 when the image (by identity, whatever its name) is
 *  already mapped on the connected device *index_out (nothing was
 *  mapped); or -1 after a failure that left nothing behind (the
 *  supervisor stopped its server and exited). */
int rbdx_supervise_start (const struct rbdx_map_opts *o, int *index_out,
                          long *server_out, long *sup_out, unsigned *conns_out,
                          const char **msg);

#endif
