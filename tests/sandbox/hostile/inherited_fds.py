# attack: look for descriptors leaked from the supervisor (control pipes, sockets, the build cache ...)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
"""A program should start with stdin, stdout and stderr only: any other open
descriptor is a channel to something outside the run."""
import os

for fd in range(3, 1024):
    try:
        os.fstat(fd)
    except OSError:
        continue
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = "?"
    print(f"ESCAPED: inherited fd {fd} -> {target}", flush=True)
print("scan done", flush=True)
