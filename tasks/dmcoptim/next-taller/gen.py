"""Heights: long descending runs (hard for forward scans) mixed with noise. argv: seed n maxh"""
import random, sys
seed, n, maxh = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
h = []
while len(h) < n:
    run = rng.randint(1, 800)
    top = rng.randint(1, maxh)
    step = max(1, top // (run + 1))
    for k in range(run):
        if len(h) >= n:
            break
        h.append(max(1, top - k * step) if rng.random() < 0.995 else rng.randint(1, maxh))
print(n)
print(" ".join(map(str, h)))
