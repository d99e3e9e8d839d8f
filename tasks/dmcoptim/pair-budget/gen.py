"""Random prices. argv: seed n maxp S"""
import random, sys
seed, n, m, s = map(int, sys.argv[1:5])
rng = random.Random(seed)
print(n, s)
print(" ".join(str(rng.randint(1, m)) for _ in range(n)))
