"""Noisy upward trend. argv: seed n spread"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
base = -10**9 + m
vals = []
for i in range(n):
    v = base + i * (2 * 10**9 - 2 * m) // max(1, n) // 3 + rng.randint(-m, m)
    vals.append(max(-10**9, min(10**9, v)))
print(n)
print(" ".join(map(str, vals)))
