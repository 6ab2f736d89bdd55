/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/mapped.h: the mappings the mapper knows of (state.h files),
 * as the commands look them up.  Single-threaded.
 */
#ifndef RBDX_SERVER_MAPPED_H
#define RBDX_SERVER_MAPPED_H

#include <stdbool.h>
#include <sys/types.h>

#include "state.h"

/** Most mappings a command looks at. */
#define MAX_MAPPED 1024

/** Every live mapping, at most @p max, into @p out.  On the way, state
 *  files of dead supervisors whose device is no longer connected, or
 *  now connected with another backend identifier (another mapping's),
 *  are removed (with the keyring file and the devlink the mapping
 *  owned), and so are the
 *  private directories (RUN_DIR/sup-PID) of
 *  supervisors that were killed.  A run directory that cannot be read
 *  (a user other than root: it is mode 0700) dies naming it, rather than
 *  pass for one without mappings.  @return how many. */
int rbdx_mapped_load (struct rbdx_state *out, int max);

/** The mapping among @p all (@p n) of @p target: a device (/dev/nbdN),
 *  or an image spec or URI compared in canonical form; NULL if none. */
struct rbdx_state *rbdx_mapped_find (const char *target, struct rbdx_state *all, int n);

/** The first mapping among @p all (@p n) of @p target (as
 *  rbdx_mapped_find) that is read-only if @p read_only, read-write if
 *  not; NULL if none.  A read-only and a read-write mapping of one image
 *  are two devices (an os-brick ro and rw attachment on one node). */
struct rbdx_state *rbdx_mapped_find_mode (const char *target, bool read_only,
                                          struct rbdx_state *all, int n);

/** Whether the server recorded in @p st still runs (the same process:
 *  its start time matches, so a reused pid is never signalled). */
bool rbdx_mapped_server_running (const struct rbdx_state *st);

/** Serialise map, attach and unmap (two maps of one image must not both
 *  map it; an unmap must not miss a map still starting): take
 *  RUN_DIR/lock (flock), held until this process exits; the
 *  supervisor keeps its inherited descriptor (rbdx_lock_fd) until its
 *  mapping is recorded, so a killed map does not release it early.
 *  Holding it, removes the files in RUN_DIR/keyrings/ that no saved
 *  mapping names (left when a map and its supervisor were both killed
 *  before the mapping was recorded); while any state file cannot be
 *  read, none.  Dies on errors. */
void rbdx_mapped_lock (void);

/** The same lock for unmap, which creates nothing: without RUN_DIR/lock
 *  no map ever ran here, and there is nothing to wait for (nor to
 *  remove).  Dies on other errors. */
void rbdx_mapped_lock_existing (void);

#endif
