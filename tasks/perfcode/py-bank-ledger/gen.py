"""Deposits and withdrawals on a few hot accounts and many cold ones.

argv: seed [n [accounts]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rng = random.Random(seed)
    names = ["%s%d" % (rng.choice(["acc", "ACC-", "user_", "x"]), rng.randrange(10**6)) for _ in range(k)]
    hot = names[:max(1, k // 20)]
    lines = [str(n)]
    for _ in range(n):
        name = rng.choice(hot) if rng.random() < 0.5 else rng.choice(names)
        amount = rng.randint(-10**6, 10**6) if rng.random() < 0.95 else rng.randint(-10**12, 10**12)
        lines.append("%s %d" % (name, amount))
    sys.stdout.write("\n".join(lines) + "\n")


main()
