/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: running the quiesce hook with posix_spawn (see
 * quiesce-run.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/clock.h"
#include "rbdx/log.h"
#include "rbdx/printable.h"
#include "rbdx/quiesce-hook.h"
#include "rbdx/quiesce-run.h"
#include "rbdx/spec.h"

extern char **environ;

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define ENV_MAX 64

static bool
env_kept (const char *kv)
{
  return strncmp (kv, "PATH=", 5) == 0 || strncmp (kv, "LANG=", 5) == 0 ||
         strncmp (kv, "LC_", 3) == 0 || strncmp (kv, "TZ=", 3) == 0 ||
         strncmp (kv, "RBDX_", 5) == 0;
}

/* The hook's environment (quiesce-run.h): pointers into environ, which
 * the server does not change while it serves. */
static void
hook_env (char *env[ENV_MAX + 1])
{
  size_t n = 0;
  bool path = false;

  for (char **e = environ; e && *e && n < ENV_MAX - 1; e++)
    if (env_kept (*e)) {
      path |= strncmp (*e, "PATH=", 5) == 0;
      env[n++] = *e;
    }
  if (!path)
    env[n++] = (char *) "PATH=" DEFAULT_PATH;
  env[n] = NULL;
}

/* Start the hook; @return its pid or -errno. */
static pid_t
spawn (const char *const argv[4])
{
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  char *env[ENV_MAX + 1];
  sigset_t none, all;
  pid_t pid;
  int r;

  hook_env (env);
  sigemptyset (&none);
  sigfillset (&all);
  if ((r = posix_spawn_file_actions_init (&fa)))
    return -r;
  if ((r = posix_spawnattr_init (&at))) {
    posix_spawn_file_actions_destroy (&fa);
    return -r;
  }
  r = posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!r)
    r = posix_spawn_file_actions_addclosefrom_np (&fa, 3);
  if (!r)
    r = posix_spawnattr_setflags (&at, POSIX_SPAWN_SETPGROUP |
                                  POSIX_SPAWN_SETSIGMASK |
                                  POSIX_SPAWN_SETSIGDEF);
  if (!r)
    r = posix_spawnattr_setpgroup (&at, 0);
  if (!r)
    r = posix_spawnattr_setsigmask (&at, &none);
  if (!r)
    r = posix_spawnattr_setsigdefault (&at, &all);
  if (!r)
    r = posix_spawn (&pid, argv[0], &fa, &at, (char *const *) argv, env);
  posix_spawnattr_destroy (&at);
  posix_spawn_file_actions_destroy (&fa);
  return r ? -r : pid;
}

int
rbdx_quiesce_run_hook (const char *hook, const char *device, bool quiesce,
                       unsigned timeout_s, const atomic_bool *cancel)
{
  const char *argv[4];
  const char *what = quiesce ? "quiesce" : "unquiesce";
  uint64_t deadline;
  int status = 0;
  pid_t pid;

  if (rbdx_quiesce_hook_argv (hook, device, quiesce, argv) < 0) {
    char shown[4 * RBDX_SPEC_MAX + 1];

    rbdx_error ("rbdx: quiesce: refusing to run hook '%s' for '%s': the "
                "hook must be an absolute path and DEVICE 1 to %d bytes "
                "without control characters, not starting with '-'", hook,
                rbdx_printable (device, shown, sizeof shown),
                RBDX_QUIESCE_DEVICE_MAX);
    return -EINVAL;
  }
  pid = spawn (argv);
  if (pid < 0) {
    rbdx_error ("rbdx: quiesce: cannot start hook %s %s %s: %s", hook,
                device, what, strerror ((int) -pid));
    return -EIO;
  }
  rbdx_debug ("rbdx: quiesce: running %s %s %s (pid %d)", hook, device, what,
              (int) pid);
  deadline = rbdx_clock_ns () + (uint64_t) timeout_s * 1000000000;
  for (;;) {
    pid_t w = waitpid (pid, &status, WNOHANG);

    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      rbdx_error ("rbdx: quiesce: waiting for hook %s: %s", hook,
                  strerror (errno));
      return -EIO;
    }
    if (rbdx_clock_ns () >= deadline || (cancel && atomic_load (cancel))) {
      kill (-pid, SIGKILL);
      kill (pid, SIGKILL);
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
      if (cancel && atomic_load (cancel))
        rbdx_error ("rbdx: quiesce: hook %s %s %s killed: the image's last "
                    "handle is closing", hook, device, what);
      else
        rbdx_error ("rbdx: quiesce: hook %s %s %s did not finish within "
                    "%u s: killed", hook, device, what, timeout_s);
      return -ETIMEDOUT;
    }
    nanosleep (&(struct timespec) { 0, 5000000 }, NULL);
  }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0) {
    rbdx_debug ("rbdx: quiesce: %s %s %s succeeded", hook, device, what);
    return 0;
  }
  if (WIFEXITED (status))
    rbdx_error ("rbdx: quiesce: hook %s %s %s failed with exit status %d",
                hook, device, what, WEXITSTATUS (status));
  else
    rbdx_error ("rbdx: quiesce: hook %s %s %s killed by signal %d", hook,
                device, what, WTERMSIG (status));
  return -EIO;
}
