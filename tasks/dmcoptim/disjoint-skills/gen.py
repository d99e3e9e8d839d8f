"""Sparse skill sets (few bits each) so that many pairs are disjoint. argv: seed n B"""
import random, sys
seed, n, b = map(int, sys.argv[1:4])
rng = random.Random(seed)
vals = []
for _ in range(n):
    x = 0
    for _ in range(rng.randint(0, 4)):
        x |= 1 << rng.randrange(b)
    vals.append(x)
print(n, b)
print(" ".join(map(str, vals)))
