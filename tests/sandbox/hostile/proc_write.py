# attack: privileged writes through /proc: lower own oom_score_adj, rewrite the hostname (same value)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
"""Each write needs a capability an untrusted program must not have. The
hostname is rewritten with its current value, so a hole changes nothing."""
import os


def try_write(path: str, data: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(data)
        return True
    except OSError as e:
        print(f"blocked: {path}: {e.strerror}", flush=True)
        return False


if try_write("/proc/self/oom_score_adj", "-1000"):
    print("ESCAPED: lowered /proc/self/oom_score_adj to -1000 (needs CAP_SYS_RESOURCE)", flush=True)
try:
    with open("/proc/sys/kernel/hostname") as f:
        name = f.read().strip()
except OSError:
    name = ""
if name and try_write("/proc/sys/kernel/hostname", name):
    print("ESCAPED: wrote /proc/sys/kernel/hostname (needs CAP_SYS_ADMIN)", flush=True)
# (loginuid is not probed: any process may set it once while it is unset)
# allowed: a process may change its own comm and coredump filter
try_write("/proc/self/comm", "innocent")
try_write("/proc/self/coredump_filter", "0x0")
