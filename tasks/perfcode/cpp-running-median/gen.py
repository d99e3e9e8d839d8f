"""A stream mixing a drifting level, spikes in both directions and repeated values.

argv: seed [n [spread]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    spread = int(sys.argv[3]) if len(sys.argv) > 3 else 10**18
    rng = random.Random(seed)
    level = 0
    values = []
    for _ in range(n):
        r = rng.random()
        level += rng.randint(-1000, 1000)
        if r < 0.1:
            v = rng.randint(-spread, spread)
        elif r < 0.15 and values:
            v = rng.choice(values)
        else:
            v = max(-spread, min(spread, level + rng.randint(-10**6, 10**6)))
        values.append(v)
    sys.stdout.write("%d\n%s\n" % (n, " ".join(map(str, values))))


main()
