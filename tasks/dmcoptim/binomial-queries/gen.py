"""Random (n, k) questions, mostly k <= n, k often small. argv: seed q maxn"""
import random, sys
seed, q, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
out = [str(q)]
for _ in range(q):
    n = rng.randint(0, m)
    r = rng.random()
    if r < 0.02:
        k = rng.randint(n + 1, m) if n < m else 0
    elif r < 0.025:
        k = rng.randint(0, min(n, 30000))
    elif r < 0.9:
        k = rng.randint(0, min(n, 10))
    else:
        k = max(0, n - rng.randint(0, 10))
    out.append(f"{n} {k}")
print("\n".join(out))
