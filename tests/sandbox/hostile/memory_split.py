# attack: spread memory over several processes, each under the per-process limit
# verdict: ok|memory_limit|runtime_error
# limits: time_s=2 wall_s=3 memory_mb=128 processes=8
"""Each child touches 80 MiB (under memory_mb=128 each, with the interpreter's
own ~20 MiB) and holds it; ESCAPED when the program as a whole held more than
2x memory_mb at once."""
import os
import time

kids = []
for _ in range(6):
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(r)
        try:
            block = bytearray(80 << 20)
            for i in range(0, len(block), 4096):  # touch every page
                block[i] = 1
            os.write(w, b"1")
        except MemoryError:
            os.write(w, b"0")
        time.sleep(0.3)
        os._exit(0)
    os.close(w)
    kids.append((pid, r))
held = 0
for pid, r in kids:
    held += os.read(r, 1) == b"1"
for pid, r in kids:
    os.waitpid(pid, 0)
print(f"{held} children held 80 MiB each at the same time", flush=True)
if held * 80 > 2 * 128:
    print(f"ESCAPED: {held * 80} MiB held at once with memory_mb=128", flush=True)
