"""Random coin values. argv: seed n maxv"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
print(n)
print(" ".join(str(rng.randint(1, m)) for _ in range(n)))
