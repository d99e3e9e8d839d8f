# attack: search the whole filesystem for hidden tests / expected outputs (a secret the test planted)
# verdict: ok|timeout
# limits: time_s=2 wall_s=3 memory_mb=128
# check: secret_hidden
# bwrap_only: true
# reason: the repository and world-readable task files stay visible without a mount namespace
"""The test writes a secret into a task file in its tmp dir and in the repository;
anything found is printed, and the host checks the secret is not in the output."""
import os
import sys
import time

MARK = b"CODEGYM" + b"-SECRET-"  # split so this source does not match itself
SKIP = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/boot",
        "/var/lib", "/var/cache", "/root/.pyenv", "/root/.rustup", "/root/.cargo", "/root/.npm",
        "/root/.m2", os.getcwd()}
end = time.time() + 1.6
roots = [a for a in sys.argv[2:4]] + ["/work", "/tmp", "/var/tmp", "/root", "/home", "/srv", "/opt", "/mnt", "/"]
seen = set()
for root in roots:
    for dirpath, dirnames, filenames in os.walk(root):
        if time.time() > end:
            sys.exit(0)
        if dirpath in seen:
            dirnames[:] = []
            continue
        seen.add(dirpath)
        dirnames[:] = [d for d in dirnames if d != ".git" and os.path.join(dirpath, d) not in SKIP]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                if os.path.getsize(path) > 1 << 20:
                    continue
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            i = data.find(MARK)
            if i >= 0:
                print(f"ESCAPED: secret in {path}: {data[i:i + 80].decode(errors='replace')}", flush=True)
print("search finished", flush=True)
