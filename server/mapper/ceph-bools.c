/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/ceph-bools.c: Ceph's bool options the rbd-nbd personality
 * knows (see ceph-bools.h): every option of type bool of Ceph 16.2.15
 * and 18.2.7 (ceph-conf --show-config prints "true" or "false") in the
 * families of a Ceph client's options: the image's behaviour and cache
 * (rbd_), the client's logs (log_, err_to_, clog_), the messenger (ms_),
 * the objecter, authentication and cephx signatures, debugging, lockdep,
 * tracing.  log_to_journald, err_to_journald, ms_compress_secure and
 * ms_dpdk_enable_tso are Ceph 17 and later.  tests/unit/test-ceph-bools.c
 * checks that no bool of the installed Ceph in these families is
 * missing. */
#include <stddef.h>
#include <string.h>

#include "ceph-bools.h"

const char *const rbdx_ceph_bools[] = {
  "auth_allow_insecure_global_id_reclaim", "auth_debug",
  "auth_expose_insecure_global_id_reclaim",
  "cephx_cluster_require_signatures", "cephx_require_signatures",
  "cephx_service_require_signatures", "cephx_sign_messages",
  "clog_to_graylog", "clog_to_syslog", "debug_allow_any_pool_priority",
  "debug_asok_assert_abort", "debug_asserts_on_shutdown",
  "debug_deliberately_leak_memory", "debug_disable_randomized_ping",
  "err_to_graylog", "err_to_journald", "err_to_stderr", "err_to_syslog",
  "lockdep", "lockdep_force_backtrace", "log_coarse_timestamps",
  "log_flush_on_exit", "log_to_file", "log_to_graylog", "log_to_journald",
  "log_to_stderr", "log_to_syslog", "ms_async_rdma_cm",
  "ms_async_rdma_enable_hugepage", "ms_async_rdma_support_srq",
  "ms_bind_before_connect", "ms_bind_ipv4", "ms_bind_ipv6", "ms_bind_msgr1",
  "ms_bind_msgr2", "ms_bind_prefer_ipv4", "ms_blackhole_client",
  "ms_blackhole_mds", "ms_blackhole_mgr", "ms_blackhole_mon",
  "ms_blackhole_osd", "ms_compress_secure", "ms_crc_data", "ms_crc_header",
  "ms_die_on_bad_msg", "ms_die_on_bug", "ms_die_on_old_message",
  "ms_die_on_skipped_message", "ms_die_on_unhandled_msg",
  "ms_dpdk_debug_allow_loopback", "ms_dpdk_enable_tso",
  "ms_dpdk_hw_flow_control", "ms_dpdk_lro", "ms_dump_on_send",
  "ms_learn_addr_from_peer", "ms_tcp_nodelay",
  "objecter_debug_inject_relock_delay", "objecter_inject_no_watch_ping",
  "objecter_retry_writes_after_first_reply", "perf", "rados_tracing",
  "rbd_auto_exclusive_lock_until_manual_request", "rbd_balance_parent_reads",
  "rbd_balance_snap_reads", "rbd_blkin_trace_all",
  "rbd_blocklist_on_break_lock", "rbd_cache",
  "rbd_cache_block_writes_upfront", "rbd_cache_writethrough_until_flush",
  "rbd_clone_copy_on_read", "rbd_disable_zero_copy_writes",
  "rbd_discard_on_zeroed_write_same", "rbd_enable_alloc_hint",
  "rbd_invalidate_object_map_on_timeout",
  "rbd_journal_object_writethrough_until_flush", "rbd_localize_parent_reads",
  "rbd_localize_snap_reads", "rbd_mirror_memory_autotune",
  "rbd_mirroring_resync_after_disconnect",
  "rbd_move_parent_to_trash_on_remove", "rbd_move_to_trash_on_remove",
  "rbd_non_blocking_aio", "rbd_parent_cache_enabled",
  "rbd_skip_partial_discard", "rbd_tracing", "rbd_validate_names",
  "rbd_validate_pool", "throttler_perf_counter", NULL
};

bool
rbdx_ceph_is_bool (const char *name)
{
  for (size_t i = 0; rbdx_ceph_bools[i]; i++)
    if (strcmp (name, rbdx_ceph_bools[i]) == 0)
      return true;
  return false;
}
