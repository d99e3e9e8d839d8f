"""One line: the matrix size and the generator seed.

argv: seed [n]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rng = random.Random(seed)
    sys.stdout.write("%d %d\n" % (n, rng.randrange(1 << 32)))


main()
