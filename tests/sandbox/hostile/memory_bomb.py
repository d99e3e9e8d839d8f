# attack: allocate and touch memory 1 MiB at a time until something stops it
# verdict: memory_limit
# limits: time_s=2 wall_s=4 memory_mb=128
import sys

chunks = []
for i in range(4096):  # 4 GiB cap: beyond that the limit plainly did not work
    chunks.append(bytearray(b"x" * (1 << 20)))
print(f"ESCAPED: touched {len(chunks)} MiB with memory_mb=128", flush=True)
