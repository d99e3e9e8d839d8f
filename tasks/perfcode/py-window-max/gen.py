"""A random walk with occasional spikes (so window maxima change often and sometimes not).

argv: seed [n [k]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rng = random.Random(seed)
    x = 0
    a = []
    for _ in range(n):
        x += rng.randint(-1000, 1000)
        x = max(-10**9, min(10**9, x))
        a.append(x if rng.random() > 0.001 else rng.randint(-10**9, 10**9))
    sys.stdout.write("%d %d\n%s\n" % (n, k, " ".join(map(str, a))))


main()
