"""Intervals: mostly short ones scattered over [0, 1e9], some long, some duplicates.

argv: seed [n [span]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    span = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    rng = random.Random(seed)
    lines = [str(n)]
    prev = None
    for _ in range(n):
        r = rng.random()
        if prev and r < 0.03:
            l, rr = prev                              # exact duplicate
        else:
            l = rng.randint(0, span)
            if r < 0.05:
                length = 0                            # a point
            elif r < 0.07:
                length = rng.randint(0, span // 20)   # a long one that swallows others
            else:
                length = rng.randint(0, max(1, span // n * 2))
            rr = min(span, l + length)
        lines.append("%d %d" % (l, rr))
        prev = (l, rr)
    sys.stdout.write("\n".join(lines) + "\n")


main()
