"""An allocation trace: 16-byte aligned heap addresses, reused with a recency bias.

argv: seed [n [distinct [alignment]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    distinct = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    align = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    rng = random.Random(seed)
    base = 0x7f3a00000000 + rng.randrange(1 << 28) * 4096
    pool = set()
    while len(pool) < distinct:
        pool.add(base + rng.randrange(1 << 26) * align)
    fresh = list(pool)
    rng.shuffle(fresh)
    seen = []
    lines = [str(n)]
    for _ in range(n):
        if fresh and (not seen or rng.random() < 0.5):
            a = fresh.pop()
            seen.append(a)
        elif rng.random() < 0.5:
            a = seen[-rng.randint(1, min(len(seen), 64))]   # recently seen
        else:
            a = rng.choice(seen)
        lines.append("0x%x" % a)
    sys.stdout.write("\n".join(lines) + "\n")


main()
