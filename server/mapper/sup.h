/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup.h: the supervisor's own state, shared by its modules
 * (private to the mapper; supervise.h is the interface to `rbdx map`).
 *
 *   supervise.c   the start of the mapping: fork and report
 *                 (rbdx_supervise_start), negotiate, connect
 *   sup-loop.c    the process: setup, the poll loop, signals, unmap
 *   sup-server.c  the server process (start, stop, wait, its log, the
 *                 private directory), the negotiations of re-attach and
 *                 URI size polls
 *   sup-links.c   dead links and re-attach (decisions: relink.h)
 *   sup-resize.c  size file following, URI growth and shrink
 *                 (decisions: resize.h)
 *   sup-state.c   the state file (state.h) from struct sup
 *   sup-log.c     clock, sleep, the log, the ERR report, errno texts
 * Calls run one way: supervise.c -> sup-loop.c -> sup-server.c, and each
 * of those into the last four.
 * One supervisor process per device, single-threaded: nothing here is
 * thread-safe.
 */
#ifndef RBDX_SERVER_SUP_H
#define RBDX_SERVER_SUP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/limits.h"
#include "negotiate.h"
#include "netlink.h"
#include "relink.h"
#include "state.h"
#include "supervise.h"


struct sup {
  const struct rbdx_map_opts *o;
  unsigned conns;
  char dir[256], sock[300], srvlog[520], sizefile[300];
  char backend[RBDX_BACKEND_MAX];
  const char *connect_to;
  char engine_to[320];     /* RBDX_ENGINE_PREFIX + sock (built-in engine) */
  pid_t server;
  int index;
  struct rbdx_nl *cmd, *mc;
  int sigfd, report_fd;
  uint64_t dev_size;
  struct rbdx_copy copies[2 * RBDX_MAX_CONNECTIONS];
  size_t ncopies;
  struct rbdx_relink relink;   /* dead links counted, back-off */
  double last_reattach_msg;
  uint64_t grow_to;
  double grow_since, next_poll, next_server_start, server_started;
  double restart_delay;
  unsigned disconnected_ticks;
  bool usr1;
  bool said_no_size;
  /* The image identity the server stated at map time ("" if none): every
   * server started later is pinned to it (identity=), and a re-attach to
   * a server stating another identity is refused. */
  char identity[RBDX_IDENT_TEXT_MAX];
  unsigned long reattaches, resizes, restarts;   /* for rbdx status */
  char metrics[300];       /* our server's metrics_file */
  char devfile[300];       /* the server's quiesce_device_file= */
};

/* sup-log.c */
/** Seconds on CLOCK_MONOTONIC. */
double now (void);
/** Sleep @p s seconds (signals may cut it short). */
void sleep_s (double s);
/** One timestamped line to stderr (the supervisor's log); the message
 *  (at most 4095 bytes) escaped as die() does (cli.h). */
void __attribute__ ((format (printf, 1, 2))) logmsg (const char *fmt, ...);
/** Longest escaped message of an ERR report, in bytes with its '\0':
 *  what the parent (rbdx_supervise_start) reads in one report. */
#define SUP_REPORT_MAX 2048
/** Write "ERR MESSAGE\n" on @p fd, the message formatted from @p fmt
 *  (at most 4095 bytes) and escaped whole (rbdx_printable_line), so that
 *  a value holding a newline can neither cut it nor add a line of its
 *  own; cut at a whole escape to SUP_REPORT_MAX - 1 bytes. */
void __attribute__ ((format (printf, 2, 3))) sup_report_err (int fd, const char *fmt, ...);
/** A message for the negative errno @p e of a netlink command. */
const char *errno_text (int e);

/* sup-server.c */
/** The last few non-empty lines of the server's log, joined with "; ",
 *  into @p buf of @p len bytes ("" if none). */
void server_log_tail (const struct sup *s, char *buf, size_t len);
/** Wait up to @p secs seconds until the server's socket exists (0), or
 *  the server exits (-1, s->server is then 0), or the time is up (-1),
 *  or the `rbdx map` waiting for the start went away (-2:
 *  sup_caller_gone). */
int wait_server (struct sup *s, double secs);
/** Whether the `rbdx map` (or attach) that waits on s->report_fd for
 *  the start's report is gone (killed, interrupted): its end of the
 *  pipe is closed.  False once the report is made (report_fd -1). */
bool sup_caller_gone (const struct sup *s);
/** Start the rbdx server (nbdkit) on the private socket; s->server is
 *  its pid.  @return 0, -ENOMEM, -EINVAL, or -errno of fork. */
int spawn_server (struct sup *s);
/** Stop the server (SIGTERM, SIGKILL after 30 s) and reap it. */
void stop_server (struct sup *s);
/** Close every copy of the sockets the kernel holds. */
void close_copies (struct sup *s);
/** With quiesce=true (rbdx_server_wants_device_file): write
 *  "/dev/nbdINDEX\n" to s->devfile (a new file renamed over it, 0600),
 *  where the server reads its quiesce hook's DEVICE.  @return 0 (also
 *  when not needed) or -errno. */
int sup_write_device_file (const struct sup *s);
/** Remove the private directory RUN_DIR/sup-PID and its files. */
void remove_private_dir (struct sup *s);
/** Negotiate @p n sockets and hand them to the kernel (sup_hand_over). */
void reattach (struct sup *s, unsigned n);
/** URI mode: ask the server for the export's size; follow it. */
void poll_size (struct sup *s);

/* supervise.c */
/** Become the supervisor of @p o (forked by rbdx_supervise_start): start
 *  the server, negotiate, connect the device, report "OK INDEX SERVER
 *  CONNS", "DUP INDEX" or "ERR MESSAGE" on @p report_fd, then sup_run.
 *  Never returns. */
void __attribute__ ((noreturn)) sup_map (const struct rbdx_map_opts *o, int report_fd);

/* sup-loop.c */
/** Become the supervisor of @p o: session, signals, private directory
 *  and log.  Reports a failure on @p report_fd and exits. */
void sup_setup (struct sup *s, const struct rbdx_map_opts *o, int report_fd);
/** Serve the device until it is unmapped; never returns. */
void __attribute__ ((noreturn)) sup_run (struct sup *s);

/* sup-links.c */
/** Keep copies of @p n sockets negotiated at @p size bytes (closed when
 *  there is no room). */
void sup_add_copies (struct sup *s, const int *fds, size_t n, uint64_t size);
/** Read the pending LINK_DEAD events of our device and count them. */
void sup_read_link_dead (struct sup *s);
/** Close the copies whose @p p entry (one per copy, in order) says the
 *  kernel shut the socket down. */
void sup_drop_shut_copies (struct sup *s, const struct pollfd *p);
/** After rbdx_negotiate_many of @p n sockets @p fds returned @p r (and
 *  @p e, @p why): check the identity, give the sockets to the kernel,
 *  account for them, or back off.  Consumes @p fds. */
void sup_hand_over (struct sup *s, int r, int *fds, unsigned n,
                    const struct rbdx_export *e, const char *why);
/** `rbdx attach` of a device whose dead supervisor's server still runs
 *  (o->orphan): kill it and wait (5 s at most) for the LINK_DEAD events
 *  of its connections. */
void sup_kill_orphan (struct sup *s);

/* sup-resize.c */
/** The image size our server publishes (size_file=), 0 if not there. */
uint64_t sup_read_size_file (const struct sup *s);
/** Image spec: follow the size file. */
void sup_follow_size_file (struct sup *s);
/** NBD URI: the server now says @p size bytes. */
void sup_export_size (struct sup *s, uint64_t size);
/** NBD URI: set the size once growth has all connections at it. */
void sup_finish_growth (struct sup *s);

/* sup-state.c */
/** Write the device's state file (errors are logged).  @return 0 or the
 *  negative errno of rbdx_state_save (the file is then as it was). */
int sup_save_state (struct sup *s);
/** Another connected mapping of image @p identity in the mode of @p o
 *  (read-only or not) and with the same encryption_format= (in order)
 *  and exclusive= parameters.
 *  @return its index; -1 when there is none; -2 when there is one whose
 *          encryption_format= or exclusive= differ, or the mappings
 *          cannot all be read (the reason in @p why, @p whylen bytes). */
int sup_mapped_elsewhere (const char *identity, const struct rbdx_map_opts *o,
                          char *why, size_t whylen);
/** Whether /dev/nbd@p index is a mapping of image spec @p spec: its state
 *  names @p spec and the device is connected (its supervisor may be gone,
 *  waiting for `rbdx attach`).  rbdx_devlink_add's @c live. */
bool sup_devlink_live (int index, const char *spec);

#endif
