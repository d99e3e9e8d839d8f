# attack: fill /tmp with files (each under the file-size limit) until the disk quota stops it
# verdict: ok|runtime_error|output_limit
# limits: time_s=2 wall_s=3 memory_mb=128 disk_mb=32 file_size_mb=8
# bwrap_only: true
# reason: without a mount namespace /tmp is the host's and no quota applies to it
"""Prints ESCAPED when far more than disk_mb could be written."""
import os
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
chunk = b"F" * (1 << 20)
written = 0
try:
    for i in range(64):  # 64 files x 4 MiB = 256 MiB cap = 8x disk_mb
        with open(f"/tmp/codegym-hostile-{token}-fill-{i}", "wb") as f:
            for _ in range(4):
                f.write(chunk)
                f.flush()
                written += 1
except OSError as e:
    print(f"stopped after {written} MiB: {e.strerror}", flush=True)
if written > 64:
    print(f"ESCAPED: wrote {written} MiB to /tmp with disk_mb=32", flush=True)
