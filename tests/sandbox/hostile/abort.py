# attack: SIGABRT
# verdict: runtime_error
# limits: time_s=1 wall_s=2 memory_mb=128
import os

print("about to abort", flush=True)
os.abort()
