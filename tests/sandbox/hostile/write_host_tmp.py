# attack: create files in /tmp, /var/tmp and /dev/shm, which must be private to the run, not the host's
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# bwrap_only: true
# reason: without a mount namespace these world-writable directories are the host's own
"""Writing there inside the sandbox is allowed (private scratch space); the host
checks that none of the files appeared in its own directories."""
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
for d in ("/tmp", "/var/tmp", "/dev/shm"):
    path = f"{d}/codegym-hostile-{token}"
    try:
        with open(path, "w") as f:
            f.write("written from the sandbox\n")
        print(f"wrote {path} (must be private to the run)", flush=True)
    except OSError as e:
        print(f"blocked: {path}: {e.strerror}", flush=True)
