"""Costs around 1e4 with occasional spikes; budget allows windows of a few thousand. argv: seed n B"""
import random, sys
seed, n, b = map(int, sys.argv[1:4])
rng = random.Random(seed)
c = [rng.randint(0, 10000) if rng.random() > 0.001 else rng.randint(10**6, 10**9) for _ in range(n)]
print(n, b)
print(" ".join(map(str, c)))
