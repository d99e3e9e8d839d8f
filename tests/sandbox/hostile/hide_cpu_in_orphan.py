# attack: do the work in a child that is never waited for, so the run reports almost no CPU (a fake speedup)
# verdict: timeout
# limits: time_s=0.5 wall_s=4 memory_mb=128 processes=8
"""The child spins for ~0.7 s of CPU (under its own per-process RLIMIT_CPU of 1 s)
and prints the answer; the parent blocks on a pipe without using CPU and exits 0
without reaping it. The run used ~0.7 s of CPU: over time_s, so a timeout -- and
never a run that reports the parent's few milliseconds."""
import os
import time

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    s = 0
    while time.process_time() < 0.7:
        for i in range(10000):
            s += i * i
    print("answer", s, flush=True)
    os.write(w, b"x")
    os._exit(0)
os.close(w)
os.read(r, 1)
print("parent exits without waiting", flush=True)
