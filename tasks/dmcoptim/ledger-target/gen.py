"""Small values so that many segments hit the target. argv: seed n T maxabs"""
import random, sys
seed, n, t, m = map(int, sys.argv[1:5])
rng = random.Random(seed)
print(n, t)
print(" ".join(str(rng.randint(-m, m)) for _ in range(n)))
