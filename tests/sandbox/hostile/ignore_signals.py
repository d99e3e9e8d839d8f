# attack: ignore every catchable signal (SIGTERM, SIGXCPU, SIGINT, SIGHUP, ...) and spin
# verdict: timeout
# limits: time_s=0.5 wall_s=1 memory_mb=128
"""Only SIGKILL (or a hard RLIMIT_CPU) can stop this program."""
import signal
import time

for s in signal.valid_signals():
    try:
        signal.signal(s, signal.SIG_IGN)
    except (OSError, ValueError, RuntimeError):
        pass  # SIGKILL / SIGSTOP cannot be ignored
deadline = time.time() + 20
while time.time() < deadline:
    pass
print("ESCAPED: survived 20 s with time_s=0.5", flush=True)
