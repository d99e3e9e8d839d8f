# attack: create files outside the run directory: /usr, /etc, /, /root, the repository, the test's private dir
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# rlimits_needs_root: true
"""Each successful write is reported as ESCAPED; the host then checks that none
of the files exist. Only new files are created: nothing existing is touched."""
import os
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
repo = sys.argv[2] if len(sys.argv) > 2 else "/nonexistent"
hostdir = sys.argv[3] if len(sys.argv) > 3 else "/nonexistent"
name = f"codegym-hostile-{token}"
targets = [f"/usr/{name}", f"/usr/local/bin/{name}", f"/etc/{name}", f"/{name}",
           f"/root/{name}", f"{repo}/{name}", f"{repo}/tests/{name}", f"{hostdir}/{name}"]
for path in targets:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"pwned\n")
        os.close(fd)
        # "/" may be a private tmpfs (not a hole by itself); the host checks its own "/"
        tag = "wrote (private root?)" if path == f"/{name}" else "ESCAPED: wrote"
        print(f"{tag} {path}", flush=True)
    except OSError as e:
        print(f"blocked: {path}: {e.strerror}", flush=True)
