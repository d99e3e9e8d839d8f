"""Values with many complementary pairs and duplicates (so the count is large), plus noise.

argv: seed [n [spread]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    spread = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    rng = random.Random(seed)
    target = rng.randint(-spread, spread)
    lo, hi = max(-10**9, target - 10**9), min(10**9, target + 10**9)
    a = []
    for _ in range(n):
        r = rng.random()
        if a and r < 0.3:
            a.append(target - rng.choice(a))                 # completes an earlier value
        elif a and r < 0.35:
            a.append(rng.choice(a))                          # a duplicate
        elif r < 0.37 and target % 2 == 0:
            a.append(target // 2)                            # pairs with itself
        else:
            a.append(rng.randint(lo, hi))
    sys.stdout.write("%d %d\n%s\n" % (n, target, " ".join(map(str, a))))


main()
