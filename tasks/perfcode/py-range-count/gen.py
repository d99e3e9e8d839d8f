"""Values with duplicates and clusters, queries of every width.

argv: seed [n [q [magnitude]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    q = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    mag = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
    rng = random.Random(seed)
    centers = [rng.randint(-mag, mag) for _ in range(8)]
    values = []
    for _ in range(n):
        if rng.random() < 0.5:
            values.append(rng.randint(-mag, mag))
        else:  # clustered, so many queries hit dense regions and duplicates appear
            c = rng.choice(centers)
            values.append(max(-mag, min(mag, c + rng.randint(-mag // 1000 - 1, mag // 1000 + 1))))
    lines = ["%d %d" % (n, q), " ".join(map(str, values))]
    for _ in range(q):
        kind = rng.random()
        if kind < 0.2 and values:
            lo = hi = rng.choice(values)            # point query on an existing value
        elif kind < 0.5 and values:
            a, b = rng.choice(values), rng.choice(values)
            lo, hi = min(a, b), max(a, b)           # bounds equal to existing values
        else:
            a, b = rng.randint(-mag, mag), rng.randint(-mag, mag)
            lo, hi = min(a, b), max(a, b)
        lines.append("%d %d" % (lo, hi))
    sys.stdout.write("\n".join(lines) + "\n")


main()
