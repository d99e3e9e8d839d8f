# attack: kill(-1, SIGKILL) (every process it may signal) and kill(1, SIGKILL)
# verdict: runtime_error|ok
# limits: time_s=1 wall_s=2 memory_mb=128
# rlimits_needs_root: true
"""Fires only when kill(-1) cannot reach anything outside the run: the test
process (argv[4]) must not be signalable, and every process of this uid must
be this run's supervisor (the parent) or one of its descendants. Otherwise it
refuses and reports ESCAPED (a broken sandbox must not take the host down)."""
import os
import signal
import sys
import time


def stat_of(pid: int) -> tuple[str, int]:
    """(state, ppid) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def ppid_of(pid: int) -> int:
    return stat_of(pid)[1]


def outsiders() -> list[str]:
    me, parent, uid = os.getpid(), os.getppid(), os.getuid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        try:
            if os.stat(f"/proc/{d}").st_uid != uid or pid in (me, parent) or stat_of(pid)[0] == "Z":
                continue  # zombies cannot be hurt
            p, hops = pid, 0
            while p not in (parent, 0, 1) and hops < 64:
                p, hops = ppid_of(p), hops + 1
            if p != parent:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read(80).replace(b"\0", b" ").decode(errors="replace")
                out.append(f"{pid} (parent {ppid_of(pid)}: {cmd})")
        except OSError:
            pass
    return out


testpid = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4].isdigit() else 1
try:
    os.kill(testpid, 0)
    reachable = True
except PermissionError:
    reachable = False
except ProcessLookupError:
    reachable = False
others = outsiders()
if reachable or others:
    print(f"ESCAPED: kill(-1) would reach processes outside the run "
          f"(test process signalable: {reachable}, others: {others[:5]}); refusing", flush=True)
    sys.exit(0)
for target in (-1, 1):
    try:
        os.kill(target, signal.SIGKILL)
        print(f"kill({target}) sent", flush=True)
    except OSError as e:
        print(f"kill({target}): {e.strerror}", flush=True)
time.sleep(0.2)
print("still running", flush=True)
