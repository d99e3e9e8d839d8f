"""Genome of near-repeats of the motif (many partial matches). argv: seed n m"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
motif = "A" * (m - 1) + "C"
g = []
while len(g) < n:
    if rng.random() < 0.5:
        g.extend(motif)
    else:
        g.extend("A" * rng.randint(1, 2 * m))
    if rng.random() < 0.1:
        g.append(rng.choice("ACGT"))
print("".join(g[:n]))
print(motif)
