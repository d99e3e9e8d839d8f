# attack: overwrite its own source in the run directory, plant a file, write into the parent and sibling directories
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# check: rerun_clean
"""The host runs the same program again: it must start from the pristine build
(no POISONED output, no planted file). Writing into the directory holding the
run directory, or into a sibling run's directory, is cross-run tampering."""
import os
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
if os.path.exists("planted.txt"):
    print("ESCAPED: a file planted by an earlier run is still here", flush=True)
else:
    print("clean start", flush=True)
with open("planted.txt", "w") as f:
    f.write("planted\n")
me = os.path.abspath(sys.argv[0])
try:
    with open(me, "w") as f:
        f.write('print("POISONED")\n')
    print(f"rewrote {me}", flush=True)
except OSError as e:
    print(f"blocked: rewrite {me}: {e.strerror}", flush=True)
cwd = os.getcwd()
parent = os.path.dirname(cwd)
if parent != cwd:
    try:
        with open(os.path.join(parent, f"codegym-hostile-{token}-parent"), "x") as f:
            f.write("x")
        print(f"ESCAPED: wrote into the parent directory {parent}", flush=True)
    except OSError as e:
        print(f"blocked: parent {parent}: {e.strerror}", flush=True)
    try:
        siblings = [os.path.join(parent, n) for n in os.listdir(parent)]
    except OSError:
        siblings = []
    # the run's own scratch space (/tmp, TMPDIR) is writable by design
    own = {cwd, "/tmp", "/dev/shm", os.path.realpath(os.environ.get("TMPDIR", "/tmp"))}
    for d in siblings:
        if os.path.realpath(d) in own or not os.path.isdir(d):
            continue
        try:
            with open(os.path.join(d, f"codegym-hostile-{token}-sibling"), "x") as f:
                f.write("x")
            print(f"ESCAPED: wrote into a sibling directory {d}", flush=True)
        except OSError:
            pass
