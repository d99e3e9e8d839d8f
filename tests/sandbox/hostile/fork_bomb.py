# attack: exponential fork bomb; every process keeps forking, then spins
# verdict: runtime_error|timeout|memory_limit
# limits: time_s=0.5 wall_s=1 memory_mb=128 processes=16
# check: host_responsive
"""memory_limit is a fair verdict too: each forked interpreter soon owns a few
MiB of copied pages, and the sandbox bounds the program's total memory.
Capped at 10 generations (at most 1024 processes, each spinning at most 20 s)
so that a sandbox which fails to limit processes shows up as a failed test and
not as a dead host."""
import os
import time

deadline = time.time() + 20
for _ in range(10):
    try:
        os.fork()
    except OSError:
        pass
while time.time() < deadline:
    pass
