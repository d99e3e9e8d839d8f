# attack: double-fork + setsid daemon that tries to outlive the run and write a heartbeat to the host
# verdict: ok|timeout|runtime_error
# limits: time_s=1 wall_s=2 memory_mb=128
# check: no_heartbeat
"""The parent exits at once. The grandchild leaves the process group and the
session, closes stdio, waits 0.5 s (by then the run is over) and then writes a
heartbeat every 0.1 s for 10 s to the host's /tmp and to the repository."""
import os
import sys
import time

token = sys.argv[1] if len(sys.argv) > 1 else "x"
repo = sys.argv[2] if len(sys.argv) > 2 else "/nonexistent"
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.chdir("/")
        for fd in (0, 1, 2):
            os.close(fd)
        time.sleep(0.5)
        end = time.time() + 10
        while time.time() < end:
            for path in (f"/tmp/codegym-hostile-{token}-heartbeat",
                         f"{repo}/codegym-hostile-{token}-heartbeat"):
                try:
                    with open(path, "a") as f:
                        f.write(f"{time.time()}\n")
                except OSError:
                    pass
            time.sleep(0.1)
        os._exit(0)
    os._exit(0)
print("parent exits", flush=True)
