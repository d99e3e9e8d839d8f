# attack: open descriptors until the kernel refuses (after trying to raise RLIMIT_NOFILE)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128 open_files=64
import os
import resource

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
except (ValueError, OSError):
    pass
fds = []
try:
    for _ in range(100000):
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    print(f"stopped at {len(fds)} descriptors: {e.strerror}", flush=True)
if len(fds) > 64 + 16:
    print(f"ESCAPED: opened {len(fds)} descriptors with open_files=64", flush=True)
