"""N close to the bound. argv: seed maxN"""
import random, sys
seed, m = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
print(rng.randint(max(2, m - m // 10), m))
