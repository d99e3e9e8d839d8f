# attack: sleep without using CPU (only the wall-clock limit can stop it)
# verdict: timeout
# limits: time_s=0.5 wall_s=1 memory_mb=128
import time

time.sleep(20)
print("ESCAPED: slept 20 s with wall_s=1.5", flush=True)
