# attack: SIGSTOP itself; a stopped process uses no CPU and never exits
# verdict: timeout
# limits: time_s=0.5 wall_s=1 memory_mb=128
import os
import signal

os.kill(os.getpid(), signal.SIGSTOP)
print("resumed after SIGSTOP", flush=True)
