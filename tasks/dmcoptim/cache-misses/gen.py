"""Requests from a skewed working set that drifts over time. argv: seed n c keys"""
import random, sys
seed, n, c, keys = map(int, sys.argv[1:5])
rng = random.Random(seed)
out = []
base = 0
for i in range(n):
    if rng.random() < 0.001:
        base += rng.randint(1, keys // 4 + 1)
    out.append(base + int(rng.random() ** 2 * keys))
print(n, c)
print(" ".join(map(str, out)))
