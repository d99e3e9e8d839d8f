# attack: read other programs' builds (reference solutions, generators, other candidates) from the sandbox's build store
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# check: other_build, secret_hidden
"""Before this run the test builds another program whose source holds its
secret (as a reference solution or a test generator would). Any file of
another build that can be read is ESCAPED, and its secret-bearing lines are
printed so that the host sees the leak."""
import os

own = set(os.listdir("."))
MARK = "CODEGYM" + "-SECRET-"
cands = ["/builds"]
d = os.getcwd()
for _ in range(4):
    d = os.path.dirname(d)
    cands.append(os.path.join(d, "builds"))
for store in dict.fromkeys(cands):  # without duplicates
    try:
        keys = os.listdir(store)
    except OSError:
        continue
    for key in keys:
        kd = os.path.join(store, key)
        for dirpath, _, files in os.walk(kd):
            for n in files:
                p = os.path.join(dirpath, n)
                try:
                    with open(p, errors="replace") as f:
                        text = f.read(1 << 16)
                except OSError:
                    continue
                if MARK in text:
                    print(f"ESCAPED: read another build's file {p}: "
                          + " ".join(ln for ln in text.splitlines() if MARK in ln)[:200], flush=True)
print("done", flush=True)
