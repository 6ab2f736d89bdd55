/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/keyring.h: the keyring files a mapping owns.
 *
 * A secret the mapper is handed as data (a connection_info's inline
 * keyring; the key in rbd-nbd's --keyfile FILE) never reaches a server's
 * command line: it is written to a file of the mapping's own,
 * RUN_DIR/keyrings/XXXXXX.keyring (random name, created exclusively,
 * mode 0600), given to the server as keyring=FILE, recorded in the state
 * file (keyring_file=) and removed when the mapping ends
 * (rbdx_state_remove_keyring, state.h; supervise.h, keyring_file), or,
 * when the map and its supervisor were both killed before recording it,
 * by the next map, attach or unmap (rbdx_mapped_lock, mapped.h).
 * Single-threaded, like the rest of the mapper's command side.
 */
#ifndef RBDX_SERVER_KEYRING_H
#define RBDX_SERVER_KEYRING_H

#include <stddef.h>

/** Write @p text (keyring file contents) to a new file of its own in
 *  RUN_DIR/keyrings/ (created 0700 if missing), mode 0600; its path into
 *  @p path (@p len bytes).  Nothing is left behind on failure.
 *  @param why  on failure, what went wrong (@p whylen bytes).
 *  @return 0, or a negative errno (-ENAMETOOLONG: the run directory is
 *  too long for @p path). */
int rbdx_keyring_write (const char *text, char *path, size_t len, char *why,
                        size_t whylen);

/** The keyring contents for Ceph client @p id ("csi-rbd-node", without
 *  "client.") whose key is in @p keyfile, a file holding just the base64
 *  key as Ceph's keyfile option reads it (Ceph doc: "keyfile: path to a
 *  file containing the secret key"; ceph-csi writes such a file for
 *  rbd-nbd's --keyfile): "[client.ID]\n\tkey = KEY\n", malloc'd into
 *  @p text (the caller wipes and frees it).  The key is never shown.
 *  Refused (-EINVAL, @p why says why): @p id with characters other than
 *  letters, digits, '.', '_', '-'; a file that is not a regular file (a
 *  FIFO would block, a device is no key), one writable by every user
 *  (anyone could have put a key of their choosing in it), larger than
 *  4 KiB, empty, or holding anything but base64 around white space.  A
 *  file that cannot be read: its negative errno.
 *  @return 0, or a negative errno. */
int rbdx_keyring_from_keyfile (const char *keyfile, const char *id, char **text,
                               char *why, size_t whylen);

#endif
