# attack: start hundreds of busy threads
# verdict: timeout|runtime_error
# limits: time_s=0.5 wall_s=1 memory_mb=256 processes=16
import threading
import time

end = time.time() + 20


def spin() -> None:
    while time.time() < end:
        pass


started = 0
for _ in range(500):
    try:
        threading.Thread(target=spin, daemon=True).start()
        started += 1
    except RuntimeError:
        break
print(f"{started} threads", flush=True)
spin()
print("ESCAPED: spun 20 s with time_s=0.5", flush=True)
