/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/state.h: what the mapper remembers about each mapped device.
 *
 * One file per device, RUN_DIR/nbdN ("key=value" lines), written
 * atomically (temporary file + rename) by the device's supervisor and
 * removed by it when the device is unmapped.  State files are mode 0600:
 * they hold the parameters a server was given.  RUN_DIR itself is 0755,
 * shared with systemd/rbdx@.socket (DirectoryMode=0755), whose sockets
 * are all under RUN_DIR/sockets/ so that no pool or image name can take
 * one of the mapper's names here; never writable by others
 * (rbdx_state_mkdir).  RUN_DIR is $RBDX_RUN_DIR,
 * default /run/rbdx (a tmpfs: nothing survives a reboot, like the
 * mappings themselves).  Not thread-safe.
 */
#ifndef RBDX_SERVER_STATE_H
#define RBDX_SERVER_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "rbdx/identity.h"

#define RBDX_TARGET_MAX 1024

/** Room for a kernel backend identifier rbdx gives a device, bytes with
 *  the NUL: "rbdx:TARGET", or the rbd-nbd personality's, which is
 *  shorter (RBDX_NBD_BACKEND_MAX, nbd-compat.h; sup-loop.c checks). */
#define RBDX_BACKEND_MAX (RBDX_TARGET_MAX + 8)

struct rbdx_state {
  int index;                       /**< /dev/nbdINDEX */
  char target[RBDX_TARGET_MAX];    /**< image spec or NBD URI as mapped */
  char backend[RBDX_BACKEND_MAX];  /**< the kernel's backend identifier */
  char socket[RBDX_TARGET_MAX];    /**< the private server socket, or "" */
  unsigned connections;            /**< connections configured */
  pid_t supervisor;                /**< the supervising rbdx process */
  unsigned long long supervisor_start; /**< its start time (/proc/PID/stat
                                        field 22, clock ticks after boot), so
                                        a reused pid is never signalled */
  pid_t server;                    /**< its nbdkit, 0 for an NBD URI */
  unsigned long long server_start; /**< the server's start time, likewise */
  unsigned resize_poll;            /**< seconds, as mapped */
  bool read_only;
  /** The image identity the rbdx server stated when the device was mapped
   *  ("POOLID/[NS/]IMAGEID[@SNAPID]", include/rbdx/identity.h), or "" when
   *  it stated none (a foreign NBD server, an older rbdx). */
  char identity[RBDX_IDENT_TEXT_MAX];
  char metrics[300];               /**< the server's metrics_file, or "" */
  char engine[16];                 /**< "builtin" or "nbdkit" (image spec),
                                        "" for an NBD URI or an older rbdx */
  char keyring_file[512];          /**< the keyring file this mapping owns
                                        (supervise.h), or "" */
  unsigned long reattaches;        /**< connections handed over again */
  unsigned long resizes;           /**< device size changes followed */
  unsigned long server_restarts;   /**< servers started after the first */
  /** Plugin parameters KEY=VALUE given to `rbdx map`, each followed by
   *  RBDX_PARAM_SEP (so a server can be started again by `rbdx attach`). */
  char params[4096];
};

/** Separator of struct rbdx_state.params (ASCII unit separator). */
#define RBDX_PARAM_SEP '\x1f'

/** The run directory (static storage). */
const char *rbdx_run_dir (void);

/** Create the run directory (mode 0755, as rbdx@.socket does) if
 *  missing.  An existing one is kept as it is if it is ours or root's
 *  and not writable by group or others; one of ours that is writable by
 *  them loses those bits; anyone else's is refused.
 *  @return 0 or -errno (-ENOTDIR: not a directory, a link to one
 *          included; -EPERM: someone else's, or root's and writable). */
int rbdx_state_mkdir (void);

/** Write (replace) the state of device st->index, mode 0600.
 *  @return 0 or -errno. */
int rbdx_state_save (const struct rbdx_state *st);

/** Read the state of device @p index.
 *  @return 0, -ENOENT when there is none, -EACCES when this user may not
 *          read it (root's, 0600), -EINVAL when unreadable otherwise. */
int rbdx_state_load (int index, struct rbdx_state *st);

/** Remove the state of device @p index (no error when missing). */
void rbdx_state_remove (int index);

/** Remove keyring file @p path that a mapping owns (supervise.h,
 *  keyring_file), only if it is a file directly in RUN_DIR/keyrings/
 *  (a state file names it: nothing else is ever removed).  "" does
 *  nothing.  Never fails. */
void rbdx_state_remove_keyring (const char *path);

/** Remove a supervisor's private directory @p dir (RUN_DIR/sup-PID: its
 *  socket, logs, size, metrics and quiesce device files, and their
 *  temporary names) with every entry in it.  The entries are unlinked,
 *  never followed (a link to a file elsewhere removes only the link);
 *  a @p dir that is a link itself is left alone.  Only the supervisor of
 *  that pid writes there, so whatever is in it is its own: call it for a
 *  supervisor that is gone or, from the supervisor, for its own.
 *  @return 0, or -errno of the directory's opening or removal
 *          (-ENOENT: there was none; -ENOTEMPTY: a subdirectory in it). */
int rbdx_state_remove_private_dir (const char *dir);

/** Device numbers with a state file (RUN_DIR/nbdN, N as %d writes it:
 *  decimal digits, no sign, no leading zero; other names are not ours),
 *  ascending.  @return how many, or -errno; -E2BIG when there are more
 *  than @p max (never a list that leaves some out). */
int rbdx_state_list (int *indexes, int max);

/** Whether /dev/nbdINDEX is connected now (/sys/block/nbdINDEX/pid exists
 *  while the kernel has a configured connection). */
bool rbdx_device_connected (int index);

/** The kernel's backend identifier of /dev/nbdINDEX (sysfs "backend",
 *  Linux 5.1 and later) into @p buf (@p len bytes, NUL-terminated, ""
 *  while the device is not connected).  @return 0; -ENOENT when the
 *  kernel shows none (no such device or attribute); -E2BIG when it does
 *  not fit @p len (@p buf then holds its start). */
int rbdx_device_backend (int index, char *buf, size_t len);

/** The device's size in bytes from sysfs, 0 when unknown. */
unsigned long long rbdx_device_bytes (int index);

/** Whether process @p pid exists. */
bool rbdx_pid_alive (pid_t pid);

/** Start time of process @p pid (/proc/PID/stat field 22, clock ticks
 *  since boot), 0 when there is no such process. */
unsigned long long rbdx_proc_start (pid_t pid);

/** Whether @p pid is still the process that started at @p start. */
bool rbdx_proc_is (pid_t pid, unsigned long long start);

#endif
