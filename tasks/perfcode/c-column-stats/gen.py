"""An r x c table of integers; each column has its own range (some all negative, some wide).

argv: seed [rows [cols]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    r = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    c = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rng = random.Random(seed)
    ranges = []
    for _ in range(c):
        kind = rng.random()
        if kind < 0.2:
            ranges.append((-10**9, 10**9))
        elif kind < 0.4:
            ranges.append((-10**6, -1))
        elif kind < 0.5:
            v = rng.randint(-100, 100)
            ranges.append((v, v))
        else:
            ranges.append((0, 10**rng.randint(1, 9)))
    lines = ["%d %d" % (r, c)]
    for _ in range(r):
        lines.append(" ".join(str(rng.randint(lo, hi)) for lo, hi in ranges))
    sys.stdout.write("\n".join(lines) + "\n")


main()
