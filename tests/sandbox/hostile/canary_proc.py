# attack: read other processes' environment and command line through /proc/<pid>/environ (supervisor, test runner)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# rlimits_needs_root: true
# check: canary_hidden
import os

me = os.getpid()
found = 0
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == me:
        continue
    for what in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as f:
                data = f.read()
        except OSError:
            continue
        for item in data.split(b"\0"):
            if item.startswith(b"CODEGYM_CANARY=") or b"cgcanary" in item:
                found += 1
                print(f"ESCAPED: /proc/{pid}/{what}: {item.decode(errors='replace')}", flush=True)
print(f"scanned /proc, {found} hits", flush=True)
