# attack: exit at once but leave a child holding stdout/stderr open (a supervisor waiting for EOF hangs)
# verdict: ok|timeout
# limits: time_s=0.5 wall_s=1 memory_mb=128
# check: bounded_wall
import subprocess
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
# the child re-executes python with the token in its argv so the host can find it
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)", token])
print("parent exits, child keeps the pipes", flush=True)
