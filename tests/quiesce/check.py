#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# check.py RECORDS SLOTS SNAPSHOT HEAD HOOKLOG HELD RELEASED
#
# What the quiesce test asserts (tests/quiesce/test-quiesce.sh explains
# the ordering): SNAPSHOT and HEAD are raw exports (rbd export) of the
# snapshot and of the head after the writers stopped; RECORDS is
# writers.py's output; HOOKLOG has lines "T start|end DEVICE
# quiesce|unquiesce" from the test's hook; HELD and RELEASED are the
# times rbdx logged for its hold and release (CLOCK_REALTIME, as every
# other time here).  Prints a summary; exits 1 with the reason on the
# first broken rule.
import sys

recfile, slots, snapfile, headfile, hooklog = sys.argv[1:6]
held, released = float(sys.argv[6]), float(sys.argv[7])
slots = int(slots)
BS = 4096


def die(msg):
    print("check.py: " + msg, file=sys.stderr)
    sys.exit(1)


def block(c, k):
    rec = b"RBDXQ %3d %6d\n" % (c, k)
    return (rec * (BS // len(rec) + 1))[:BS]


ev = {}
for line in open(hooklog):
    t, what, _dev, cmd = line.split()
    ev.setdefault((cmd, what), []).append(float(t))
for key in (("quiesce", "start"), ("quiesce", "end"),
            ("unquiesce", "start"), ("unquiesce", "end")):
    if len(ev.get(key, [])) != 1:
        die("hook %s %s ran %d times, expected once" %
            (key[0], key[1], len(ev.get(key, []))))
q0, q1 = ev["quiesce", "start"][0], ev["quiesce", "end"][0]
u0, u1 = ev["unquiesce", "start"][0], ev["unquiesce", "end"][0]
# The hook before the hold, the release before the unquiesce hook.
if not q0 < q1 < held < released < u0 < u1:
    die("out of order: hook %s, held at %.6f, released at %.6f" %
        (ev, held, released))

writes = []
for line in open(recfile):
    c, k, t0, t1, ok = line.split()
    if ok != "ok":
        die("write %s/%s failed" % (c, k))
    writes.append((int(c), int(k), float(t0), float(t1)))
snap = open(snapfile, "rb")
head = open(headfile, "rb")
conns = {w[0] for w in writes}
held_per_conn = {c: 0 for c in conns}
during_hook = in_snap = 0
for c, k, t0, t1 in writes:
    off = (c * slots + k) * BS
    want = block(c, k)
    head.seek(off)
    if head.read(BS) != want:
        die("write %d/%d (acked) is not in the head image" % (c, k))
    snap.seek(off)
    got = snap.read(BS)
    present = got == want
    if not present and got != b"\0" * BS:
        die("snapshot block of write %d/%d holds something else" % (c, k))
    if q0 < t1 < q1:
        during_hook += 1
    # Acknowledged before the hold was logged: it was in librbd before
    # the hold, and waited for before the acknowledgement.
    if t1 < held and not present:
        die("write %d/%d acked at %.6f, before the hold (%.6f), is not in "
            "the snapshot" % (c, k, t1, held))
    # Sent after the hold: held, so it reached librbd after the snapshot.
    if t0 > held and present:
        die("write %d/%d sent at %.6f, after the hold (%.6f), is in the "
            "snapshot" % (c, k, t0, held))
    # Not in the snapshot: it was held, so acknowledged after the release.
    if not present and t1 < released:
        die("write %d/%d is not in the snapshot but was acked at %.6f, "
            "before the release (%.6f)" % (c, k, t1, released))
    if present:
        in_snap += 1
    elif t0 < released:
        held_per_conn[c] += 1
if during_hook == 0:
    die("no write was acknowledged while the quiesce hook ran")
for c, n in held_per_conn.items():
    if n == 0:
        die("connection %d had no write held during the quiesce" % c)
print("check.py: %d writes, %d in the snapshot, %d acked during the hook, "
      "held per connection %s" % (len(writes), in_snap, during_hook,
                                  held_per_conn))
