"""Serpentine corridors with random gaps and random shelves. argv: seed R C"""
import random, sys
seed, r, c = map(int, sys.argv[1:4])
rng = random.Random(seed)
g = [["." if rng.random() > 0.2 else "#" for _ in range(c)] for _ in range(r)]
for i in range(1, r, 4):
    # horizontal walls with one gap at alternating ends produce long winding routes
    gap = c - 1 if (i // 4) % 2 == 0 else 0
    for j in range(c):
        g[i][j] = "." if j == gap or rng.random() < 0.002 else "#"
for i in range(r):
    if i % 4 in (0, 3) and (i == 0 or i % 4 == 3):
        # a shelf-free row in every corridor keeps the exit reachable
        g[i] = ["."] * c
    elif i % 4 != 1:
        for j in (0, c - 1):
            g[i][j] = "."
g[0][0] = "S"
g[r - 1][c - 1] = "E"
if r >= 2 and c >= 2 and g[r - 2][c - 1] == "#" and g[r - 1][c - 2] == "#":
    g[r - 1][c - 2] = "."
print(r, c)
print("\n".join("".join(row) for row in g))
