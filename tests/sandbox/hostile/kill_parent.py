# attack: SIGKILL the parent (the fork server / supervisor / bwrap) from inside the run
# verdict: runtime_error|ok
# limits: time_s=1 wall_s=2 memory_mb=128
"""The verdict must not be sandbox_error and the next run must work. Refuses to
kill the test process itself (argv[4]) so a broken sandbox cannot take pytest down."""
import os
import signal
import sys
import time

testpid = int(sys.argv[4]) if len(sys.argv) > 4 else -1
ppid = os.getppid()
if ppid == testpid:
    print("ESCAPED: the parent is the test process itself (no supervisor between)", flush=True)
elif ppid > 1:
    try:
        os.kill(ppid, signal.SIGKILL)
        print(f"killed parent {ppid}", flush=True)
    except OSError as e:
        print(f"blocked: kill {ppid}: {e.strerror}", flush=True)
time.sleep(0.2)
print("still running", flush=True)
