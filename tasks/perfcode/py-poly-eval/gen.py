"""A random polynomial and evaluation points (some 0, 1, MOD-1, MOD and beyond).

argv: seed [degree [points]]
"""
import random
import sys

MOD = 998244353


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    q = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rng = random.Random(seed)
    coeffs = [rng.randrange(10**9 + 1) if rng.random() < 0.9 else 0 for _ in range(d + 1)]
    special = [0, 1, 2, MOD - 1, MOD, MOD + 1, 10**9]
    points = [rng.choice(special) if rng.random() < 0.05 else rng.randrange(10**9 + 1) for _ in range(q)]
    sys.stdout.write("%d\n%s\n%d\n%s\n" % (d, " ".join(map(str, coeffs)), q, " ".join(map(str, points))))


main()
