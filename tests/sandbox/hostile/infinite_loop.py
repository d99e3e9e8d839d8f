# attack: busy loop
# verdict: timeout
# limits: time_s=0.5 wall_s=1 memory_mb=128
import time

deadline = time.time() + 20  # safety net: never outlive a broken sandbox by much
while time.time() < deadline:
    pass
print("ESCAPED: ran 20 s with time_s=0.5", flush=True)
