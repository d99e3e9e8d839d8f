# attack: read files only root may read: /etc/shadow, /root/*, the test's private directory (mode 700)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# rlimits_needs_root: true
# check: secret_hidden
"""Reports only sizes, never contents. The host also checks that its secret
(written to <hostdir>/secret.txt) appears nowhere in the output."""
import os
import sys

hostdir = sys.argv[3] if len(sys.argv) > 3 else "/nonexistent"
for path in ("/etc/shadow", "/etc/gshadow", "/root/.npmrc", "/root/.gitconfig",
             "/root/.bashrc", f"{hostdir}/secret.txt", f"{hostdir}/tasks/hidden.yaml"):
    try:
        with open(path, "rb") as f:
            data = f.read()
        print(f"ESCAPED: read {path} ({len(data)} bytes)", flush=True)
        if path.startswith(hostdir):
            print(data.decode(errors="replace"), flush=True)  # lets the host see the leak
    except OSError as e:
        print(f"blocked: {path}: {e.strerror}", flush=True)
for d in ("/root", hostdir):
    try:
        names = [n for n in os.listdir(d) if n != ".pyenv"]
        if names:
            print(f"ESCAPED: listed {d}: {len(names)} entries", flush=True)
    except OSError as e:
        print(f"blocked: listdir {d}: {e.strerror}", flush=True)
