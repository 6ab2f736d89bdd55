/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/ceph-bools.h: the Ceph configuration options of type bool
 * that the rbd-nbd personality knows (ceph-bools.c), pure.
 *
 * Ceph's own argument parser decides by the option's type whether
 * "--NAME" takes the next word as its value: for a bool it never does
 * ("--NAME" alone is true, "--no-NAME" false, "--NAME=VALUE" either),
 * for every other type it does (Ceph src/common/config.cc, parse_option:
 * ceph_argparse_binary_flag and the "--no-" prefix for TYPE_BOOL,
 * ceph_argparse_witharg otherwise).  The mapper never links librados
 * (HACKING.md: it reaches the cluster only through its server), so the
 * names are a list, checked against the installed librados by
 * tests/unit/test-ceph-bools.c: each is a bool there, or unknown to that
 * Ceph (which then refuses ceph.NAME= when the server starts).
 */
#ifndef RBDX_SERVER_CEPH_BOOLS_H
#define RBDX_SERVER_CEPH_BOOLS_H

#include <stdbool.h>

/** The names, '_' as separator, NULL-terminated. */
extern const char *const rbdx_ceph_bools[];

/** Whether @p name ("rbd_cache", '_' as separator, no "--") is one of
 *  rbdx_ceph_bools.  Thread-safe, pure. */
bool rbdx_ceph_is_bool (const char *name);

#endif
