"""Values in clusters (with duplicates) and queries near them, exactly between two, or outside.

argv: seed [n [q]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    q = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    rng = random.Random(seed)
    centres = [rng.randint(-10**12, 10**12) for _ in range(max(1, n // 50))]
    a = [rng.choice(centres) + rng.randint(-10**6, 10**6) for _ in range(n)]
    for _ in range(n // 20):
        a[rng.randrange(n)] = a[rng.randrange(n)]          # duplicates
    queries = []
    for _ in range(q):
        r = rng.random()
        if r < 0.2:
            x, y = rng.choice(a), rng.choice(a)
            if (x + y) % 2 == 0:
                queries.append((x + y) // 2)              # a tie between x and y
                continue
        if r < 0.25:
            queries.append(rng.choice([-10**15, 10**15]))
        elif r < 0.4:
            queries.append(rng.choice(a))
        else:
            queries.append(rng.choice(a) + rng.randint(-10**7, 10**7))
    sys.stdout.write("%d\n%s\n%d\n%s\n" % (n, " ".join(map(str, a)), q, "\n".join(map(str, queries))))


main()
