/* SPDX-License-Identifier: BSD-3-Clause */
/* uml-xstate-shim: LD_PRELOAD helper that lets Debian 12's User-mode Linux
 * (6.1) run on hosts whose CPUs have AMX (or any extended state past the
 * buffer UML was built with).
 *
 * UML saves and restores its processes' FPU state with
 * PTRACE_GETREGSET/SETREGSET(NT_X86_XSTATE) on a fixed buffer (2696 bytes:
 * legacy area, header, AVX, AVX-512, PKRU).  The host kernel accepts a
 * shorter buffer for GETREGSET but refuses SETREGSET with EFAULT unless the
 * buffer has the full user xstate size (11008 bytes with AMX), and UML then
 * panics at the first process switch ("ptrace set fp regs failed, errno =
 * 14").  This shim retries such a SETREGSET with a buffer of the full size:
 * UML's bytes first, zeros after them, and the header's XSTATE_BV cleared
 * for every component that lies beyond UML's bytes, so those components go
 * back to their initial state.  That is exact for AMX: a UML process can
 * never have been granted AMX (arch_prctl(ARCH_REQ_XCOMP_PERM) is handled by
 * the UML kernel, not the host), so its tile state is always the initial
 * one.  Every other call goes to libc's ptrace() unchanged.
 *
 * Used by tests/kernel/lib-uml.sh only; it proves nothing about rbdx itself.
 */
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define XSAVE_HDR_OFFSET 512
#define XSAVE_MIN_SIZE (XSAVE_HDR_OFFSET + 64)

typedef long (*ptrace_fn) (int, ...);

static ptrace_fn
real_ptrace (void)
{
  static ptrace_fn fn;

  if (fn == NULL)
    fn = (ptrace_fn) dlsym (RTLD_NEXT, "ptrace");
  return fn;
}

/* The host's full user xstate size: GETREGSET trims iov_len to it. */
static size_t
host_xstate_size (pid_t pid)
{
  static size_t size;

  if (size == 0)
    {
      size_t cap = 1 << 16;
      void *buf = calloc (1, cap);
      struct iovec iov = { buf, cap };

      if (buf != NULL
          && real_ptrace () (PTRACE_GETREGSET, pid, (void *) NT_X86_XSTATE,
                             &iov) == 0)
        size = iov.iov_len;
      free (buf);
    }
  return size;
}

/* SETREGSET(NT_X86_XSTATE) of LEN bytes at SRC, padded to FULL bytes. */
static long
set_padded (pid_t pid, const void *src, size_t len, size_t full)
{
  static __thread unsigned char *buf;
  static __thread size_t buf_size;
  uint64_t bv;
  unsigned i, eax, ebx, ecx, edx;
  struct iovec iov;

  if (buf_size < full)
    {
      free (buf);
      buf = malloc (full);
      if (buf == NULL)
        {
          buf_size = 0;
          errno = ENOMEM;
          return -1;
        }
      buf_size = full;
    }
  memcpy (buf, src, len);
  memset (buf + len, 0, full - len);

  memcpy (&bv, buf + XSAVE_HDR_OFFSET, sizeof bv);
  for (i = 2; i < 64; i++)
    {
      if ((bv & (UINT64_C (1) << i)) == 0)
        continue;
      /* CPUID.(EAX=0DH,ECX=i): EAX = size, EBX = offset (standard form). */
      __cpuid_count (0xd, i, eax, ebx, ecx, edx);
      (void) ecx;
      (void) edx;
      if ((size_t) ebx + eax > len)
        bv &= ~(UINT64_C (1) << i);
    }
  memcpy (buf + XSAVE_HDR_OFFSET, &bv, sizeof bv);

  iov.iov_base = buf;
  iov.iov_len = full;
  return real_ptrace () (PTRACE_SETREGSET, pid, (void *) NT_X86_XSTATE, &iov);
}

long
ptrace (enum __ptrace_request request, ...)
{
  static bool always_pad;
  va_list ap;
  pid_t pid;
  void *addr, *data;
  long r;

  va_start (ap, request);
  pid = va_arg (ap, pid_t);
  addr = va_arg (ap, void *);
  data = va_arg (ap, void *);
  va_end (ap);

  if (request == PTRACE_SETREGSET && (uintptr_t) addr == NT_X86_XSTATE
      && data != NULL)
    {
      const struct iovec *iov = data;
      size_t full;

      if (always_pad)
        {
          full = host_xstate_size (pid);
          if (full > iov->iov_len && iov->iov_len >= XSAVE_MIN_SIZE)
            return set_padded (pid, iov->iov_base, iov->iov_len, full);
        }
      r = real_ptrace () (request, pid, addr, data);
      if (r == -1 && errno == EFAULT && iov->iov_len >= XSAVE_MIN_SIZE)
        {
          full = host_xstate_size (pid);
          if (full > iov->iov_len)
            {
              r = set_padded (pid, iov->iov_base, iov->iov_len, full);
              if (r == 0)
                always_pad = true;
            }
          else
            errno = EFAULT;
        }
      return r;
    }
  return real_ptrace () (request, pid, addr, data);
}
