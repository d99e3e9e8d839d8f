"""A random soup, optionally with a few gliders and blinkers stamped on it.

argv: seed [h [w [generations [density]]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    h = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    w = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    t = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    density = float(sys.argv[5]) if len(sys.argv) > 5 else 0.35
    rng = random.Random(seed)
    grid = [["#" if rng.random() < density else "." for _ in range(w)] for _ in range(h)]
    glider = [(0, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
    for _ in range(max(1, h * w // 2000)):
        r0, c0 = rng.randrange(h), rng.randrange(w)
        for r in range(-1, 4):
            for c in range(-1, 4):
                grid[(r0 + r) % h][(c0 + c) % w] = "."
        for r, c in glider:
            grid[(r0 + r) % h][(c0 + c) % w] = "#"
    lines = ["%d %d %d" % (h, w, t)] + ["".join(row) for row in grid]
    sys.stdout.write("\n".join(lines) + "\n")


main()
