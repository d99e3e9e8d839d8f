# attack: write to stderr as fast as possible
# verdict: output_limit
# limits: time_s=1 wall_s=2 memory_mb=128 output_bytes=65536
# check: output_bounded
import os
import time

chunk = b"E" * (1 << 20)
end = time.time() + 20
while time.time() < end:
    os.write(2, chunk)
