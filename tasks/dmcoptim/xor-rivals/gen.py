"""Codes sharing a common high prefix (so the answer needs the low bits). argv: seed n bits"""
import random, sys
seed, n, bits = map(int, sys.argv[1:4])
rng = random.Random(seed)
prefix = rng.getrandbits(bits) & ~((1 << (bits // 2)) - 1)
vals = [prefix | rng.getrandbits(bits // 2) if rng.random() < 0.99 else rng.getrandbits(bits) for _ in range(n)]
print(n)
print(" ".join(map(str, vals)))
