/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the quiesce parameters and the hook's command line (pure).
 *
 * With quiesce=true rbdx takes part in librbd's quiesce protocol (the
 * notification `rbd snap create` sends to every watcher of the image
 * header before it takes a snapshot; quiesce.h does the serving side):
 * it runs a hook once per image and notification, as rbd-nbd --quiesce
 * does (Ceph src/tools/rbd_nbd/rbd-nbd.cc, run_quiesce_hook): the hook
 * is started directly (posix_spawn, quiesce-run.h), never through a
 * shell, with exactly the argument vector
 *
 *     HOOK DEVICE quiesce        before the snapshot
 *     HOOK DEVICE unquiesce      after it
 *
 * HOOK comes only from the server's configuration (quiesce_hook=, or
 * RBDX_QUIESCE_HOOK_DEFAULT), never from a client.  DEVICE is, in this
 * order: what the file quiesce_device_file= holds when it exists (the
 * mapper's supervisor writes /dev/nbdN there once the kernel gave it the
 * device: the server starts before that), quiesce_device=, or the
 * image's canonical name (pool/[ns/]image), which in pool= mode follows
 * a client's export name: so it is refused when it could be read as an
 * option (a leading '-') or holds a control character.
 *
 * Pure: no librados, no nbdkit; unit-tested (tests/unit/test-quiesce-hook.c).
 */
#ifndef RBDX_QUIESCE_HOOK_H
#define RBDX_QUIESCE_HOOK_H

#include <stdbool.h>
#include <stddef.h>

/** The hook rbdx installs (scripts/rbdx-quiesce-hook, meson puts it in
 * libexecdir/rbdx): fsfreeze -f / -u of the filesystem mounted on
 * DEVICE, if any.  Used when quiesce=true is given without
 * quiesce_hook=.  Set by meson; this fallback is for builds outside
 * it. */
#ifndef RBDX_QUIESCE_HOOK_DEFAULT
#define RBDX_QUIESCE_HOOK_DEFAULT "/usr/libexec/rbdx/rbdx-quiesce-hook"
#endif

/** quiesce_timeout= default and limits, seconds.  librbd gives a
 * quiesce notification 5 s to be acknowledged and re-sends it up to
 * rbd_quiesce_notification_attempts (default 10) times before the
 * snapshot fails with -ETIMEDOUT (librbd/ImageWatcher.cc,
 * notify_quiesce; watcher::Notifier::NOTIFY_TIMEOUT), so about 50 s in
 * all: the default leaves room for the wait for writes in flight. */
#define RBDX_QUIESCE_TIMEOUT_DEFAULT 20
#define RBDX_QUIESCE_TIMEOUT_MAX 3600

/** The quiesce parameters (part of struct rbdx_options). */
struct rbdx_quiesce_options {
  bool on;               /**< quiesce= */
  bool on_set;
  char *hook;            /**< quiesce_hook= absolute path, owned; NULL:
                              RBDX_QUIESCE_HOOK_DEFAULT. */
  unsigned timeout;      /**< quiesce_timeout= seconds; 0: the default. */
  char *device;          /**< quiesce_device= the hook's DEVICE, owned;
                              NULL: the image's canonical name. */
  char *device_file;     /**< quiesce_device_file= absolute path, owned:
                              DEVICE is read from it at each quiesce;
                              NULL: none. */
};

/** Whether @p key is one of the quiesce keys (quiesce, quiesce_hook,
 * quiesce_timeout, quiesce_device, quiesce_device_file).  Pure. */
bool rbdx_quiesce_is_key (const char *key);

/** Apply one quiesce parameter (rbdx_quiesce_is_key(@p key) holds).
 * @return 0; -EINVAL (given twice, not a boolean, a relative hook path,
 *         a timeout outside 1..RBDX_QUIESCE_TIMEOUT_MAX, a device name
 *         refused by rbdx_quiesce_device_ok, a relative
 *         quiesce_device_file=) with a message naming the
 *         key and value in @p err; -ENOMEM.  Not thread-safe for one @p q. */
int rbdx_quiesce_option_set (struct rbdx_quiesce_options *q, const char *key,
                             const char *value, char *err, size_t errlen);

/** Final checks: quiesce_hook=, quiesce_timeout=, quiesce_device= and
 * quiesce_device_file= need quiesce=true; with quiesce=true the hook
 * (given or default) must pass rbdx_quiesce_hook_check, and
 * quiesce_device_file=, if given, rbdx_quiesce_device_file_check.
 * @return 0 or -EINVAL with a message in @p err. */
int rbdx_quiesce_options_complete (const struct rbdx_quiesce_options *q,
                                   char *err, size_t errlen);

/** With quiesce=true and neither quiesce_device= nor
 * quiesce_device_file=, the hook's DEVICE is @p spec (the image's
 * canonical spec): refuse before serving one that could never be passed
 * to it (rbdx_quiesce_device_ok: longer than RBDX_QUIESCE_DEVICE_MAX
 * bytes, or starting with '-'), rather than fail every snapshot later.
 * @return 0, or -EINVAL with a message naming the spec and the way out
 *         (quiesce_device=) in @p err.  Pure. */
int rbdx_quiesce_spec_device_check (const struct rbdx_quiesce_options *q,
                                    const char *spec, char *err,
                                    size_t errlen);

/** The hook in effect for @p q. */
const char *rbdx_quiesce_hook_path (const struct rbdx_quiesce_options *q);

/** The timeout in effect for @p q, seconds. */
unsigned rbdx_quiesce_timeout (const struct rbdx_quiesce_options *q);

/** What a file of mode @p mode (st_mode) is, for a message: "a
 * directory", "a FIFO", "a character device", "a block device", "a
 * socket", "a symbolic link", "a regular file" (a static string).
 * Pure, thread-safe. */
const char *rbdx_quiesce_file_kind (unsigned mode);

/** Check at start that @p path (quiesce_device_file=, absolute) can be
 * the device file: missing is accepted (the mapper writes it once the
 * kernel gave it the device), and so is a regular file (symbolic links
 * followed; its content is read at each quiesce,
 * rbdx_quiesce_device_read); anything else is refused.
 * @return 0; -EINVAL (it exists and is not a regular file: the message
 *         says what it is) or the negative errno of stat other than
 *         -ENOENT (-EACCES, -ENOTDIR, ...), with a message naming the
 *         path in @p err.  Thread-safe. */
int rbdx_quiesce_device_file_check (const char *path, char *err,
                                    size_t errlen);

/** Check that @p path can be a hook: absolute, a regular file (after
 * following symbolic links), executable by this process (access X_OK).
 * @return 0; -EINVAL (relative, not a regular file), -EACCES (not
 *         executable), or the negative errno of stat (-ENOENT), with a
 *         message naming the path in @p err. */
int rbdx_quiesce_hook_check (const char *path, char *err, size_t errlen);

/** Whether @p device can be the hook's DEVICE argument: 1 to 255 bytes,
 * no leading '-', no control character (bytes below 0x20 and 0x7f). */
bool rbdx_quiesce_device_ok (const char *device);

/** The longest DEVICE, in bytes (rbdx_quiesce_device_ok). */
#define RBDX_QUIESCE_DEVICE_MAX 255

/** Read the hook's DEVICE from the file @p path (quiesce_device_file=),
 * which must be a regular file (symbolic links followed): its whole
 * content, one trailing newline removed, must pass
 * rbdx_quiesce_device_ok.  Anything else is refused before it is
 * opened (opening a FIFO or a device can act, and a FIFO gives only
 * what its writer wrote so far), also when another file is renamed over
 * @p path meanwhile: the inode checked (an O_PATH descriptor) is the one
 * read, through /proc/self/fd.  Reads at most RBDX_QUIESCE_DEVICE_MAX
 * + 2 bytes; @p buf has room for RBDX_QUIESCE_DEVICE_MAX + 1.
 * @return 1 with the device in @p buf; 0 when the file does not exist
 *         (the device is not known yet: @p buf untouched); -EISDIR (a
 *         directory); -EINVAL (not a regular file, or a content
 *         refused: empty, too long, a NUL or control byte, a leading
 *         '-'); -ENOTSUP without /proc mounted; or the negative
 *         errno of open, fstat or read (-EACCES, ...).  Thread-safe. */
int rbdx_quiesce_device_read (const char *path,
                              char buf[RBDX_QUIESCE_DEVICE_MAX + 1]);

/** Fill @p argv (4 slots) with HOOK DEVICE quiesce|unquiesce NULL.  The
 * strings are borrowed from the arguments and literals.
 * @return 0, or -EINVAL when @p device fails rbdx_quiesce_device_ok or
 *         @p hook is not absolute. */
int rbdx_quiesce_hook_argv (const char *hook, const char *device,
                            bool quiesce, const char *argv[4]);

/** Release the strings of @p q and zero it. */
void rbdx_quiesce_options_free (struct rbdx_quiesce_options *q);

#endif /* RBDX_QUIESCE_HOOK_H */
