/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rbd-nbd-shim: run Ceph's rbd-nbd without a kernel NBD driver, serving
 * one NBD client on a Unix socket instead of a /dev/nbdX device.
 *
 *   RBD_NBD_SHIM_SOCKET=/path/to.sock LD_PRELOAD=.../rbd-nbd-shim.so \
 *     rbd-nbd -d map pool/image
 *   nbdsh -u 'nbd+unix:///?socket=/path/to.sock'
 *
 * Why: the benchmark (tests/bench/run) drives every NBD server with the
 * same client, fio's nbd engine (libnbd).  rbd-nbd has no NBD listener of
 * its own: it creates a socketpair(), gives one end to the kernel with
 * ioctl(NBD_SET_SOCK) and serves the other end with its reader and writer
 * threads.  This library, preloaded into rbd-nbd, plays the kernel's part:
 *
 * - open("/dev/nbdN") returns a placeholder descriptor (/dev/null) that
 *   stands for the device; access("/sys/module/nbd") says the module is
 *   loaded, so rbd-nbd does not try to load it.
 * - genl_ctrl_resolve("nbd") fails, so rbd-nbd (with --try-netlink) falls
 *   back to the ioctl interface: a real NBD netlink family, if this host
 *   has one, is never touched.
 * - socketpair() is watched so that ioctl(NBD_SET_SOCK, fd) can find the
 *   end rbd-nbd serves (the peer of fd).  The other NBD_* and BLK*
 *   ioctls on the placeholder record the size and transmission flags and
 *   otherwise succeed; fopen("/sys/block/nbdN/size") reads the recorded
 *   size in 512-byte sectors (rbd-nbd checks it after NBD_SET_SIZE).
 * - ioctl(NBD_DO_IT), where the kernel would serve the device until it is
 *   disconnected, listens on $RBD_NBD_SHIM_SOCKET (the path appears only
 *   then, so its existence means "ready"), accepts a client and writes the
 *   NBD oldstyle greeting: "NBDMAGIC", 0x00420281861253, the size and the
 *   flags, 124 zero bytes (NBD protocol, "Oldstyle negotiation"; libnbd and
 *   QEMU accept it).  A client that hangs up, or sends NBD_CMD_DISC,
 *   before any other request (fio's nbd engine first connects once only
 *   to read the size) is closed and the next one accepted.  At the first
 *   client that sends another request, the shim dup2()s that accepted
 *   socket onto rbd-nbd's own end of the socketpair and shuts the kernel's
 *   end down: rbd-nbd's reader thread, asleep in poll() on that end, wakes
 *   up, polls the descriptor again (Linux looks it up anew on every pass,
 *   and it now is the client's connection) and reads the request straight
 *   from the client.  No byte is copied by the shim after the
 *   greeting.  The listening socket is then closed and its path removed:
 *   one rbd-nbd serves exactly one connection, as it does one device.
 *   NBD_DO_IT returns when that connection is shut down (rbd-nbd's writer
 *   thread shuts it down when the client sent NBD_CMD_DISC or hung up, or
 *   on SIGTERM), so rbd-nbd then unmaps and exits as after a disconnect.
 *
 * Checked against rbd-nbd 16.2.15 (Debian 12's rbd-nbd package): in
 * do_map() the reader and writer threads are started on the socketpair's
 * second end before the ioctl setup gives the first end to the device,
 * and the reader sleeps in poll() on {its end, a terminate eventfd}, not
 * in read(); see tests/bench/README.md for the trace that shows it.
 * Other versions may order this differently: the shim logs what it does
 * on stderr ("rbd-nbd-shim: ...").
 *
 * The image size must be a multiple of 512 bytes: rbd-nbd compares the
 * sysfs size in sectors with the image's, as it does with the kernel.
 *
 * Not thread-safe beyond what rbd-nbd needs: the device state is set up
 * and served by rbd-nbd's main thread; close() from any thread only
 * compares against the placeholder descriptor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <endian.h>
#include <linux/fs.h>
#include <linux/nbd.h>

#define SHIM "rbd-nbd-shim: "

/* The placeholder descriptor of the one "device", and what was set on it. */
static int dev_fd = -1;
static int dev_index = -1;
static int kernel_end = -1;     /* our dup of the end given by NBD_SET_SOCK */
static int server_end = -1;     /* rbd-nbd's end: its peer in the socketpair */
static uint64_t dev_size;       /* bytes, from NBD_SET_SIZE(_BLOCKS) */
static uint64_t dev_blksize = 1024;
static uint32_t dev_flags;      /* NBD transmission flags, NBD_SET_FLAGS */

/* Recent AF_UNIX stream socketpairs, newest last (fd numbers are reused:
 * the newest pair holding a descriptor is the live one). */
#define NPAIRS 32
static int pairs[NPAIRS][2];
static unsigned npairs;

static void
say(const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) {
    if ((size_t) n >= sizeof buf)
      n = sizeof buf - 1;
    if (write(STDERR_FILENO, buf, n) < 0) {
      /* nothing to do */
    }
  }
}

static void *
real(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    say(SHIM "no next %s: %s\n", name, dlerror());
    abort();
  }
  return f;
}

/* /dev/nbdN -> N, else -1. */
static int
nbd_dev_index(const char *path)
{
  int n = -1, end = 0;
  if (path && sscanf(path, "/dev/nbd%d%n", &n, &end) == 1 &&
      path[end] == '\0' && n >= 0)
    return n;
  return -1;
}

/* /sys/block/nbdN/WHAT -> N (WHAT copied), else -1. */
static int
sys_block_file(const char *path, char *what, size_t len)
{
  int n = -1, end = 0;
  if (path && sscanf(path, "/sys/block/nbd%d/%n", &n, &end) == 1 && end > 0 &&
      strlen(path + end) < len && !strchr(path + end, '/')) {
    strcpy(what, path + end);
    return n;
  }
  return -1;
}

static int
open_device(int index)
{
  int (*next_open)(const char *, int, ...) = real("open");
  int fd;

  if (dev_fd >= 0) {
    errno = EBUSY;
    return -1;
  }
  fd = next_open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -1;
  __atomic_store_n(&dev_fd, fd, __ATOMIC_SEQ_CST);
  dev_index = index;
  say(SHIM "/dev/nbd%d is a placeholder (fd %d)\n", index, fd);
  return fd;
}

/* open() and open64() alike: the device becomes a placeholder, every
 * other path goes to the libc function @name. */
static int
open_as(const char *name, const char *path, int flags, mode_t mode)
{
  int (*next)(const char *, int, ...) = real(name);
  int index = nbd_dev_index(path);

  return index >= 0 ? open_device(index) : next(path, flags, mode);
}

int open64(const char *path, int flags, ...);
int
open64(const char *path, int flags, ...)
{
  va_list ap;
  mode_t mode;

  va_start(ap, flags);
  mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
  va_end(ap);
  return open_as("open64", path, flags, mode);
}

int
open(const char *path, int flags, ...)
{
  va_list ap;
  mode_t mode;

  va_start(ap, flags);
  mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
  va_end(ap);
  return open_as("open", path, flags, mode);
}

int
access(const char *path, int mode)
{
  int (*next)(const char *, int) = real("access");

  if (strcmp(path, "/sys/module/nbd") == 0)
    return 0;
  if (strncmp(path, "/sys/module/nbd/", 16) == 0) {
    errno = ENOENT;     /* no module parameters to read */
    return -1;
  }
  return next(path, mode);
}

/* What rbd-nbd reads from sysfs about the device, as a FILE. */
static FILE *
sysfs_file(const char *what)
{
  char text[64];
  FILE *f;
  int fd;

  if (strcmp(what, "size") == 0)
    snprintf(text, sizeof text, "%llu\n",
             (unsigned long long) (dev_size / 512));
  else if (strcmp(what, "pid") == 0)
    snprintf(text, sizeof text, "%ld\n", (long) getpid());
  else {
    errno = ENOENT;     /* backend (cookie): the ioctl interface has none */
    return NULL;
  }
  fd = memfd_create("rbd-nbd-shim-sysfs", MFD_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (write(fd, text, strlen(text)) != (ssize_t) strlen(text) ||
      lseek(fd, 0, SEEK_SET) != 0 || !(f = fdopen(fd, "r"))) {
    int e = errno;
    close(fd);
    errno = e;
    return NULL;
  }
  return f;
}

static FILE *
fopen_common(const char *name, const char *path, const char *mode)
{
  FILE *(*next)(const char *, const char *) = real(name);
  char what[32];
  int index = sys_block_file(path, what, sizeof what);

  if (index >= 0 && index == dev_index && dev_fd >= 0)
    return sysfs_file(what);
  return next(path, mode);
}

FILE *fopen64(const char *path, const char *mode);
FILE *
fopen64(const char *path, const char *mode)
{
  return fopen_common("fopen64", path, mode);
}

FILE *
fopen(const char *path, const char *mode)
{
  return fopen_common("fopen", path, mode);
}

int
socketpair(int domain, int type, int protocol, int sv[2])
{
  int (*next)(int, int, int, int[2]) = real("socketpair");
  int r = next(domain, type, protocol, sv);

  if (r == 0 && domain == AF_UNIX && (type & 0xff) == SOCK_STREAM) {
    unsigned i = npairs++ % NPAIRS;
    pairs[i][0] = sv[0];
    pairs[i][1] = sv[1];
  }
  return r;
}

/* The peer of FD in the newest recorded socketpair, or -1. */
static int
pair_peer(int fd)
{
  unsigned n = npairs < NPAIRS ? npairs : NPAIRS;
  for (unsigned k = 0; k < n; k++) {
    unsigned i = (npairs - 1 - k) % NPAIRS;
    if (pairs[i][0] == fd)
      return pairs[i][1];
    if (pairs[i][1] == fd)
      return pairs[i][0];
  }
  return -1;
}

/* libnl-genl: with --try-netlink, rbd-nbd looks up the "nbd" family and
 * falls back to the ioctl interface when it is missing. */
int genl_ctrl_resolve(void *sock, const char *name);
int
genl_ctrl_resolve(void *sock, const char *name)
{
  int (*next)(void *, const char *) = real("genl_ctrl_resolve");

  if (name && strcmp(name, "nbd") == 0)
    return -12;         /* -NLE_OBJ_NOTFOUND (libnl's netlink/errno.h) */
  return next(sock, name);
}

int
close(int fd)
{
  int (*next)(int) = real("close");

  if (fd >= 0 && fd == __atomic_load_n(&dev_fd, __ATOMIC_SEQ_CST)) {
    __atomic_store_n(&dev_fd, -1, __ATOMIC_SEQ_CST);
    dev_index = -1;
  }
  return next(fd);
}

static int
write_all(int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    p += n;
    len -= n;
  }
  return 0;
}

/* poll() that retries on EINTR (rbd-nbd's signal handlers interrupt it). */
static int
poll_retry(struct pollfd *fds, nfds_t n)
{
  int r;
  do
    r = poll(fds, n, -1);
  while (r < 0 && errno == EINTR);
  return r;
}

/* Wait until the first request header has arrived on CONN and copy it
 * into *REQ, leaving it in the socket for rbd-nbd.  Returns sizeof *REQ,
 * or less when the client hung up first. */
static ssize_t
peek_request(int conn, struct nbd_request *req)
{
  for (;;) {
    struct pollfd p = { .fd = conn, .events = POLLIN };
    ssize_t n;

    if (poll_retry(&p, 1) < 0)
      return -1;
    n = recv(conn, req, sizeof *req, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0 || n == (ssize_t) sizeof *req)
      return n;
    usleep(1000);       /* part of a header: the rest is on its way */
  }
}

/* Listen on PATH: bound under a temporary name, listening, then renamed,
 * so that the path exists only once connecting to it works. */
static int
listen_at(const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  char tmp[sizeof sa.sun_path];
  int fd;

  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(sa.sun_path, tmp);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  unlink(tmp);
  if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
      listen(fd, 16) < 0 || rename(tmp, path) < 0) {
    int e = errno;
    close(fd);
    unlink(tmp);
    errno = e;
    return -1;
  }
  return fd;
}

/* NBD_DO_IT: serve one client on $RBD_NBD_SHIM_SOCKET until its
 * connection is shut down (see the comment at the top). */
static int
do_it(void)
{
  const char *path = getenv("RBD_NBD_SHIM_SOCKET");
  unsigned char greeting[152] = "NBDMAGIC";
  uint64_t be;
  uint32_t be32;
  int lfd, conn = -1, probes = 0;

  if (!path || !*path || kernel_end < 0 || server_end < 0) {
    say(SHIM "NBD_DO_IT without %s\n",
        kernel_end < 0 ? "NBD_SET_SOCK" : "RBD_NBD_SHIM_SOCKET");
    errno = EINVAL;
    return -1;
  }
  be = htobe64(0x00420281861253ULL);
  memcpy(greeting + 8, &be, 8);
  be = htobe64(dev_size);
  memcpy(greeting + 16, &be, 8);
  be32 = htobe32(dev_flags);
  memcpy(greeting + 24, &be32, 4);      /* then 124 zero bytes */

  lfd = listen_at(path);
  if (lfd < 0) {
    int e = errno;
    say(SHIM "cannot listen on %s: %s\n", path, strerror(e));
    errno = e;
    return -1;
  }
  say(SHIM "listening on %s (size %llu, flags 0x%x)\n", path,
      (unsigned long long) dev_size, dev_flags);

  for (;;) {
    /* kernel_end hangs up when rbd-nbd shut its end down (SIGTERM). */
    struct pollfd p[2] = { { .fd = lfd, .events = POLLIN },
                           { .fd = kernel_end, .events = 0 } };
    struct nbd_request req;
    ssize_t n;

    if (poll_retry(p, 2) < 0 || p[1].revents)
      break;
    if (!(p[0].revents & POLLIN))
      continue;
    conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0)
      continue;
    if (write_all(conn, greeting, sizeof greeting) < 0) {
      close(conn);
      conn = -1;
      continue;
    }
    p[0] = (struct pollfd) { .fd = conn, .events = POLLIN };
    if (poll_retry(p, 2) < 0 || p[1].revents) {
      close(conn);
      conn = -1;
      break;
    }
    n = peek_request(conn, &req);
    if (n == sizeof req && (be32toh(req.type) & 0xffff) != NBD_CMD_DISC)
      break;            /* a request: this is the client */
    if (n == sizeof req) {
      /* NBD_CMD_DISC: take it, so that closing is not a reset. */
      if (recv(conn, &req, sizeof req, MSG_DONTWAIT) < 0) {
        /* closed anyway */
      }
    }
    probes++;
    close(conn);
    conn = -1;
  }
  close(lfd);
  unlink(path);
  if (conn < 0) {
    say(SHIM "rbd-nbd stopped before a client sent a request\n");
    return 0;
  }

  /* Hand over: rbd-nbd's end becomes the client's connection. */
  if (dup2(conn, server_end) < 0) {
    int e = errno;
    say(SHIM "dup2: %s\n", strerror(e));
    close(conn);
    errno = e;
    return -1;
  }
  shutdown(kernel_end, SHUT_RDWR);      /* wakes the reader's poll() */
  close(kernel_end);
  kernel_end = -1;
  say(SHIM "client connected (after %d connection(s) without requests);"
      " rbd-nbd serves it on fd %d\n", probes, server_end);

  {
    struct pollfd p = { .fd = conn, .events = 0 };
    while (poll_retry(&p, 1) >= 0 &&
           !(p.revents & (POLLHUP | POLLERR | POLLNVAL)))
      ;
  }
  close(conn);
  say(SHIM "connection shut down: NBD_DO_IT returns\n");
  return 0;
}

static int
device_ioctl(unsigned long req, unsigned long arg)
{
  switch (req) {
  case NBD_SET_SOCK:
    if (kernel_end >= 0) {
      errno = EBUSY;
      return -1;
    }
    server_end = pair_peer((int) arg);
    if (server_end < 0) {
      say(SHIM "NBD_SET_SOCK: fd %lu is not from a socketpair()\n", arg);
      errno = EINVAL;
      return -1;
    }
    kernel_end = fcntl((int) arg, F_DUPFD_CLOEXEC, 0);
    return kernel_end < 0 ? -1 : 0;
  case NBD_SET_BLKSIZE:
    dev_blksize = arg;
    return 0;
  case NBD_SET_SIZE:
    dev_size = arg;
    return 0;
  case NBD_SET_SIZE_BLOCKS:
    dev_size = (uint64_t) arg * dev_blksize;
    return 0;
  case NBD_SET_FLAGS:
    dev_flags = (uint32_t) arg;
    return 0;
  case NBD_DO_IT:
    return do_it();
  case NBD_CLEAR_SOCK:
  case NBD_CLEAR_QUE:
  case NBD_DISCONNECT:
  case NBD_SET_TIMEOUT:
  case BLKROSET:
  case BLKFLSBUF:
  case BLKRRPART:
    return 0;
  default:
    errno = ENOTTY;
    return -1;
  }
}

int
ioctl(int fd, unsigned long req, ...)
{
  int (*next)(int, unsigned long, ...) = real("ioctl");
  va_list ap;
  unsigned long arg;

  va_start(ap, req);
  arg = va_arg(ap, unsigned long);
  va_end(ap);
  if (fd >= 0 && fd == __atomic_load_n(&dev_fd, __ATOMIC_SEQ_CST))
    return device_ioctl(req, arg);
  return next(fd, req, arg);
}
