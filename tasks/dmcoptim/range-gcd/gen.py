"""Values sharing large common factors; queries of all lengths. argv: seed n q"""
import random, sys
seed, n, q = map(int, sys.argv[1:4])
rng = random.Random(seed)
base = [rng.choice((1, 2, 6, 12, 60, 360, 2520)) for _ in range(4)]
a = []
for i in range(n):
    g = base[(i // max(1, n // 4)) % 4]
    a.append(g * rng.randint(1, 10**9 // g) if rng.random() < 0.999 else rng.randint(1, 10**9))
out = [f"{n} {q}", " ".join(map(str, a))]
for _ in range(q):
    l = rng.randint(1, n); r = min(n, l + int(rng.random() ** 2 * n // 8))
    out.append(f"{l} {r}")
print("\n".join(out))
