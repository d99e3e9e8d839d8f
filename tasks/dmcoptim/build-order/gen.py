"""Random DAG with long chains: edges mostly go a few positions forward in a hidden order. argv: seed n m"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
perm = list(range(1, n + 1)); rng.shuffle(perm)
edges = []
for i in range(n - 1):
    if rng.random() < 0.9 and len(edges) < m:
        edges.append((perm[i], perm[i + 1]))
while len(edges) < m and n > 1:
    a = rng.randrange(n - 1)
    b = min(n - 1, a + rng.randint(1, 20)) if rng.random() < 0.8 else rng.randint(a + 1, n - 1)
    edges.append((perm[a], perm[b]))
rng.shuffle(edges)
out = [f"{n} {len(edges)}", " ".join(str(rng.randint(1, 10**9)) for _ in range(n))]
out += [f"{u} {v}" for u, v in edges]
print("\n".join(out))
