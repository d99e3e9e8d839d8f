"""Version strings: shared prefixes, multi-digit parts, leading zeros, repeats.

argv: seed [count]
"""
import random
import sys


def part(rng):
    r = rng.random()
    if r < 0.6:
        s = str(rng.randint(0, 12))
    elif r < 0.9:
        s = str(rng.randint(0, 2000))
    else:
        s = str(rng.randint(0, 99999))
    if rng.random() < 0.05:
        s = "0" * rng.randint(1, 2) + s        # leading zeros: equal value, different text
    return s


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rng = random.Random(seed)
    roots = [part(rng) for _ in range(max(2, n // 500))]
    out = []
    for _ in range(n):
        if out and rng.random() < 0.03:
            out.append(rng.choice(out))
            continue
        parts = [rng.choice(roots)] + [part(rng) for _ in range(rng.randint(0, 4))]
        out.append(".".join(parts))
    sys.stdout.write("%d\n%s\n" % (n, "\n".join(out)))


main()
