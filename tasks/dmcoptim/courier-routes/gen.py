"""Connected random graph: a deep random spanning tree of cheap roads plus expensive extra roads. argv: seed n m"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
edges = []
for v in range(2, n + 1):
    if len(edges) < m:
        edges.append((rng.randint(max(1, v - 5), v - 1), v, rng.randint(1, 1000)))
while len(edges) < m:
    # extra roads are slow, so shortest routes follow the long chain-like tree
    edges.append((rng.randint(1, n), rng.randint(1, n), rng.randint(10**6, 10**9)))
rng.shuffle(edges)
print(n, len(edges))
print("\n".join(f"{u} {v} {w}" for u, v, w in edges))
