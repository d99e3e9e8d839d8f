"""One line `n steps L seed` (the program generates the particles itself).

argv: seed [n [steps [L]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    L = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rng = random.Random(seed)
    if L <= 0:
        L = rng.randint(2, 10**9)
    sys.stdout.write("%d %d %d %d\n" % (n, steps, L, rng.randrange(2**64)))


main()
