"""Highly repetitive strings (long palindromes). argv: seed n sigma"""
import random, sys
seed, n, k = map(int, sys.argv[1:4])
rng = random.Random(seed)
alpha = "abcdefghijklmnopqrstuvwxyz"[:k]
s = []
while len(s) < n:
    block = rng.choice(alpha) * rng.randint(1, max(1, n // 4))
    s.extend(block)
    if rng.random() < 0.3:
        s.append(rng.choice("xyz"))
print("".join(s[:n]))
