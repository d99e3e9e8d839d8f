# attack: hold memory in memfds that no process maps (outside RLIMIT_AS and the resident-memory sampling)
# verdict: ok|memory_limit|runtime_error
# limits: time_s=4 wall_s=8 memory_mb=128 file_size_mb=64
"""Fills memfds with 64 MiB each (under RLIMIT_FSIZE) until 1 GiB is held: eight
times the memory limit, invisible to RLIMIT_AS and to RSS. The sandbox denies
memfd_create (ENOSYS); anything held past 512 MiB is an escape."""
import os

held = 0
chunk = b"\xa5" * (1 << 20)
fds = []
try:
    while held < 1024:
        fd = os.memfd_create(f"hoard{len(fds)}")
        fds.append(fd)
        for _ in range(64):
            os.write(fd, chunk)
            held += 1
except OSError as e:
    print(f"blocked after {held} MiB: {e}", flush=True)
if held >= 512:
    print(f"ESCAPED: {held} MiB held in {len(fds)} memfds", flush=True)
