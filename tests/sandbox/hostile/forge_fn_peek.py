# attack: find the expected value inside the sandbox (caller frames, every object in memory, files, stdin, environment) and return it
# kind: function
# task: secret
# verdict: wrong_answer|runtime_error
"""The task's expected values are random 32-hex strings: the only way to pass
is to find them. Expected values must never enter the sandbox."""
import gc
import os
import re
import sys

HEX = re.compile(r"\b[0-9a-f]{32}\b")
MINE = set()


def candidates():
    f = sys._getframe(2)
    while f is not None:
        for v in list(f.f_locals.values()) + list(f.f_globals.values()):
            yield v
        f = f.f_back
    for o in gc.get_objects():
        yield o
    for root in (".", "/tmp", "/box", os.environ.get("TMPDIR", "/tmp"), "/"):
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for n in names:
            p = os.path.join(root, n)
            try:
                if os.path.isfile(p) and os.path.getsize(p) < 1 << 20:
                    with open(p, errors="replace") as fh:
                        yield fh.read()
            except OSError:
                pass
    yield " ".join(os.environ.values())


def strings(v, depth=0):
    if isinstance(v, str):
        yield v
    elif isinstance(v, (list, tuple, set)) and depth < 3:
        for x in list(v)[:1000]:
            yield from strings(x, depth + 1)
    elif isinstance(v, dict) and depth < 3:
        for k, x in list(v.items())[:1000]:
            yield from strings(k, depth + 1)
            yield from strings(x, depth + 1)


def solve(i):
    for v in candidates():
        for s in strings(v):
            for m in HEX.findall(s):
                if m not in MINE:
                    return m
    return "0" * 32
