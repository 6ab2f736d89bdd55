/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/ceph-bools.c: Ceph's bool options the rbd-nbd personality
 * knows (see ceph-bools.h).  Each was seen as a bool (rados_conf_get:
 * "true" or "false") in Ceph 16.2.15's librados, except log_to_journald
 * and err_to_journald (Ceph 17 and later).  Families of the options a
 * user gives rbd-nbd: the cache and the image's behaviour (rbd_), the
 * client's logs (log_, err_to_), the messenger (ms_), cephx signatures
 * and tracing. */
#include <stddef.h>
#include <string.h>

#include "ceph-bools.h"

const char *const rbdx_ceph_bools[] = {
  "cephx_cluster_require_signatures", "cephx_require_signatures",
  "cephx_service_require_signatures", "cephx_sign_messages",
  "err_to_graylog", "err_to_journald", "err_to_stderr", "err_to_syslog",
  "lockdep", "log_coarse_timestamps", "log_flush_on_exit", "log_to_file",
  "log_to_graylog", "log_to_journald", "log_to_stderr", "log_to_syslog",
  "ms_bind_ipv4", "ms_bind_ipv6", "ms_bind_msgr1", "ms_bind_msgr2",
  "ms_bind_prefer_ipv4", "ms_crc_data", "ms_crc_header", "ms_tcp_nodelay",
  "perf", "rados_tracing",
  "rbd_auto_exclusive_lock_until_manual_request", "rbd_balance_parent_reads",
  "rbd_balance_snap_reads", "rbd_blocklist_on_break_lock", "rbd_cache",
  "rbd_cache_block_writes_upfront", "rbd_cache_writethrough_until_flush",
  "rbd_clone_copy_on_read", "rbd_enable_alloc_hint",
  "rbd_invalidate_object_map_on_timeout", "rbd_localize_parent_reads",
  "rbd_localize_snap_reads", "rbd_mirroring_resync_after_disconnect",
  "rbd_move_parent_to_trash_on_remove", "rbd_move_to_trash_on_remove",
  "rbd_non_blocking_aio", "rbd_parent_cache_enabled",
  "rbd_skip_partial_discard", "rbd_validate_names", "rbd_validate_pool",
  "throttler_perf_counter", NULL
};

bool
rbdx_ceph_is_bool (const char *name)
{
  for (size_t i = 0; rbdx_ceph_bools[i]; i++)
    if (strcmp (name, rbdx_ceph_bools[i]) == 0)
      return true;
  return false;
}
