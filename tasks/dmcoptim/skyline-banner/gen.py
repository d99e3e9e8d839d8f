"""Random heights with broad hills. argv: seed n maxh"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
h = []
for i in range(n):
    hill = abs((i % 700) - 350) / 350
    h.append(int(m * (1 - hill) * rng.uniform(0.5, 1.0)))
print(n)
print(" ".join(map(str, h)))
