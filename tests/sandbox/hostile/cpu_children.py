# attack: burn CPU in children while the parent only waits (per-process RLIMIT_CPU misses the total)
# verdict: timeout
# limits: time_s=0.5 wall_s=1.5 memory_mb=128 processes=8
"""Four children each spin until their own CPU limit kills them; the parent
itself uses no CPU and exits 0. The program as a whole used ~4x time_s of CPU."""
import os
import time

kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        end = time.time() + 20
        while time.time() < end:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("parent exits cleanly after its children burned CPU", flush=True)
