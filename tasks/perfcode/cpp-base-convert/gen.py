"""Numbers of every size (0, powers of the base and their neighbours, 2^64-1) in every base.

argv: seed [n]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = random.Random(seed)
    lines = [str(n)]
    for _ in range(n):
        base = rng.choice((2, 10, 16, 36)) if rng.random() < 0.4 else rng.randint(2, 36)
        r = rng.random()
        if r < 0.05:
            x = rng.choice((0, 1, (1 << 64) - 1, (1 << 63), (1 << 63) - 1))
        elif r < 0.15:
            k = rng.randint(0, 63)
            x = min((1 << 64) - 1, max(0, base ** min(k, 12) + rng.randint(-1, 1)))
        else:
            x = rng.getrandbits(rng.randint(1, 64))
        lines.append("%d %d" % (x, base))
    sys.stdout.write("\n".join(lines) + "\n")


main()
