# attack: fork many sleeping children and count how many the sandbox allowed
# verdict: runtime_error
# limits: time_s=1 wall_s=2 memory_mb=128 processes=8
"""Exits 1 (runtime_error) once fork fails; prints ESCAPED when far more children
than `processes` could be created."""
import os
import sys
import time

made = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        print(f"fork failed after {made} children: {e}", flush=True)
        sys.exit(1)
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    made += 1
print(f"ESCAPED: created {made} processes with processes=8", flush=True)
