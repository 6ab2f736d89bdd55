#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-syscall-filter: the seccomp and socket-family restrictions of
# rbdx@.service let the server do its work.  The service's ExecStart
# (from the generated unit, build plugin) runs socket-activated under
# strace while clients write, read, flush, trim, zero, query block status,
# read past the end, use 4 connections at once and disconnect, then stops
# with SIGTERM.  Every system call nbdkit made from its execve on must be
# allowed by the unit's SystemCallFilter= lines (groups expanded with
# `systemd-analyze syscall-filter`, plus the calls systemd always allows),
# every socket() family must be in RestrictAddressFamilies=, and with
# MemoryDenyWriteExecute=yes no mapping may be made writable and
# executable or made executable later (mprotect PROT_EXEC).  So a
# filter that would break librados, io_uring or nbdkit fails here, not in
# production (where a refused call gets EPERM).
# Covers: systemd/README.md "User and hardening".
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires strace systemd-socket-activate systemd-analyze systemd-escape qemu-io nbdcopy nbdinfo
. "$RBDX_TESTS/systemd/unit-lib.sh"

d=$(tmpdir)
img=$(new_image 16M)
sock=$d/nbd.sock
unit=$RBDX_UNITS/rbdx@.service

export RBDX_CLUSTER_OPTS="conf=$CEPH_CONF"
unit_exec_start "$img"
unset RBDX_CLUSTER_OPTS

# strace follows systemd-socket-activate into its exec of nbdkit (same
# PID, so LISTEN_PID still matches) and every thread nbdkit starts.
echo "$d/strace.pid" >>"$_state/pidfiles"
strace -f -qq -o "$d/trace" systemd-socket-activate -l "$sock" "${UNIT_ARGV[@]}" 2>"$d/sa.log" &
tracer=$!
echo "$tracer" >"$d/strace.pid"
for i in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "not listening on $sock: $(cat "$d/sa.log")"
# systemd-socket-activate, the future nbdkit (exec keeps the PID): stop it
# at exit too, since killing strace only detaches it.
server=$(pgrep -P "$tracer" | head -1)
[ -n "$server" ] || fail "no child of strace $tracer"
echo "$server" >"$d/server.pid"
echo "$d/server.pid" >>"$_state/pidfiles"
u=$(uri "$sock")

qemu-io -f raw -c 'write -P 0x11 0 2M' -c 'write -f -P 0x22 4M 64k' -c flush \
  -c 'discard 1M 1M' -c 'write -z 6M 1M' -c 'read -P 0x11 0 1M' "$u" >/dev/null ||
  fail "I/O through the traced server failed"
nbdinfo --map "$u" >/dev/null || fail "block status through the traced server failed"
nbdcopy --connections=4 "$u" "$d/copy" || fail "nbdcopy through the traced server failed"
if qemu-io -f raw -c 'read 16M 4096' "$u" >/dev/null 2>&1; then :; fi  # error path
[ "$(cat /proc/"$server"/comm 2>/dev/null)" = nbdkit ] ||
  fail "cannot find the traced nbdkit (child of strace $tracer)"
kill -TERM "$server"
wait_exit "$tracer" 30
rm -f "$d/strace.pid" "$d/server.pid"
[ "$(watchers "$img")" -eq 0 ] || fail "watcher left after the traced server stopped"

# The allowed set, as systemd would build it from the unit's lines.
filters=$(sed -n 's/^SystemCallFilter=//p' "$unit")
families=$(sed -n 's/^RestrictAddressFamilies=//p' "$unit")
[ -n "$filters" ] || { say "rbdx@.service has no SystemCallFilter=: nothing to check"; exit 0; }
groups=$(systemd-analyze syscall-filter 2>/dev/null | sed -n 's/^\(@[a-z-]*\)$/\1/p')
[ -n "$groups" ] || skip "systemd-analyze syscall-filter lists no groups"
for g in $groups; do
  systemd-analyze syscall-filter "$g" 2>/dev/null | sed -n '2,$p' >"$d/group$g"
done

mdwe=$(sed -n 's/^MemoryDenyWriteExecute=//p' "$unit")
python3 - "$d" "$filters" "$families" "$mdwe" <<'EOF' || fail "the unit's restrictions would refuse calls the server makes (see above)"
import os, re, sys
d, filters, families, mdwe = sys.argv[1:5]

def expand(name, seen=None):
    seen = seen if seen is not None else set()
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    path = os.path.join(d, "group" + name)
    if not os.path.exists(path):
        sys.exit("unknown system call group %s in SystemCallFilter=" % name)
    out = set()
    for line in open(path):
        w = line.strip()
        if w and not w.startswith("#"):
            out |= expand(w, seen)
    return out

# systemd.exec(5): implicitly allowed with an allow list.
allowed = {"execve", "exit", "exit_group", "getrlimit", "rt_sigreturn", "sigreturn"}
allow_list = None
for line in filters.splitlines():
    words = line.split()
    if not words:
        continue
    deny = words[0].startswith("~")
    if deny:
        words[0] = words[0][1:]
    names = set()
    for w in words:
        names |= expand(w.split(":")[0])
    if allow_list is None:
        allow_list = not deny
        allowed = allowed | names if allow_list else names
    elif allow_list:
        allowed = allowed - names if deny else allowed | names
    else:
        allowed = allowed | names if deny else allowed - names

# The trace from nbdkit's execve on.
lines = open(os.path.join(d, "trace")).read().splitlines()
start = next((i for i, l in enumerate(lines)
              if re.match(r'\d+\s+execve\("[^"]*nbdkit"', l)), None)
if start is None:
    sys.exit("no execve of nbdkit in the trace")
used, fams, wx = {}, set(), []
for l in lines[start:]:
    if (re.match(r'\d+\s+mmap\(.*PROT_WRITE\|PROT_EXEC|\d+\s+mmap\(.*PROT_EXEC\|PROT_WRITE', l)
            or re.match(r'\d+\s+(pkey_)?mprotect\(.*PROT_EXEC', l)
            or re.match(r'\d+\s+shmat\(.*SHM_EXEC', l)):
        wx.append(l)
    m = re.match(r'\d+\s+(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)', l)
    if not m:
        continue
    used[m.group(1)] = used.get(m.group(1), 0) + 1
    f = re.match(r'\d+\s+socket\((AF_[A-Z0-9]+)', l)
    if f:
        fams.add(f.group(1))

print("nbdkit made %d distinct system calls (%d in all); socket families: %s"
      % (len(used), sum(used.values()), " ".join(sorted(fams))))
ok = True
if "io_uring_setup" not in used:
    print("note: no io_uring_setup in the trace (the plugin used poll(2))")
if allow_list:
    refused = sorted(s for s in used if s not in allowed)
else:
    refused = sorted(s for s in used if s in allowed)
if refused:
    ok = False
    print("refused by SystemCallFilter=: " + " ".join(refused))
if families.strip():
    bad = sorted(fams - set(families.split()))
    if bad:
        ok = False
        print("refused by RestrictAddressFamilies=: " + " ".join(bad))
if mdwe == "yes" and wx:
    ok = False
    print("refused by MemoryDenyWriteExecute=yes:\n  " + "\n  ".join(wx[:5]))
sys.exit(0 if ok else 1)
EOF
say "every system call and socket family the server used is allowed by rbdx@.service"
