/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/netlink.c: the kernel's NBD generic netlink commands and
 * events through libnl-genl-3 (see netlink.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <linux/nbd-netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "netlink.h"

struct rbdx_nl {
  struct nl_sock *sk;
  int family;
};

/* What one command's reply and ACK carried. */
struct reply {
  bool done;          /* the ACK (or an error) arrived */
  int kernel_error;   /* the ACK's errno (negative), 0 when none */
  int index;          /* NBD_ATTR_INDEX of a CONNECT reply, or -1 */
  /* For multicast reading. */
  int watch_index;
  int link_dead;
};

int
rbdx_nl_open (struct rbdx_nl **out)
{
  struct rbdx_nl *nl = calloc (1, sizeof *nl);
  if (!nl)
    return -ENOMEM;
  nl->sk = nl_socket_alloc ();
  if (!nl->sk) {
    free (nl);
    return -ENOMEM;
  }
  if (genl_connect (nl->sk) < 0) {
    rbdx_nl_close (nl);
    return -EIO;
  }
  nl->family = genl_ctrl_resolve (nl->sk, "nbd");
  if (nl->family < 0) {
    rbdx_nl_close (nl);
    return -ENOENT;
  }
  *out = nl;
  return 0;
}

int
rbdx_nl_subscribe (struct rbdx_nl *nl)
{
  int grp = genl_ctrl_resolve_grp (nl->sk, "nbd", NBD_GENL_MCAST_GROUP_NAME);
  if (grp < 0)
    return -EIO;
  nl_socket_disable_seq_check (nl->sk);
  if (nl_socket_add_membership (nl->sk, grp) < 0)
    return -EIO;
  if (nl_socket_set_nonblocking (nl->sk) < 0)
    return -EIO;
  return 0;
}

int
rbdx_nl_fd (struct rbdx_nl *nl)
{
  return nl_socket_get_fd (nl->sk);
}

void
rbdx_nl_close (struct rbdx_nl *nl)
{
  if (!nl)
    return;
  nl_socket_free (nl->sk);
  free (nl);
}

static int
on_error (struct sockaddr_nl *who, struct nlmsgerr *err, void *arg)
{
  struct reply *r = arg;
  r->kernel_error = err->error;
  r->done = true;
  return NL_STOP;
}

static int
on_ack (struct nl_msg *msg, void *arg)
{
  struct reply *r = arg;
  r->done = true;
  return NL_STOP;
}

static int
on_valid (struct nl_msg *msg, void *arg)
{
  struct reply *r = arg;
  struct genlmsghdr *gh = nlmsg_data (nlmsg_hdr (msg));
  struct nlattr *attrs[NBD_ATTR_MAX + 1];

  if (genlmsg_parse (nlmsg_hdr (msg), 0, attrs, NBD_ATTR_MAX, NULL) < 0)
    return NL_OK;
  if (gh->cmd == NBD_CMD_LINK_DEAD) {
    if (attrs[NBD_ATTR_INDEX] &&
        (int) nla_get_u32 (attrs[NBD_ATTR_INDEX]) == r->watch_index)
      r->link_dead++;
    return NL_OK;
  }
  if (attrs[NBD_ATTR_INDEX])
    r->index = (int) nla_get_u32 (attrs[NBD_ATTR_INDEX]);
  return NL_OK;
}

/* Send MSG (consumed) and wait for the kernel's reply and its ACK.  A
 * command with a reply (CONNECT) answers with two datagrams and
 * nl_recvmsgs returns after each: read until the ACK, or the next command
 * would take this one's ACK for its own. */
static int
transact (struct rbdx_nl *nl, struct nl_msg *msg, struct reply *r)
{
  struct nl_cb *cb = nl_cb_alloc (NL_CB_DEFAULT);
  int err;

  if (!cb) {
    nlmsg_free (msg);
    return -ENOMEM;
  }
  r->kernel_error = 0;
  r->done = false;
  nl_cb_set (cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);
  nl_cb_set (cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
  nl_cb_err (cb, NL_CB_CUSTOM, on_error, r);
  err = nl_send_auto (nl->sk, msg);
  nlmsg_free (msg);
  if (err < 0) {
    nl_cb_put (cb);
    return -EIO;
  }
  do
    err = nl_recvmsgs (nl->sk, cb);
  while (err >= 0 && !r->done);
  nl_cb_put (cb);
  if (r->kernel_error)
    return r->kernel_error;
  return err < 0 ? -EIO : 0;
}

static struct nl_msg *
new_msg (struct rbdx_nl *nl, uint8_t cmd)
{
  struct nl_msg *msg = nlmsg_alloc ();
  if (!msg)
    return NULL;
  if (!genlmsg_put (msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
                    NLM_F_REQUEST | NLM_F_ACK, cmd, 0)) {
    nlmsg_free (msg);
    return NULL;
  }
  return msg;
}

static int
put_sockets (struct nl_msg *msg, const int *fds, size_t nfds)
{
  struct nlattr *socks, *item;
  size_t i;

  if (nfds == 0)
    return 0;
  socks = nla_nest_start (msg, NBD_ATTR_SOCKETS);
  if (!socks)
    return -1;
  for (i = 0; i < nfds; i++) {
    item = nla_nest_start (msg, NBD_SOCK_ITEM);
    if (!item || nla_put_u32 (msg, NBD_SOCK_FD, (uint32_t) fds[i]) < 0)
      return -1;
    nla_nest_end (msg, item);
  }
  nla_nest_end (msg, socks);
  return 0;
}

int
rbdx_nl_connect (struct rbdx_nl *nl, const struct rbdx_nl_config *cfg,
                 const int *fds, size_t nfds, int *index_out)
{
  struct nl_msg *msg = new_msg (nl, NBD_CMD_CONNECT);
  struct reply r = { .index = -1, .watch_index = -1 };
  int err;

  if (!msg)
    return -ENOMEM;
  if ((cfg->index >= 0 && nla_put_u32 (msg, NBD_ATTR_INDEX, (uint32_t) cfg->index) < 0) ||
      nla_put_u64 (msg, NBD_ATTR_SIZE_BYTES, cfg->size) < 0 ||
      nla_put_u64 (msg, NBD_ATTR_BLOCK_SIZE_BYTES, cfg->block_size) < 0 ||
      nla_put_u64 (msg, NBD_ATTR_SERVER_FLAGS, cfg->server_flags) < 0 ||
      (cfg->io_timeout && nla_put_u64 (msg, NBD_ATTR_TIMEOUT, cfg->io_timeout) < 0) ||
      (cfg->dead_conn_timeout &&
       nla_put_u64 (msg, NBD_ATTR_DEAD_CONN_TIMEOUT, cfg->dead_conn_timeout) < 0) ||
      (cfg->backend && nla_put_string (msg, NBD_ATTR_BACKEND_IDENTIFIER, cfg->backend) < 0) ||
      put_sockets (msg, fds, nfds) < 0) {
    nlmsg_free (msg);
    return -ENOMEM;
  }
  err = transact (nl, msg, &r);
  if (err)
    return err;
  *index_out = r.index >= 0 ? r.index : cfg->index;
  return *index_out >= 0 ? 0 : -EIO;
}

int
rbdx_nl_reconfigure (struct rbdx_nl *nl, int index, const char *backend,
                     const int *fds, size_t nfds, uint64_t size)
{
  struct nl_msg *msg = new_msg (nl, NBD_CMD_RECONFIGURE);
  struct reply r = { .index = -1, .watch_index = -1 };

  if (!msg)
    return -ENOMEM;
  if (nla_put_u32 (msg, NBD_ATTR_INDEX, (uint32_t) index) < 0 ||
      (size && nla_put_u64 (msg, NBD_ATTR_SIZE_BYTES, size) < 0) ||
      (backend && nla_put_string (msg, NBD_ATTR_BACKEND_IDENTIFIER, backend) < 0) ||
      put_sockets (msg, fds, nfds) < 0) {
    nlmsg_free (msg);
    return -ENOMEM;
  }
  return transact (nl, msg, &r);
}

int
rbdx_nl_disconnect (struct rbdx_nl *nl, int index)
{
  struct nl_msg *msg = new_msg (nl, NBD_CMD_DISCONNECT);
  struct reply r = { .index = -1, .watch_index = -1 };

  if (!msg)
    return -ENOMEM;
  if (nla_put_u32 (msg, NBD_ATTR_INDEX, (uint32_t) index) < 0) {
    nlmsg_free (msg);
    return -ENOMEM;
  }
  return transact (nl, msg, &r);
}

/* Multicast messages carry sequence number 0: accept them. */
static int
any_seq (struct nl_msg *msg, void *arg)
{
  return NL_OK;
}

int
rbdx_nl_read_link_dead (struct rbdx_nl *nl, int index)
{
  struct reply r = { .index = -1, .watch_index = index };
  struct nl_cb *cb = nl_cb_alloc (NL_CB_DEFAULT);
  int err;

  if (!cb)
    return -ENOMEM;
  nl_cb_set (cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
  nl_cb_set (cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, any_seq, NULL);
  /* Non-blocking: returns -NLE_AGAIN once drained. */
  do
    err = nl_recvmsgs (nl->sk, cb);
  while (err >= 0);
  nl_cb_put (cb);
  if (err != -NLE_AGAIN)
    return -EIO;
  return r.link_dead;
}
