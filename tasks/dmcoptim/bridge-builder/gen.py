"""Bridges: mostly between nearby islands (big groups form late), some random. argv: seed n m"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
out = [f"{n} {m}"]
for _ in range(m):
    u = rng.randint(1, n)
    if rng.random() < 0.8:
        v = min(n, max(1, u + rng.randint(-3, 3)))
    else:
        v = rng.randint(1, n)
    out.append(f"{u} {v}")
print("\n".join(out))
