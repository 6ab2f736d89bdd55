/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the rbd-nbd personality's command line
 * (server/mapper/nbd-compat.h).
 *
 * The argument vectors are the ones rbd-nbd is really given: ceph-csi's
 * internal/rbd/rbd_attach.go (createPath: map and attach with
 * --try-netlink --reattach-timeout=300 --io-timeout=0 and --cookie=VOLID
 * when the tool has cookies; getDeviceList: list-mapped --format=json;
 * detachRBDImageOrDeviceSpec: unmap), and the rbd CLI's (Ceph
 * src/tools/rbd/action/Nbd.cc: Ceph global options first, then the
 * subcommand and spec, then --read-only, --exclusive and each -o KEY[=V]
 * split at ',' as --KEY[=V]; recorded from Debian's rbd 16.2.15 running a
 * stand-in rbd-nbd beside it).  Each test asserts the operation, the
 * options and the plugin parameters, or rbd-nbd's own message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapper/nbd-compat.h"
#include "mapper/target.h"

static char *words[64];
static int nwords;

/* @p line split at spaces, after "rbd-nbd" (argv[0]). */
static char **
argv_of (const char *line)
{
  static char buf[4096];
  char *save, *w;

  snprintf (buf, sizeof buf, "%s", line);
  nwords = 0;
  words[nwords++] = (char *) "rbd-nbd";
  for (w = strtok_r (buf, " ", &save); w; w = strtok_r (NULL, " ", &save))
    words[nwords++] = w;
  words[nwords] = NULL;
  return words;
}

static struct rbdx_nbd_args a;

static void
parse_ok (const char *line)
{
  char **v = argv_of (line);
  int r = rbdx_nbd_parse (nwords, v, &a);
  if (r != 0)
    fail_msg ("'%s': %d %s", line, r, a.msg);
  /* What map and attach hand the server passes the mapper's argument
   * check (target.h); ceph.keyfile= never reaches it (cmd-nbd.c turns
   * it into a keyring file of the mapping's own). */
  if ((a.cmd == RBDX_NBD_MAP || a.cmd == RBDX_NBD_ATTACH) && *a.target) {
    char *p[RBDX_NBD_MAX_PARAMS], why[512];
    size_t n = 0;
    for (size_t i = 0; i < a.nparams; i++)
      if (strncmp (a.params[i], "ceph.keyfile=", 13) != 0)
        p[n++] = a.params[i];
    if (rbdx_args_check (a.target, p, n, why, sizeof why) != 0)
      fail_msg ("'%s': the server's arguments are refused: %s", line, why);
  }
}

/* The line is refused with exactly @p msg. */
static void
parse_bad (const char *line, const char *msg)
{
  char **v = argv_of (line);
  int r = rbdx_nbd_parse (nwords, v, &a);
  if (r != -EINVAL)
    fail_msg ("'%s' was accepted", line);
  if (strncmp (a.msg, msg, strlen (msg)) != 0)
    fail_msg ("'%s': '%s', wanted '%s'", line, a.msg, msg);
  rbdx_nbd_args_free (&a);
}

static void
assert_param (const char *key, const char *value)
{
  const char *v = rbdx_nbd_param (&a, key);
  if (!v)
    fail_msg ("no parameter %s", key);
  assert_string_equal (v, value);
}

#define CSI_GLOBAL "--id csi-rbd-node -m 10.0.0.1:6789,10.0.0.2:6789 " \
  "--keyfile=/tmp/csi/keys/keyfile-2203 --log-file /var/log/ceph/rbd-nbd-vol1.log"
#define VOLID "0001-0009-rook-ceph-0000000000000002-ab6b5e3f-1c9c-11ee-8d7e-0242ac110003"

static void
assert_csi_global (void)
{
  assert_param ("id", "csi-rbd-node");
  assert_param ("mon_host", "10.0.0.1:6789,10.0.0.2:6789");
  assert_param ("ceph.keyfile", "/tmp/csi/keys/keyfile-2203");
  assert_param ("ceph.log_file", "/var/log/ceph/rbd-nbd-vol1.log");
  assert_string_equal (a.log_file, "/var/log/ceph/rbd-nbd-vol1.log");
  assert_int_equal (a.nparams, 4);
}

/* ceph-csi createPath, map, the tool with cookies. */
static void
test_csi_map_cookie (void **state)
{
  (void) state;
  parse_ok (CSI_GLOBAL " map replicapool/csi-vol-1 --try-netlink "
            "--reattach-timeout=300 --io-timeout=0 --cookie=" VOLID);
  assert_int_equal (a.cmd, RBDX_NBD_MAP);
  assert_string_equal (a.target, "replicapool/csi-vol-1");
  assert_true (a.try_netlink);
  assert_int_equal (a.reattach_timeout, 300);
  assert_int_equal (a.io_timeout, 0);
  assert_string_equal (a.cookie, VOLID);
  assert_false (a.read_only);
  assert_int_equal (a.device_index, -1);
  assert_csi_global ();
  rbdx_nbd_args_free (&a);
}

/* Without cookie support, read-only, with a RADOS namespace. */
static void
test_csi_map_plain_ro (void **state)
{
  (void) state;
  parse_ok (CSI_GLOBAL " map replicapool/ns1/csi-vol-2 --try-netlink "
            "--reattach-timeout=300 --io-timeout=0 --read-only");
  assert_int_equal (a.cmd, RBDX_NBD_MAP);
  assert_string_equal (a.target, "replicapool/ns1/csi-vol-2");
  assert_null (a.cookie);
  assert_true (a.read_only);
  assert_csi_global ();
  rbdx_nbd_args_free (&a);
}

/* Older ceph-csi through `rbd ... map SPEC --device-type nbd --options
 * try-netlink ...`: what the rbd CLI runs. */
static void
test_csi_map_through_rbd (void **state)
{
  (void) state;
  parse_ok (CSI_GLOBAL " map replicapool/csi-vol-1 --read-only --try-netlink "
            "--reattach-timeout=300 --io-timeout=0 --cookie=" VOLID);
  assert_int_equal (a.cmd, RBDX_NBD_MAP);
  assert_true (a.read_only);
  assert_string_equal (a.cookie, VOLID);
  assert_csi_global ();
  rbdx_nbd_args_free (&a);
}

/* ceph-csi's heal after a node plugin restart. */
static void
test_csi_attach (void **state)
{
  (void) state;
  parse_ok (CSI_GLOBAL " attach replicapool/csi-vol-1 --device /dev/nbd0 "
            "--try-netlink --reattach-timeout=300 --io-timeout=0 --cookie=" VOLID);
  assert_int_equal (a.cmd, RBDX_NBD_ATTACH);
  assert_string_equal (a.target, "replicapool/csi-vol-1");
  assert_string_equal (a.device, "/dev/nbd0");
  assert_int_equal (a.device_index, 0);
  assert_int_equal (a.reattach_timeout, 300);
  assert_int_equal (a.io_timeout, 0);
  assert_string_equal (a.cookie, VOLID);
  assert_csi_global ();
  rbdx_nbd_args_free (&a);
  /* Its user map options, split at ',' into --KEY[=V] (appendRbdNbdCliOptions). */
  parse_ok ("attach replicapool/csi-vol-1 --device /dev/nbd12 --try-netlink "
            "--reattach-timeout=300 --io-timeout=0 --cookie=v --io-timeout=30 --read-only");
  assert_int_equal (a.device_index, 12);
  assert_int_equal (a.io_timeout, 30);
  assert_true (a.read_only);
  rbdx_nbd_args_free (&a);
  parse_bad ("attach replicapool/csi-vol-1 --cookie=v",
             "rbd-nbd: must specify device to attach");
  parse_bad ("attach replicapool/csi-vol-1 --device /dev/sda",
             "rbd-nbd: invalid device path: /dev/sda (expected /dev/nbd{num})");
  parse_bad ("attach p/i --device nbd1", "rbd-nbd: invalid device path: nbd1");
  parse_bad ("attach p/i --device /dev/nbd1x", "rbd-nbd: invalid device path");
}

static void
test_csi_list_unmap (void **state)
{
  (void) state;
  parse_ok ("list-mapped --format=json");
  assert_int_equal (a.cmd, RBDX_NBD_LIST);
  assert_int_equal (a.format, RBDX_NBD_JSON);
  assert_false (a.pretty);
  rbdx_nbd_args_free (&a);
  /* `rbd device list -t nbd --format json --pretty-format` */
  parse_ok ("list-mapped --format json --pretty-format");
  assert_int_equal (a.format, RBDX_NBD_JSON);
  assert_true (a.pretty);
  rbdx_nbd_args_free (&a);
  parse_ok ("list-mapped");
  assert_int_equal (a.format, RBDX_NBD_PLAIN);
  rbdx_nbd_args_free (&a);
  parse_ok ("list-mapped --format xml");
  assert_int_equal (a.format, RBDX_NBD_XML);
  rbdx_nbd_args_free (&a);
  parse_bad ("list-mapped --format yaml", "rbd-nbd: invalid output format: yaml");
  parse_bad ("list-mapped extra", "rbd-nbd: unknown args: extra");

  parse_ok ("unmap replicapool/ns1/csi-vol-2");
  assert_int_equal (a.cmd, RBDX_NBD_UNMAP);
  assert_string_equal (a.target, "replicapool/ns1/csi-vol-2");
  assert_null (a.device);
  rbdx_nbd_args_free (&a);
  parse_ok ("unmap /dev/nbd3");
  assert_int_equal (a.cmd, RBDX_NBD_UNMAP);
  assert_null (a.spec);
  assert_int_equal (a.device_index, 3);
  rbdx_nbd_args_free (&a);
  /* A spec without a pool names rbd-nbd's default pool. */
  parse_ok ("unmap img");
  assert_string_equal (a.target, "rbd/img");
  rbdx_nbd_args_free (&a);
  parse_ok ("--rbd_default_pool=mypool unmap img@s");
  assert_string_equal (a.target, "mypool/img@s");
  rbdx_nbd_args_free (&a);
  parse_bad ("unmap", "rbd-nbd: must specify nbd device or image-or-snap-spec");
  /* `rbd device unmap -t nbd /dev/nbd3 -o force`: rbd-nbd has no --force. */
  parse_bad ("unmap /dev/nbd3 --force", "rbd-nbd: unknown args: --force");

  parse_ok ("detach /dev/nbd1");
  assert_int_equal (a.cmd, RBDX_NBD_DETACH);
  assert_int_equal (a.device_index, 1);
  rbdx_nbd_args_free (&a);
  parse_ok ("detach p/i");
  assert_int_equal (a.cmd, RBDX_NBD_DETACH);
  assert_string_equal (a.target, "p/i");
  rbdx_nbd_args_free (&a);
}

/* What the rbd CLI (Nbd.cc) makes of its options. */
static void
test_rbd_cli_options (void **state)
{
  (void) state;
  /* rbd device map -t nbd -o try-netlink,reattach-timeout=120,io_timeout=30,
   *   nbds_max=32,max_part=0,device=/dev/nbd4 --exclusive p/i */
  parse_ok ("map p/i --exclusive --try-netlink --reattach-timeout=120 "
            "--io_timeout=30 --nbds_max=32 --max_part=0 --device=/dev/nbd4");
  assert_true (a.exclusive);
  assert_int_equal (a.reattach_timeout, 120);
  assert_int_equal (a.io_timeout, 30);
  assert_int_equal (a.nbds_max, 32);
  assert_int_equal (a.max_part, 0);
  assert_int_equal (a.device_index, 4);
  assert_int_equal (a.nparams, 0);
  assert_false (a.notrim);
  rbdx_nbd_args_free (&a);
  /* rbd device map -t nbd -o notrim p/i: cmd-nbd.c passes notrim=true. */
  parse_ok ("map p/i --notrim");
  assert_true (a.notrim);
  assert_int_equal (a.cmd, RBDX_NBD_MAP);
  assert_int_equal (a.nparams, 0);
  rbdx_nbd_args_free (&a);
  parse_ok ("attach p/i --device /dev/nbd2 --notrim");
  assert_true (a.notrim);
  rbdx_nbd_args_free (&a);
  parse_bad ("map p/i --notrim=1", "rbd-nbd: unknown args: --notrim=1");
  /* rbd device map -t nbd -o snap-id=4 p/i: cmd-nbd.c passes snap_id=4
   * and maps read-only. */
  parse_ok ("map p/i --snap-id=4");
  assert_int_equal (a.snap_id, 4);
  assert_string_equal (a.target, "p/i");
  rbdx_nbd_args_free (&a);
  parse_ok ("attach --device /dev/nbd3 p/i --snap-id 7");
  assert_int_equal (a.snap_id, 7);
  rbdx_nbd_args_free (&a);
  parse_ok ("map p/i");
  assert_int_equal (a.snap_id, -1);
  rbdx_nbd_args_free (&a);
  /* rbd device map -t nbd -o notrim,snap-id=4 rbd/x, as Debian's rbd
   * 16.2.15 runs the rbd-nbd beside it (recorded). */
  parse_ok ("map rbd/x --notrim --snap-id=4");
  assert_true (a.notrim);
  assert_int_equal (a.snap_id, 4);
  assert_int_equal (a.nparams, 0);
  rbdx_nbd_args_free (&a);
  /* rbd --cluster c -n client.x --mon_host 1.2.3.4 --rbd_cache=false
   *   --debug-rbd 20 device map -t nbd p/i */
  parse_ok ("--cluster c -n client.x --mon_host 1.2.3.4 --rbd_cache=false "
            "--debug-rbd 20 map p/i");
  assert_param ("cluster", "c");
  assert_param ("id", "x");
  assert_param ("mon_host", "1.2.3.4");
  assert_param ("ceph.rbd_cache", "false");
  assert_param ("ceph.debug_rbd", "20");
  assert_int_equal (a.nparams, 5);
  rbdx_nbd_args_free (&a);
  /* -k and --keyring: the later one wins, as in Ceph. */
  parse_ok ("-k /etc/keyring --keyring=/k2 map p/i");
  assert_param ("keyring", "/k2");
  assert_int_equal (a.nparams, 1);
  rbdx_nbd_args_free (&a);
  parse_ok ("--mon-host 1.2.3.4 -c /etc/ceph/x.conf map p/i --log-file=/l "
            "--admin-socket /run/a.asok --rbd_cache");
  assert_param ("mon_host", "1.2.3.4");
  assert_param ("conf", "/etc/ceph/x.conf");
  assert_param ("ceph.log_file", "/l");
  assert_param ("ceph.admin_socket", "/run/a.asok");
  assert_param ("ceph.rbd_cache", "true");
  rbdx_nbd_args_free (&a);
  /* rbd device attach -t nbd --device /dev/nbd1 p/i --cookie abc --read-only */
  parse_ok ("attach p/i --device /dev/nbd1 --cookie abc --read-only");
  assert_int_equal (a.cmd, RBDX_NBD_ATTACH);
  assert_string_equal (a.cookie, "abc");
  rbdx_nbd_args_free (&a);
  parse_ok ("map p/i --show-cookie --connections=4");
  assert_true (a.show_cookie);
  assert_int_equal (a.connections, 4);
  rbdx_nbd_args_free (&a);
  parse_ok ("map p/i --exclusive --encryption-format=luks2 "
            "--encryption-passphrase-file=/etc/p");
  assert_int_equal (a.nenc, 1);
  assert_string_equal (a.encryption_format[0], "luks2");
  assert_string_equal (a.passphrase_file[0], "/etc/p");
  rbdx_nbd_args_free (&a);
  /* rbd-nbd's default format, once per file, and several specs in the
   * order given (the image's own first). */
  parse_ok ("map p/i --encryption-passphrase-file /c "
            "--encryption-passphrase-file /p");
  assert_int_equal (a.nenc, 2);
  assert_string_equal (a.encryption_format[0], "luks");
  assert_string_equal (a.encryption_format[1], "luks");
  assert_string_equal (a.passphrase_file[1], "/p");
  rbdx_nbd_args_free (&a);
  parse_ok ("map p/i --encryption-format luks2 --encryption-passphrase-file /c "
            "--encryption-format=luks1 --encryption-passphrase-file=/p");
  assert_int_equal (a.nenc, 2);
  assert_string_equal (a.encryption_format[0], "luks2");
  assert_string_equal (a.encryption_format[1], "luks1");
  assert_string_equal (a.passphrase_file[0], "/c");
  assert_string_equal (a.passphrase_file[1], "/p");
  rbdx_nbd_args_free (&a);
  parse_ok ("map p/i@snap1");
  assert_string_equal (a.target, "p/i@snap1");
  rbdx_nbd_args_free (&a);
  /* -o ',x' gives "--" and "--x". */
  parse_bad ("map p/i -- --x", "rbd-nbd: unknown args: --");
  /* rbd device map -t nbd -o timeout=5 */
  parse_ok ("map p/i --timeout=5");
  assert_int_equal (a.io_timeout, 5);
  assert_string_equal (a.warning, "rbd-nbd: --timeout is deprecated (use --io-timeout)");
  rbdx_nbd_args_free (&a);
}

/* '-' and '_' are one in option names (ceph_argparse). */
static void
test_dashes (void **state)
{
  (void) state;
  parse_ok ("map p/i --read_only --io-timeout 7 --nbds-max=4 --max-part 8 "
            "--reattach_timeout=9 --try_netlink --mon-host=m");
  assert_true (a.read_only);
  assert_int_equal (a.io_timeout, 7);
  assert_int_equal (a.nbds_max, 4);
  assert_int_equal (a.max_part, 8);
  assert_int_equal (a.reattach_timeout, 9);
  assert_param ("mon_host", "m");
  rbdx_nbd_args_free (&a);
  /* Defaults. */
  parse_ok ("map p/i");
  assert_int_equal (a.io_timeout, -1);
  assert_int_equal (a.reattach_timeout, 30);
  assert_int_equal (a.nbds_max, -1);
  assert_int_equal (a.max_part, -1);
  rbdx_nbd_args_free (&a);
}

/* rbd-nbd's own messages, checked against Debian's rbd-nbd 16.2.15. */
static void
test_rbd_nbd_messages (void **state)
{
  (void) state;
  parse_bad ("--bogus map p/i", "rbd-nbd: unknown command: --bogus");
  parse_bad ("map p/i --bogus", "rbd-nbd: unknown args: --bogus");
  parse_bad ("list-mapped --bogus=1", "rbd-nbd: unknown args: --bogus=1");
  parse_bad ("-i foo list-mapped", "rbd-nbd: unknown command: -i");
  parse_bad ("list-mapped --read-only=1", "rbd-nbd: unknown args: --read-only=1");
  parse_bad ("", "rbd-nbd: must specify command");
  parse_bad ("frob", "rbd-nbd: unknown command: frob");
  parse_bad ("map", "rbd-nbd: must specify image-or-snap-spec");
  parse_bad ("map a/b c", "rbd-nbd: unknown args: c");
  parse_bad ("map p/i --io-timeout x", "rbd-nbd: The option value 'x' is invalid");
  parse_bad ("map p/i --io-timeout -1", "rbd-nbd: Invalid argument for io-timeout!");
  parse_bad ("map p/i --reattach-timeout=-5",
             "rbd-nbd: Invalid argument for reattach-timeout!");
  parse_bad ("map p/i --max_part 300", "rbd-nbd: Invalid argument for max_part(0~255)!");
  parse_bad ("map p/i --nbds-max=-1", "rbd-nbd: Invalid argument for nbds_max!");
  parse_bad ("map p/i --connections 17", "rbd-nbd: Invalid argument for connections(1~16)!");
  parse_bad ("map p/i --encryption-format luks3", "rbd-nbd: Invalid encryption format");
  parse_bad ("map p/i --encryption-format luks2",
             "rbd-nbd: Encryption formats count does not match passphrase files count");
  parse_bad ("map p/i --device", "Option --device requires an argument.");
  parse_bad ("map p/i@s --snap-id 3", "rbd-nbd: use either snapname or snapid, not both");
  parse_bad ("map p/i --snap-id x", "rbd-nbd: The option value 'x' is invalid");
  /* --help and --version win where they stand. */
  parse_ok ("map p/i --help");
  assert_int_equal (a.cmd, RBDX_NBD_HELP);
  rbdx_nbd_args_free (&a);
  parse_ok ("-h");
  assert_int_equal (a.cmd, RBDX_NBD_HELP);
  rbdx_nbd_args_free (&a);
  parse_ok ("--version");
  assert_int_equal (a.cmd, RBDX_NBD_VERSION);
  rbdx_nbd_args_free (&a);
}

/* What rbdx does not do yet: more than 4 encryption formats or files for
 * every command (counted as they are read), --keyfile with --keyring for
 * map and attach only, --setuser and --setgroup always. */
static void
test_refused (void **state)
{
  (void) state;
  parse_bad ("map p/i --encryption-format luks --encryption-format luks "
             "--encryption-format luks --encryption-format luks "
             "--encryption-format luks",
             "rbd-nbd: rbdx loads at most 4 encryption formats");
  parse_bad ("unmap /dev/nbd0 --encryption-format luks --encryption-format luks "
             "--encryption-format luks --encryption-format luks "
             "--encryption-format luks",
             "rbd-nbd: rbdx loads at most 4 encryption formats");
  parse_bad ("list-mapped --encryption-passphrase-file /a "
             "--encryption-passphrase-file /b --encryption-passphrase-file /c "
             "--encryption-passphrase-file /d --encryption-passphrase-file /e",
             "rbd-nbd: rbdx takes at most 4 passphrase files");
  parse_bad ("map p/i --encryption-passphrase-file /a --encryption-passphrase-file /b "
             "--encryption-passphrase-file /c --encryption-passphrase-file /d "
             "--encryption-passphrase-file /e",
             "rbd-nbd: rbdx takes at most 4 passphrase files");
  parse_bad ("map p/i --keyfile /k --keyring /r",
             "rbd-nbd: --keyfile and --keyring: give one");
  parse_ok ("unmap /dev/nbd0 --keyfile /k --keyring /r");
  rbdx_nbd_args_free (&a);
  parse_bad ("--setuser ceph map p/i", "rbd-nbd: --setuser is not supported by rbdx");
  /* Foreground: done (cmd-nbd.c stays until unmapped). */
  parse_ok ("attach p/i --device /dev/nbd0 -f");
  assert_true (a.foreground);
  rbdx_nbd_args_free (&a);
  parse_ok ("map -d p/i");
  assert_true (a.foreground);
  rbdx_nbd_args_free (&a);
  /* --quiesce and --quiesce-hook: accepted for map (cmd-nbd.c passes
   * quiesce=true and quiesce_hook=). */
  parse_ok ("map p/i --quiesce --quiesce-hook /usr/local/bin/hook");
  assert_true (a.quiesce);
  assert_string_equal (a.quiesce_hook, "/usr/local/bin/hook");
  rbdx_nbd_args_free (&a);
  parse_bad ("map p/i --quiesce --quiesce-hook hooks/h",
             "rbd-nbd: --quiesce-hook hooks/h: an absolute path");
  parse_bad ("map p/i --quiesce --quiesce-hook -x",
             "rbd-nbd: --quiesce-hook -x: an absolute path");
  /* Elsewhere rbd-nbd ignores them, and so does rbdx. */
  parse_ok ("list-mapped -f --quiesce --notrim");
  assert_int_equal (a.cmd, RBDX_NBD_LIST);
  rbdx_nbd_args_free (&a);
}

/* Every value is hostile. */
static void
test_hostile (void **state)
{
  char *v[8];

  (void) state;
  parse_bad ("map p/a=b", "rbd-nbd: invalid spec 'p/a=b'");
  parse_bad ("map p=x/a", "rbd-nbd: invalid spec 'p=x/a'");
  parse_bad ("map -", "rbd-nbd: invalid spec '-'");
  parse_bad ("map nbd://h/x", "rbd-nbd: invalid spec 'nbd://h/x'");
  parse_bad ("map a/b/c/d", "rbd-nbd: invalid spec 'a/b/c/d'");
  parse_bad ("map p//i", "rbd-nbd: invalid spec 'p//i'");
  parse_bad ("unmap p/i@", "rbd-nbd: invalid spec 'p/i@'");
  parse_bad ("map p/i --cookie rbdx:p/other", "rbd-nbd: invalid cookie 'rbdx:p/other'");
  parse_bad ("map p/i --cookie a/b", "rbd-nbd: invalid cookie 'a/b'");
  parse_bad ("map p/i --key AQBxyz==", "rbd-nbd: --key is refused by rbdx");
  parse_bad ("--name osd.0 map p/i", "rbd-nbd: --name 'osd.0': rbdx connects as a Ceph client");
  parse_bad ("--id= map p/i", "rbd-nbd: --id= needs a value");
  /* The cluster name is a path component (/etc/ceph/CLUSTER.conf). */
  parse_bad ("--cluster ../../tmp/x map p/i", "rbd-nbd: invalid cluster name "
             "'../../tmp/x'");
  parse_bad ("--cluster=a.b map p/i", "rbd-nbd: invalid cluster name 'a.b'");
  /* "." and ".." are no names (the devlink would leave /dev/rbdx). */
  parse_bad ("map ../img", "rbd-nbd: invalid spec '../img'");
  parse_bad ("map p/..", "rbd-nbd: invalid spec 'p/..'");
  parse_bad ("map p/./i", "rbd-nbd: invalid spec 'p/./i'");
  /* The pool a bare image name gets is a pool name, nothing more. */
  parse_bad ("--rbd_default_pool=a/b map img", "rbd-nbd: invalid rbd_default_pool 'a/b' "
             "for spec 'img'");
  parse_bad ("--rbd-default-pool=a@b map img", "rbd-nbd: invalid rbd_default_pool 'a@b'");
  parse_bad ("--rbd_default_pool=-x unmap img", "rbd-nbd: invalid rbd_default_pool '-x'");
  parse_bad ("--rbd_default_pool=a=b map img", "rbd-nbd: invalid rbd_default_pool 'a=b'");
  parse_ok ("--rbd_default_pool=a/b map p/img");
  assert_string_equal (a.target, "p/img");
  rbdx_nbd_args_free (&a);

  /* A newline in the spec, the cookie or a Ceph option's value; escaped
   * (rbdx_printable) so it cannot forge a line of its own. */
  v[0] = (char *) "rbd-nbd";
  v[1] = (char *) "unmap";
  v[2] = (char *) "p/i\nrbd-nbd: p/i is not mapped";
  assert_int_equal (rbdx_nbd_parse (3, v, &a), -EINVAL);
  assert_string_equal (a.msg, "rbd-nbd: invalid spec 'p/i\\x0arbd-nbd: p/i is not mapped' "
                       "(a spec is [pool/[namespace/]]image[@snap], not empty, not "
                       "starting with '-', without '=', control characters or bytes "
                       "that are not UTF-8)");
  v[1] = (char *) "map";
  v[2] = (char *) "p/i";
  v[3] = (char *) "--cookie=a\nb";
  assert_int_equal (rbdx_nbd_parse (4, v, &a), -EINVAL);
  assert_non_null (strstr (a.msg, "invalid cookie 'a\\x0ab'"));
  v[3] = (char *) "--id";
  v[4] = (char *) "admin\nmon_host=evil";
  assert_int_equal (rbdx_nbd_parse (5, v, &a), -EINVAL);
  assert_string_equal (a.msg, "rbd-nbd: the value of --id holds a control character "
                       "or a byte that is not UTF-8");
  v[3] = (char *) "--rbd_cache=a\x1f" "b";
  assert_int_equal (rbdx_nbd_parse (4, v, &a), -EINVAL);
  rbdx_nbd_args_free (&a);
}

/* rbd-nbd's attach rules on the kernel's backend identifier. */
static void
test_cookie_rules (void **state)
{
  const char *msg;

  (void) state;
  assert_true (rbdx_nbd_cookie_ok ("vol1", "vol1", &msg));
  assert_null (msg);
  assert_false (rbdx_nbd_cookie_ok ("vol1", "vol2", &msg));
  assert_string_equal (msg, "rbd-nbd: cookie mismatch");
  assert_false (rbdx_nbd_cookie_ok ("vol1", NULL, &msg));
  assert_string_equal (msg, "rbd-nbd: must specify cookie to attach");
  assert_false (rbdx_nbd_cookie_ok (NULL, "vol1", &msg));
  assert_string_equal (msg, "rbd-nbd: kernel does not have cookie support");
  assert_false (rbdx_nbd_cookie_ok ("", "vol1", &msg));
  assert_string_equal (msg, "rbd-nbd: kernel does not have cookie support");
  /* rbdx's own identifier is no cookie. */
  assert_true (rbdx_nbd_cookie_ok ("rbdx:p/i", NULL, &msg));
  assert_false (rbdx_nbd_cookie_ok ("rbdx:p/i", "vol1", &msg));
  assert_string_equal (msg, "rbd-nbd: cookie mismatch");
  assert_true (rbdx_nbd_cookie_ok (NULL, NULL, &msg));
  {
    char buf[300], b[300];
    assert_string_equal (rbdx_nbd_cookie_of ("rbdx:p/i", buf, sizeof buf), "");
    assert_string_equal (rbdx_nbd_cookie_of (NULL, buf, sizeof buf), "");
    assert_string_equal (rbdx_nbd_cookie_of (VOLID, buf, sizeof buf), VOLID);
    /* The personality's identifiers carry the connection count. */
    assert_int_equal (rbdx_nbd_backend_make (VOLID, 4, b, sizeof b), 0);
    assert_string_equal (b, VOLID ";rbdx:connections=4");
    assert_string_equal (rbdx_nbd_cookie_of (b, buf, sizeof buf), VOLID);
    assert_int_equal (rbdx_nbd_backend_connections (b), 4);
    assert_true (rbdx_nbd_cookie_ok (b, VOLID, &msg));
    assert_false (rbdx_nbd_cookie_ok (b, VOLID ";rbdx:connections=4", &msg));
    assert_false (rbdx_nbd_cookie_ok (b, NULL, &msg));
    assert_string_equal (msg, "rbd-nbd: must specify cookie to attach");
    assert_int_equal (rbdx_nbd_backend_connections (VOLID), 0);
    assert_int_equal (rbdx_nbd_backend_connections ("v;rbdx:connections=17"), 0);
    assert_int_equal (rbdx_nbd_backend_connections ("v;rbdx:connections=3x"), 0);
    assert_int_equal (rbdx_nbd_backend_connections (NULL), 0);
    assert_int_equal (rbdx_nbd_backend_make (VOLID, 4, b, 20), -ENAMETOOLONG);
  }
}

/* The identity the kernel's identifier pins (an attach without the state
 * file refuses another image). */
static void
test_backend_identity (void **state)
{
  char b[RBDX_NBD_BACKEND_MAX], buf[400];
  const char *msg;

  (void) state;
  assert_int_equal (rbdx_nbd_backend_make (VOLID, 4, b, sizeof b), 0);
  assert_int_equal (rbdx_nbd_backend_add_identity (b, sizeof b, "3/ns/1017aa180219"), 0);
  assert_string_equal (b, VOLID ";rbdx:connections=4;rbdx:identity=3/ns/1017aa180219");
  assert_string_equal (rbdx_nbd_backend_identity (b, buf, sizeof buf), "3/ns/1017aa180219");
  /* The cookie, the count and rbd-nbd's rules as without it. */
  assert_string_equal (rbdx_nbd_cookie_of (b, buf, sizeof buf), VOLID);
  assert_int_equal (rbdx_nbd_backend_connections (b), 4);
  assert_true (rbdx_nbd_cookie_ok (b, VOLID, &msg));
  assert_false (rbdx_nbd_cookie_ok (b, "other", &msg));
  assert_string_equal (msg, "rbd-nbd: cookie mismatch");
  /* Once only; never on an identifier that is not the personality's. */
  assert_int_equal (rbdx_nbd_backend_add_identity (b, sizeof b, "4/x"), 0);
  assert_string_equal (rbdx_nbd_backend_identity (b, buf, sizeof buf), "3/ns/1017aa180219");
  snprintf (b, sizeof b, "rbdx:rbd/img");
  assert_int_equal (rbdx_nbd_backend_add_identity (b, sizeof b, "3/1"), 0);
  assert_string_equal (b, "rbdx:rbd/img");
  assert_string_equal (rbdx_nbd_backend_identity (b, buf, sizeof buf), "");
  assert_string_equal (rbdx_nbd_backend_identity (VOLID ";rbdx:connections=4", buf, sizeof buf), "");
  assert_string_equal (rbdx_nbd_backend_identity (NULL, buf, sizeof buf), "");
  /* A cookie cannot fake one: ';' is no cookie character. */
  assert_string_equal (rbdx_nbd_backend_identity (VOLID, buf, sizeof buf), "");
  /* Empty, control characters, too long: nothing appended / refused. */
  assert_int_equal (rbdx_nbd_backend_make ("v", 2, b, sizeof b), 0);
  assert_int_equal (rbdx_nbd_backend_add_identity (b, sizeof b, ""), 0);
  assert_int_equal (rbdx_nbd_backend_add_identity (b, sizeof b, "3/a\nb"), 0);
  assert_string_equal (b, "v;rbdx:connections=2");
  assert_int_equal (rbdx_nbd_backend_add_identity (b, 30, "3/1017aa180219"), -ENAMETOOLONG);
  assert_string_equal (b, "v;rbdx:connections=2");
  {
    /* The longest cookie with the longest identity fits. */
    char cookie[RBDX_NBD_COOKIE_MAX + 1], id[320];
    memset (cookie, 'c', sizeof cookie - 1);
    cookie[sizeof cookie - 1] = '\0';
    memset (id, 'i', sizeof id - 1);
    id[sizeof id - 1] = '\0';
    assert_int_equal (rbdx_nbd_backend_make (cookie, 16, b, sizeof b), 0);
    assert_int_equal (rbdx_nbd_backend_add_identity (b, sizeof b, id), 0);
    assert_int_equal (rbdx_nbd_backend_connections (b), 16);
  }
}

/* Ceph's bools never take the next word (ceph-bools.h); --no-NAME is
 * false; other options given alone still take a value. */
static void
test_ceph_bools (void **state)
{
  (void) state;
  parse_ok ("map --rbd-cache rbd/x");
  assert_string_equal (a.target, "rbd/x");
  assert_param ("ceph.rbd_cache", "true");
  rbdx_nbd_args_free (&a);
  parse_ok ("map --no-rbd-cache rbd/x --log_to_stderr --ms-crc-data=false");
  assert_string_equal (a.target, "rbd/x");
  assert_param ("ceph.rbd_cache", "false");
  assert_param ("ceph.log_to_stderr", "true");
  assert_param ("ceph.ms_crc_data", "false");
  rbdx_nbd_args_free (&a);
  parse_ok ("--err-to-stderr map p/i");
  assert_int_equal (a.cmd, RBDX_NBD_MAP);
  assert_param ("ceph.err_to_stderr", "true");
  rbdx_nbd_args_free (&a);
  /* Not a bool: the next word is its value, as in Ceph. */
  parse_ok ("--debug-rbd 20 map p/i");
  assert_param ("ceph.debug_rbd", "20");
  rbdx_nbd_args_free (&a);
  /* --no- of a name that is no bool: an option rbd-nbd does not know. */
  parse_bad ("--no-rbd-default-pool map p/i",
             "rbd-nbd: unknown command: --no-rbd-default-pool");
  /* global_init's --no-mon-config: a flag; librados cannot honour it. */
  parse_bad ("map --no-mon-config rbd/x",
             "rbd-nbd: --no-mon-config is not supported by rbdx");
  parse_ok ("list-mapped --no-mon-config");
  assert_int_equal (a.cmd, RBDX_NBD_LIST);
  assert_true (a.no_mon_config);
  rbdx_nbd_args_free (&a);
}

/* --nbds_max: at most what the nbd module's init accepts. */
static void
test_nbds_max (void **state)
{
  (void) state;
  parse_ok ("map p/i --nbds_max 32768");
  assert_int_equal (a.nbds_max, 32768);
  rbdx_nbd_args_free (&a);
  parse_bad ("map p/i --nbds_max 32769",
             "rbd-nbd: Invalid argument for nbds_max(0~32768 with max_part=16)!");
  parse_bad ("map p/i --nbds_max 2147483647", "rbd-nbd: Invalid argument for nbds_max");
  parse_ok ("map p/i --nbds_max 1048576 --max_part 0");
  assert_int_equal (a.nbds_max, 1048576);
  rbdx_nbd_args_free (&a);
  parse_bad ("map p/i --nbds_max 1048577 --max_part 0",
             "rbd-nbd: Invalid argument for nbds_max(0~1048576 with max_part=0)!");
  parse_bad ("map p/i --max_part=255 --nbds_max=4097",
             "rbd-nbd: Invalid argument for nbds_max(0~4096 with max_part=255)!");
  parse_ok ("map p/i --max_part=255 --nbds_max=4096");
  rbdx_nbd_args_free (&a);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_csi_map_cookie),
    cmocka_unit_test (test_csi_map_plain_ro),
    cmocka_unit_test (test_csi_map_through_rbd),
    cmocka_unit_test (test_csi_attach),
    cmocka_unit_test (test_csi_list_unmap),
    cmocka_unit_test (test_rbd_cli_options),
    cmocka_unit_test (test_dashes),
    cmocka_unit_test (test_rbd_nbd_messages),
    cmocka_unit_test (test_refused),
    cmocka_unit_test (test_hostile),
    cmocka_unit_test (test_cookie_rules),
    cmocka_unit_test (test_backend_identity),
    cmocka_unit_test (test_ceph_bools),
    cmocka_unit_test (test_nbds_max),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
