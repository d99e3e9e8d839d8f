# attack: read world-readable host files: the repository's tests and tasks, the project spec
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# bwrap_only: true
# reason: files readable by every user stay readable without a mount namespace
import os
import sys

repo = sys.argv[2] if len(sys.argv) > 2 else "/nonexistent"
for path in (f"{repo}/tests/test_hostile.py", f"{repo}/pyproject.toml", "/work/spec.md",
             "/work/shared/DESIGN.md"):
    try:
        with open(path, "rb") as f:
            n = len(f.read())
        print(f"ESCAPED: read {path} ({n} bytes)", flush=True)
    except OSError as e:
        print(f"blocked: {path}: {e.strerror}", flush=True)
for d in (f"{repo}/tasks", f"{repo}/tests", "/work/main/tasks", "/work"):
    try:
        print(f"ESCAPED: listed {d}: {sorted(os.listdir(d))[:5]}", flush=True)
    except OSError as e:
        print(f"blocked: listdir {d}: {e.strerror}", flush=True)
