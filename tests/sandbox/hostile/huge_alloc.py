# attack: one 8 GiB allocation
# verdict: memory_limit
# limits: time_s=1 wall_s=2 memory_mb=128
buf = bytearray(8 << 30)
print(f"ESCAPED: allocated {len(buf)} bytes with memory_mb=128", flush=True)
