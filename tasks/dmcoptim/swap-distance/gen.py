"""Random catalogue numbers. argv: seed n maxc"""
import random, sys
seed, n, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
print(n)
print(" ".join(str(rng.randint(0, m)) for _ in range(n)))
