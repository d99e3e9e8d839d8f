"""One line `n`, drawn uniformly from [lo, hi].

argv: seed [lo [hi]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    lo = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    hi = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    rng = random.Random(seed)
    sys.stdout.write("%d\n" % rng.randint(lo, hi))


main()
