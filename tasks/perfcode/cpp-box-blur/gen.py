"""One line `h w r seed` (the program generates the image itself).

argv: seed [h [w [r]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    h = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    w = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    r = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    rng = random.Random(seed)
    sys.stdout.write("%d %d %d %d\n" % (h, w, r, rng.randrange(2**32)))


main()
