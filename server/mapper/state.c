/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/state.c: the RUN_DIR/nbdN state files and the sysfs
 * checks of a device (see state.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"

const char *
rbdx_run_dir (void)
{
  const char *d = getenv ("RBDX_RUN_DIR");
  return d && *d ? d : "/run/rbdx";
}

int
rbdx_state_mkdir (void)
{
  struct stat st;

  /* 0755, as rbdx@.socket's DirectoryMode= makes it: the run directory
   * is shared with the units' sockets (/run/rbdx/sockets/POOL/IMAGE.sock, group
   * rbdx), so neither tightens what the other made.  What is secret in
   * it is closed by itself: state files 0600, sup-PID/ and keyrings/
   * 0700 (state.h). */
  if (mkdir (rbdx_run_dir (), 0755) == -1 && errno != EEXIST)
    return -errno;
  if (lstat (rbdx_run_dir (), &st) == -1)
    return -errno;
  if (!S_ISDIR (st.st_mode))
    return -ENOTDIR;
  /* An existing one is kept as it is when no one else can write to it:
   * ours or root's, not writable by group or others.  One of ours that
   * others can write is closed to them; anyone else's is refused. */
  if (st.st_uid != geteuid () && st.st_uid != 0)
    return -EPERM;
  if (st.st_mode & 022) {
    if (st.st_uid != geteuid ())
      return -EPERM;
    if (chmod (rbdx_run_dir (), st.st_mode & 0755) == -1)
      return -errno;
  }
  return 0;
}

static void
path_of (int index, char *buf, size_t len)
{
  snprintf (buf, len, "%s/nbd%d", rbdx_run_dir (), index);
}

int
rbdx_state_save (const struct rbdx_state *st)
{
  char path[4096], tmp[4200];
  FILE *f;
  int fd;

  path_of (st->index, path, sizeof path);
  snprintf (tmp, sizeof tmp, "%s.tmp%ld", path, (long) getpid ());
  unlink (tmp);
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  f = fd >= 0 ? fdopen (fd, "w") : NULL;
  if (!f) {
    int e = errno;
    if (fd >= 0) {
      close (fd);
      unlink (tmp);
    }
    return -e;
  }
  fprintf (f, "index=%d\ntarget=%s\nbackend=%s\nsocket=%s\nconnections=%u\n"
           "supervisor=%ld\nsupervisor_start=%llu\nserver=%ld\nserver_start=%llu\n"
           "resize_poll=%u\nread_only=%d\nidentity=%s\nmetrics=%s\n"
           "reattaches=%lu\nresizes=%lu\nserver_restarts=%lu\nengine=%s\nkeyring_file=%s\n"
           "params=%s\n",
           st->index, st->target, st->backend, st->socket, st->connections,
           (long) st->supervisor, st->supervisor_start, (long) st->server,
           st->server_start, st->resize_poll, st->read_only ? 1 : 0,
           st->identity, st->metrics, st->reattaches, st->resizes,
           st->server_restarts, st->engine, st->keyring_file, st->params);
  if (fclose (f) == EOF || rename (tmp, path) == -1) {
    int e = errno;
    unlink (tmp);
    return -e;
  }
  return 0;
}

static void
copy_value (char *dst, const char *src)
{
  snprintf (dst, RBDX_TARGET_MAX, "%s", src);
}

int
rbdx_state_load (int index, struct rbdx_state *st)
{
  char path[4096], line[sizeof st->params + 32];
  FILE *f;

  path_of (index, path, sizeof path);
  f = fopen (path, "r");
  if (!f)
    return errno == ENOENT ? -ENOENT : errno == EACCES ? -EACCES : -EINVAL;
  memset (st, 0, sizeof *st);
  st->index = -1;
  while (fgets (line, sizeof line, f)) {
    char *eq = strchr (line, '='), *v;
    if (!eq)
      continue;
    *eq = '\0';
    v = eq + 1;
    v[strcspn (v, "\n")] = '\0';
    if (!strcmp (line, "index")) st->index = atoi (v);
    else if (!strcmp (line, "target")) copy_value (st->target, v);
    else if (!strcmp (line, "backend")) copy_value (st->backend, v);
    else if (!strcmp (line, "socket")) copy_value (st->socket, v);
    else if (!strcmp (line, "connections")) st->connections = (unsigned) atoi (v);
    else if (!strcmp (line, "supervisor")) st->supervisor = (pid_t) atol (v);
    else if (!strcmp (line, "server")) st->server = (pid_t) atol (v);
    else if (!strcmp (line, "supervisor_start")) st->supervisor_start = strtoull (v, NULL, 10);
    else if (!strcmp (line, "server_start")) st->server_start = strtoull (v, NULL, 10);
    else if (!strcmp (line, "resize_poll")) st->resize_poll = (unsigned) atoi (v);
    else if (!strcmp (line, "read_only")) st->read_only = atoi (v) != 0;
    else if (!strcmp (line, "metrics"))
      snprintf (st->metrics, sizeof st->metrics, "%s", v);
    else if (!strcmp (line, "reattaches")) st->reattaches = strtoul (v, NULL, 10);
    else if (!strcmp (line, "resizes")) st->resizes = strtoul (v, NULL, 10);
    else if (!strcmp (line, "server_restarts"))
      st->server_restarts = strtoul (v, NULL, 10);
    else if (!strcmp (line, "identity"))
      snprintf (st->identity, sizeof st->identity, "%s", v);
    else if (!strcmp (line, "engine"))
      snprintf (st->engine, sizeof st->engine, "%s", v);
    else if (!strcmp (line, "keyring_file"))
      snprintf (st->keyring_file, sizeof st->keyring_file, "%s", v);
    else if (!strcmp (line, "params")) snprintf (st->params, sizeof st->params, "%s", v);
  }
  fclose (f);
  return st->index == index ? 0 : -EINVAL;
}

void
rbdx_state_remove (int index)
{
  char path[4096];
  path_of (index, path, sizeof path);
  unlink (path);
}

void
rbdx_state_remove_keyring (const char *path)
{
  char dir[4200];
  size_t n;

  if (!*path)
    return;
  n = (size_t) snprintf (dir, sizeof dir, "%s/keyrings/", rbdx_run_dir ());
  if (n >= sizeof dir || strncmp (path, dir, n) != 0 || !path[n] ||
      path[n] == '.' || strchr (path + n, '/'))
    return;
  unlink (path);
}

int
rbdx_state_remove_private_dir (const char *dir)
{
  DIR *d;
  struct dirent *e;
  int fd;

  fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  d = fdopendir (fd);
  if (!d) {
    int r = -errno;
    close (fd);
    return r;
  }
  while ((e = readdir (d)))
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      unlinkat (fd, e->d_name, 0);
  closedir (d);
  return rmdir (dir) == 0 ? 0 : -errno;
}

static int
cmp_int (const void *a, const void *b)
{
  return *(const int *) a - *(const int *) b;
}

int
rbdx_state_list (int *indexes, int max)
{
  DIR *d = opendir (rbdx_run_dir ());
  struct dirent *e;
  int n = 0;

  if (!d)
    return errno == ENOENT ? 0 : -errno;
  while ((e = readdir (d))) {
    const char *p = e->d_name + 3;
    size_t len = strspn (p, "0123456789");
    /* Exactly what path_of writes, "nbd" and %d of an index: strtol
     * also took " 5", "+5" and "05", a second entry for nbd5. */
    if (strncmp (e->d_name, "nbd", 3) != 0 || len == 0 || p[len] ||
        len > 9 || (p[0] == '0' && len > 1))
      continue;
    if (n == max) {
      /* One more than the caller can take: not a shorter list. */
      closedir (d);
      return -E2BIG;
    }
    indexes[n++] = atoi (p);
  }
  closedir (d);
  qsort (indexes, (size_t) n, sizeof *indexes, cmp_int);
  return n;
}

bool
rbdx_device_connected (int index)
{
  char path[64];
  snprintf (path, sizeof path, "/sys/block/nbd%d/pid", index);
  return access (path, F_OK) == 0;
}

int
rbdx_device_backend (int index, char *buf, size_t len)
{
  char path[64];
  bool whole;
  FILE *f;

  snprintf (path, sizeof path, "/sys/block/nbd%d/backend", index);
  f = fopen (path, "re");
  if (!f)
    return -ENOENT;
  if (!fgets (buf, (int) len, f))
    buf[0] = '\0';
  whole = strchr (buf, '\n') || fgetc (f) == EOF;
  fclose (f);
  buf[strcspn (buf, "\n")] = '\0';
  return whole ? 0 : -E2BIG;
}

unsigned long long
rbdx_device_bytes (int index)
{
  char path[64];
  unsigned long long sectors = 0;
  FILE *f;

  snprintf (path, sizeof path, "/sys/block/nbd%d/size", index);
  f = fopen (path, "r");
  if (!f)
    return 0;
  if (fscanf (f, "%llu", &sectors) != 1)
    sectors = 0;
  fclose (f);
  return sectors * 512;
}

bool
rbdx_pid_alive (pid_t pid)
{
  return pid > 0 && (kill (pid, 0) == 0 || errno == EPERM);
}

unsigned long long
rbdx_proc_start (pid_t pid)
{
  char path[64], buf[1024], *p;
  unsigned long long start = 0;
  FILE *f;
  int field;

  if (pid <= 0)
    return 0;
  snprintf (path, sizeof path, "/proc/%ld/stat", (long) pid);
  f = fopen (path, "re");
  if (!f)
    return 0;
  if (!fgets (buf, sizeof buf, f)) {
    fclose (f);
    return 0;
  }
  fclose (f);
  /* Field 2 (comm) may hold blanks and parentheses: count after the last ')'. */
  p = strrchr (buf, ')');
  if (!p)
    return 0;
  for (field = 2; p && field < 22; field++)
    p = strchr (p + 1, ' ');
  if (p)
    start = strtoull (p + 1, NULL, 10);
  return start;
}

bool
rbdx_proc_is (pid_t pid, unsigned long long start)
{
  return start != 0 && rbdx_proc_start (pid) == start;
}
