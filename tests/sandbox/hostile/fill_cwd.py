# attack: fill the run directory with files (each under the file-size limit) past the disk quota
# verdict: ok|runtime_error|output_limit
# limits: time_s=2 wall_s=3 memory_mb=128 disk_mb=32 file_size_mb=8
# bwrap_only: true
# reason: rlimits bound each file (RLIMIT_FSIZE), not the total size of a directory
"""Prints ESCAPED when far more than disk_mb could be written."""
import os

chunk = b"F" * (1 << 20)
written = 0
try:
    for i in range(64):  # 256 MiB cap = 8x disk_mb
        with open(f"fill-{i}", "wb") as f:
            for _ in range(4):
                f.write(chunk)
                f.flush()
                written += 1
except OSError as e:
    print(f"stopped after {written} MiB: {e.strerror}", flush=True)
if written > 64:
    print(f"ESCAPED: wrote {written} MiB to the run directory with disk_mb=32", flush=True)
